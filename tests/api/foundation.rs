use std::time::Duration;

use serde_json::json;

use crate::common::{TestApp, header, json_of, stored, token_of};

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
async fn the_request_id_is_kept_when_given() {
    let app = TestApp::spawn().await;
    let res = app.client.get(app.url("/healthz")).header("x-request-id", "abc-123").send().await.unwrap();
    assert_eq!(header(res.headers(), "x-request-id"), "abc-123");
}

#[tokio::test]
async fn unknown_api_paths_answer_the_json_envelope_in_the_asked_language() {
    let app = TestApp::spawn().await;
    let (status, body) = app.get_json("/api/ebs/v1/nope").await;
    assert_eq!(status, 404);
    assert_eq!(body["code"], 404);
    assert_eq!(body["msg"], "No such API endpoint");
    assert_eq!(body["error"], "api_not_found");
    assert!(body["data"].is_null());

    let res = app.client.get(app.url("/api/nope")).header("accept-language", "zh-CN,zh;q=0.9").send().await.unwrap();
    assert!(header(res.headers(), "content-type").starts_with("application/json"));
    let (status, body) = json_of(res).await;
    assert_eq!(status, 404);
    assert_eq!(body["msg"], "接口不存在");
    assert_eq!(body["error"], "api_not_found", "the name is the same in every language");

    // A known path with the wrong method is the envelope too, never HTML.
    let (status, body) = app.post_json("/api/ebs/v1/download/links", &json!({}), None).await;
    assert_eq!(status, 405);
    assert_eq!(body["code"], 405);
    assert_eq!(body["error"], "method_not_allowed");
}

/// Each message answers with its own status and stable name wherever it is raised (the one table
/// of src/error/msg.rs): a field refused, a rule refused with data that explains it, the same
/// message in Chinese.
#[tokio::test]
async fn refusals_carry_their_stable_name() {
    let app = TestApp::spawn().await;
    let (status, body) = app.post_json("/api/iam/v1/register", &json!({"email": "not-an-email", "password": crate::common::PASSWORD, "confirm_password": crate::common::PASSWORD, "agree": true}), None).await;
    assert_eq!((status, body["code"].as_u64(), body["error"].as_str()), (400, Some(400), Some("email_format_invalid")), "{body}");
    assert_eq!(body["data"]["field"], "email");

    let a = app.signed_in("names@example.com").await;
    let (status, body) = app.post_json("/api/billing/v1/wallet/redeem", &json!({"code": "ZM-2222-3333-4444-5555"}), Some(&token_of(&a))).await;
    assert_eq!((status, body["code"].as_u64(), body["error"].as_str()), (404, Some(404), Some("top_up_code_not_found")), "{body}");
    let (status, body) = app.post_json("/api/billing/v1/wallet/redeem", &json!({"code": ""}), Some(&token_of(&a))).await;
    assert_eq!((status, body["error"].as_str(), body["data"]["field"].as_str()), (400, Some("top_up_code_invalid"), Some("code")), "{body}");

    let res = app.client.get(app.url("/api/iam/v1/account/profile")).header("accept-language", "zh").send().await.unwrap();
    let (status, body) = json_of(res).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("unauthorized")), "{body}");
    assert_eq!(body["msg"], "请先登录");
}

#[tokio::test]
async fn download_links_come_from_config() {
    let app = TestApp::spawn_with(|c| {
        c.downloads.windows = "https://dl.example/zmarket.exe".into();
        c.downloads.android = "https://dl.example/zmarket.apk".into();
    })
    .await;
    let (status, body) = app.get_json("/api/ebs/v1/download/links").await;
    assert_eq!(status, 200);
    assert_eq!(body["code"], 200);
    assert_eq!(
        body["data"],
        json!({"windows": "https://dl.example/zmarket.exe", "mac": "", "android": "https://dl.example/zmarket.apk", "ios": ""})
    );
}

#[tokio::test]
async fn openapi_document_lists_the_endpoints() {
    let app = TestApp::spawn().await;
    let res = app.get("/api/openapi.json").await;
    assert_eq!(res.status(), 200);
    let doc: serde_json::Value = res.json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    assert!(doc["paths"]["/api/ebs/v1/download/links"]["get"].is_object());
    // Generated clients name an operation by its id: no two operations share one.
    let mut ids = std::collections::HashMap::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let id = op["operationId"].as_str().unwrap_or_else(|| panic!("{method} {path} has no operationId"));
            if let Some(other) = ids.insert(id.to_string(), format!("{method} {path}")) {
                panic!("operationId {id} is used by {other} and by {method} {path}");
            }
            // A path parameter is a `{name}` of the path; everything else is in the query
            // (Schemathesis found query fields documented as required path parameters).
            for p in op["parameters"].as_array().into_iter().flatten() {
                let name = p["name"].as_str().unwrap();
                if p["in"] == "path" {
                    assert!(path.contains(&format!("{{{name}}}")), "{method} {path}: `{name}` is documented in the path");
                }
            }
        }
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
async fn mail_without_smtp_is_written_as_an_eml_file() {
    let app = TestApp::spawn().await;
    let txn = zmarket::db::write_txn(&app.state.db).await.unwrap();
    app.state
        .mailer
        .enqueue(
            &txn,
            zmarket::mail::Mail {
                to: "ada@example.com",
                subject: "Verify your email",
                body: "Open http://localhost:8080/email-verified?token=abc to verify. 验证邮箱",
                link: Some("http://localhost:8080/email-verified?token=abc"),
            },
        )
        .await
        .unwrap();
    txn.commit().await.unwrap();
    app.state.mailer.wake();
    let mails = app.wait_for_mails(1).await;
    let m = &mails[0];
    assert!(m.contains("To: ada@example.com"), "{m}");
    assert!(m.contains("Subject: Verify your email"), "{m}");
    assert!(m.contains("http://localhost:8080/email-verified?token=abc"), "{m}");
    assert!(m.contains("验证邮箱"), "{m}");
    // Delivered once: a second pass finds nothing due.
    assert_eq!(app.state.mailer.deliver_due().await.unwrap(), 0);
    assert_eq!(app.mails().await.len(), 1);
}

#[tokio::test]
async fn mail_to_an_unreachable_smtp_server_is_kept_and_retried() {
    let app = TestApp::spawn_with(|c| {
        c.mail.smtp_host = "127.0.0.1".into();
        c.mail.smtp_port = 9; // discard port: nothing listens
        c.mail.smtp_security = "none".into();
    })
    .await;
    let txn = zmarket::db::write_txn(&app.state.db).await.unwrap();
    app.state
        .mailer
        .enqueue(&txn, zmarket::mail::Mail { to: "bob@example.com", subject: "Hi", body: "Hello", link: None })
        .await
        .unwrap();
    txn.commit().await.unwrap();
    assert_eq!(app.state.mailer.deliver_due().await.unwrap(), 0);
    use sea_orm::EntityTrait;
    // The start-up delivery pass may hold the claim: wait for its attempt to end.
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows = zmarket::db::entity::mail_outbox::Entity::find().all(&app.state.db).await.unwrap();
        if rows.iter().all(|r| r.status != zmarket::db::enums::MailStatus::Sending) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, zmarket::db::enums::MailStatus::Pending);
    assert_eq!(stored(&app, "SELECT status FROM mail_outbox").await, [["pending"]]);
    assert_eq!(rows[0].attempts, 1);
    assert!(rows[0].last_error.is_some());
    assert!(rows[0].next_attempt_at > chrono::Utc::now());
    assert!(app.mails().await.is_empty());
}

#[tokio::test]
async fn the_signing_key_is_generated_once_with_mode_0600() {
    let app = TestApp::spawn().await;
    let path = app.dir.path().join("jwt.key");
    let key = std::fs::read_to_string(&path).unwrap();
    assert!(key.len() >= 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let again = zmarket::secrets::jwt_secret(&app.state.config).unwrap();
    assert_eq!(hex::encode(again), key);
}

#[tokio::test]
async fn concurrent_write_transactions_do_not_fail_with_database_locked() {
    let app = TestApp::spawn().await;
    let mut tasks = Vec::new();
    for i in 0..40 {
        let state = app.state.clone();
        tasks.push(tokio::spawn(async move {
            let txn = zmarket::db::write_txn(&state.db).await?;
            use sea_orm::{EntityTrait, PaginatorTrait};
            // read, then write in the same transaction: the pattern that deadlocks with BEGIN DEFERRED
            let _n = zmarket::db::entity::mail_outbox::Entity::find().count(&txn).await?;
            let to = format!("u{i}@example.com");
            state.mailer.enqueue(&txn, zmarket::mail::Mail { to: &to, subject: "s", body: "b", link: None }).await?;
            txn.commit().await
        }));
    }
    for t in tasks {
        t.await.unwrap().expect("no database-locked error");
    }
    use sea_orm::{EntityTrait, PaginatorTrait};
    assert_eq!(zmarket::db::entity::mail_outbox::Entity::find().count(&app.state.db).await.unwrap(), 40);
}

#[test]
fn invalid_configuration_names_the_key() {
    let err = zmarket::config::Config::from_toml("[server]\nbind = \"not-an-address\"").unwrap_err();
    assert!(err.to_string().contains("server.bind"), "{err}");
    let err = zmarket::config::Config::from_toml("[log]\nformat = \"xml\"").unwrap_err();
    assert!(err.to_string().contains("log.format"), "{err}");
    let err = zmarket::config::Config::from_toml("[server]\nbindd = \"127.0.0.1:1\"").unwrap_err();
    assert!(err.to_string().contains("bindd"), "{err}");
    let err = zmarket::config::Config::from_toml("[database]\nurl = \"mysql://x\"").unwrap_err();
    assert!(err.to_string().contains("database.url"), "{err}");
}

fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_zmarket"))
}

#[test]
fn the_binary_refuses_invalid_environment_config_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .current_dir(dir.path())
        .env("ZMARKET_SERVER__BIND", "nonsense")
        .arg("migrate")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("server.bind"), "{stderr}");
}

#[test]
fn command_line_wins_over_environment_and_migrate_works() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("cli-data");
    let out = bin()
        .current_dir(dir.path())
        .env("ZMARKET_DATA_DIR", dir.path().join("env-data"))
        .args(["migrate", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(data.join("zmarket.db").is_file());
    assert!(!dir.path().join("env-data").exists());
}

#[test]
fn the_server_stops_gracefully_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = bin()
        .current_dir(dir.path())
        .args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(dir.path().join("data"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut up = false;
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            up = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(up, "server did not start");
    let status = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let mut code = None;
    for _ in 0..200 {
        if let Some(s) = child.try_wait().unwrap() {
            code = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let code = code.unwrap_or_else(|| {
        let _ = child.kill();
        panic!("server did not stop on SIGTERM")
    });
    assert!(code.success(), "{code:?}");
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
async fn shared_jobs_run_on_one_instance_at_a_time() {
    use sea_orm::DbBackend;
    use zmarket::jobs::exclusive;
    let app = TestApp::spawn().await;
    let db = &app.state.db;
    let (release, held) = tokio::sync::oneshot::channel::<()>();
    // The first run holds the job while a second one (another instance's turn) tries.
    let first = exclusive(db, "test.job", async move {
        let _ = held.await;
        1
    });
    let second = async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let r = exclusive(db, "test.job", async { 2 }).await.unwrap();
        release.send(()).unwrap();
        r
    };
    let (a, b) = tokio::join!(first, second);
    assert_eq!(a.unwrap(), Some(1));
    if db.get_database_backend() == DbBackend::Postgres {
        assert_eq!(b, None, "PostgreSQL: the lock is held by the first run");
    } else {
        assert_eq!(b, Some(2), "SQLite: one instance, no lock");
    }
    // Once the first run is done, the job runs again.
    assert_eq!(exclusive(db, "test.job", async { 3 }).await.unwrap(), Some(3));
}

#[tokio::test]
async fn malformed_path_ids_and_multipart_bodies_answer_the_envelope() {
    let app = TestApp::spawn().await;
    let token = token_of(&app.signed_in("ids@example.com").await);
    // An id that is not valid UTF-8, on routes of three domains.
    for path in ["/api/ebs/v2/devices/%FF%FE", "/api/ebs/v1/notifications/%FF/read", "/api/iam/v1/sme/member/records/%C3%28/accept"] {
        let method = if path.ends_with("/read") { reqwest::Method::PUT } else if path.ends_with("/accept") { reqwest::Method::POST } else { reqwest::Method::GET };
        for (lang, msg) in [("en", "Invalid value for id"), ("zh-CN", "参数 id 无效")] {
            let res = app.client.request(method.clone(), app.url(path)).bearer_auth(&token).header("accept-language", lang).send().await.unwrap();
            assert_eq!(header(res.headers(), "content-type"), "application/json", "{path}");
            let (status, body) = json_of(res).await;
            assert_eq!(status, 400, "{path}: {body}");
            assert_eq!(body["code"], 400);
            assert_eq!(body["data"]["field"], "id");
            assert_eq!(body["msg"], msg);
        }
    }
    // A multipart upload without a boundary.
    let res = app
        .client
        .put(app.url("/api/iam/v1/account/profile/avatar"))
        .bearer_auth(&token)
        .header("content-type", "multipart/form-data")
        .body("not really multipart")
        .send()
        .await
        .unwrap();
    assert_eq!(header(res.headers(), "content-type"), "application/json");
    let (status, body) = json_of(res).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["data"]["field"], "file");
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

/// A test leaves nothing behind: its data directory is removed and, on PostgreSQL, its database
/// dropped (issue 27: 1,453 test databases were found on one machine). A second instance on the
/// first one's database drops nothing of its own.
#[tokio::test]
async fn a_test_app_leaves_no_database_behind() {
    let app = TestApp::spawn().await;
    let url = app.state.config.database_url();
    let dir = app.dir.path().to_path_buf();
    let second = TestApp::spawn_with(|c| c.database.url = url.clone()).await;
    assert_eq!(second.get("/readyz").await.status(), 200);
    drop(second);
    // The first instance still has its database.
    let res = app.get("/readyz").await;
    assert_eq!(res.status(), 200);
    drop(app);
    assert!(!dir.exists(), "{} is left", dir.display());
    if let Ok(admin_url) = std::env::var("TEST_DATABASE_URL") {
        use sea_orm::{ConnectionTrait, Database, Statement};
        let name = url.rsplit('/').next().unwrap().to_string();
        let admin = Database::connect(&admin_url).await.unwrap();
        // The drop runs beside the test (common.rs, PgDatabase): it is gone within a minute.
        let mut left = Some(());
        for _ in 0..600 {
            left = admin
                .query_one_raw(Statement::from_sql_and_values(sea_orm::DbBackend::Postgres, "SELECT datname FROM pg_database WHERE datname = $1", [name.clone().into()]))
                .await
                .unwrap()
                .map(|_| ());
            if left.is_none() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(left.is_none(), "{name} is left");
    }
}
