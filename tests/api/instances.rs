//! Several instances on one database (docs/security.md "Several instances"): two servers, A and B,
//! share one database (on PostgreSQL with TEST_DATABASE_URL; on SQLite, one file) and must behave
//! as one: a session from A works on B and ends on both, the per-client limits are one allowance
//! for both, a public change on A reaches B's caches, and a shared job runs on one of them at a
//! time (each mail sent once). scripts/two-instances does the same through nginx with the e2e
//! specs.

use std::time::Duration;

use serde_json::json;

use crate::common::*;
use crate::devices::{register, spec};

/// Two servers on one database with one signing key (as an operator configures them: the key
/// in `auth.jwt_secret`, not in each data directory).
pub(crate) async fn pair(adjust: fn(&mut zmarket::config::Config)) -> (TestApp, TestApp) {
    const KEY: &str = "two-instances-share-this-signing-key-0123456789";
    let a = TestApp::spawn_with(|c| {
        adjust(c);
        c.auth.jwt_secret = KEY.into();
    })
    .await;
    let url = a.state.config.database_url();
    let b = TestApp::spawn_with(move |c| {
        adjust(c);
        c.auth.jwt_secret = KEY.into();
        c.database.url = url;
    })
    .await;
    (a, b)
}

/// A profile read is answered from memory until a profile changes: a name or an avatar changed
/// on B shows on A's very next read (A had it cached), and so does the other person's untouched one.
#[tokio::test]
async fn a_profile_changed_on_one_instance_shows_at_once_on_the_other() {
    let (a, b) = pair(|_| {}).await;
    let token = token_of(&a.signed_in("renamed@example.com").await);
    let other = token_of(&a.signed_in("other@example.com").await);
    for _ in 0..2 {
        let (st, body) = a.get_auth("/api/iam/v1/account/profile", &token).await;
        assert_eq!((st, body["data"]["name"].as_str()), (200, Some("renamed")), "{body}");
        assert_eq!(body["data"]["avatar_url"], "");
        assert_eq!(a.get_auth("/api/iam/v1/account/profile", &other).await.1["data"]["name"], "other");
    }
    let (st, body) = b.put_json("/api/iam/v1/account/profile/info", &json!({"name": "Ada"}), &token).await;
    assert_eq!(st, 200, "{body}");
    let (_, body) = a.get_auth("/api/iam/v1/account/profile", &token).await;
    assert_eq!(body["data"]["name"], "Ada", "{body}");
    assert_eq!(a.get_auth("/api/iam/v1/account/profile", &other).await.1["data"]["name"], "other");

    // An avatar set on B.
    let (st, body) = crate::iam::upload(&b, &token, "me.png", crate::iam::png_bytes()).await;
    assert_eq!(st, 200, "{body}");
    let (_, body) = a.get_auth("/api/iam/v1/account/profile", &token).await;
    assert!(body["data"]["avatar_url"].as_str().unwrap().contains("?v=1"), "{body}");
}

#[tokio::test]
async fn a_session_made_on_one_instance_lives_and_ends_on_both() {
    let (a, b) = pair(|_| {}).await;
    let s = a.signed_in("roamer@example.com").await;
    let token = token_of(&s);
    let (st, body) = b.get_auth("/api/iam/v1/account/profile", &token).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["data"]["email"], "roamer@example.com");

    // Refreshed on A: B answers the same successor within the window (one successor per token).
    let r0 = s["refresh_token"].as_str().unwrap();
    let (st, on_a) = a.get_auth("/api/iam/v1/refresh", r0).await;
    assert_eq!(st, 200, "{on_a}");
    let (st, on_b) = b.get_auth("/api/iam/v1/refresh", r0).await;
    assert_eq!(st, 200, "{on_b}");
    assert_eq!(on_a["data"]["refresh_token"], on_b["data"]["refresh_token"]);

    // Signed out on B: A refuses the token at once (although A had resolved it just before).
    let token = on_a["data"]["access_token"].as_str().unwrap().to_string();
    assert_eq!(a.get_auth("/api/iam/v1/account/profile", &token).await.0, 200);
    let (st, body) = b.post_json("/api/iam/v1/logout", &json!({}), Some(&token)).await;
    assert_eq!(st, 200, "{body}");
    let (st, body) = a.get_auth("/api/iam/v1/account/profile", &token).await;
    assert_eq!(st, 401, "{body}");
}

#[tokio::test]
async fn the_instances_share_one_allowance_per_client() {
    let (a, b) = pair(|c| {
        c.auth.login_ip_burst = 4;
        c.auth.login_ip_refill_secs = 600;
        c.auth.register_ip_burst = 1000;
        c.auth.register_email_burst = 2;
        c.auth.register_email_refill_secs = 600;
        c.devices.register_ip_burst = 3;
        c.devices.register_ip_refill_secs = 600;
    })
    .await;
    // Sign-in attempts: four in all, alternating; each instance alone would allow four.
    let wrong = json!({"email": "nobody@example.com", "password": "Wrong12345"});
    let mut statuses = Vec::new();
    for i in 0..6 {
        let app = if i % 2 == 0 { &a } else { &b };
        statuses.push(app.post_json("/api/iam/v2/login/password", &wrong, None).await.0);
    }
    assert_eq!(statuses, [401, 401, 401, 401, 429, 429]);

    // Sign-ups of one address (= its mails): two in all.
    let mut statuses = Vec::new();
    for app in [&a, &b, &a, &b] {
        statuses.push(app.post_json("/api/iam/v1/register", &sign_up("target@example.com", PASSWORD), None).await.0);
    }
    assert_eq!(statuses, [200, 200, 429, 429]);
    let (st, body) = json_of(
        b.client
            .post(b.url("/api/iam/v1/register"))
            .header("Accept-Language", "zh")
            .json(&sign_up("target@example.com", PASSWORD))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((st, body["msg"].as_str()), (429, Some("尝试次数过多，请稍后再试")), "{body}");

    // Agent registrations: three in all.
    let body = json!({"type": "Z-BOX", "name": "box", "spec": spec(4)});
    let mut statuses = Vec::new();
    for app in [&a, &b, &a, &b, &a] {
        statuses.push(app.post_json("/api/agent/v1/register", &body, None).await.0);
    }
    assert_eq!(statuses, [200, 200, 200, 429, 429]);

    // Recovery mails of one address ("Forgot password" and "Resend verification" together):
    // three in all (a burst of 3), whichever instance is asked.
    let mut statuses = Vec::new();
    for (i, app) in [&a, &b, &a, &b].into_iter().enumerate() {
        let path = if i % 2 == 0 { "/api/iam/v1/password/forgot" } else { "/api/iam/v1/verify-email/resend" };
        statuses.push(app.post_json(path, &json!({"email": "Mailbox@example.com"}), None).await.0);
    }
    assert_eq!(statuses, [200, 200, 200, 429]);
}

/// Fifty sign-in attempts at once, half on each instance, against an allowance of ten: exactly
/// ten are answered (the shared row is moved by one conditional upsert, never past its limit).
#[tokio::test]
async fn the_shared_allowance_holds_under_concurrent_charges() {
    let (a, b) = pair(|c| {
        c.auth.login_ip_burst = 10;
        c.auth.login_ip_refill_secs = 600;
        c.auth.login_account_burst = 1000;
    })
    .await;
    let wrong = json!({"email": "nobody@example.com", "password": "Wrong12345"});
    let calls = (0..50).map(|i| {
        let app = if i % 2 == 0 { &a } else { &b };
        app.post_json("/api/iam/v2/login/password", &wrong, None)
    });
    let statuses: Vec<u16> = futures::future::join_all(calls).await.into_iter().map(|(s, _)| s).collect();
    let answered = statuses.iter().filter(|s| **s == 401).count();
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!((answered, refused), (10, 40), "{statuses:?}");
}

/// A public change made on A reaches B's caches: B renders /nearby (and caches it), A shares a
/// device, and B's next render shows it.
#[tokio::test]
async fn a_public_change_on_one_instance_reaches_the_other() {
    let (a, b) = pair(|_| {}).await;
    let first = b.get("/nearby").await.text().await.unwrap();
    let before = b.state.public.current().await;
    let owner = token_of(&a.signed_in("alice@example.com").await);
    let (id, _secret, code) = register(&a, "Z-BOX", spec(4)).await;
    assert!(!first.contains(&id));
    let (s, body) = a.post_json("/api/ebs/v2/devices/link", &json!({"device_id": id, "pairing_code": code}), Some(&owner)).await;
    assert_eq!(s, 200, "{body}");
    let (s, _) = a.put_json(&format!("/api/ebs/v2/devices/{id}/location"), &json!({"lat": 22.5431, "lng": 114.0579}), &owner).await;
    assert_eq!(s, 200);
    let sharing = json!({"mode": "manual", "rentable": true, "price_per_hour": 300});
    let (s, body) = a.put_json(&format!("/api/ebs/v2/devices/{id}/sharing"), &sharing, &owner).await;
    assert_eq!(s, 200, "{body}");
    // A's version bump reaches the database right after its commit.
    let mut page = String::new();
    for _ in 0..100 {
        page = b.get("/nearby").await.text().await.unwrap();
        if page.contains(&id) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(page.contains(&id), "B still renders the nearby page without the shared device");
    assert!(b.state.public.current().await > before);
}

/// A shared job (here the mail delivery, which both instances run) sends each message once,
/// and a job holding its lock on one instance is skipped by the other (PostgreSQL).
#[tokio::test]
async fn shared_jobs_run_once_across_instances() {
    let (a, b) = pair(|_| {}).await;
    let to: Vec<String> = (0..30).map(|i| format!("once{i}@example.com")).collect();
    for addr in &to {
        let mail = zmarket::mail::Mail { to: addr, subject: "Once", body: "once", link: None };
        a.state.mailer.enqueue(&a.state.db, mail).await.unwrap();
    }
    // Both deliver what is due at once (their scheduled mail jobs may join in).
    let (x, y) = tokio::join!(a.state.mailer.deliver_due(), b.state.mailer.deliver_due());
    let (x, y) = (x.unwrap(), y.unwrap());
    assert!(x + y <= to.len(), "delivered by A {x}, by B {y}");
    // Each address receives exactly one message, in one of the two mail directories.
    let received = |files: &[String], addr: &str| files.iter().filter(|m| m.contains(&format!("To: {addr}"))).count();
    let mut files = Vec::new();
    for _ in 0..100 {
        files = a.mails().await;
        files.extend(b.mails().await);
        if to.iter().all(|addr| received(&files, addr) > 0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for addr in &to {
        let n = received(&files, addr);
        assert_eq!(n, 1, "{addr} received {n} messages");
    }

    if a.state.db.get_database_backend() != sea_orm::DbBackend::Postgres {
        return; // one SQLite file serves one instance in production: no lock to take.
    }
    let (held_tx, held_rx) = tokio::sync::oneshot::channel::<()>();
    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    let db_a = a.state.db.clone();
    let holder = tokio::spawn(async move {
        zmarket::jobs::exclusive(&db_a, "test.once", async move {
            let _ = held_tx.send(());
            let _ = release_rx.await;
        })
        .await
    });
    held_rx.await.unwrap();
    let skipped = zmarket::jobs::exclusive(&b.state.db, "test.once", async { "ran" }).await.unwrap();
    assert_eq!(skipped, None, "B ran the job while A held it");
    release_tx.send(()).unwrap();
    assert_eq!(holder.await.unwrap().unwrap(), Some(()));
    let ran = zmarket::jobs::exclusive(&b.state.db, "test.once", async { "ran" }).await.unwrap();
    assert_eq!(ran, Some("ran"));
}

/// Issue 18: each instance keeps resolved sessions and each person's stats under the shared
/// versions (src/versions.rs); a write committed on the other instance is seen at once.
#[tokio::test]
async fn cached_sessions_and_stats_follow_writes_made_on_the_other_instance() {
    const STATS: &str = "/api/ebs/v1/notifications/stats";
    let (a, b) = pair(|_| {}).await;
    let owner = a.signed_in("boss@example.com").await;
    let carol = a.signed_in("carol@example.com").await;
    let dave = a.signed_in("dave@example.com").await;
    let tc = token_of(&carol);
    // A answers Carol's stats twice (the second from what it kept).
    for _ in 0..2 {
        let (st, body) = a.get_auth(STATS, &tc).await;
        assert_eq!(st, 200, "{body}");
        assert_eq!(body["data"]["member_records_unread"], 0);
        assert_eq!(body["data"]["pending_friend_requests_exists"], false);
    }
    // On B: Carol is invited to a company and Dave asks her to be friends; A's next poll counts both.
    let (st, body) = b.post_json("/api/iam/v1/sme", &json!({"name": "Acme Labs"}), Some(&token_of(&owner))).await;
    assert_eq!(st, 200, "{body}");
    let company = body["data"]["id"].as_str().unwrap().to_string();
    let admin = b.switch(&owner, &company).await;
    let code = b.invite(&token_of(&admin), "carol@example.com", "member").await;
    let (st, body) = b.post_json("/api/cim/v1/friends/requests", &json!({"email": "carol@example.com"}), Some(&token_of(&dave))).await;
    assert_eq!(st, 200, "{body}");
    let (_, body) = a.get_auth(STATS, &tc).await;
    assert_eq!(body["data"]["member_records_unread"], 1, "{body}");
    assert_eq!(body["data"]["pending_friend_requests_exists"], true, "{body}");

    // Carol joins on B and works in the company on A (A resolves her company token) ...
    let (st, body) = b.post_json("/api/iam/v1/sme/join", &json!({"code": code, "accept": true}), Some(&tc)).await;
    assert_eq!(st, 200, "{body}");
    let member = token_of(&a.switch(&carol, &company).await);
    for _ in 0..2 {
        assert_eq!(a.get_auth("/api/iam/v1/account/profile", &member).await.0, 200);
    }
    // ... until the administrator removes her on B: A refuses that token at once; her personal
    // token goes on.
    let cid = user_id_of(&a, &carol).await;
    let (st, body) = b.post_json("/api/iam/v1/sme/remove-member", &json!({"user_id": cid}), Some(&token_of(&admin))).await;
    assert_eq!(st, 200, "{body}");
    let (st, body) = a.get_auth("/api/iam/v1/account/profile", &member).await;
    assert_eq!(st, 401, "{body}");
    assert_eq!(a.get_auth("/api/iam/v1/account/profile", &tc).await.0, 200);
}
