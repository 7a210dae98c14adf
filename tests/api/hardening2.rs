//! Issue 29, hardening round two: each finding's reproduction (findings 4 and 8 are in the apps
//! tests). Every test here runs on SQLite and, with TEST_DATABASE_URL, on PostgreSQL.

use serde_json::{Value, json};

use crate::common::*;
use crate::devices::{bound_device, heartbeat, register, spec};

fn sign_up(email: &str, password: &str) -> Value {
    json!({"email": email, "password": password, "confirm_password": password, "agree": true})
}

async fn login_status(app: &TestApp, email: &str, password: &str) -> u16 {
    app.post_json("/api/iam/v2/login/password", &json!({"email": email, "password": password}), None).await.0
}

fn acks(n: usize) -> Value {
    let acks: Vec<Value> = (0..n).map(|i| json!({"id": format!("0193a2b4-0000-7000-8000-{i:012}"), "ok": false, "error": "x"})).collect();
    json!({"metrics": {"cpu_percent": 1.0, "memory_used_bytes": 1, "disk_used_bytes": 1}, "acks": acks})
}

// ---- finding 1: a device that locks sign-ins ----

/// The agent API has its own small body limit: a 300 KiB beat is refused before it is read.
#[tokio::test]
async fn a_heartbeat_over_the_agent_body_limit_is_refused() {
    let app = TestApp::spawn().await;
    let (_, secret, _) = register(&app, "Z-BOX", spec(4)).await;
    let (s, b) = heartbeat(&app, &secret, acks(5_000)).await;
    assert_eq!(s, 413, "{b}");
    assert_eq!(b["code"], 413, "{b}");
    // A beat within the limit is read as before.
    let (s, b) = heartbeat(&app, &secret, acks(10)).await;
    assert_eq!(s, 200, "{b}");
}

/// The attack: anonymous devices send 40,000 acknowledgements a beat (3.6 MiB) and bound
/// ones as many as a beat may carry, back to back, while a person signs in: every sign-in
/// answers 200 and no beat answers 500 (before: "database is locked").
#[tokio::test]
async fn hostile_heartbeats_do_not_fail_sign_ins() {
    let app = TestApp::spawn().await;
    app.signed_in("victim@example.com").await;
    let owner = app.signed_in("owner@example.com").await;
    let mut secrets = Vec::new();
    for _ in 0..4 {
        secrets.push((register(&app, "Z-BOX", spec(4)).await.1, acks(40_000)));
    }
    for _ in 0..4 {
        secrets.push((bound_device(&app, &token_of(&owner), "Z-BOX", spec(4)).await.1, acks(256)));
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut agents = Vec::new();
    for (secret, body) in secrets {
        let (client, url, stop) = (app.client.clone(), app.url("/api/agent/v1/heartbeat"), stop.clone());
        agents.push(tokio::spawn(async move {
            let mut statuses = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let res = client.post(&url).bearer_auth(&secret).json(&body).send().await;
                statuses.push(res.map(|r| r.status().as_u16()).unwrap_or(0));
            }
            statuses
        }));
    }
    let mut signed = Vec::new();
    for _ in 0..5 {
        signed.push(login_status(&app, "victim@example.com", "Secret123").await);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut beats = Vec::new();
    for a in agents {
        beats.extend(a.await.unwrap());
    }
    assert_eq!(signed, vec![200; 5]);
    assert!(!beats.contains(&500), "{beats:?}");
    // The anonymous beats were refused for their size, the bound ones read.
    assert!(beats.contains(&413) && beats.contains(&200), "{beats:?}");
}
