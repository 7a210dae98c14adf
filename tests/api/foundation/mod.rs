//! The foundation: pages (rendering, redirects, language, headers, the bundle's files, the render
//! pool); the API's conventions and what the document promises of every input (`api.rs`); the
//! process itself: configuration, data files, mail, the signing key, the database, shared jobs
//! (`running.rs`); the server's connections: time-outs, slow bodies, caps (`connections.rs`).

use std::time::Duration;

use serde_json::json;

use crate::common::{TestApp, header, json_of, stored, token_of};

mod api;
mod connections;
mod running;

#[tokio::test]
async fn health_and_readiness() {
    let app = TestApp::spawn().await;
    let res = app.get("/healthz").await;
    assert_eq!(res.status(), 200);
    let res = app.get("/readyz").await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.unwrap(), "ready");
}

#[tokio::test]
async fn root_redirects_to_market_and_market_is_a_rendered_page() {
    let app = TestApp::spawn().await;
    let res = app.get("/").await;
    assert_eq!(res.status(), 302);
    assert_eq!(header(res.headers(), "location"), "/market");

    let res = app.get("/market").await;
    assert_eq!(res.status(), 200);
    let h = res.headers().clone();
    assert!(header(&h, "content-type").starts_with("text/html"));
    assert_eq!(header(&h, "cache-control"), "no-cache");
    assert_eq!(header(&h, "x-render"), "server");
    let body = res.text().await.unwrap();
    assert!(body.contains("<title>") && body.contains(" - ZMarket</title>"), "title: {body}");
    assert!(body.contains(r#"<html lang="en" data-theme="dark">"#));
    assert!(body.contains(r#"<div id="root" data-ssr="1">"#));
    assert!(body.contains(r#"<script id="zm-state" type="application/json">"#));
    // The root holds server-rendered markup, not an empty shell.
    let root = body.split(r#"data-ssr="1">"#).nth(1).unwrap();
    assert!(!root.starts_with("</div>"), "root is empty");

    // A second request is answered from the render cache.
    let res = app.get("/market").await;
    assert_eq!(header(res.headers(), "x-render"), "cache");
}

#[tokio::test]
async fn product_name_comes_from_config() {
    let app = TestApp::spawn_with(|c| c.product_name = "Acme Compute".into()).await;
    let body = app.get("/market").await.text().await.unwrap();
    assert!(body.contains(" - Acme Compute</title>"), "{body}");
}

#[tokio::test]
async fn unknown_page_is_the_404_page_with_status_404() {
    let app = TestApp::spawn().await;
    let res = app.get("/no/such/page").await;
    assert_eq!(res.status(), 404);
    assert!(header(res.headers(), "content-type").starts_with("text/html"));
    let body = res.text().await.unwrap();
    assert!(body.contains("<title>"));
}

#[tokio::test]
async fn other_redirects_and_phone_redirect() {
    let app = TestApp::spawn().await;
    for (from, to) in [("/auth", "/auth/signin"), ("/m", "/m/market"), ("/?language=zh", "/market?language=zh")] {
        let res = app.get(from).await;
        assert_eq!(res.status(), 302, "{from}");
        assert_eq!(header(res.headers(), "location"), to, "{from}");
    }
    let phone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";
    // A desktop page with a phone twin keeps its subject (issue 26); the others land on the
    // mobile market, keeping only the language.
    for (from, to) in [
        ("/market/details?id=grafana", "/m/market/details?id=grafana"),
        ("/market/details/?id=1", "/m/market/details?id=1"),
        ("/market?category=AI", "/m/market?category=AI"),
        ("/market/more?keyword=db", "/m/market/more?keyword=db"),
        ("/nearby", "/m/nearby"),
        ("/nearby/details?id=d1", "/m/nearby/details?id=d1"),
        ("/guide?language=zh", "/m/guide?language=zh"),
        ("/terms-of-use", "/m/terms-of-use"),
        ("/privacy-policy", "/m/privacy-policy"),
        // The console pages a phone has (issue 41) keep their query too.
        ("/auth/signin?redirect=/app", "/m/auth/signin?redirect=/app"),
        ("/app?language=zh&x=1", "/m/app?language=zh&x=1"),
        ("/devices?language=zh&x=1", "/m/market?language=zh"),
        ("/company?language=fr", "/m/market"),
        ("/friends", "/m/market"),
    ] {
        let res = app.client.get(app.url(from)).header("user-agent", phone).send().await.unwrap();
        assert_eq!(res.status(), 302, "{from}");
        assert_eq!(header(res.headers(), "location"), to, "{from}");
    }
    let android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Mobile Safari/537.36";
    let res = app.client.get(app.url("/market/details?id=grafana")).header("user-agent", android).send().await.unwrap();
    assert_eq!(header(res.headers(), "location"), "/m/market/details?id=grafana");
    // A computer stays where it is.
    assert_eq!(app.get("/market/details?id=grafana").await.status(), 200);
    for exempt in ["/email-verified", "/check-email", "/iam/v1/sme/join", "/company-email", "/m/market"] {
        let res = app.client.get(app.url(exempt)).header("user-agent", phone).send().await.unwrap();
        assert_ne!(res.status(), 302, "{exempt} must not redirect a phone");
    }
}

#[tokio::test]
async fn page_language_follows_query_then_cookie_then_accept_language() {
    let app = TestApp::spawn().await;
    let lang_of = |body: &str| body.split("<html lang=\"").nth(1).unwrap()[..2].to_string();
    let get = |path: &'static str, headers: Vec<(&'static str, &'static str)>| {
        let mut req = app.client.get(app.url(path));
        for (k, v) in headers {
            req = req.header(k, v);
        }
        async move { req.send().await.unwrap().text().await.unwrap() }
    };
    assert_eq!(lang_of(&get("/market", vec![]).await), "en");
    assert_eq!(lang_of(&get("/market", vec![("accept-language", "zh-CN,zh;q=0.9")]).await), "zh");
    assert_eq!(lang_of(&get("/market", vec![("cookie", "a=b; zm_lang=zh")]).await), "zh");
    assert_eq!(lang_of(&get("/market?language=en", vec![("cookie", "zm_lang=zh")]).await), "en");
    assert_eq!(lang_of(&get("/market?language=zh", vec![]).await), "zh");
}

#[tokio::test]
async fn map_page_is_light_others_dark() {
    let app = TestApp::spawn().await;
    let body = app.get("/nearby/map").await.text().await.unwrap();
    assert!(body.contains(r#"data-theme="light""#));
    let body = app.get("/nearby").await.text().await.unwrap();
    assert!(body.contains(r#"data-theme="dark""#));
}

#[tokio::test]
async fn security_headers_on_every_response() {
    let app = TestApp::spawn().await;
    // Documents: the page's policy.
    for path in ["/market", "/no-such-page"] {
        let res = app.get(path).await;
        let h = res.headers();
        assert!(header(h, "content-type").starts_with("text/html"), "{path}");
        let csp = header(h, "content-security-policy");
        assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
        assert!(!csp.split(';').any(|d| d.trim().starts_with("script-src") && d.contains("unsafe-inline")), "{path}: {csp}");
        assert!(csp.contains("object-src 'none'"), "{path}");
        assert!(csp.contains("base-uri 'none'"), "{path}");
        assert!(csp.contains("frame-ancestors 'none'"), "{path}");
        assert_eq!(header(h, "x-content-type-options"), "nosniff", "{path}");
        assert_eq!(header(h, "referrer-policy"), "strict-origin-when-cross-origin", "{path}");
        assert_eq!(header(h, "cross-origin-opener-policy"), "same-origin", "{path}");
        assert_eq!(header(h, "x-frame-options"), "DENY", "{path}");
        assert!(!header(h, "x-request-id").is_empty(), "{path}");
    }
    // Anything else can run nothing as a page: `default-src 'none'`, no page-only headers.
    for path in ["/api/ebs/v1/download/links", "/api/nope", "/healthz", "/static/missing.js", "/assets/icons/favicon.svg"] {
        let res = app.get(path).await;
        let h = res.headers();
        let csp = header(h, "content-security-policy");
        let svg = header(h, "content-type").starts_with("image/svg+xml");
        if svg {
            // An SVG can be opened as a document: it keeps the page's policy.
            assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
        } else {
            assert_eq!(csp, "default-src 'none'; frame-ancestors 'none'", "{path}");
            assert!(h.get("permissions-policy").is_none() && h.get("cross-origin-opener-policy").is_none(), "{path}");
        }
        assert_eq!(header(h, "x-content-type-options"), "nosniff", "{path}");
        assert_eq!(header(h, "x-frame-options"), "DENY", "{path}");
        assert!(!header(h, "x-request-id").is_empty(), "{path}");
    }
}

#[tokio::test]
async fn pc_mode_host_may_frame_the_app_when_configured() {
    let app = TestApp::spawn_with(|c| c.server.frame_ancestors = vec!["https://desktop.example".into()]).await;
    for path in ["/market", "/api/ebs/v1/download/links"] {
        let res = app.get(path).await;
        let h = res.headers();
        assert!(header(h, "content-security-policy").contains("frame-ancestors https://desktop.example"), "{path}");
        assert!(h.get("x-frame-options").is_none(), "{path}");
    }
}

#[tokio::test]
async fn pages_have_no_inline_script() {
    let app = TestApp::spawn().await;
    let body = app.get("/market").await.text().await.unwrap();
    // Every <script> either has a src or is the non-executable JSON state.
    for tag in body.split("<script").skip(1) {
        let open = &tag[..tag.find('>').unwrap()];
        assert!(open.contains("src=") || open.contains("type=\"application/json\""), "inline script: {open}");
    }
}

#[tokio::test]
async fn bundle_files_are_immutable_and_missing_files_are_the_tables_404s() {
    let app = TestApp::spawn().await;
    let body = app.get("/market").await.text().await.unwrap();
    let js = body.split(r#"<script type="module" src=""#).nth(1).unwrap().split('"').next().unwrap().to_string();
    assert!(js.starts_with("/static/"));
    let res = app.get(&js).await;
    assert_eq!(res.status(), 200);
    assert_eq!(header(res.headers(), "cache-control"), "public, max-age=31536000, immutable");
    assert!(header(res.headers(), "content-type").contains("javascript"));

    for missing in ["/static/main-nope.js", "/assets/nope.svg"] {
        let res = app.get(missing).await;
        assert_eq!(res.status(), 404, "{missing}");
        // The table's refusal, never a page.
        assert!(header(res.headers(), "content-type").starts_with("application/json"), "{missing}");
        let body: serde_json::Value = res.json().await.unwrap();
        assert_eq!(body["error"], "not_found", "{missing}");
    }

    let res = app.get("/assets/icons/favicon.svg").await;
    assert_eq!(res.status(), 200);
    assert_eq!(header(res.headers(), "content-type"), "image/svg+xml");
}

#[tokio::test]
async fn responses_are_compressed_when_asked() {
    let app = TestApp::spawn().await;
    for enc in ["gzip", "br"] {
        let res = app.client.get(app.url("/market")).header("accept-encoding", enc).send().await.unwrap();
        assert_eq!(header(res.headers(), "content-encoding"), enc);
    }
}

#[tokio::test]
async fn a_saturated_render_pool_falls_back_to_client_rendering() {
    let app = TestApp::spawn_with(|c| {
        c.ssr.threads = 1;
        c.ssr.queue = 1;
    })
    .await;
    let mut tasks = Vec::new();
    for i in 0..24 {
        let client = app.client.clone();
        let url = app.url(&format!("/market?n={i}"));
        tasks.push(tokio::spawn(async move {
            let res = client.get(url).send().await.unwrap();
            let status = res.status().as_u16();
            let kind = header(res.headers(), "x-render").to_string();
            let body = res.text().await.unwrap();
            (status, kind, body)
        }));
    }
    let mut client_rendered = 0;
    for t in tasks {
        let (status, kind, body) = t.await.unwrap();
        assert_eq!(status, 200);
        if kind == "client" {
            client_rendered += 1;
            assert!(body.contains(r#"<div id="root" data-ssr="0"></div>"#));
            assert!(body.contains(r#"<script id="zm-state" type="application/json">"#));
        } else {
            assert_eq!(kind, "server");
            assert!(body.contains(r#"data-ssr="1""#));
        }
    }
    assert!(client_rendered > 0, "24 concurrent renders on one thread with a queue of one must overflow");
    // The server is still fine afterwards.
    let res = app.get("/market?after=1").await;
    assert_eq!(header(res.headers(), "x-render"), "server");
}

#[tokio::test]
async fn server_renders_report_their_time() {
    let app = TestApp::spawn().await;
    let res = app.get("/market?timing=1").await;
    let timing = header(res.headers(), "server-timing");
    assert!(timing.starts_with("render;dur="), "{timing}");
}

#[tokio::test]
async fn pages_carry_a_meta_description_in_their_language() {
    // Issue 26: Lighthouse found no meta description on any page.
    let app = TestApp::spawn().await;
    for (path, expected) in [
        ("/market", "explore apps and the devices near you"),
        ("/market?language=zh", "探索应用和附近的设备"),
        ("/auth/signin", "explore apps"),
        ("/no-such-page", "explore apps"),
    ] {
        let body = app.get(path).await.text().await.unwrap();
        let meta = body.split("<meta name=\"description\" content=\"").nth(1).unwrap_or_else(|| panic!("{path}: no description"));
        let content = &meta[..meta.find('"').unwrap()];
        assert!(content.contains(expected), "{path}: {content}");
        assert!(content.starts_with("ZMarket"), "{path}: {content}");
    }
}
