//! Devices: registration and binding (with every refusal), unlinking, a device acting only for
//! itself, the list's filters, ids read at the edge; heartbeats and offline marking
//! (`heartbeats.rs`); sharing, company devices, location and nearby (`sharing.rs`); Z-CLOUD
//! capacity and the create/acknowledge cycle (`zcloud.rs`).

use serde_json::{Value, json};

use crate::common::*;
pub(crate) use crate::boxes::{bound_device, heartbeat, link, register};

mod heartbeats;
mod sharing;
mod zcloud;

const GIB: i64 = 1024 * 1024 * 1024;

pub(crate) fn spec(cores: i64) -> Value {
    json!({"cpu_cores": cores, "memory_bytes": 16 * GIB, "disk_bytes": 512 * GIB, "gpus": []})
}

async fn zh_post(app: &TestApp, path: &str, body: &Value, token: &str) -> (u16, Value) {
    json_of(app.client.post(app.url(path)).bearer_auth(token).header("Accept-Language", "zh-CN").json(body).send().await.unwrap()).await
}

async fn switch_to(app: &TestApp, session: &Value, sme: &str) -> String {
    let (s, b) = app.post_json("/api/iam/v1/switch", &json!({"smeId": sme}), Some(&token_of(session))).await;
    assert_eq!(s, 200, "{b}");
    token_of(&b["data"])
}

#[tokio::test]
async fn register_heartbeat_and_bind() {
    let app = TestApp::spawn().await;
    let (id, secret, code) = register(&app, "Z-BOX", spec(8)).await;
    assert_eq!(id.len(), 14);
    assert_eq!(code.len(), 8);

    // An unbound device heartbeats; its settings say it is not bound yet.
    let (s, b) = heartbeat(&app, &secret, json!({"spec": spec(8), "metrics": {"cpu_percent": 12.5, "memory_used_bytes": GIB, "disk_used_bytes": 3 * GIB}, "acks": []})).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["settings"]["bound"], false);
    assert_eq!(b["data"]["settings"]["heartbeat_secs"], 30);
    assert_eq!(b["data"]["commands"], json!([]));

    let alice = app.signed_in("alice@example.com").await;
    let t = token_of(&alice);
    // The code is typed loosely: lower case, with a space.
    let typed = format!("{} {}", &code[..4], &code[4..]).to_lowercase();
    let (s, b) = link(&app, &t, &id.to_lowercase(), &typed).await;
    assert_eq!(s, 200, "{b}");
    let d = &b["data"];
    assert_eq!(d["id"], id.as_str());
    assert_eq!(d["type"], "Z-BOX");
    assert_eq!(d["status"], "online");
    assert_eq!(d["sharing_mode"], "manual");
    assert_eq!(d["rentable"], false);
    assert_eq!(d["spec"]["cpu_cores"], 8);
    assert_eq!(d["metrics"]["cpu_percent"], 12.5);
    assert_eq!(d["location"], Value::Null);

    let (s, b) = app.get_auth("/api/ebs/v2/devices", &t).await;
    assert_eq!(s, 200);
    assert_eq!(b["data"]["total"], 1);
    let (s, b) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), &t).await;
    assert_eq!(s, 200);
    assert_eq!(b["data"]["name"], "box one");

    let (_, b) = heartbeat(&app, &secret, json!({"acks": []})).await;
    assert_eq!(b["data"]["settings"]["bound"], true);

    // A bound device cannot be bound again, by anyone.
    let bob = app.signed_in("bob@example.com").await;
    let (s, b) = link(&app, &token_of(&bob), &id, &code).await;
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["msg"], "This device is already bound");
    let (s, _) = link(&app, &t, &id, &code).await;
    assert_eq!(s, 409);

    // Account deletion is blocked while a device is linked.
    let (_, b) = app.post_json("/api/iam/v1/account/check", &json!({}), Some(&t)).await;
    assert!(b["data"]["reasons"].as_array().unwrap().contains(&json!("devices_linked")), "{b}");
}

#[tokio::test]
async fn a_device_id_typed_with_spaces_binds() {
    // Issue 26: the pairing code accepted spaces, the device id did not.
    let app = TestApp::spawn().await;
    let t = token_of(&app.signed_in("alice@example.com").await);
    let (id, _, code) = register(&app, "P-BOX", spec(4)).await;
    let typed = format!(" {} ", id.replace('-', " ").to_lowercase());
    let spaced_code = format!("{} {}", &code[..4], &code[4..]);
    let (s, b) = link(&app, &t, &typed, &spaced_code).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["id"], id.as_str(), "stored as printed");
}

#[tokio::test]
async fn binding_refusals() {
    let app = TestApp::spawn().await;
    let alice = app.signed_in("alice@example.com").await;
    let t = token_of(&alice);
    let (id, _, code) = register(&app, "P-BOX", spec(4)).await;
    // malformed ids
    for bad in ["", "nope", "ABCD-EFGH-JKM0", "ABCD-EFGH-JKMN-PQRS", "<script>"] {
        let (s, b) = link(&app, &t, bad, &code).await;
        assert_eq!(s, 400, "{bad}: {b}");
        assert_eq!(b["msg"], "Invalid Device ID");
        assert_eq!(b["data"]["field"], "device_id");
    }
    // well-formed but unknown
    let (s, b) = link(&app, &t, "2345-6789-ABCD", &code).await;
    assert_eq!((s, b["msg"].as_str().unwrap()), (400, "Invalid Device ID"));
    // wrong and malformed pairing codes
    let wrong = if code == "22222222" { "33333333" } else { "22222222" };
    for bad in [wrong, "", "short"] {
        let (s, b) = link(&app, &t, &id, bad).await;
        assert_eq!(s, 400, "{b}");
        assert_eq!(b["msg"], "The pairing code is wrong: enter the code the box prints next to its device ID");
        assert_eq!(b["data"]["field"], "pairing_code");
    }
    let (s, b) = zh_post(&app, "/api/ebs/v2/devices/link", &json!({"device_id": id, "pairing_code": wrong}), &t).await;
    assert_eq!((s, b["msg"].as_str().unwrap()), (400, "配对码错误：请输入设备在其设备 ID 旁打印的配对码"));
    // in Chinese
    let (s, b) = zh_post(&app, "/api/ebs/v2/devices/link", &json!({"device_id": "x", "pairing_code": code}), &t).await;
    assert_eq!(s, 400);
    assert_eq!(b["msg"], "设备 ID 无效");
    // not signed in
    let (s, _) = app.post_json("/api/ebs/v2/devices/link", &json!({"device_id": id, "pairing_code": code}), None).await;
    assert_eq!(s, 401);
    // after all the refusals the right code still works
    let (s, b) = link(&app, &t, &id, &code).await;
    assert_eq!(s, 200, "{b}");
}

#[tokio::test]
async fn unlinking_revokes_the_secret_and_only_the_owner_may() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let (id, secret) = bound_device(&app, &alice, "Z-BOX", spec(2)).await;
    // Bob sees nothing of it and cannot touch it.
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), &bob).await;
    assert_eq!(s, 404);
    let (_, b) = app.get_auth("/api/ebs/v2/devices", &bob).await;
    assert_eq!(b["data"]["total"], 0);
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{id}"), &json!({}), &bob).await;
    assert_eq!(s, 404);
    let (s, _) = app.put_json(&format!("/api/ebs/v2/devices/{id}/sharing"), &json!({"mode": "manual", "rentable": false}), &bob).await;
    assert_eq!(s, 404);
    // Alice unlinks: the agent's secret stops working.
    let (s, b) = app.delete_json(&format!("/api/ebs/v2/devices/{id}"), &json!({}), &alice).await;
    assert_eq!(s, 200, "{b}");
    let (s, _) = heartbeat(&app, &secret, json!({})).await;
    assert_eq!(s, 401);
    let (_, b) = app.get_auth("/api/ebs/v2/devices", &alice).await;
    assert_eq!(b["data"]["total"], 0);
}

#[tokio::test]
async fn a_device_acts_only_for_itself() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (host, host_secret) = bound_device(&app, &alice, "server group", spec(16)).await;
    let (_, other_secret) = bound_device(&app, &alice, "Z-BOX", spec(2)).await;
    let (s, b) = app
        .post_json("/api/ebs/v2/zcloud", &json!({"name": "vm", "cpu_cores": 2, "memory_bytes": GIB, "disk_bytes": GIB, "gpu_count": 0}), Some(&alice))
        .await;
    assert_eq!(s, 200, "{b}");
    let vm = b["data"]["id"].as_str().unwrap().to_string();
    let (_, b) = heartbeat(&app, &host_secret, json!({})).await;
    let cmd = b["data"]["commands"][0]["id"].as_str().unwrap().to_string();
    // Another device acknowledging the host's command changes nothing.
    let (s, b) = heartbeat(&app, &other_secret, json!({"acks": [{"id": cmd, "ok": true}]})).await;
    assert_eq!(s, 200);
    assert_eq!(b["data"]["commands"], json!([]));
    let (_, b) = app.get_auth(&format!("/api/ebs/v2/devices/{vm}"), &alice).await;
    assert_eq!(b["data"]["status"], "creating");
    let (_, b) = heartbeat(&app, &host_secret, json!({})).await;
    assert_eq!(b["data"]["commands"][0]["id"], cmd.as_str(), "still pending until its own device acknowledges");
    let _ = host;
}

#[tokio::test]
async fn list_filters() {
    let app = TestApp::spawn().await;
    let t = token_of(&app.signed_in("alice@example.com").await);
    bound_device(&app, &t, "Z-BOX", spec(2)).await;
    bound_device(&app, &t, "P-BOX", spec(2)).await;
    let (_, b) = app.get_auth("/api/ebs/v2/devices?type=P-BOX", &t).await;
    assert_eq!(b["data"]["total"], 1);
    assert_eq!(b["data"]["items"][0]["type"], "P-BOX");
    let (_, b) = app.get_auth("/api/ebs/v2/devices?type=P-BOX&status=online", &t).await;
    assert_eq!(b["data"]["total"], 1);
    let (_, b) = app.get_auth("/api/ebs/v2/devices?status=creating", &t).await;
    assert_eq!(b["data"]["total"], 0);
    for empty in ["type=", "status=", "type=%20"] {
        let (s, b) = app.get_auth(&format!("/api/ebs/v2/devices?{empty}"), &t).await;
        assert_eq!(s, 400, "{empty}: {b}");
    }
    let (s, b) = app.get_auth("/api/ebs/v2/devices?type=toaster", &t).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("type")));
    let (s, _) = app.get_auth("/api/ebs/v2/devices?status=sleeping", &t).await;
    assert_eq!(s, 400);
    assert_eq!(app.get("/api/ebs/v2/devices").await.status().as_u16(), 401);
}

/// Ids are types at the edge (issue 27): a device id in a path is read as people type it, a
/// malformed one names nothing (404); an id a body must carry is trimmed and required, the
/// refusal naming the field; a device id a body carries must have a device id's shape (400).
#[tokio::test]
async fn ids_are_read_at_the_edge() {
    let app = TestApp::spawn().await;
    let t = token_of(&app.signed_in("ids@example.com").await);
    let (id, _) = crate::boxes::bound_device(&app, &t, "Z-BOX", spec(2)).await;
    let typed = format!(" {} ", id.to_ascii_lowercase().replace('-', " "));
    let (s, b) = app.get_auth(&format!("/api/ebs/v2/devices/{}", urlencoding(&typed)), &t).await;
    assert_eq!((s, b["data"]["id"].as_str()), (200, Some(id.as_str())), "{b}");
    for bad in ["nope", "7KQ2--M9XD-4HTR", "%20"] {
        let (s, b) = app.get_auth(&format!("/api/ebs/v2/devices/{bad}"), &t).await;
        assert!(s == 404 || (bad == "%20" && s == 400), "{bad}: {s} {b}");
    }
    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "  ", "device_id": id}), Some(&t)).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("app_id")), "{b}");
    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "nginx", "device_id": "\t"}), Some(&t)).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("device_id")), "{b}");
    let (s, b) = app.get_auth("/api/rmp/v1/demands/any/check?device_id=%20", &t).await;
    assert_eq!((s, b["msg"].as_str(), b["error"].as_str()), (400, Some("Invalid Device ID"), Some("invalid_device_id")), "{b}");
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/fit?app_id={}", "x".repeat(65)), &t).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("app_id")), "{b}");
}

fn urlencoding(s: &str) -> String {
    s.replace(' ', "%20")
}
