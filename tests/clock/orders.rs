//! An order charged by the second (issue 39): once the demander confirms, the seconds its app is
//! seen running on the provider's box (between two of the box's reports, never past the last),
//! never a silence of the box, the fraction of a cent carried to the next capture; the market's
//! clock moved ahead while the box beats.

use chrono::Duration;
use serde_json::{Value, json};
use zmarket::coins::Coins;

use crate::boxes::{GIB, bound_device, heartbeat, verified, wallet};
use crate::common::*;
use crate::{CLOCK, market, pass};

/// One heartbeat with these reports and acks; returns the commands answered.
async fn beat(app: &TestApp, secret: &str, installations: Value, acks: Value) -> Vec<Value> {
    let (s, b) = heartbeat(app, secret, json!({"installations": installations, "acks": acks})).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["commands"].as_array().unwrap().clone()
}

/// The order job, run now.
async fn sweep(app: &TestApp) {
    zmarket::orders::flow::sweep(&app.state.db, &app.state.orders.settings, zmarket::db::now()).await.expect("sweep");
}

async fn billed(app: &TestApp, token: &str, id: &str) -> i64 {
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/orders/{id}"), token).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["billed"].as_i64().unwrap()
}

#[tokio::test]
async fn an_order_is_charged_the_seconds_its_app_is_seen_running_and_never_a_silence() {
    let _clock = CLOCK.lock().await;
    let app = market(|_| {}).await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    zmarket::billing::issuance::grant_by_email(&app.state.db, "alice@example.com", Coins::from_cents(10_000), "test").await.unwrap();
    let spec = json!({"cpu_cores": 8, "memory_bytes": 64 * GIB, "disk_bytes": 1024 * GIB, "gpus": [{"name": "NVIDIA A100", "passthrough": false, "vram": 24 * GIB}]});
    let (dev, secret) = bound_device(&app, &bob, "Z-BOX", spec).await;
    beat(&app, &secret, json!([]), json!([])).await;
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 100}), &bob).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{dev}/location"), &json!({"lat": 22.5431, "lng": 114.0579}), &bob).await;
    assert_eq!(s, 200, "{b}");
    // 6 coins an hour for 2 hours: 10 cents a minute, 1/6 of a cent a second.
    let demand = json!({"name": "Render farm", "app_id": "grafana", "gpu_count": 1, "gpu_models": "A100", "distance_km": 25,
        "lat": 22.5431, "lng": 114.0579, "hours": 2, "price_per_hour": 600});
    let (s, b) = app.post_json("/api/rmp/v1/demands", &demand, Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let (s, b) = app.post_json(&format!("/api/rmp/v1/demands/{id}/take"), &json!({"device_id": dev}), Some(&bob)).await;
    assert_eq!(s, 200, "{b}");
    let inst = b["data"]["installation_id"].as_str().unwrap().to_string();
    let running = json!([{"id": inst, "status": "running", "url": "http://10.0.0.7:32768/"}]);
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let cmd = cmds.iter().find(|c| c["payload"]["installation_id"] == inst.as_str()).expect("the install command");
    beat(&app, &secret, running.clone(), json!([{"id": cmd["id"], "ok": true}])).await;
    // Running before the demander confirms: those seconds are not charged.
    for _ in 0..3 {
        pass(Duration::seconds(40));
        beat(&app, &secret, running.clone(), json!([])).await;
    }
    sweep(&app).await;
    let (s, b) = app.post_json(&format!("/api/rmp/v1/orders/{id}/confirm"), &json!({}), Some(&alice)).await;
    assert_eq!((s, b["data"]["status"].as_str()), (200, Some("order_confirmed")), "{b}");
    assert_eq!(billed(&app, &alice, &id).await, 0);

    // 200 seconds seen running: 33 cents, the third of a cent carried.
    for _ in 0..5 {
        pass(Duration::seconds(40));
        beat(&app, &secret, running.clone(), json!([])).await;
    }
    sweep(&app).await;
    assert_eq!(billed(&app, &alice, &id).await, 33);
    sweep(&app).await;
    assert_eq!(billed(&app, &alice, &id).await, 33, "the same seconds are never charged twice");
    // The box falls silent for ten minutes, the sweep running meanwhile: nothing is charged.
    pass(Duration::minutes(10));
    sweep(&app).await;
    assert_eq!(billed(&app, &alice, &id).await, 33);
    // It reports again: 80 seconds more, with the carried third of a cent 46 cents in all
    // (280 seconds), not the 15 minutes since confirming.
    beat(&app, &secret, running.clone(), json!([])).await;
    for _ in 0..2 {
        pass(Duration::seconds(40));
        beat(&app, &secret, running.clone(), json!([])).await;
    }
    sweep(&app).await;
    assert_eq!(billed(&app, &alice, &id).await, 46);
    verified(&app).await;

    // Finished: nothing past the box's last report, the rest of the hold released.
    pass(Duration::seconds(30));
    let (s, b) = app.post_json(&format!("/api/rmp/v1/orders/{id}/finish"), &json!({}), Some(&alice)).await;
    assert_eq!((s, b["data"]["billed"].as_i64()), (200, Some(46)), "{b}");
    let w = wallet(&app, &alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(10_000 - 46), Some(0)));
    assert_eq!(wallet(&app, &bob).await["balance"], 46 - 4, "the provider is paid less the exact 10% fee");
    verified(&app).await;
}
