//! Playing a box's agent over the agent protocol (register, bind, heartbeat, acknowledge), a
//! person's app actions and rentals: shared by the `api` tests and the `clock` tests (tests/clock/).

use serde_json::{Value, json};

use zmarket::coins::Coins;

use crate::common::*;

pub(crate) const GIB: i64 = 1024 * 1024 * 1024;

/// A box's specification with `cores` CPU cores and `gpus` RTX 4090s.
pub(crate) fn box_spec(cores: i64, gpus: usize) -> Value {
    let gpus: Vec<Value> = (0..gpus).map(|_| json!({"name": "NVIDIA RTX 4090", "passthrough": false, "vram": 24 * GIB})).collect();
    json!({"cpu_cores": cores, "memory_bytes": 64 * GIB, "disk_bytes": 2048 * GIB, "gpus": gpus})
}

/// Registers a box as its agent does; returns (device_id, secret, pairing_code).
pub(crate) async fn register(app: &TestApp, device_type: &str, body_spec: Value) -> (String, String, String) {
    let (s, b) = app.post_json("/api/agent/v1/register", &json!({"type": device_type, "name": "box one", "spec": body_spec}), None).await;
    assert_eq!(s, 200, "{b}");
    let d = &b["data"];
    (d["device_id"].as_str().unwrap().into(), d["device_secret"].as_str().unwrap().into(), d["pairing_code"].as_str().unwrap().into())
}

pub(crate) async fn heartbeat(app: &TestApp, secret: &str, body: Value) -> (u16, Value) {
    app.post_json("/api/agent/v1/heartbeat", &body, Some(secret)).await
}

pub(crate) async fn link(app: &TestApp, token: &str, id: &str, code: &str) -> (u16, Value) {
    app.post_json("/api/ebs/v2/devices/link", &json!({"device_id": id, "pairing_code": code}), Some(token)).await
}

/// A device registered and bound by `token`; returns (device_id, secret).
pub(crate) async fn bound_device(app: &TestApp, token: &str, device_type: &str, body_spec: Value) -> (String, String) {
    let (id, secret, code) = register(app, device_type, body_spec).await;
    let (s, b) = link(app, token, &id, &code).await;
    assert_eq!(s, 200, "{b}");
    (id, secret)
}

/// One heartbeat with these reports and acks; returns the commands answered.
pub(crate) async fn beat(app: &TestApp, secret: &str, installations: Value, acks: Value) -> Vec<Value> {
    let (s, b) = heartbeat(app, secret, json!({"installations": installations, "acks": acks})).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["commands"].as_array().unwrap().clone()
}

pub(crate) fn command_for<'a>(cmds: &'a [Value], installation: &str) -> &'a Value {
    cmds.iter().find(|c| c["payload"]["installation_id"] == installation).unwrap_or_else(|| panic!("no command for {installation}: {cmds:?}"))
}

/// Acknowledges the installation's pending command; a failure carries `reason` (a code with its
/// figures, as the agent sends it).
pub(crate) async fn ack_pending(app: &TestApp, secret: &str, id: &str, ok: bool, reason: Option<Value>) {
    let cmds = beat(app, secret, json!([]), json!([])).await;
    let cmd = command_for(&cmds, id)["id"].clone();
    let error = reason.as_ref().map(|_| "failed in English");
    beat(app, secret, json!([]), json!([{"id": cmd, "ok": ok, "error": error, "reason": reason}])).await;
}

/// A person's action on an installation (`stop`, `start`, `uninstall`, …).
pub(crate) async fn act(app: &TestApp, token: &str, id: &str, action: &str) -> (u16, Value) {
    app.post_json(&format!("/api/rmp/v1/apps/{id}/actions"), &json!({"action": action}), Some(token)).await
}

/// The installation as its owner sees it.
pub(crate) async fn get(app: &TestApp, token: &str, id: &str) -> Value {
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}"), token).await;
    assert_eq!(s, 200, "{b}");
    b["data"].clone()
}

// Rentals.

pub(crate) async fn verified(app: &TestApp) {
    if let Err(e) = zmarket::billing::verify::verify(&app.state.db).await {
        panic!("ledger verify: {e}");
    }
}

pub(crate) async fn wallet(app: &TestApp, token: &str) -> Value {
    let (s, b) = app.get_auth("/api/billing/v1/wallet", token).await;
    assert_eq!(s, 200, "{b}");
    b["data"].clone()
}

pub(crate) async fn rent(app: &TestApp, token: &str, app_id: &str, device: &str, hours: i64) -> (u16, Value) {
    app.post_json("/api/rmp/v1/apps/rent", &json!({"app_id": app_id, "device_id": device, "hours": hours}), Some(token)).await
}

/// Plays the provider's agent through the install to running.
pub(crate) async fn running(app: &TestApp, secret: &str, id: &str) {
    let cmds = beat(app, secret, json!([]), json!([])).await;
    let cmd = command_for(&cmds, id)["id"].clone();
    beat(app, secret, json!([{"id": id, "status": "running", "url": "http://10.0.0.9:32768/"}]), json!([{"id": cmd, "ok": true}])).await;
}

/// Alice rents Bob's box (6 coins an hour) for `hours`; the app runs. Returns (alice, bob,
/// device, secret, installation).
pub(crate) async fn rented_running(app: &TestApp, hours: i64) -> (String, String, String, String, String) {
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    zmarket::billing::issuance::grant_by_email(&app.state.db, "alice@example.com", Coins::from_cents(2000), "test").await.unwrap();
    let (dev, secret) = bound_device(app, &bob, "Z-BOX", box_spec(8, 0)).await;
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 600}), &bob).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = rent(app, &alice, "grafana", &dev, hours).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    running(app, &secret, &id).await;
    (alice, bob, dev, secret, id)
}
