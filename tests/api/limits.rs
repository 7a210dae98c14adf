//! The limits: sign-ups per address and mails per recipient, password hashing bounded, sign-in
//! lockout that a guesser cannot turn on the owner, the client address behind a trusted proxy,
//! agent registration (a closed market's token, boxes nobody binds forgotten), and slow sockets
//! that cannot starve `/healthz`.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::*;
use crate::devices::spec;

/// A POST that says it comes through a proxy for `client`.
async fn post_from(app: &TestApp, client: &str, path: &str, body: &Value, lang: &str) -> (u16, Value) {
    json_of(
        app.client.post(app.url(path)).header("X-Forwarded-For", client).header("Accept-Language", lang).json(body).send().await.unwrap(),
    )
    .await
}

fn behind_proxy(c: &mut zmarket::config::Config) {
    c.server.trusted_proxies = vec!["127.0.0.1".into(), "::1".into()];
}

#[tokio::test]
async fn sign_ups_are_limited_per_ip_and_mails_per_address() {
    let app = TestApp::spawn_with(|c| {
        behind_proxy(c);
        c.auth.register_ip_burst = 3;
        c.auth.register_ip_refill_secs = 3600;
    })
    .await;
    for i in 0..3 {
        let (s, b) = post_from(&app, "203.0.113.1", "/api/iam/v1/register", &sign_up(&format!("p{i}@example.com"), PASSWORD), "en").await;
        assert_eq!(s, 200, "{b}");
    }
    let (s, b) = post_from(&app, "203.0.113.1", "/api/iam/v1/register", &sign_up("p3@example.com", PASSWORD), "en").await;
    assert_eq!(s, 429, "{b}");
    assert_eq!(b["msg"], "Too many attempts, please try again later");
    assert!(b["data"]["retry_after"].as_u64().unwrap() > 0);
    let (s, b) = post_from(&app, "203.0.113.1", "/api/iam/v1/register", &sign_up("p3@example.com", PASSWORD), "zh-CN").await;
    assert_eq!((s, b["msg"].as_str()), (429, Some("尝试次数过多，请稍后再试")));
    // Another client is not affected.
    let (s, b) = post_from(&app, "203.0.113.2", "/api/iam/v1/register", &sign_up("p3@example.com", PASSWORD), "en").await;
    assert_eq!(s, 200, "{b}");

    // One address receives a few links, then no more for a while, whoever asks.
    let victim = "victim@example.com";
    let mut statuses = Vec::new();
    for i in 0..6 {
        let (s, _) = post_from(&app, &format!("198.51.100.{i}"), "/api/iam/v1/register", &sign_up(victim, PASSWORD), "en").await;
        statuses.push(s);
    }
    assert_eq!(statuses, [200, 200, 200, 429, 429, 429]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(app.mail_count_to(victim, "token=").await, 3);
}

/// Finding 2: hashing is bounded; the excess waits briefly, then is answered 429, never 500.
#[tokio::test]
async fn hashing_is_bounded_and_the_excess_is_told_to_retry() {
    let app = TestApp::spawn_with(|c| {
        c.auth.hash_concurrency = 1;
        c.auth.hash_wait_ms = 1;
    })
    .await;
    let answers = futures::future::join_all((0..40).map(|i| {
        let app = &app;
        async move { app.post_json("/api/iam/v1/register", &sign_up(&format!("f{i}@example.com"), PASSWORD), None).await }
    }))
    .await;
    let ok = answers.iter().filter(|(s, _)| *s == 200).count();
    let limited = answers.iter().filter(|(s, _)| *s == 429).count();
    assert_eq!(ok + limited, 40, "{:?}", answers.iter().map(|a| a.0).collect::<Vec<_>>());
    assert!(ok >= 1 && limited >= 1, "ok {ok}, limited {limited}");
}

/// Finding 5: someone failing on another person's account from their address closes only
/// their own (address, account) pair; the owner signs in from theirs.
#[tokio::test]
async fn a_guesser_cannot_lock_the_owner_out() {
    let app = TestApp::spawn_with(|c| {
        behind_proxy(c);
        c.auth.login_ip_burst = 1000;
    })
    .await;
    app.signed_in("owner@example.com").await;
    let wrong = json!({"email": "owner@example.com", "password": "Wrong12345"});
    let mut last = 0;
    for _ in 0..15 {
        last = post_from(&app, "203.0.113.66", "/api/iam/v2/login/password", &wrong, "en").await.0;
    }
    assert_eq!(last, 429, "the guesser is limited");
    let right = json!({"email": "owner@example.com", "password": PASSWORD});
    let (s, b) = post_from(&app, "198.51.100.7", "/api/iam/v2/login/password", &right, "en").await;
    assert_eq!(s, 200, "the owner is locked out: {b}");
    // The guesser stays closed even with the right password (they must wait).
    assert_eq!(post_from(&app, "203.0.113.66", "/api/iam/v2/login/password", &right, "en").await.0, 429);
}

/// Finding 6: X-Forwarded-For counts only from a trusted proxy.
#[tokio::test]
async fn forwarded_addresses_count_only_from_trusted_proxies() {
    let limited = |trusted: bool| {
        move |c: &mut zmarket::config::Config| {
            if trusted {
                behind_proxy(c);
            }
            c.auth.login_ip_burst = 2;
            c.auth.login_ip_refill_secs = 3600;
        }
    };
    let body = json!({"email": "nobody@example.com", "password": "Wrong12345"});
    // Untrusted peer: a forged header changes nothing, the third attempt is limited.
    let app = TestApp::spawn_with(limited(false)).await;
    let mut got = Vec::new();
    for i in 0..3 {
        got.push(post_from(&app, &format!("192.0.2.{i}"), "/api/iam/v2/login/password", &body, "en").await.0);
    }
    assert_eq!(got, [401, 401, 429]);
    // Behind a trusted proxy: each client has its own allowance.
    let app = TestApp::spawn_with(limited(true)).await;
    let mut got = Vec::new();
    for i in 0..3 {
        got.push(post_from(&app, &format!("192.0.2.{i}"), "/api/iam/v2/login/password", &body, "en").await.0);
    }
    assert_eq!(got, [401, 401, 401]);
    // A client cannot forge its way past the proxy: the proxy's own hop (the last) counts.
    let mut got = Vec::new();
    for i in 0..3 {
        got.push(post_from(&app, &format!("10.9.9.{i}, 192.0.2.200"), "/api/iam/v2/login/password", &body, "en").await.0);
    }
    assert_eq!(got, [401, 401, 429]);
}

/// Finding 7: agent registration is limited per address, bounded in size, optionally closed by
/// a token; devices nobody binds are forgotten within hours.
#[tokio::test]
async fn agent_registration_is_limited_and_bounded() {
    let app = TestApp::spawn_with(|c| {
        behind_proxy(c);
        c.devices.register_ip_burst = 2;
        c.devices.register_ip_refill_secs = 3600;
    })
    .await;
    let reg = json!({"type": "Z-BOX", "name": "box", "spec": spec(4)});
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(post_from(&app, "203.0.113.9", "/api/agent/v1/register", &reg, "en").await.0);
    }
    assert_eq!(got, [200, 200, 429]);
    assert_eq!(post_from(&app, "203.0.113.10", "/api/agent/v1/register", &reg, "en").await.0, 200);
    // Size: a spec of kilobytes is refused before anything is stored.
    let gpus: Vec<Value> = (0..33).map(|i| json!({"name": format!("GPU {i}"), "passthrough": true, "vram": 1})).collect();
    let many = json!({"type": "Z-BOX", "name": "box", "spec": {"cpu_cores": 4, "memory_bytes": 1, "disk_bytes": 1, "gpus": gpus}});
    let (s, b) = post_from(&app, "203.0.113.11", "/api/agent/v1/register", &many, "en").await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("spec.gpus")), "{b}");
    let long = json!({"type": "Z-BOX", "name": "box", "spec": {"cpu_cores": 4, "memory_bytes": 1, "disk_bytes": 1, "gpus": [{"name": "x".repeat(20_000), "passthrough": true, "vram": 1}]}});
    let (s, b) = post_from(&app, "203.0.113.12", "/api/agent/v1/register", &long, "en").await;
    assert_eq!(s, 413, "{b}");
}

#[tokio::test]
async fn a_closed_market_needs_the_registration_token() {
    let app = TestApp::spawn_with(|c| c.devices.registration_token = "s3cret-token-for-agents".into()).await;
    let reg = |token: Option<&str>| json!({"type": "Z-BOX", "name": "box", "spec": spec(4), "registration_token": token});
    let (s, b) = app.post_json("/api/agent/v1/register", &reg(None), None).await;
    assert_eq!(s, 403, "{b}");
    // docs/product.md §8's "Network authorization failed", then why (issue 41).
    assert_eq!(b["msg"], "Network authorization failed: this market needs a registration token to register a device (set agent.registration_token)");
    assert_eq!(b["error"], "registration_token_invalid");
    let (s, _) = app.post_json("/api/agent/v1/register", &reg(Some("guess")), None).await;
    assert_eq!(s, 403);
    let zh = app.client.post(app.url("/api/agent/v1/register")).header("Accept-Language", "zh").json(&reg(None)).send().await.unwrap();
    let (_, b) = json_of(zh).await;
    assert_eq!(b["msg"], "网络授权失败：本市场注册设备需要注册令牌（请设置 agent.registration_token）");
    let (s, b) = app.post_json("/api/agent/v1/register", &reg(Some("s3cret-token-for-agents")), None).await;
    assert_eq!(s, 200, "{b}");
}

#[tokio::test]
async fn devices_nobody_binds_are_forgotten_within_hours() {
    use sea_orm::{ActiveModelTrait, EntityTrait, Set};
    use zmarket::db::entity::devices;
    let app = TestApp::spawn().await;
    let (old, _, _) = crate::devices::register(&app, "Z-BOX", spec(4)).await;
    let (fresh, _, _) = crate::devices::register(&app, "Z-BOX", spec(4)).await;
    let d = devices::Entity::find_by_id(old.clone()).one(&app.state.db).await.unwrap().unwrap();
    let mut a: devices::ActiveModel = d.into();
    a.last_seen_at = Set(Some(zmarket::db::now() - chrono::Duration::hours(7)));
    a.update(&app.state.db).await.unwrap();
    zmarket::devices::agent_api::mark_offline(&app.state.devices).await.unwrap();
    assert!(devices::Entity::find_by_id(old).one(&app.state.db).await.unwrap().is_none(), "a 7-hour-old registration is kept");
    assert!(devices::Entity::find_by_id(fresh).one(&app.state.db).await.unwrap().is_some());
}

/// Finding 4: sockets that never finish their headers are closed; one address cannot hold more
/// than its share of connections; /healthz answers another client throughout.
#[tokio::test]
async fn slow_sockets_are_closed_and_cannot_starve_healthz() {
    let app = TestApp::spawn_with(|c| {
        c.server.header_read_timeout_secs = 2;
        c.server.max_connections_per_ip = 50;
    })
    .await;
    let addr: std::net::SocketAddr = app.base.trim_start_matches("http://").parse().unwrap();
    let mut slow = Vec::new();
    for _ in 0..60 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        slow.push(s);
    }
    // Another client (127.0.0.2: loopback, another address) is served at once.
    let other = reqwest::Client::builder().local_address(std::net::IpAddr::from([127, 0, 0, 2])).timeout(Duration::from_secs(2)).build().unwrap();
    for _ in 0..5 {
        let res = other.get(app.url("/healthz")).send().await.expect("/healthz answered");
        assert_eq!(res.status(), 200);
    }
    // The connections over this address's share were closed at once.
    let mut closed_at_once = 0;
    for s in slow.iter_mut().skip(50) {
        let mut buf = [0u8; 64];
        // Closed: end of stream, or a reset (the request was left unread).
        if matches!(tokio::time::timeout(Duration::from_millis(500), s.read(&mut buf)).await, Ok(Ok(0)) | Ok(Err(_))) {
            closed_at_once += 1;
        }
    }
    assert_eq!(closed_at_once, 10);
    // The others are closed once the header-read time is over.
    let mut buf = [0u8; 256];
    let started = std::time::Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(6), slow[0].read(&mut buf)).await;
    assert!(matches!(r, Ok(Ok(_)) | Ok(Err(_))), "a slow socket stayed open");
    assert!(started.elapsed() < Duration::from_secs(5));
}
