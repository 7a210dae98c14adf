//! Devices: heartbeats. What a beat may carry (missing and unknown metric fields, a wrong one
//! named in both languages, the agent API's own body limit), the refusals of registration and
//! heartbeat, hostile beats that never fail a person's sign-in, and offline after silence (and
//! back) with the owner told both times.

use serde_json::{Value, json};

use super::{bound_device, heartbeat, register, spec};
use crate::common::*;

#[tokio::test]
async fn registration_and_heartbeat_refusals() {
    let app = TestApp::spawn().await;
    for body in [
        json!({"type": "Z-CLOUD", "name": "x", "spec": spec(1)}),
        json!({"type": "toaster", "name": "x", "spec": spec(1)}),
        json!({"type": "Z-BOX", "name": "", "spec": spec(1)}),
        json!({"type": "Z-BOX", "name": "x"}),
        json!({"type": "Z-BOX", "name": "x", "spec": spec(-1)}),
    ] {
        let (s, b) = app.post_json("/api/agent/v1/register", &body, None).await;
        assert_eq!(s, 400, "{body}: {b}");
    }
    let (s, _) = heartbeat(&app, "not-a-secret", json!({})).await;
    assert_eq!(s, 401);
    let (s, _) = app.post_json("/api/agent/v1/heartbeat", &json!({}), None).await;
    assert_eq!(s, 401);
    // A user's access token is not a device secret.
    let alice = app.signed_in("alice@example.com").await;
    let (s, _) = heartbeat(&app, &token_of(&alice), json!({})).await;
    assert_eq!(s, 401);
}

#[tokio::test]
async fn offline_after_silence_with_notifications() {
    let app = TestApp::spawn_with(|c| {
        c.devices.offline_after_secs = 2;
        c.devices.heartbeat_secs = 1;
    }).await;
    let alice = app.signed_in("alice@example.com").await;
    let t = token_of(&alice);
    let (id, secret) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    // Wait (bounded) for the job to mark it offline.
    let mut status = String::new();
    for _ in 0..100 {
        let (_, b) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), &t).await;
        status = b["data"]["status"].as_str().unwrap().to_string();
        if status == "offline" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, "offline");
    let (_, b) = app.get_auth("/api/ebs/v2/devices?status=offline", &t).await;
    assert_eq!(b["data"]["total"], 1);
    let (_, b) = app.get_auth("/api/ebs/v2/devices?status=online", &t).await;
    assert_eq!(b["data"]["total"], 0);
    // A heartbeat brings it back.
    let (s, _) = heartbeat(&app, &secret, json!({})).await;
    assert_eq!(s, 200);
    let (_, b) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), &t).await;
    assert_eq!(b["data"]["status"], "online");
    // The owner was told both times.
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
    use zmarket::db::entity::notifications;
    let user = user_id_of(&app, &alice).await;
    let notes = notifications::Entity::find()
        .filter(notifications::Column::UserId.eq(user))
        .order_by_asc(notifications::Column::CreatedAt)
        .all(&app.state.db)
        .await
        .unwrap();
    let kinds: Vec<String> = notes.iter().map(|n| sea_orm::ActiveEnum::to_value(&n.kind)).collect();
    assert!(kinds.starts_with(&["device_offline".to_string(), "device_online".to_string()]), "{kinds:?}");
    assert!(notes[0].body.contains(&id));
    let params: Value = serde_json::from_str(&notes[0].params).unwrap();
    assert_eq!(params["title_zh"], "设备离线");
    assert!(!notes[0].read);
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

/// A beat carrying `n` failed acknowledgements.
fn acks(n: usize) -> Value {
    let acks: Vec<Value> = (0..n).map(|i| json!({"id": format!("0193a2b4-0000-7000-8000-{i:012}"), "ok": false, "error": "x"})).collect();
    json!({"metrics": {"cpu_percent": 1.0, "memory_used_bytes": 1, "disk_used_bytes": 1}, "acks": acks})
}

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

/// A device that locks sign-ins (issue 29, finding 1): anonymous devices send 40,000
/// acknowledgements a beat (3.6 MiB) and bound ones as many as a beat may carry, back to back,
/// while a person signs in: every sign-in answers 200 and no beat answers 500 (before: "database is
/// locked").
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
        signed.push(app.login_status("victim@example.com", "Secret123").await);
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
