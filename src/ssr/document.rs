//! The HTML document around the rendered markup.

use crate::lang::Lang;
use crate::ssr::bundle::Manifest;

/// What search engines show under a page's title (issue 26: every page had none).
pub fn description(lang: Lang, product: &str) -> String {
    match lang {
        Lang::En => format!("{product}: explore apps and the devices near you, rent computing power on demand, and run apps on your own devices."),
        Lang::Zh => format!("{product}：探索应用和附近的设备，按需租用算力，在您自己的设备上运行应用。"),
    }
}

/// `markup: None` leaves the root empty for the client to render (`data-ssr="0"`).
pub fn page(manifest: &Manifest, lang: Lang, theme: &str, title: &str, description: &str, markup: Option<&str>, state_json: &str) -> String {
    let css = if manifest.css.is_empty() {
        String::new()
    } else {
        format!(r#"<link rel="stylesheet" href="/static/{}">"#, manifest.css)
    };
    // The markup is the page; the scripts only hydrate it. The boot script fetches them once the
    // markup is painted, so on a slow line they do not share it with the stylesheet (Lighthouse's
    // phone: first paint 2.6 s with the 32 scripts named in the head, issue 28).
    let script = if manifest.boot.is_empty() {
        format!(r#"<script type="module" src="/static/{}"></script>"#, manifest.js)
    } else {
        let mut preload = manifest.preload.join(" ");
        if let Some(chunk) = manifest.messages.get(lang.code()) {
            preload.push(' ');
            preload.push_str(chunk);
        }
        format!(
            r#"<script type="module" src="/static/{}" data-main="{}" data-preload="{}"></script>"#,
            manifest.boot,
            escape_html(&manifest.js),
            escape_html(&preload)
        )
    };
    let (ssr_flag, body) = match markup {
        Some(m) => ("1", m),
        None => ("0", ""),
    };
    format!(
        concat!(
            "<!doctype html><html lang=\"{lang}\" data-theme=\"{theme}\"><head><meta charset=\"utf-8\">",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
            "<meta name=\"theme-color\" content=\"#486aed\"><meta name=\"description\" content=\"{description}\">",
            "<title>{title}</title><link rel=\"icon\" href=\"/assets/icons/favicon.svg\" type=\"image/svg+xml\">",
            // Installable (issue 41): the manifest and the home-screen icon; no service worker.
            "<link rel=\"manifest\" href=\"/manifest.webmanifest\"><link rel=\"apple-touch-icon\" href=\"/assets/icons/app-192.png\">",
            "<meta name=\"mobile-web-app-capable\" content=\"yes\"><meta name=\"apple-mobile-web-app-capable\" content=\"yes\">",
            "{css}</head><body><div id=\"root\" data-ssr=\"{ssr}\">{body}</div>",
            "<script id=\"zm-state\" type=\"application/json\">{state}</script>",
            "{script}</body></html>"
        ),
        lang = lang.code(),
        theme = theme,
        title = escape_html(title),
        description = escape_html(description),
        css = css,
        ssr = ssr_flag,
        body = body,
        state = escape_json_for_script(state_json),
        script = script,
    )
}

/// `/manifest.webmanifest`: the phone site added to a home screen opens the market, standalone.
pub fn web_manifest(product: &str) -> String {
    let short: String = product.chars().take(12).collect();
    serde_json::json!({
        "name": product,
        "short_name": short,
        "start_url": "/m/market",
        "scope": "/",
        "display": "standalone",
        "theme_color": "#486aed",
        "background_color": "#ffffff",
        "icons": [
            {"src": "/assets/icons/app-192.png", "sizes": "192x192", "type": "image/png", "purpose": "any"},
            {"src": "/assets/icons/app-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
            {"src": "/assets/icons/favicon.svg", "sizes": "any", "type": "image/svg+xml"}
        ]
    })
    .to_string()
}

pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// JSON inside a `<script>` element: nothing in it may close the element or start a comment.
pub fn escape_json_for_script(json: &str) -> String {
    json.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026").replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_cannot_close_the_script() {
        let s = escape_json_for_script(r#"{"a":"</script><script>alert(1)</script>"}"#);
        assert!(!s.contains("</script>"));
        assert!(s.contains("\\u003c/script\\u003e"));
    }
}
