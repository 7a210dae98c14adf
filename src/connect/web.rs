//! Apps through the market, each on its own origin: `http://<label>.<apps domain>:<port>/`
//! where the label is the installation id (32 hex digits). "Open" (`GET /apps/{id}/open`)
//! hands a one-time link `…/_zmarket/enter?token=…` on that origin; the origin swaps it for an
//! HttpOnly `__Host-` cookie scoped to itself, so one app never sees another's cookie or the
//! market's session (src/connect/cookies.rs: what reaches the app, what a sibling cannot do).
//! Every request on the origin is checked against the cookie (the session that opened it still
//! alive, the person still allowed, the app running) and carried to the container's web port
//! over the agent channel; WebSockets pass through.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use hmac::{Hmac, Mac};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
use sha2::Sha256;

use crate::ids::{CompanyId, DeviceId, InstallationId, UserId};
use crate::connect::ConnectCtx;
use crate::connect::access::{self, door};
use crate::connect::rights::Reach;
use crate::connect::{cookies, forward, proxy};
use crate::db::entity::{connect_tokens, sessions};
use crate::db::now;
use crate::error::{AppError, Msg};
use crate::iam::auth::{Auth, Context, PERSONAL, membership};
use crate::iam::tokens::{hash_token, random_token};
use crate::lang::Lang;

/// Where the one-time link lands on the app origin.
pub const ENTER: &str = "/_zmarket/enter";
/// How long a checked cookie is trusted before it is checked again.
const CHECKED_FOR: Duration = Duration::from_secs(2);

/// The origin label of an installation: its id's 32 hex digits.
pub fn label(installation_id: &InstallationId) -> String {
    installation_id.as_str().replace('-', "").to_ascii_lowercase()
}

/// The installation a `Host` names on the apps domain.
pub fn installation_of_host(host: &str, apps_domain: &str) -> Option<InstallationId> {
    let host = host.rsplit_once(':').filter(|(_, p)| p.chars().all(|c| c.is_ascii_digit())).map_or(host, |(h, _)| h);
    // Every request asks: the market's own hosts are told apart without an allocation.
    if host.len() != 33 + apps_domain.len() {
        return None;
    }
    let host = host.to_ascii_lowercase();
    let label = host.strip_suffix(apps_domain)?.strip_suffix('.')?;
    if label.len() != 32 || !label.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    Some(InstallationId::from(format!("{}-{}-{}-{}-{}", &label[0..8], &label[8..12], &label[12..16], &label[16..20], &label[20..32])))
}

/// The app origin of an installation, e.g. `http://0190…ab.localhost:8080`.
pub fn origin(cx: &ConnectCtx, installation_id: &InstallationId) -> String {
    let url = url::Url::parse(&cx.public_url).ok();
    let scheme = url.as_ref().map_or("http", |u| u.scheme());
    let port = url.as_ref().and_then(|u| u.port()).map(|p| format!(":{p}")).unwrap_or_default();
    format!("{scheme}://{}.{}{port}", label(installation_id), cx.apps_domain)
}

/// A one-time link that opens the installation's web interface for this caller.
pub async fn open_link(cx: &ConnectCtx, auth: &Auth, installation_id: &InstallationId) -> Result<String, AppError> {
    // The origin's cookie lives as long as a browser's session: an API key opens no browser.
    let session = auth.session()?.to_string();
    let token = random_token();
    let t = now();
    connect_tokens::ActiveModel {
        token_hash: Set(hash_token(&token)),
        installation_id: Set(InstallationId::from(installation_id)),
        user_id: Set(UserId::from(&auth.user_id)),
        session_id: Set(session),
        sme_id: Set(auth.context.sme_id().to_string()),
        expires_at: Set(t + chrono::Duration::seconds(cx.settings.open_token_ttl_secs as i64)),
        used_at: Set(None),
        created_at: Set(t),
    }
    .insert(&cx.db)
    .await?;
    connect_tokens::Entity::delete_many().filter(connect_tokens::Column::ExpiresAt.lt(t - chrono::Duration::hours(1))).exec(&cx.db).await?;
    Ok(format!("{}{ENTER}?token={token}", origin(cx, installation_id)))
}

/// Where the edge of the middleware stack (src/stack.rs) sends a request, decided without an
/// allocation or an await for the market's own requests.
pub enum Destination {
    /// An app origin (`<label>.<apps domain>`): the installation, served by [`serve`].
    App(String),
    /// A stream path of the API whose device's channel another instance may hold: [`carried`].
    MaybeElsewhere,
    /// The market.
    Market,
}

/// A request for an app origin is served here, anything else by the market (a stream of a
/// device whose channel another instance holds is carried there first).
pub fn destination(cx: &ConnectCtx, req: &Request) -> Destination {
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).or_else(|| req.uri().host()).unwrap_or("");
    if let Some(id) = installation_of_host(host, &cx.apps_domain) {
        return Destination::App(id.into());
    }
    let path = req.uri().path();
    if (path.starts_with("/api/rmp/v1/apps/") || path.starts_with("/api/ebs/v2/devices/")) && !forward::was_forwarded(req) {
        return Destination::MaybeElsewhere;
    }
    Destination::Market
}

/// A [`Destination::MaybeElsewhere`] request: carried to the instance holding its device's
/// channel (its answer), or given back for the market to serve.
pub async fn carried(cx: &ConnectCtx, req: Request) -> Result<Response, Request> {
    let path = req.uri().path().to_string();
    if let Some(device) = forward::device_of_path(cx, &path).await
        && let Some(url) = forward::elsewhere(cx, false, &device).await
    {
        return Ok(forward::carry(&url, req, proto(cx)).await);
    }
    Err(req)
}

fn proto(cx: &ConnectCtx) -> &'static str {
    if cx.public_url.starts_with("https:") { "https" } else { "http" }
}

/// Whether the app origins keep a Secure `__Host-` cookie (src/connect/cookies.rs).
fn secure_cookies(cx: &ConnectCtx) -> bool {
    cookies::secure(&cx.public_url, &cx.apps_domain)
}

/// A request for the app origin of installation `id`.
pub async fn serve(cx: &ConnectCtx, id: InstallationId, req: Request) -> Response {
    let lang = Lang::from_headers(req.headers());
    if req.uri().path() == ENTER {
        let query = req.uri().query().map(str::to_string);
        return enter(cx, &id, query.as_deref(), lang).await;
    }
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("").to_string();
    // A sibling's page acting on this app with its cookie (issue 43, item 3).
    let (asked, canonical) = (format!("{}://{host}", proto(cx)), origin(cx, &id));
    if cookies::cross_origin(req.method(), req.headers(), &[&asked, &canonical]) {
        return page(Msg::AppCrossOrigin, lang, cx);
    }
    let secure = secure_cookies(cx);
    let Some(cookie) = cookies::ours(req.headers(), secure) else { return page(Msg::AppSignInRequired, lang, cx) };
    let (device, port, auth) = match checked(cx, &id, &cookie).await {
        Ok(x) => x,
        Err(e) => return error_page(e, lang, cx),
    };
    if let Some(url) = forward::elsewhere(cx, forward::was_forwarded(&req), &device).await {
        return as_page(forward::carry(&url, req, proto(cx)).await, lang, cx);
    }
    let Some(link) = cx.channels.get(device.as_str()) else { return page(Msg::DeviceOffline, lang, cx) };
    let mut req = req;
    cookies::for_app(req.headers_mut(), secure);
    // An app's WebSocket is an open stream like a terminal: it ends with the right that opened
    // it (the session, the person, the company, the assignment, the rental; issue 43, item 2).
    let watched = proxy::is_upgrade(req.headers()).then(|| cx.rights.watch(&auth, Reach::Running(InstallationId::from(id.clone()))));
    let socket = (crate::sockets::Kind::App, Some(device.as_str()));
    let mut res = match proxy::forward_kept(&link, &id, port, req, proxy::Hop { strip_cookie: None, forwarded_host: &host, proto: proto(cx), socket, watched }).await {
        Ok(res) => res,
        Err(reason) => {
            CHECKED.lock().unwrap().retain(|k, _| !k.starts_with(id.as_str()));
            return page(access::stream_refused(reason).msg(), lang, cx);
        }
    };
    cookies::from_app(res.headers_mut(), secure);
    as_page(res, lang, cx)
}

/// A refusal met on the way (the app gave no answer, the instance holding the box does not
/// answer) as the origin's page; any other answer as it is.
fn as_page(res: Response, lang: Lang, cx: &ConnectCtx) -> Response {
    match crate::error::refusal_of(&res) {
        Some(msg) => page(msg, lang, cx),
        None => res,
    }
}

/// Swaps a one-time token for the origin's cookie, then goes to the app's front page.
async fn enter(cx: &ConnectCtx, id: &InstallationId, query: Option<&str>, lang: Lang) -> Response {
    let token = query.and_then(|q| url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "token").map(|(_, v)| v.into_owned()));
    let Some(token) = token else { return page(Msg::OpenLinkInvalid, lang, cx) };
    let t = now();
    let used = connect_tokens::Entity::update_many()
        .col_expr(connect_tokens::Column::UsedAt, Expr::value(t))
        .filter(connect_tokens::Column::TokenHash.eq(hash_token(&token)))
        .filter(connect_tokens::Column::InstallationId.eq(id))
        .filter(connect_tokens::Column::UsedAt.is_null())
        .filter(connect_tokens::Column::ExpiresAt.gt(t))
        .exec(&cx.db)
        .await;
    if !matches!(used, Ok(r) if r.rows_affected == 1) {
        return page(Msg::OpenLinkInvalid, lang, cx);
    }
    let Ok(Some(row)) = connect_tokens::Entity::find_by_id(hash_token(&token)).one(&cx.db).await else {
        return page(Msg::OpenLinkInvalid, lang, cx);
    };
    let exp = Utc::now().timestamp() + cx.settings.cookie_ttl_secs as i64;
    let value = sign(cx, &format!("{id}.{}.{}.{exp}", row.session_id, row.sme_id));
    let secure = secure_cookies(cx);
    let attrs = if secure { "; Secure" } else { "" };
    let cookie = format!("{}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{attrs}", cookies::name(secure), cx.settings.cookie_ttl_secs);
    let mut res = StatusCode::FOUND.into_response();
    res.headers_mut().insert(header::LOCATION, HeaderValue::from_static("/"));
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        res.headers_mut().insert(header::SET_COOKIE, v);
    }
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

fn sign(cx: &ConnectCtx, payload: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(&cx.cookie_key[..]).expect("any key length");
    mac.update(payload.as_bytes());
    format!("{payload}.{}", hex::encode(mac.finalize().into_bytes()))
}

/// The payload of a cookie value this market signed, for this installation and not expired:
/// (session id, sme id).
fn verify(cx: &ConnectCtx, id: &InstallationId, value: &str) -> Option<(String, String)> {
    let (payload, sig) = value.rsplit_once('.')?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&cx.cookie_key[..]).ok()?;
    mac.update(payload.as_bytes());
    mac.verify_slice(&hex::decode(sig).ok()?).ok()?;
    let mut parts = payload.split('.');
    let (inst, session, sme, exp) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if inst != id || parts.next().is_some() || exp.parse::<i64>().ok()? <= Utc::now().timestamp() {
        return None;
    }
    Some((session.to_string(), sme.to_string()))
}

/// Cookies checked in the last moments: (checked at, device id, web port, who) until the instant.
type Checked = Mutex<HashMap<String, (Instant, String, u16, Auth)>>;

static CHECKED: std::sync::LazyLock<Checked> = std::sync::LazyLock::new(|| Mutex::new(HashMap::new()));

/// Who the cookie speaks for may reach the installation's web interface now: its device, the
/// container's web port, and who that is.
async fn checked(cx: &ConnectCtx, id: &InstallationId, cookie: &str) -> Result<(DeviceId, u16, Auth), AppError> {
    let key = format!("{id} {cookie}");
    if let Some((at, device, port, auth)) = CHECKED.lock().unwrap().get(&key).cloned()
        && at.elapsed() < CHECKED_FOR
    {
        return Ok((device.into(), port, auth));
    }
    let (session_id, sme) = verify(cx, id, cookie).ok_or(AppError::Refused(Msg::AppSignInRequired))?;
    let session = sessions::Entity::find_by_id(session_id.clone()).one(&cx.db).await?.ok_or(AppError::Refused(Msg::AppSignInRequired))?;
    if session.revoked_at.is_some() || session.expires_at <= now() {
        return Err(AppError::Refused(Msg::AppSignInRequired));
    }
    let context = if sme == PERSONAL {
        Context::Personal
    } else {
        let m = membership(&cx.db, &CompanyId::from(&sme), &session.user_id).await?.ok_or(AppError::Refused(Msg::NoPermissionApps))?;
        Context::of(&sme, Some(m.role))
    };
    let auth = Auth { user_id: session.user_id.clone().into(), session_id, context, api_key: None };
    let d = door(cx, &auth, &InstallationId::from(id)).await?;
    d.running()?;
    let port = d.web_port().ok_or(AppError::Refused(Msg::AppHasNoWeb))?;
    let device = d.device.as_ref().filter(|_| d.device_online()).map(|d| d.id.clone()).ok_or(AppError::Refused(Msg::DeviceOffline))?;
    let mut cache = CHECKED.lock().unwrap();
    if cache.len() > 10_000 {
        cache.retain(|_, (at, ..)| at.elapsed() < CHECKED_FOR);
    }
    cache.insert(key, (Instant::now(), device.clone().into(), port, auth.clone()));
    Ok((device.into(), port, auth))
}

fn error_page(e: AppError, lang: Lang, cx: &ConnectCtx) -> Response {
    if let AppError::Internal(err) = &e {
        tracing::warn!(error = %err, "app origin request failed");
    }
    page(e.msg(), lang, cx)
}

/// A small page that says why the app cannot be reached, with the way back to the market, and
/// the message's status from the one table.
fn page(msg: Msg, lang: Lang, cx: &ConnectCtx) -> Response {
    let text = html_escape(&msg.text(lang));
    let back = if lang == Lang::Zh { "返回市场" } else { "Back to the market" };
    let body = format!(
        "<!doctype html><html lang=\"{}\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{text}</title>\
         <style>body{{font:16px system-ui,sans-serif;background:#0f172a;color:#e2e8f0;display:grid;place-items:center;min-height:90vh}}a{{color:#7dd3fc}}</style></head>\
         <body><main><h1 style=\"font-size:20px\">{text}</h1><p><a href=\"{}/app\">{back}</a></p></main></body></html>",
        lang.code(),
        html_escape(&cx.public_url)
    );
    let mut res = (msg.code().0, body).into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_name_installations() {
        let id = &InstallationId::from("0190aabb-ccdd-7eef-8011-223344556677");
        let host = format!("{}.localhost:8080", label(id));
        assert_eq!(installation_of_host(&host, "localhost").as_ref(), Some(id));
        assert_eq!(installation_of_host(&host.to_uppercase(), "localhost").as_ref(), Some(id));
        assert_eq!(installation_of_host("localhost:8080", "localhost"), None);
        assert_eq!(installation_of_host("evil.localhost", "localhost"), None);
        assert_eq!(installation_of_host(&format!("{}.example.com", label(id)), "localhost"), None);
        assert_eq!(installation_of_host(&format!("x{}.localhost", label(id)), "localhost"), None);
    }
}
