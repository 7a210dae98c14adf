//! GPUs as they are (issue 38, docs/gpus.md), with the agent's side played through the protocol:
//! the inventory by UUID, one holder per GPU (and the commands carrying the UUIDs), release on
//! uninstall, `no_free_gpu` and `cuda_too_old`, telemetry series and who may read them, a GPU
//! gone while held, verification, and the beats that are refused with nothing stored.

use serde_json::{Value, json};

use zmarket::coins::Coins;

use crate::boxes::{GIB, act, beat, bound_device, command_for, get, heartbeat, rent, running, verified};
use crate::common::*;

const A: &str = "GPU-5a1b2c3d-0000-4111-8222-333344445555";
const B: &str = "GPU-9f8e7d6c-aaaa-4bbb-8ccc-ddddeeeeffff";

fn h200(index: i64, uuid: &str, cuda: &str) -> Value {
    json!({"index": index, "uuid": uuid, "name": "NVIDIA H200", "vram": 141 * GIB, "passthrough": true,
           "driver": "580.159.04", "cuda": cuda, "compute_capability": "9.0", "mig": false})
}

/// A big box with two H200s whose driver runs `cuda`.
fn gpu_box(cuda: &str) -> Value {
    json!({"cpu_cores": 64, "memory_bytes": 512 * GIB, "disk_bytes": 8192 * GIB, "gpu_runtime": true,
           "gpus": [h200(0, A, cuda), h200(1, B, cuda)]})
}

fn use_of(uuid: &str, utilization: f64) -> Value {
    json!({"uuid": uuid, "utilization": utilization, "memory_used": 39_000_000_000i64, "temperature": 61.0, "power_watts": 540.5})
}

async fn device(app: &TestApp, token: &str, id: &str) -> Value {
    let (s, b) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), token).await;
    assert_eq!(s, 200, "{b}");
    b["data"].clone()
}

async fn install(app: &TestApp, token: &str, app_id: &str, dev: &str) -> (u16, Value) {
    app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": app_id, "device_id": dev}), Some(token)).await
}

fn held(inst: &Value) -> Vec<String> {
    inst["gpus"].as_array().unwrap().iter().map(|g| g["uuid"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn the_inventory_is_by_uuid_and_two_installs_hold_two_distinct_gpus() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", gpu_box("13.0")).await;

    let d = device(&app, &alice, &dev).await;
    assert_eq!(d["spec"]["gpus"][0]["uuid"], A);
    assert_eq!(d["spec"]["gpus"][1]["driver"], "580.159.04");
    assert_eq!(d["spec"]["gpus"][1]["cuda"], "13.0");
    assert_eq!(d["spec"]["gpus"][1]["compute_capability"], "9.0");
    assert_eq!(d["spec"]["gpus"][0]["mig"], false);
    assert_eq!((d["gpus_free"].as_i64(), d["verification"].is_null()), (Some(2), true));

    // Two GPU apps: each holds one GPU of its own, and its install command names it.
    let (s, first) = install(&app, &alice, "ollama", &dev).await;
    assert_eq!(s, 200, "{first}");
    let (s, second) = install(&app, &alice, "vllm", &dev).await;
    assert_eq!(s, 200, "{second}");
    let (one, two) = (first["data"]["id"].as_str().unwrap(), second["data"]["id"].as_str().unwrap());
    assert_eq!(held(&first["data"]), vec![A.to_string()]);
    assert_eq!(held(&second["data"]), vec![B.to_string()]);
    assert_eq!(first["data"]["gpus"][0]["name"], "NVIDIA H200");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert_eq!(command_for(&cmds, one)["payload"]["gpus"], json!([A]));
    assert_eq!(command_for(&cmds, two)["payload"]["gpus"], json!([B]));
    assert_eq!(device(&app, &alice, &dev).await["gpus_free"], 0);

    // A third: the box has the GPUs, but both are held.
    let (s, b) = install(&app, &alice, "pytorch", &dev).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("no_free_gpu")), "{b}");
    assert_eq!(b["msg"], "Every GPU of this device is already in use by another app or machine");
    let (_, b) = app.get_auth("/api/rmp/v1/apps/fit?app_id=pytorch", &alice).await;
    let fit = &b["data"][0];
    assert_eq!((fit["reason"].as_str(), fit["gpus_free"].as_i64(), fit["cuda"].as_str()), (Some("no_free_gpu"), Some(0), Some("13.0")), "{b}");

    // An app that needs no GPU gets none.
    let (s, b) = install(&app, &alice, "grafana", &dev).await;
    assert_eq!((s, b["data"]["gpus"].clone()), (200, json!([])), "{b}");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert_eq!(command_for(&cmds, b["data"]["id"].as_str().unwrap())["payload"]["gpus"], json!([]));

    // Uninstalled, its GPU is free again and the next app gets that one.
    let cmd = command_for(&cmds, one)["id"].clone();
    beat(&app, &secret, json!([{"id": one, "status": "running"}]), json!([{"id": cmd, "ok": true}])).await;
    let (s, b) = act(&app, &alice, one, "uninstall").await;
    assert_eq!(s, 200, "{b}");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let cmd = command_for(&cmds, one)["id"].clone();
    beat(&app, &secret, json!([]), json!([{"id": cmd, "ok": true}])).await;
    assert_eq!(get(&app, &alice, one).await["status"], "not_install");
    assert_eq!(device(&app, &alice, &dev).await["gpus_free"], 1);
    let (s, b) = install(&app, &alice, "pytorch", &dev).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(held(&b["data"]), vec![A.to_string()]);
    // The AI compute page lists what each holds.
    let (_, b) = app.get_auth("/api/rmp/v1/aicompute", &alice).await;
    let vllm = b["data"]["items"].as_array().unwrap().iter().find(|i| i["app_id"] == "vllm").unwrap().clone();
    assert_eq!(vllm["gpus"][0]["uuid"], B, "{b}");
}

#[tokio::test]
async fn an_app_built_for_a_newer_cuda_is_refused_in_words_both_languages() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, _) = bound_device(&app, &alice, "Z-BOX", gpu_box("11.8")).await;
    let (s, b) = install(&app, &alice, "vllm", &dev).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("cuda_too_old")), "{b}");
    assert_eq!(b["data"]["gaps"], json!([{"field": "cuda", "need": "12.1", "have": "11.8"}]));
    assert_eq!(b["msg"], "The app needs CUDA 12.1 or newer; this device's driver runs CUDA 11.8");
    let zh = app.client.post(app.url("/api/rmp/v1/apps/install")).bearer_auth(&alice).header("Accept-Language", "zh-CN");
    let (_, b) = json_of(zh.json(&json!({"app_id": "vllm", "device_id": dev})).send().await.unwrap()).await;
    assert_eq!(b["msg"], "应用需要 CUDA 12.1 或更新版本，此设备的驱动只支持 CUDA 11.8");
    // An older CUDA app fits; the market's catalogue says what each needs.
    let (s, b) = install(&app, &alice, "ollama", &dev).await;
    assert_eq!(s, 200, "{b}");
    let (_, b) = app.get_json("/api/ebs/v1/market/applications/vllm").await;
    assert_eq!(b["data"]["requirements"]["cuda"], "12.1");
}

#[tokio::test]
async fn twenty_renters_racing_for_two_gpus_two_win() {
    let app = TestApp::spawn().await;
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let (dev, _) = bound_device(&app, &bob, "Z-BOX", gpu_box("13.0")).await;
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 100}), &bob).await;
    assert_eq!(s, 200, "{b}");
    let mut renters = Vec::new();
    for i in 0..20 {
        let email = format!("renter{i}@example.com");
        renters.push(token_of(&app.signed_in(&email).await));
        zmarket::billing::issuance::grant_by_email(&app.state.db, &email, Coins::from_cents(10_000), "test").await.unwrap();
    }
    // An app is on a box once: the renters ask for the catalogue's one-GPU apps in turn.
    let gpu_apps = ["pytorch", "vllm", "ollama", "comfyui", "tensorflow", "jupyterlab", "stable-diffusion-webui", "text-generation-inference",
        "blender-render-node", "godot-engine", "sunshine", "obs-studio", "unreal-pixel-streaming"];
    let tries = renters.iter().enumerate().map(|(i, t)| rent(&app, t, gpu_apps[i % gpu_apps.len()], &dev, 1));
    let results = futures::future::join_all(tries).await;
    let won: Vec<&Value> = results.iter().filter(|(s, _)| *s == 200).map(|(_, b)| b).collect();
    assert_eq!(won.len(), 2, "{results:?}");
    let refused = |b: &Value| b["error"] == "no_free_gpu" || b["error"] == "app_already_installed";
    assert!(results.iter().all(|(s, b)| *s == 200 || (*s == 409 && refused(b))), "{results:?}");
    assert!(results.iter().filter(|(_, b)| b["error"] == "no_free_gpu").count() >= 10, "{results:?}");
    let mut gpus: Vec<String> = won.iter().flat_map(|b| held(&b["data"])).collect();
    gpus.sort();
    assert_eq!(gpus, vec![A.to_string(), B.to_string()]);
    let holds = stored(&app, "SELECT CAST(COUNT(*) AS TEXT) FROM gpu_holds").await;
    assert_eq!(holds[0][0], "2");
    verified(&app).await;
}

#[tokio::test]
async fn figures_are_kept_as_series_and_read_by_the_owner_and_the_renter_of_a_gpu() {
    let app = TestApp::spawn_with(|c| c.devices.sample_every_secs = 0).await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let eve = token_of(&app.signed_in("eve@example.com").await);
    zmarket::billing::issuance::grant_by_email(&app.state.db, "alice@example.com", Coins::from_cents(10_000), "test").await.unwrap();
    let (dev, secret) = bound_device(&app, &bob, "Z-BOX", gpu_box("13.0")).await;
    app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 100}), &bob).await;
    for u in [20.0, 50.0, 97.0] {
        let metrics = json!({"cpu_percent": 12.5, "memory_used_bytes": 8 * GIB, "disk_used_bytes": GIB, "gpus": [use_of(A, u), use_of(B, 3.0)]});
        let (s, b) = heartbeat(&app, &secret, json!({"metrics": metrics})).await;
        assert_eq!(s, 200, "{b}");
    }
    // The owner: the whole box, and the latest beat on the device.
    let (s, b) = app.get_auth(&format!("/api/ebs/v2/devices/{dev}/metrics?minutes=60"), &bob).await;
    assert_eq!(s, 200, "{b}");
    let m = &b["data"];
    assert_eq!(m["cpu"].as_array().unwrap().len(), 3, "{m}");
    assert_eq!(m["memory"][0]["value"], json!((8 * GIB) as f64));
    assert_eq!(m["gpus"].as_array().unwrap().len(), 2);
    assert_eq!((m["gpus"][0]["uuid"].as_str(), m["gpus"][0]["name"].as_str()), (Some(A), Some("NVIDIA H200")));
    let util: Vec<f64> = m["gpus"][0]["series"].as_array().unwrap().iter().map(|p| p["utilization"].as_f64().unwrap()).collect();
    assert_eq!(util, vec![20.0, 50.0, 97.0]);
    assert_eq!(m["gpus"][0]["series"][2]["power_watts"], 540.5);
    let d = device(&app, &bob, &dev).await;
    assert_eq!(d["metrics"]["gpus"][0]["utilization"], 97.0, "{d}");
    // A day's view: one point a minute.
    let (_, b) = app.get_auth(&format!("/api/ebs/v2/devices/{dev}/metrics?minutes=1440"), &bob).await;
    assert!((1..=2).contains(&b["data"]["cpu"].as_array().unwrap().len()), "{b}");

    // A stranger: 404; a renter: the GPU their rental holds, nothing of the box.
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{dev}/metrics"), &eve).await;
    assert_eq!(s, 404);
    let (s, b) = rent(&app, &alice, "pytorch", &dev, 1).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = app.get_auth(&format!("/api/ebs/v2/devices/{dev}/metrics"), &alice).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["gpus"].as_array().unwrap().len(), 1);
    assert_eq!(b["data"]["gpus"][0]["uuid"], A);
    assert_eq!((b["data"]["cpu"].clone(), b["data"]["memory"].clone()), (json!([]), json!([])));

    // Bad input: the minutes, and beats with figures out of range: refused, nothing stored.
    let (s, b) = app.get_auth(&format!("/api/ebs/v2/devices/{dev}/metrics?minutes=0"), &bob).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("minutes")));
    let before = stored(&app, "SELECT CAST(COUNT(*) AS TEXT) FROM device_samples").await;
    for (bad, field) in [
        (json!({"metrics": {"gpus": [use_of(A, 101.0)]}}), "metrics.gpus.utilization"),
        (json!({"metrics": {"gpus": [use_of(A, 5.0), use_of(A, 6.0)]}}), "metrics.gpus.uuid"),
        (json!({"metrics": {"gpus": [use_of("GPU-nope", 5.0)]}}), "metrics.gpus.uuid"),
        (json!({"metrics": {"gpus": [{"uuid": A, "utilization": 5.0, "memory_used": -1}]}}), "metrics.gpus.memory_used"),
        (json!({"spec": {"cpu_cores": 64, "memory_bytes": GIB, "disk_bytes": GIB, "gpus": [h200(0, A, "13.0"), h200(1, A, "13.0")]}}), "spec.gpus.uuid"),
        (json!({"spec": {"cpu_cores": 64, "memory_bytes": GIB, "disk_bytes": GIB, "gpus": [h200(0, "5a1b2c3d", "13.0")]}}), "spec.gpus.uuid"),
    ] {
        let (s, b) = heartbeat(&app, &secret, bad).await;
        assert_eq!((s, b["data"]["field"].as_str()), (400, Some(field)), "{b}");
    }
    assert_eq!(stored(&app, "SELECT CAST(COUNT(*) AS TEXT) FROM device_samples").await, before);
    assert_eq!(device(&app, &bob, &dev).await["spec"]["gpus"][1]["uuid"], B);
}

#[tokio::test]
async fn a_gpu_gone_while_held_fails_its_holder_with_a_reason() {
    let app = TestApp::spawn().await;
    let (alice, _bob, dev, secret, id) = rented_gpu(&app).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "running");
    // The box now reports only GPU B: the rental held A.
    let spec = json!({"cpu_cores": 64, "memory_bytes": 512 * GIB, "disk_bytes": 8192 * GIB, "gpu_runtime": true, "gpus": [h200(0, B, "13.0")]});
    let (s, b) = heartbeat(&app, &secret, json!({"spec": spec, "installations": [{"id": id, "status": "running"}]})).await;
    assert_eq!(s, 200, "{b}");
    let inst = get(&app, &alice, &id).await;
    assert_eq!((inst["status"].as_str(), inst["status_reason_code"].as_str()), (Some("failed"), Some("gpu_gone")), "{inst}");
    assert_eq!(inst["status_reason"], "A GPU this app holds is no longer on the device");
    // While the GPU is away, the box's "running" is not believed; the meter does not run.
    heartbeat(&app, &secret, json!({"installations": [{"id": id, "status": "running"}]})).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "failed");
    let (_, b) = app.get_auth(&format!("/api/ebs/v2/devices/{dev}"), &_bob).await;
    assert_eq!(b["data"]["gpus_free"], 1, "{b}");
    // Seated again: the hold is still its own, and the box's report counts again.
    let (s, _) = heartbeat(&app, &secret, json!({"spec": gpu_box("13.0"), "installations": [{"id": id, "status": "running"}]})).await;
    assert_eq!(s, 200);
    assert_eq!(get(&app, &alice, &id).await["status"], "running");
    verified(&app).await;
}

#[tokio::test]
async fn verification_is_asked_of_the_box_and_a_failed_gpu_is_not_offered() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let eve = token_of(&app.signed_in("eve@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", gpu_box("13.0")).await;
    let (s, _) = app.post_json(&format!("/api/ebs/v2/devices/{dev}/verify"), &json!({}), Some(&eve)).await;
    assert_eq!(s, 404);
    let (s, b) = app.post_json(&format!("/api/ebs/v2/devices/{dev}/verify"), &json!({}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let cmd = cmds.iter().find(|c| c["kind"] == "gpu_verify").unwrap_or_else(|| panic!("{cmds:?}")).clone();
    // Asked twice while waiting: one command.
    app.post_json(&format!("/api/ebs/v2/devices/{dev}/verify"), &json!({}), Some(&alice)).await;
    assert_eq!(beat(&app, &secret, json!([]), json!([])).await.iter().filter(|c| c["kind"] == "gpu_verify").count(), 1);
    let report = json!({"gpus": [
        {"uuid": A, "ok": true, "d2d_gbps": 3110.5, "h2d_gbps": 53.2, "reason": null},
        {"uuid": B, "ok": false, "d2d_gbps": 402.0, "h2d_gbps": 52.9, "reason": "slow_memory"}]});
    let (s, b) = heartbeat(&app, &secret, json!({"acks": [{"id": cmd["id"], "ok": true}], "verification": report})).await;
    assert_eq!(s, 200, "{b}");
    let d = device(&app, &alice, &dev).await;
    assert_eq!(d["verification"]["gpus"][0]["d2d_gbps"], 3110.5, "{d}");
    assert_eq!(d["verification"]["gpus"][1]["reason"], "slow_memory");
    let (s, b) = install(&app, &alice, "pytorch", &dev).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("gpu_failed_check")), "{b}");
    // An app without GPUs still fits.
    assert_eq!(install(&app, &alice, "grafana", &dev).await.0, 200);

    // Offline: 409 "The device is offline".
    sea_orm::ConnectionTrait::execute_unprepared(&app.state.db, &format!("UPDATE devices SET status = 'offline' WHERE id = '{dev}'")).await.unwrap();
    let (s, b) = app.post_json(&format!("/api/ebs/v2/devices/{dev}/verify"), &json!({}), Some(&alice)).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("The device is offline")), "{b}");
}

/// Alice rents one GPU of Bob's two-GPU box (pytorch); the app runs. Returns (alice, bob,
/// device, secret, installation).
async fn rented_gpu(app: &TestApp) -> (String, String, String, String, String) {
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    zmarket::billing::issuance::grant_by_email(&app.state.db, "alice@example.com", Coins::from_cents(10_000), "test").await.unwrap();
    let (dev, secret) = bound_device(app, &bob, "Z-BOX", gpu_box("13.0")).await;
    app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 600}), &bob).await;
    let (s, b) = rent(app, &alice, "pytorch", &dev, 1).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    running(app, &secret, &id).await;
    (alice, bob, dev, secret, id)
}
