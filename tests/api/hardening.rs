//! Issue 16, what an attacker found: each finding's reproduction (the limits of findings 2, 4-7
//! are in limits.rs, the races of finding 1 in races.rs).

use serde_json::{Value, json};

use crate::common::*;
use crate::devices::{heartbeat, register, spec};

fn sign_up(email: &str, password: &str) -> Value {
    json!({"email": email, "password": password, "confirm_password": password, "agree": true})
}

fn token_in(mail: &str) -> String {
    link_in(mail).split("token=").nth(1).unwrap().to_string()
}

async fn login_status(app: &TestApp, email: &str, password: &str) -> u16 {
    app.post_json("/api/iam/v2/login/password", &json!({"email": email, "password": password}), None).await.0
}

/// Finding 3: re-registering a pending address never replaces the password; with two pending
/// sign-ups the link opened activates neither password (issue 29, finding 3) but lets the
/// mailbox's owner choose one, and once one is opened the others are dead.
#[tokio::test]
async fn a_second_sign_up_of_a_pending_address_cannot_take_the_account() {
    let app = TestApp::spawn().await;
    let email = "owner@example.com";
    let (s, b) = app.post_json("/api/iam/v1/register", &sign_up(email, "Owner1234"), None).await;
    assert_eq!(s, 200, "{b}");
    let owners_mail = app.wait_for_mail_to(email, "token=", 0).await;
    // Someone else signs the same address up with their own password.
    let (s, b) = app.post_json("/api/iam/v1/register", &sign_up(email, "Attacker99"), None).await;
    assert_eq!(s, 200, "{b}");
    let attackers_mail = app.wait_for_mail_to(email, "token=", 1).await;
    assert_ne!(token_in(&owners_mail), token_in(&attackers_mail));

    // The owner opens the link of their own sign-up, and chooses the password.
    let (s, b) = app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&owners_mail))).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(login_status(&app, email, "Owner1234").await, 401);
    assert_eq!(login_status(&app, email, "Attacker99").await, 401);
    let chosen = b["data"]["password_token"].as_str().expect("a password to choose");
    let reset = json!({"token": chosen, "password": "Owner1234", "confirm_password": "Owner1234"});
    assert_eq!(app.post_json("/api/iam/v1/password/reset", &reset, None).await.0, 200);
    assert_eq!(login_status(&app, email, "Owner1234").await, 200);
    // The other link no longer works, so it can never switch the password afterwards.
    let (s, b) = app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&attackers_mail))).await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(login_status(&app, email, "Owner1234").await, 200);
    // Once verified, the address cannot be signed up again.
    let (s, b) = app.post_json("/api/iam/v1/register", &sign_up(email, "Attacker99"), None).await;
    assert_eq!(s, 409, "{b}");
}

/// With one pending sign-up, the password chosen with it becomes valid when its link is opened.
#[tokio::test]
async fn the_password_of_the_one_pending_sign_up_becomes_valid() {
    let app = TestApp::spawn().await;
    let email = "late@example.com";
    app.post_json("/api/iam/v1/register", &sign_up(email, "First1234"), None).await;
    let first = app.wait_for_mail_to(email, "token=", 0).await;
    let (s, b) = app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&first))).await;
    assert_eq!(s, 200);
    assert_eq!(b["data"]["password_token"], Value::Null, "{b}");
    assert_eq!(login_status(&app, email, "First1234").await, 200);
}

/// Finding 14: within the grace window one refresh token always answers the same successor.
#[tokio::test]
async fn a_refresh_token_has_one_successor_in_series_and_in_parallel() {
    let app = TestApp::spawn().await;
    let s = app.signed_in("tabs@example.com").await;
    let r0 = s["refresh_token"].as_str().unwrap().to_string();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..20 {
        let (st, b) = app.get_auth("/api/iam/v1/refresh", &r0).await;
        assert_eq!(st, 200, "{b}");
        seen.insert(b["data"]["refresh_token"].as_str().unwrap().to_string());
    }
    let answers = futures::future::join_all((0..50).map(|_| app.get_auth("/api/iam/v1/refresh", &r0))).await;
    for (st, b) in &answers {
        assert_eq!(*st, 200, "{b}");
        seen.insert(b["data"]["refresh_token"].as_str().unwrap().to_string());
    }
    assert_eq!(seen.len(), 1, "successors minted by one token: {}", seen.len());
    // The successor works, once, as any refresh token.
    let r1 = seen.into_iter().next().unwrap();
    let (st, b) = app.get_auth("/api/iam/v1/refresh", &r1).await;
    assert_eq!(st, 200, "{b}");
}

#[tokio::test]
async fn a_refresh_token_presented_after_the_window_ends_the_session() {
    let app = TestApp::spawn_with(|c| c.auth.refresh_grace_secs = 0).await;
    let s = app.signed_in("late@example.com").await;
    let r0 = s["refresh_token"].as_str().unwrap();
    assert_eq!(app.get_auth("/api/iam/v1/refresh", r0).await.0, 200);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(app.get_auth("/api/iam/v1/refresh", r0).await.0, 401);
}

/// Finding 13: answers that carry tokens are never stored; the scheme is case-insensitive.
#[tokio::test]
async fn token_answers_are_no_store_and_the_bearer_scheme_is_case_insensitive() {
    let app = TestApp::spawn().await;
    let s = app.signed_in("cache@example.com").await;
    let login = app
        .client
        .post(app.url("/api/iam/v2/login/password"))
        .json(&json!({"email": "cache@example.com", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(header(login.headers(), "cache-control"), "no-store");
    let refresh = app.client.get(app.url("/api/iam/v1/refresh")).bearer_auth(s["refresh_token"].as_str().unwrap()).send().await.unwrap();
    assert_eq!(refresh.status(), 200);
    assert_eq!(header(refresh.headers(), "cache-control"), "no-store");
    let switch = app.client.post(app.url("/api/iam/v1/switch")).bearer_auth(token_of(&s)).json(&json!({"smeId": "user"})).send().await.unwrap();
    assert_eq!(switch.status(), 200);
    assert_eq!(header(switch.headers(), "cache-control"), "no-store");
    let pc = app.get("/pc-web?token=x&redirect=/market").await;
    assert_eq!(header(pc.headers(), "cache-control"), "no-store");
    for scheme in ["BEARER", "bearer", "Bearer", "bEaReR"] {
        let res = app.client.get(app.url("/api/iam/v1/account/profile")).header("Authorization", format!("{scheme} {}", token_of(&s))).send().await.unwrap();
        assert_eq!(res.status(), 200, "{scheme}");
    }
    let res = app.client.get(app.url("/api/iam/v1/account/profile")).header("Authorization", format!("Basic {}", token_of(&s))).send().await.unwrap();
    assert_eq!(res.status(), 401);
}

/// Finding 12: the database, the mails (live links) and a data directory made by the server are
/// private to its user.
#[cfg(unix)]
#[tokio::test]
async fn the_data_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let fresh = root.path().join("made-by-zmarket");
    let dir = fresh.clone();
    let app = TestApp::spawn_with(move |c| {
        if std::env::var("TEST_DATABASE_URL").is_err() {
            c.data_dir = dir;
        }
    })
    .await;
    app.post_json("/api/iam/v1/register", &sign_up("files@example.com", PASSWORD), None).await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let data_dir = app.state.config.data_dir.clone();
    if std::env::var("TEST_DATABASE_URL").is_err() {
        assert_eq!(mode(&fresh), 0o700);
        assert_eq!(mode(&fresh.join("zmarket.db")), 0o600);
    }
    for _ in 0..100 {
        if std::fs::read_dir(data_dir.join("mail")).is_ok_and(|mut d| d.next().is_some()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let mails: Vec<_> = std::fs::read_dir(data_dir.join("mail")).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(!mails.is_empty());
    for m in mails {
        assert_eq!(mode(&m), 0o600, "{}", m.display());
    }
    assert_eq!(mode(&data_dir.join("mail")), 0o700);
}

/// Finding 11: a mail keeps one Message-ID however often it is delivered.
#[tokio::test]
async fn a_mail_carries_a_message_id_of_its_own() {
    let app = TestApp::spawn().await;
    app.post_json("/api/iam/v1/register", &sign_up("mid@example.com", PASSWORD), None).await;
    let mail = app.wait_for_mail_to("mid@example.com", "token=", 0).await;
    let id = mail.lines().find(|l| l.to_ascii_lowercase().starts_with("message-id:")).expect("a Message-ID header");
    assert!(id.contains("@localhost>"), "{id}");
    // Delivering the same row again writes the same message (same file, same Message-ID).
    let before = app.mails().await.len();
    use sea_orm::{ConnectionTrait, EntityTrait};
    let row = zmarket::db::entity::mail_outbox::Entity::find().one(&app.state.db).await.unwrap().unwrap();
    app.state.db.execute_unprepared(&format!("UPDATE mail_outbox SET status = 'pending', next_attempt_at = created_at WHERE id = '{}'", row.id)).await.unwrap();
    app.state.mailer.deliver_due().await.unwrap();
    let mails = app.mails().await;
    assert_eq!(mails.len(), before, "the retry wrote the same file again");
    assert!(mails.iter().any(|m| m.contains(id)));
}

/// The agent protocol: an older or newer agent keeps working; a wrong value is named.
#[tokio::test]
async fn heartbeats_accept_missing_and_unknown_metric_fields_and_name_a_wrong_one() {
    let app = TestApp::spawn().await;
    let (_, secret, _) = register(&app, "Z-BOX", spec(4)).await;
    let (s, b) = heartbeat(&app, &secret, json!({"metrics": {"cpu_percent": 10.0}})).await;
    assert_eq!(s, 200, "missing fields: {b}");
    let (s, b) = heartbeat(&app, &secret, json!({"metrics": {"cpu_percent": 10.0, "memory_used_bytes": 1, "disk_used_bytes": 2, "gpu_percent": 50, "temperature_c": 61}, "firmware": "2.0"})).await;
    assert_eq!(s, 200, "unknown fields: {b}");
    let (s, b) = heartbeat(&app, &secret, json!({"metrics": {"cpu_percent": "busy"}})).await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(b["data"]["field"], "metrics.cpu_percent");
    assert_eq!(b["msg"], "Invalid value for metrics.cpu_percent");
    let (s, b) = heartbeat(&app, &secret, json!({"acks": [{"id": "x", "ok": "yes"}]})).await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(b["data"]["field"], "acks[0].ok");
    let (s, b) = heartbeat(&app, &secret, json!({"acks": [{"ok": true}]})).await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(b["data"]["field"], "acks[0].id");
    let zh = app
        .client
        .post(app.url("/api/agent/v1/heartbeat"))
        .bearer_auth(&secret)
        .header("Accept-Language", "zh")
        .json(&json!({"metrics": {"cpu_percent": []}}))
        .send()
        .await
        .unwrap();
    let (s, b) = json_of(zh).await;
    assert_eq!(s, 400);
    assert_eq!(b["msg"], "参数 metrics.cpu_percent 无效");
    // Not JSON at all is still the body's fault.
    let res = app.client.post(app.url("/api/agent/v1/heartbeat")).bearer_auth(&secret).header("content-type", "application/json").body("{").send().await.unwrap();
    let (s, b) = json_of(res).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("body")));
}

/// Finding 8: a request line over 64 KiB (refused by the HTTP parser before any handler) still
/// answers the envelope.
#[tokio::test]
async fn an_overlong_uri_answers_the_envelope() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn().await;
    let addr = app.base.trim_start_matches("http://").to_string();
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET /api/ebs/v1/market/search?keyword={} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70 * 1024));
    let _ = s.write_all(req.as_bytes()).await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), s.read_to_end(&mut out)).await;
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 414"), "{text}");
    assert!(text.contains("application/json"), "{text}");
    let body: Value = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["code"], 414);
    assert_eq!(body["data"], Value::Null);
    assert!(body["msg"].as_str().unwrap().contains("too long"));
}

/// Finding 3 through a resend: with two pending sign-ups of one address nobody knows whose
/// password the owner chose, so a resend mails nothing (each sign-up already mailed its own
/// link); with one, its link is replaced and its password travels on.
#[tokio::test]
async fn a_resend_never_hands_out_a_password_the_owner_did_not_choose() {
    let app = TestApp::spawn().await;
    let email = "owner@example.com";
    app.post_json("/api/iam/v1/register", &sign_up(email, "Owner1234"), None).await;
    let owners = app.wait_for_mail_to(email, "token=", 0).await;
    let (s, _) = app.post_json("/api/iam/v1/verify-email/resend", &json!({"email": email}), None).await;
    assert_eq!(s, 200);
    let resent = app.wait_for_mail_to(email, "token=", 1).await;
    assert_ne!(token_in(&owners), token_in(&resent));
    // The replaced link is dead; the new one carries the owner's password.
    assert_eq!(app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&owners))).await.0, 400);

    app.post_json("/api/iam/v1/register", &sign_up(email, "Attacker99"), None).await;
    app.wait_for_mail_to(email, "token=", 2).await;
    let (s, _) = app.post_json("/api/iam/v1/verify-email/resend", &json!({"email": email}), None).await;
    assert_eq!(s, 200, "the same answer");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(app.mail_count_to(email, "token=").await, 3, "nothing resent with two pending sign-ups");
    // Two sign-ups pending: the link opened activates neither password (issue 29, finding 3).
    let (s, b) = app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&resent))).await;
    assert_eq!(s, 200);
    assert!(b["data"]["password_token"].is_string(), "{b}");
    assert_eq!(login_status(&app, email, "Owner1234").await, 401);
    assert_eq!(login_status(&app, email, "Attacker99").await, 401);
}
