//! Devices: Z-CLOUD capacity (what a host offers, what machines take of it) and the
//! create/acknowledge cycle of a machine.

use serde_json::{Value, json};

use super::{GIB, bound_device, heartbeat};
use crate::common::*;

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
