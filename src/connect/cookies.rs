//! An app origin's cookies and its neighbours (issue 43, item 3). App origins
//! (`<label>.<apps domain>`) are same-site with each other, and with the market when the apps
//! domain is the market's: a hostile app may set a cookie for the parent domain (`Domain=`)
//! that every sibling receives, or send a sibling requests that carry the sibling's cookie.
//!
//! - The market's cookie is `__Host-zm_app`: Secure, `Path=/`, no `Domain`, so no sibling can
//!   set or shadow it. Browsers take a Secure cookie over HTTPS, and over HTTP on the loopback
//!   (`*.localhost`); a market on plain HTTP elsewhere keeps `zm_app` (and is warned at start).
//! - What an app sets is kept under the same protection: `Set-Cookie: sid=…` reaches the browser
//!   as `__Host-app_sid=…; Path=/; Secure` (no `Domain`), and comes back to the app as `sid=…`.
//!   Every other cookie (a sibling's, a parent domain's) is ignored and never reaches the app;
//!   an oversized `Cookie` header is dropped, not answered 431.
//! - A state-changing request or a WebSocket upgrade whose `Origin` is not the app's own is
//!   refused (403): a sibling's page cannot act on the app with its cookie.

use axum::http::{HeaderMap, HeaderValue, Method, header};

/// The market's cookie on an app origin, when the browser can keep a Secure cookie there.
pub const HOST_COOKIE: &str = "__Host-zm_app";
/// The same on a plain-HTTP market away from the loopback.
pub const PLAIN_COOKIE: &str = "zm_app";
/// What the app's own cookies are called in the browser.
pub const APP_PREFIX: &str = "__Host-app_";
/// The most cookie bytes an app is given; a longer header is dropped (a cookie bomb).
pub const MAX_APP_COOKIES: usize = 16 * 1024;

/// Whether the apps domain is the loopback's (`localhost`, `*.localhost`).
pub fn loopback(apps_domain: &str) -> bool {
    apps_domain == "localhost" || apps_domain.ends_with(".localhost")
}

/// Whether a browser keeps a Secure cookie on the app origins: HTTPS, or the loopback.
pub fn secure(public_url: &str, apps_domain: &str) -> bool {
    public_url.starts_with("https:") || loopback(apps_domain)
}

/// The market's cookie name on the app origins.
pub fn name(secure: bool) -> &'static str {
    if secure { HOST_COOKIE } else { PLAIN_COOKIE }
}

fn pairs(headers: &HeaderMap) -> impl Iterator<Item = &str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .map(str::trim)
        .filter(|c| !c.is_empty())
}

/// The value of the market's cookie in the request.
pub fn ours(headers: &HeaderMap, secure: bool) -> Option<String> {
    let prefix = format!("{}=", name(secure));
    pairs(headers).find_map(|c| c.strip_prefix(&prefix).map(str::to_string))
}

/// Leaves the request only the app's own cookies, under the names the app gave them: with
/// `secure`, those it set (`__Host-app_*`, renamed back) and its own `__Host-` ones; without,
/// every cookie but the market's. Nothing when they are over [`MAX_APP_COOKIES`].
pub fn for_app(headers: &mut HeaderMap, secure: bool) {
    let market = name(secure);
    let kept: Vec<String> = pairs(headers)
        .filter_map(|c| {
            let (n, v) = c.split_once('=').unwrap_or((c, ""));
            let n = n.trim();
            if n == market {
                None
            } else if !secure {
                Some(c.to_string())
            } else if let Some(app) = n.strip_prefix(APP_PREFIX) {
                Some(format!("{app}={v}"))
            } else if n.starts_with("__Host-") {
                Some(c.to_string())
            } else {
                None
            }
        })
        .collect();
    headers.remove(header::COOKIE);
    let joined = kept.join("; ");
    if !joined.is_empty()
        && joined.len() <= MAX_APP_COOKIES
        && let Ok(v) = HeaderValue::from_str(&joined)
    {
        headers.insert(header::COOKIE, v);
    }
}

/// What the app sets, as the browser is told it (`secure`): each cookie renamed
/// `__Host-app_<name>` (its own `__Host-` names kept), `Path=/`, Secure, without `Domain`; a
/// cookie under the market's name is dropped.
pub fn from_app(headers: &mut HeaderMap, secure: bool) {
    let set: Vec<String> = headers.get_all(header::SET_COOKIE).iter().filter_map(|v| v.to_str().ok()).map(str::to_string).collect();
    headers.remove(header::SET_COOKIE);
    for c in set {
        let rewritten = if secure { namespaced(&c) } else { plain(&c) };
        if let Some(v) = rewritten.and_then(|c| HeaderValue::from_str(&c).ok()) {
            headers.append(header::SET_COOKIE, v);
        }
    }
}

fn namespaced(set_cookie: &str) -> Option<String> {
    let mut parts = set_cookie.split(';');
    let (n, v) = parts.next()?.split_once('=')?;
    let n = n.trim();
    if n.is_empty() || n == HOST_COOKIE || n == PLAIN_COOKIE {
        return None;
    }
    let name = if n.starts_with("__Host-") { n.to_string() } else { format!("{APP_PREFIX}{n}") };
    let mut out = format!("{name}={}; Path=/; Secure", v.trim());
    for a in parts.map(str::trim).filter(|a| !a.is_empty()) {
        let key = a.split('=').next().unwrap_or("").trim().to_ascii_lowercase();
        if !matches!(key.as_str(), "domain" | "path" | "secure") {
            out.push_str("; ");
            out.push_str(a);
        }
    }
    Some(out)
}

/// On plain HTTP away from the loopback: as the app wrote it, without `Domain` (a parent-domain
/// cookie would reach every sibling) and never under the market's name.
fn plain(set_cookie: &str) -> Option<String> {
    let mut parts = set_cookie.split(';');
    let first = parts.next()?.trim();
    let n = first.split_once('=')?.0.trim();
    if n.is_empty() || n == HOST_COOKIE || n == PLAIN_COOKIE {
        return None;
    }
    let mut out = first.to_string();
    for a in parts.map(str::trim).filter(|a| !a.is_empty()) {
        if !a.split('=').next().unwrap_or("").trim().eq_ignore_ascii_case("domain") {
            out.push_str("; ");
            out.push_str(a);
        }
    }
    Some(out)
}

/// A state-changing request or a WebSocket upgrade from a page of another origin than `own`
/// (an absent `Origin`, as scripts and old browsers send, is not one).
pub fn cross_origin(method: &Method, headers: &HeaderMap, own: &[&str]) -> bool {
    let changes = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) || headers.contains_key(header::UPGRADE);
    if !changes {
        return false;
    }
    match headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
        None => false,
        Some(o) => !own.iter().any(|own| own.eq_ignore_ascii_case(o)),
    }
}

/// Why a deployment's apps domain is unsafe, if it is: same-site with the market (`public_url`'s
/// host), so a hostile app's parent-domain cookies reach the market's pages (a cookie bomb
/// answers them 431) and its pages count as the market's site. The loopback (`*.localhost`) is
/// the exception a local run relies on. "Same site" is judged without the public suffix list:
/// the same host, one inside the other, or the same last two labels.
pub fn same_site_warning(public_url: &str, apps_domain: &str) -> Option<String> {
    let host = url::Url::parse(public_url).ok()?.host_str()?.trim_matches(['[', ']']).to_ascii_lowercase();
    let apps = apps_domain.trim_matches('.').to_ascii_lowercase();
    if loopback(&apps) || host.parse::<std::net::IpAddr>().is_ok() {
        return None;
    }
    let last_two = |d: &str| {
        let labels: Vec<&str> = d.rsplit('.').take(2).collect();
        (labels.len() == 2).then(|| format!("{}.{}", labels[1], labels[0]))
    };
    let same = host == apps
        || host.ends_with(&format!(".{apps}"))
        || apps.ends_with(&format!(".{host}"))
        || last_two(&host).is_some_and(|h| last_two(&apps) == Some(h));
    same.then(|| {
        format!(
            "[connect] apps_domain {apps} is same-site with public_url's host {host}: a hostile app can set cookies for the market's site \
             (a cookie bomb makes its pages answer 431). Give apps a registrable domain of their own (e.g. market.example.com with \
             apps on example-apps.net); see docs/connect.md"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cookies(h: &HeaderMap) -> String {
        h.get(header::COOKIE).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default()
    }

    #[test]
    fn the_app_gets_only_its_own_cookies() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, "zm_app=forged; __Host-zm_app=ours; __Host-app_sid=1; theme=dark; __Host-own=2".parse().unwrap());
        assert_eq!(ours(&h, true).as_deref(), Some("ours"));
        for_app(&mut h, true);
        assert_eq!(cookies(&h), "sid=1; __Host-own=2");
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, format!("__Host-zm_app=ours; __Host-app_big={}", "x".repeat(MAX_APP_COOKIES)).parse().unwrap());
        for_app(&mut h, true);
        assert!(h.get(header::COOKIE).is_none());
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, "zm_app=ours; theme=dark".parse().unwrap());
        assert_eq!(ours(&h, false).as_deref(), Some("ours"));
        for_app(&mut h, false);
        assert_eq!(cookies(&h), "theme=dark");
    }

    #[test]
    fn what_the_app_sets_is_host_only_and_secure() {
        assert_eq!(namespaced("sid=1; Domain=localhost; Path=/x; HttpOnly; SameSite=Lax").as_deref(), Some("__Host-app_sid=1; Path=/; Secure; HttpOnly; SameSite=Lax"));
        assert_eq!(namespaced("__Host-own=2; Path=/; Secure").as_deref(), Some("__Host-own=2; Path=/; Secure"));
        assert_eq!(namespaced("__Host-zm_app=evil"), None);
        assert_eq!(plain("sid=1; domain=example.com; HttpOnly").as_deref(), Some("sid=1; HttpOnly"));
        assert_eq!(plain("zm_app=evil"), None);
    }

    #[test]
    fn other_origins_may_not_change_anything() {
        let own = ["http://abc.localhost:8080"];
        let mut h = HeaderMap::new();
        assert!(!cross_origin(&Method::POST, &h, &own), "no Origin: a script");
        h.insert(header::ORIGIN, "http://evil.localhost:8080".parse().unwrap());
        assert!(cross_origin(&Method::POST, &h, &own));
        assert!(!cross_origin(&Method::GET, &h, &own));
        h.insert(header::UPGRADE, "websocket".parse().unwrap());
        assert!(cross_origin(&Method::GET, &h, &own));
        h.insert(header::ORIGIN, "http://abc.localhost:8080".parse().unwrap());
        assert!(!cross_origin(&Method::GET, &h, &own));
        h.insert(header::ORIGIN, "null".parse().unwrap());
        assert!(cross_origin(&Method::DELETE, &h, &own));
    }

    #[test]
    fn an_apps_domain_on_the_markets_site_is_warned_of() {
        assert!(same_site_warning("https://market.example.com", "market.example.com").is_some());
        assert!(same_site_warning("https://market.example.com", "apps.example.com").is_some());
        assert!(same_site_warning("https://example.com", "apps.example.com").is_some());
        assert!(same_site_warning("https://market.example.com", "example-apps.net").is_none());
        assert!(same_site_warning("http://127.0.0.1:8080", "localhost").is_none());
        assert!(same_site_warning("http://localhost:8080", "localhost").is_none());
    }
}
