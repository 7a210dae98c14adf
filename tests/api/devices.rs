//! Devices: registration, heartbeat, binding (with every refusal), offline marking, sharing,
//! permissions and isolation, Z-CLOUD capacity and the create/acknowledge cycle, nearby.

use serde_json::{Value, json};

use crate::common::*;
pub(crate) use crate::boxes::{bound_device, heartbeat, link, register};

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

#[tokio::test]
async fn sharing_edits_reach_the_device() {
    let app = TestApp::spawn().await;
    let t = token_of(&app.signed_in("alice@example.com").await);
    let (id, secret) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    let path = format!("/api/ebs/v2/devices/{id}/sharing");
    let (s, b) = app.put_json(&path, &json!({"mode": "manual", "rentable": true, "price_per_hour": 250}), &t).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!((b["data"]["rentable"].as_bool(), b["data"]["price_per_hour"].as_i64()), (Some(true), Some(250)));
    let (_, b) = heartbeat(&app, &secret, json!({})).await;
    assert_eq!(b["data"]["settings"]["sharing_mode"], "manual");
    assert_eq!(b["data"]["settings"]["rentable"], true);
    assert_eq!(b["data"]["settings"]["price_per_hour"], 250);

    // Rules of the modes.
    let (s, b) = app.put_json(&path, &json!({"mode": "dedicated", "rentable": true}), &t).await;
    assert_eq!(s, 409);
    assert_eq!(b["msg"], "This operation is not allowed in the current sharing mode");
    let (s, _) = app.put_json(&path, &json!({"mode": "autopilot", "rentable": false}), &t).await;
    assert_eq!(s, 409);
    let (s, b) = app.put_json(&path, &json!({"mode": "autopilot", "rentable": true}), &t).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["price_per_hour"], 250, "the price is kept when not given");
    let (s, b) = app.put_json(&path, &json!({"mode": "dedicated", "rentable": false}), &t).await;
    assert_eq!(s, 200, "{b}");
    let (_, b) = heartbeat(&app, &secret, json!({})).await;
    assert_eq!(b["data"]["settings"]["sharing_mode"], "dedicated");
    // Bad input.
    for body in [json!({"mode": "greedy", "rentable": false}), json!({"mode": "manual"}), json!({"mode": "manual", "rentable": true, "price_per_hour": -1})] {
        let (s, _) = app.put_json(&path, &body, &t).await;
        assert_eq!(s, 400, "{body}");
    }
}

#[tokio::test]
async fn an_offline_device_cannot_be_offered_for_rent() {
    let app = TestApp::spawn_with(|c| {
        c.devices.offline_after_secs = 2;
        c.devices.heartbeat_secs = 1;
    }).await;
    let t = token_of(&app.signed_in("alice@example.com").await);
    let (id, _) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    for _ in 0..100 {
        let (_, b) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), &t).await;
        if b["data"]["status"] == "offline" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let path = format!("/api/ebs/v2/devices/{id}/sharing");
    let (s, b) = app.put_json(&path, &json!({"mode": "manual", "rentable": true, "price_per_hour": 100}), &t).await;
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["msg"], "This operation is not allowed while the device is stopped or offline");
    // Withdrawing or going self-used is allowed while offline.
    let (s, _) = app.put_json(&path, &json!({"mode": "dedicated", "rentable": false}), &t).await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn company_devices_and_members() {
    let app = TestApp::spawn().await;
    let admin = app.signed_in("admin@example.com").await;
    let member = app.signed_in("member@example.com").await;
    let company = seed_company(&app, "Acme Ltd", &admin, &[(&member, "member")]).await;
    let admin_t = switch_to(&app, &admin, &company).await;
    let member_t = switch_to(&app, &member, &company).await;

    // Bound in the company context, the company owns it.
    let (id, secret, code) = register(&app, "Z-BOX", spec(4)).await;
    let (s, b) = link(&app, &admin_t, &id, &code).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["owner_kind"], "company");
    // Not in the admin's personal list; in the company's.
    let (_, b) = app.get_auth("/api/ebs/v2/devices", &token_of(&admin)).await;
    assert_eq!(b["data"]["total"], 0);
    let (_, b) = app.get_auth("/api/ebs/v2/devices", &admin_t).await;
    assert_eq!(b["data"]["total"], 1);

    // A member sees nothing until devices are assigned, and may manage nothing.
    let (s, b) = app.get_auth("/api/ebs/v2/devices", &member_t).await;
    assert_eq!(s, 200);
    assert_eq!(b["data"]["total"], 0);
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), &member_t).await;
    assert_eq!(s, 404);
    let (id2, _, code2) = register(&app, "Z-BOX", spec(4)).await;
    let refusals = [
        link(&app, &member_t, &id2, &code2).await,
        app.put_json(&format!("/api/ebs/v2/devices/{id}/sharing"), &json!({"mode": "manual", "rentable": false}), &member_t).await,
        app.put_json(&format!("/api/ebs/v2/devices/{id}/location"), &json!({"lat": 1.0, "lng": 2.0}), &member_t).await,
        app.delete_json(&format!("/api/ebs/v2/devices/{id}"), &json!({}), &member_t).await,
        app.post_json("/api/ebs/v2/zcloud", &json!({"name": "vm", "cpu_cores": 1, "memory_bytes": GIB, "disk_bytes": GIB}), Some(&member_t)).await,
    ];
    for (s, b) in refusals {
        assert_eq!(s, 403, "{b}");
        assert_eq!(b["msg"], "No permission to manage devices, please contact the administrator");
    }
    let (s, b) = zh_post(&app, "/api/ebs/v2/devices/link", &json!({"device_id": id2, "pairing_code": code2}), &member_t).await;
    assert_eq!(s, 403);
    assert_eq!(b["msg"], "无权管理设备，请联系管理员");

    // Another company's admin sees none of it.
    let other = app.signed_in("other@example.com").await;
    let other_co = seed_company(&app, "Other Co", &other, &[]).await;
    let other_t = switch_to(&app, &other, &other_co).await;
    let (_, b) = app.get_auth("/api/ebs/v2/devices", &other_t).await;
    assert_eq!(b["data"]["total"], 0);
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), &other_t).await;
    assert_eq!(s, 404);
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{id}"), &json!({}), &other_t).await;
    assert_eq!(s, 404);

    // Status notifications go to the company's administrators.
    let _ = heartbeat(&app, &secret, json!({})).await;
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{id}"), &json!({}), &admin_t).await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn location_is_validated() {
    let app = TestApp::spawn().await;
    let t = token_of(&app.signed_in("alice@example.com").await);
    let (id, _) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    let path = format!("/api/ebs/v2/devices/{id}/location");
    let (s, b) = app.put_json(&path, &json!({"lat": 22.5431, "lng": 114.0579}), &t).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["location"], json!({"lat": 22.5431, "lng": 114.0579}));
    for body in [json!({"lat": 91.0, "lng": 0.0}), json!({"lat": 0.0, "lng": 181.0}), json!({"lat": 1.0})] {
        let (s, _) = app.put_json(&path, &body, &t).await;
        assert_eq!(s, 400, "{body}");
    }
    let (s, b) = app.put_json(&path, &json!({"lat": null, "lng": null}), &t).await;
    assert_eq!(s, 200);
    assert_eq!(b["data"]["location"], Value::Null);
}

fn gpu_spec(cores: i64, gpus: Value) -> Value {
    json!({"cpu_cores": cores, "memory_bytes": 64 * GIB, "disk_bytes": 1024 * GIB, "gpus": gpus})
}

#[tokio::test]
async fn zcloud_capacity_and_create_acknowledge_cycle() {
    let app = TestApp::spawn().await;
    let alice_s = app.signed_in("alice@example.com").await;
    let alice = token_of(&alice_s);
    let zc = |name: &str, cores: i64, gpus: i64, pass: bool| {
        json!({"name": name, "cpu_cores": cores, "memory_bytes": 8 * GIB, "disk_bytes": 100 * GIB, "gpu_count": gpus, "gpu_model": "4090", "passthrough": pass})
    };
    // No host at all.
    let (s, b) = app.post_json("/api/ebs/v2/zcloud", &zc("vm", 2, 0, false), Some(&alice)).await;
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["msg"], "No server has enough free capacity");

    let gpus = json!([{"name": "NVIDIA GeForce RTX 4090", "passthrough": true, "vram": 24 * GIB}, {"name": "NVIDIA GeForce RTX 4090", "passthrough": true, "vram": 24 * GIB}]);
    let (host, secret) = bound_device(&app, &alice, "server group", gpu_spec(16, gpus)).await;
    let (_, b) = app.get_auth("/api/ebs/v2/zcloud/capacity", &alice).await;
    assert_eq!(b["data"][0]["cpu_cores"], 16);
    assert_eq!(b["data"][0]["gpus"][0]["count"], 2);

    // Too big.
    let (s, _) = app.post_json("/api/ebs/v2/zcloud", &zc("vm", 17, 0, false), Some(&alice)).await;
    assert_eq!(s, 409);
    let (s, _) = app.post_json("/api/ebs/v2/zcloud", &zc("vm", 2, 3, true), Some(&alice)).await;
    assert_eq!(s, 409);
    // Bad input.
    let (s, b) = app.post_json("/api/ebs/v2/zcloud", &json!({"name": "vm", "cpu_cores": 0, "memory_bytes": GIB, "disk_bytes": GIB}), Some(&alice)).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("cpu_cores")));

    // Fits: creating, with a create command to the host.
    let (s, b) = app.post_json("/api/ebs/v2/zcloud", &zc("vm one", 10, 2, true), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let vm = b["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(b["data"]["type"], "Z-CLOUD");
    assert_eq!(b["data"]["status"], "creating");
    assert_eq!(b["data"]["host_id"], host.as_str());
    assert_eq!(b["data"]["spec"]["gpus"][0]["name"], "NVIDIA GeForce RTX 4090");
    // The capacity is held: what is left cannot take the same again.
    let (_, b) = app.get_auth("/api/ebs/v2/zcloud/capacity", &alice).await;
    assert_eq!(b["data"][0]["cpu_cores"], 6);
    assert_eq!(b["data"][0]["gpus"][0]["count"], 0);
    let (s, _) = app.post_json("/api/ebs/v2/zcloud", &zc("vm two", 6, 1, true), Some(&alice)).await;
    assert_eq!(s, 409);

    let (_, b) = heartbeat(&app, &secret, json!({})).await;
    let cmds = b["data"]["commands"].as_array().unwrap().clone();
    assert_eq!(cmds.len(), 1);
    assert_eq!(cmds[0]["kind"], "zcloud_create");
    assert_eq!(cmds[0]["payload"]["machine_id"], vm.as_str());
    assert_eq!(cmds[0]["payload"]["cpu_cores"], 10);
    let cmd = cmds[0]["id"].as_str().unwrap();
    // Acknowledged: the machine is online and the command is no longer sent.
    let (_, b) = heartbeat(&app, &secret, json!({"acks": [{"id": cmd, "ok": true}]})).await;
    assert_eq!(b["data"]["commands"], json!([]));
    let (_, b) = app.get_auth(&format!("/api/ebs/v2/devices/{vm}"), &alice).await;
    assert_eq!(b["data"]["status"], "online");

    // A second machine fails on the host: failed with the reason, capacity released.
    let (s, b) = app.post_json("/api/ebs/v2/zcloud", &zc("vm two", 6, 0, false), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let vm2 = b["data"]["id"].as_str().unwrap().to_string();
    let (_, b) = heartbeat(&app, &secret, json!({})).await;
    let cmd2 = b["data"]["commands"][0]["id"].as_str().unwrap().to_string();
    let (_, _) = heartbeat(&app, &secret, json!({"acks": [{"id": cmd2, "ok": false, "error": "no provisioner is configured on this host"}]})).await;
    let (_, b) = app.get_auth(&format!("/api/ebs/v2/devices/{vm2}"), &alice).await;
    assert_eq!(b["data"]["status"], "failed");
    assert_eq!(b["data"]["status_reason"], "no provisioner is configured on this host");
    let (_, b) = app.get_auth("/api/ebs/v2/zcloud/capacity", &alice).await;
    assert_eq!(b["data"][0]["cpu_cores"], 6);

    // The host cannot be unlinked while it carries machines.
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{host}"), &json!({}), &alice).await;
    assert_eq!(s, 409);
    // Deleting the machine releases its capacity and tells the host.
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{vm}"), &json!({}), &alice).await;
    assert_eq!(s, 200);
    let (_, b) = app.get_auth("/api/ebs/v2/zcloud/capacity", &alice).await;
    assert_eq!(b["data"][0]["cpu_cores"], 16);
    let (_, b) = heartbeat(&app, &secret, json!({})).await;
    assert_eq!(b["data"]["commands"][0]["kind"], "zcloud_delete");
    assert_eq!(b["data"]["commands"][0]["payload"]["machine_id"], vm.as_str());

    // The owner heard about both outcomes.
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    use zmarket::db::entity::notifications;
    let user = user_id_of(&app, &alice_s).await;
    let kinds: Vec<String> = notifications::Entity::find()
        .filter(notifications::Column::UserId.eq(user))
        .all(&app.state.db)
        .await
        .unwrap()
        .into_iter()
        .map(|n| sea_orm::ActiveEnum::to_value(&n.kind))
        .collect();
    assert!(kinds.contains(&"zcloud_ready".to_string()) && kinds.contains(&"zcloud_failed".to_string()), "{kinds:?}");

    // Another user cannot use Alice's host while it is not shared.
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let (s, _) = app.post_json("/api/ebs/v2/zcloud", &zc("bob vm", 1, 0, false), Some(&bob)).await;
    assert_eq!(s, 409);
    let (s, _) = app.put_json(&format!("/api/ebs/v2/devices/{host}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 10}), &alice).await;
    assert_eq!(s, 200);
    let (s, b) = app.post_json("/api/ebs/v2/zcloud", &zc("bob vm", 1, 0, false), Some(&bob)).await;
    assert_eq!(s, 200, "{b}");
}

#[tokio::test]
async fn nearby_lists_shared_devices_coarsely() {
    let app = TestApp::spawn().await;
    let t = token_of(&app.signed_in("alice@example.com").await);
    let share = |id: String| {
        let app = &app;
        let t = t.clone();
        async move {
            let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{id}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 300}), &t).await;
            assert_eq!(s, 200, "{b}");
        }
    };
    let (near, _) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    let (far, _) = bound_device(&app, &t, "P-BOX", spec(4)).await;
    let (private, _) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    let (unplaced, _) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    for (id, lat, lng) in [(&near, 22.54317, 114.05791), (&far, 39.9042, 116.4074), (&private, 22.5, 114.0)] {
        let (s, _) = app.put_json(&format!("/api/ebs/v2/devices/{id}/location"), &json!({"lat": lat, "lng": lng}), &t).await;
        assert_eq!(s, 200);
    }
    share(near.clone()).await;
    share(far.clone()).await;
    share(unplaced.clone()).await;

    let (s, b) = app.get_json("/api/ebs/v2/nearby?lat=22.54&lng=114.06").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["total"], 2, "only shared, rentable, placed devices: {b}");
    let items = b["data"]["items"].as_array().unwrap();
    assert_eq!(items[0]["id"], near.as_str());
    assert_eq!(items[0]["lat"], 22.54);
    assert_eq!(items[0]["lng"], 114.06);
    assert_eq!(items[0]["distance_km"], 0);
    assert_eq!(items[0]["price_per_hour"], 300);
    assert_eq!(items[0]["type"], "Z-BOX");
    assert_eq!(items[0]["gpus"], json!([]));
    assert_eq!(items[1]["id"], far.as_str());
    let far_km = items[1]["distance_km"].as_i64().unwrap();
    assert!((1935..=1950).contains(&far_km), "{far_km}");

    // The radius filters; pages work; the defaults are the configured centre.
    let (_, b) = app.get_json("/api/ebs/v2/nearby?lat=22.54&lng=114.06&radius_km=100").await;
    assert_eq!(b["data"]["total"], 1);
    let (_, b) = app.get_json("/api/ebs/v2/nearby?lat=22.54&lng=114.06&offset=1&limit=1").await;
    assert_eq!(b["data"]["items"][0]["id"], far.as_str());
    let (_, b) = app.get_json("/api/ebs/v2/nearby").await;
    assert_eq!(b["data"]["items"][0]["id"], near.as_str());
    for bad in ["lat=91&lng=0", "lat=1", "radius_km=-1", "limit=101", "lat=abc&lng=1"] {
        let (s, _) = app.get_json(&format!("/api/ebs/v2/nearby?{bad}")).await;
        assert_eq!(s, 400, "{bad}");
    }

    // One device, with its apps (none yet).
    let (s, b) = app.get_json(&format!("/api/ebs/v2/nearby/{near}?lat=22.54&lng=114.06")).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["apps"], json!([]));
    assert_eq!(b["data"]["lat"], 22.54);
    let (s, _) = app.get_json(&format!("/api/ebs/v2/nearby/{private}")).await;
    assert_eq!(s, 404);

    // The public nearby page is rendered with the data.
    let html = app.get("/nearby").await.text().await.unwrap();
    assert!(html.contains(&near), "nearby page carries the device");
    let html = app.get(&format!("/nearby/details?id={near}")).await.text().await.unwrap();
    assert!(html.contains("\"nearbyDetails\""), "details page carries its data");

    // Withdrawn from sharing: gone from nearby and from the rendered page.
    let (s, _) = app.put_json(&format!("/api/ebs/v2/devices/{near}/sharing"), &json!({"mode": "dedicated", "rentable": false}), &t).await;
    assert_eq!(s, 200);
    let (_, b) = app.get_json("/api/ebs/v2/nearby").await;
    assert_eq!(b["data"]["total"], 1);
    let html = app.get("/nearby").await.text().await.unwrap();
    assert!(!html.contains(&near));
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
