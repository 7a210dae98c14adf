//! Apps on devices over HTTP, with the agent's side played through the heartbeat protocol:
//! installs through every reported state, commands re-sent until acknowledged, actions by state,
//! the requirement check, the watchdog, permissions, AI compute, the device's apps. The real
//! agent with real Docker: apps/agent.rs.

pub(crate) mod agent;
mod lite;
mod offers;
mod price;
mod rental;
pub(crate) mod snapshots;

use serde_json::{Value, json};

use crate::common::*;
pub(crate) use crate::boxes::{ack_pending, act, beat, bound_device, box_spec, command_for, get, heartbeat};

async fn zh_post(app: &TestApp, path: &str, body: &Value, token: &str) -> (u16, Value) {
    json_of(app.client.post(app.url(path)).bearer_auth(token).header("Accept-Language", "zh-CN").json(body).send().await.unwrap()).await
}

async fn install(app: &TestApp, token: &str, app_id: &str, device: &str) -> (u16, Value) {
    app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": app_id, "device_id": device}), Some(token)).await
}

/// Plays the agent through an install to `running`; returns the installation id.
pub(crate) async fn installed_running(app: &TestApp, token: &str, secret: &str, app_id: &str, device: &str) -> String {
    let (s, b) = install(app, token, app_id, device).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let cmds = beat(app, secret, json!([]), json!([])).await;
    let cmd = command_for(&cmds, &id)["id"].clone();
    beat(app, secret, json!([{"id": id, "status": "running", "url": "http://10.0.0.5:32768/"}]), json!([{"id": cmd, "ok": true}])).await;
    assert_eq!(get(app, token, &id).await["status"], "running");
    id
}

#[tokio::test]
async fn an_install_goes_through_the_reported_states_and_its_command_is_sent_until_acknowledged() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;

    let (s, b) = install(&app, &alice, "grafana", &dev).await;
    assert_eq!(s, 200, "{b}");
    let inst = &b["data"];
    assert_eq!(inst["status"], "preparing");
    assert_eq!(inst["kind"], "own");
    assert_eq!(inst["app_name"], "Grafana");
    assert_eq!(inst["device_id"], dev);
    assert_eq!(inst["rental"], Value::Null);
    assert_eq!(inst["open_url"], Value::Null);
    let id = inst["id"].as_str().unwrap().to_string();

    // The command carries the manifest; it comes again with every heartbeat until acknowledged.
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let cmd = command_for(&cmds, &id).clone();
    assert_eq!(cmd["kind"], "app_install");
    assert_eq!(cmd["payload"]["manifest"]["image"], "grafana/grafana:11.5.0");
    assert_eq!(cmd["payload"]["manifest"]["ports"][0]["container"], 3000);
    assert_eq!(cmd["payload"]["archive"], Value::Null);
    let again = beat(&app, &secret, json!([{"id": id, "status": "downloading", "progress": 40}]), json!([])).await;
    assert_eq!(command_for(&again, &id)["id"], cmd["id"]);
    let d = get(&app, &alice, &id).await;
    assert_eq!((d["status"].as_str(), d["progress"].as_i64()), (Some("downloading"), Some(40)));
    beat(&app, &secret, json!([{"id": id, "status": "downloading", "progress": 90}]), json!([])).await;
    assert_eq!(get(&app, &alice, &id).await["progress"], 90);
    beat(&app, &secret, json!([{"id": id, "status": "installing", "progress": 50}]), json!([])).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "installing");
    beat(&app, &secret, json!([{"id": id, "status": "installed"}]), json!([])).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "installed");
    let after = beat(&app, &secret, json!([{"id": id, "status": "running", "url": "http://10.0.0.5:32768/"}]), json!([{"id": cmd["id"], "ok": true}])).await;
    assert!(after.iter().all(|c| c["payload"]["installation_id"] != id.as_str()), "acknowledged commands are not sent again");
    // A second acknowledgement of the same command changes nothing.
    beat(&app, &secret, json!([]), json!([{"id": cmd["id"], "ok": false, "error": "late"}])).await;

    let d = get(&app, &alice, &id).await;
    assert_eq!(d["status"], "running");
    assert_eq!(d["open_url"], "http://10.0.0.5:32768/");
    assert_eq!(d["progress"], Value::Null);
    assert_eq!(d["actions"], json!(["stop", "restart", "suspend", "snapshot", "uninstall"]), "no update: it runs the catalogue's version");
    assert_eq!((d["device_online"].as_bool(), d["update_available"].clone()), (Some(true), Value::Null));
    let history: Vec<&str> = d["history"].as_array().unwrap().iter().map(|h| h["status"].as_str().unwrap()).collect();
    assert_eq!(history, ["preparing", "downloading", "installing", "installed", "running"]);
    assert_eq!(d["holds"]["cpu_cores"], 1);

    let (_, list) = app.get_auth("/api/rmp/v1/apps", &alice).await;
    assert_eq!(list["data"]["total"], 1);
    let (_, n) = app.get_auth("/api/ebs/v1/notifications", &alice).await;
    assert!(n["data"]["items"].as_array().unwrap().iter().any(|i| i["kind"] == "app_installed"), "{n}");

    // The box reports the app exited by itself: the installation follows.
    beat(&app, &secret, json!([{"id": id, "status": "failed", "reason": {"code": "exited", "exit_code": 137}}]), json!([])).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!(d["status"], "failed");
    assert_eq!((d["status_reason"].as_str(), d["status_reason_code"].as_str()), (Some("The app exited (exit code 137)"), Some("exited")));
    let (_, zh) = json_of(app.client.get(app.url(&format!("/api/rmp/v1/apps/{id}"))).bearer_auth(&alice).header("Accept-Language", "zh").send().await.unwrap()).await;
    assert_eq!(zh["data"]["status_reason"], "应用已退出（退出码 137）");
    // An older agent's prose is kept as `other`, worded around it.
    beat(&app, &secret, json!([{"id": id, "status": "running"}]), json!([])).await;
    beat(&app, &secret, json!([{"id": id, "status": "failed", "error": "it broke"}]), json!([])).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!((d["status_reason"].as_str(), d["status_reason_code"].as_str()), (Some("The device reported an error (it broke)"), Some("other")));
    assert_eq!(d["open_url"], Value::Null);
}

#[tokio::test]
async fn actions_follow_the_state_and_acknowledgements_settle_them() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;
    let id = installed_running(&app, &alice, &secret, "grafana", &dev).await;

    let (s, b) = act(&app, &alice, &id, "stop").await;
    assert_eq!((s, b["data"]["status"].as_str()), (200, Some("stopping")));
    assert_eq!(b["data"]["desired"], "stopped");
    // Stored as the strings the column always held (the enum needed no migration).
    assert_eq!(stored(&app, &format!("SELECT desired, status, kind FROM installations WHERE id = '{id}'")).await, [["stopped", "stopping", "own"]]);
    // Nothing else while a command is under way, and a state report does not undo it.
    let (s, b) = act(&app, &alice, &id, "stop").await;
    assert_eq!(s, 409);
    assert_eq!(b["msg"], "Cannot stop the app while it is stopping");
    let (s, b) = zh_post(&app, &format!("/api/rmp/v1/apps/{id}/actions"), &json!({"action": "start"}), &alice).await;
    assert_eq!(s, 409);
    assert_eq!(b["msg"], "应用当前状态（停止中）不允许执行“启动”");
    beat(&app, &secret, json!([{"id": id, "status": "running"}]), json!([])).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "stopping");
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "stopped");

    // Snapshot of a stopped app leaves it stopped.
    assert_eq!(act(&app, &alice, &id, "snapshot").await.1["data"]["status"], "snapshotting");
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "stopped");

    // A start the box cannot carry out fails with its reason; start again works.
    let cmds_kind = |cmds: &[Value]| command_for(cmds, &id)["kind"].as_str().unwrap().to_string();
    assert_eq!(act(&app, &alice, &id, "start").await.1["data"]["status"], "starting");
    assert_eq!(cmds_kind(&beat(&app, &secret, json!([]), json!([])).await), "app_start");
    ack_pending(&app, &secret, &id, false, Some(json!({"code": "port_in_use", "port": 8080, "status": 500}))).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!((d["status"].as_str(), d["status_reason"].as_str()), (Some("failed"), Some("Port 8080 is already in use on the device")));
    assert_eq!(d["status_reason_code"], "port_in_use");
    assert_eq!(act(&app, &alice, &id, "start").await.0, 200);
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "running");

    for (action, transit, kind, settled) in [
        ("suspend", "suspending", "app_suspend", "suspended"),
        ("resume", "resuming", "app_resume", "running"),
        ("restart", "restarting", "app_restart", "running"),
        ("snapshot", "snapshotting", "app_snapshot", "running"),
    ] {
        let (s, b) = act(&app, &alice, &id, action).await;
        assert_eq!((s, b["data"]["status"].as_str()), (200, Some(transit)), "{action}");
        assert_eq!(cmds_kind(&beat(&app, &secret, json!([]), json!([])).await), kind);
        ack_pending(&app, &secret, &id, true, None).await;
        assert_eq!(get(&app, &alice, &id).await["status"], settled, "{action}");
    }
    let (s, b) = act(&app, &alice, &id, "resume").await;
    assert_eq!(s, 409, "{b}");
    let (s, b) = act(&app, &alice, &id, "dance").await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("action")));

    // Uninstall: gone from the list, its capacity free again.
    assert_eq!(act(&app, &alice, &id, "uninstall").await.1["data"]["status"], "uninstalling");
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "not_install");
    let (_, list) = app.get_auth("/api/rmp/v1/apps", &alice).await;
    assert_eq!(list["data"]["total"], 0);
    let (_, list) = app.get_auth("/api/rmp/v1/apps?status=not_install", &alice).await;
    assert_eq!(list["data"]["total"], 1);
    let (s, _) = install(&app, &alice, "grafana", &dev).await;
    assert_eq!(s, 200, "installed again after removal");
}

#[tokio::test]
async fn the_requirement_check_names_what_is_short() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (small, _) = bound_device(&app, &alice, "Z-BOX", box_spec(2, 0)).await;
    heartbeat(&app, &bound_device(&app, &alice, "Z-BOX", box_spec(2, 0)).await.1, json!({})).await;

    // ollama: 4 cores, 16 GB, 64 GB, 1 GPU
    let (s, b) = install(&app, &alice, "ollama", &small).await;
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["msg"], "This device does not have enough free resources: CPU cores need 4, free 2; GPUs need 1, free 0");
    assert_eq!(b["data"]["gaps"], json!([{"field": "cpu_cores", "need": 4, "have": 2}, {"field": "gpu_count", "need": 1, "have": 0}]));
    let (_, b) = zh_post(&app, "/api/rmp/v1/apps/install", &json!({"app_id": "ollama", "device_id": small}), &alice).await;
    assert_eq!(b["msg"], "此设备的空闲资源不足：CPU 核心需要 4，空闲 2；GPU需要 1，空闲 0");

    // What other installations hold counts: two 1-core apps fit, a third 1-core one does not.
    let (s, _) = install(&app, &alice, "grafana", &small).await;
    assert_eq!(s, 200);
    let (s, _) = install(&app, &alice, "vaultwarden", &small).await;
    assert_eq!(s, 200);
    let (s, b) = install(&app, &alice, "syncthing", &small).await;
    assert_eq!(s, 409);
    assert_eq!(b["data"]["gaps"][0], json!({"field": "cpu_cores", "need": 1, "have": 0}));
    let (s, b) = install(&app, &alice, "grafana", &small).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("This app is already installed on this device")));

    // The install dialog's view of every device.
    let (s, b) = app.get_auth("/api/rmp/v1/apps/fit?app_id=syncthing", &alice).await;
    assert_eq!(s, 200, "{b}");
    let fits: Vec<(bool, Option<&str>)> = b["data"].as_array().unwrap().iter().map(|f| (f["fits"].as_bool().unwrap(), f["reason"].as_str())).collect();
    assert!(fits.contains(&(false, Some("resources"))) && fits.contains(&(true, None)), "{fits:?}");

    // A lite app space needs a GPU.
    let (s, b) = install(&app, &alice, "uptime-kuma", &small).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("A lite app space is not supported without a GPU")));
    let (_, b) = zh_post(&app, "/api/rmp/v1/apps/install", &json!({"app_id": "uptime-kuma", "device_id": small}), &alice).await;
    assert_eq!(b["msg"], "没有 GPU 的设备不支持轻应用空间");

    // Bad input and unknown subjects.
    let (s, b) = install(&app, &alice, "", &small).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("app_id")));
    let (s, _) = install(&app, &alice, "no-such-app", &small).await;
    assert_eq!(s, 404);
    let (s, _) = install(&app, &alice, "grafana", "AAAA-BBBB-CCCC").await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn two_installs_racing_for_the_last_capacity_take_it_once() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, _) = bound_device(&app, &alice, "Z-BOX", box_spec(1, 0)).await;
    let apps = ["grafana", "vaultwarden", "syncthing", "portainer", "node-red", "rustdesk-server"];
    let tries = apps.iter().map(|a| install(&app, &alice, a, &dev));
    let results = futures::future::join_all(tries).await;
    let ok = results.iter().filter(|(s, _)| *s == 200).count();
    assert_eq!(ok, 1, "{results:?}");
    assert!(results.iter().all(|(s, _)| *s == 200 || *s == 409), "{results:?}");
}

#[tokio::test]
async fn the_watchdog_fails_a_stuck_state_and_the_owner_retries_or_removes() {
    let app = TestApp::spawn_with(|c| {
        c.apps.install_timeout_secs = 1;
        c.apps.action_timeout_secs = 1;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;
    let (_, b) = install(&app, &alice, "grafana", &dev).await;
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let first = command_for(&beat(&app, &secret, json!([]), json!([])).await, &id)["id"].clone();

    let d = wait_for(&app, &alice, &id, "install_failed").await;
    assert_eq!(d["status_reason"], "The device did not finish (preparing) within 1 seconds");
    assert_eq!(d["actions"], json!(["retry", "uninstall"]));
    let (_, zh) = json_of(app.client.get(app.url(&format!("/api/rmp/v1/apps/{id}"))).bearer_auth(&alice).header("Accept-Language", "zh").send().await.unwrap()).await;
    assert_eq!(zh["data"]["status_reason"], "设备未在 1 秒内完成（准备中）");
    // The command is withdrawn; a late acknowledgement of it changes nothing.
    let cmds = beat(&app, &secret, json!([]), json!([{"id": first, "ok": true}])).await;
    assert!(cmds.iter().all(|c| c["payload"]["installation_id"] != id.as_str()));
    assert_eq!(get(&app, &alice, &id).await["status"], "install_failed");
    let (_, n) = app.get_auth("/api/ebs/v1/notifications", &alice).await;
    assert!(n["data"]["items"].as_array().unwrap().iter().any(|i| i["kind"] == "app_failed"), "{n}");

    // Retry sends a new install command.
    let (s, b) = act(&app, &alice, &id, "retry").await;
    assert_eq!((s, b["data"]["status"].as_str()), (200, Some("preparing")));
    let second = command_for(&beat(&app, &secret, json!([]), json!([])).await, &id).clone();
    assert_eq!(second["kind"], "app_install");
    assert_ne!(second["id"], first);
    wait_for(&app, &alice, &id, "install_failed").await;

    // Remove: what was left is cleaned from the box.
    let (s, b) = act(&app, &alice, &id, "uninstall").await;
    assert_eq!((s, b["data"]["status"].as_str()), (200, Some("deleting")));
    let d = wait_for(&app, &alice, &id, "uninstall_failed").await;
    assert!(d["status_reason"].as_str().unwrap().contains("deleting"), "{d}");
    act(&app, &alice, &id, "uninstall").await;
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "not_install");
}

async fn wait_for(app: &TestApp, token: &str, id: &str, status: &str) -> Value {
    for _ in 0..100 {
        let d = get(app, token, id).await;
        if d["status"] == status {
            return d;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{id} never became {status}: {}", get(app, token, id).await);
}

#[tokio::test]
async fn offline_devices_refuse_with_the_spec_messages() {
    let app = TestApp::spawn_with(|c| {
        c.devices.offline_after_secs = 2;
        c.devices.heartbeat_secs = 1;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(16, 2)).await;
    let web = installed_running(&app, &alice, &secret, "grafana", &dev).await;
    let ai = installed_running(&app, &alice, &secret, "ollama", &dev).await;
    act(&app, &alice, &web, "stop").await;
    ack_pending(&app, &secret, &web, true, None).await;
    // An install the box took but never finished (it goes offline while preparing).
    let (s, b) = install(&app, &alice, "syncthing", &dev).await;
    assert_eq!(s, 200, "{b}");
    let stuck = b["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(get(&app, &alice, &stuck).await["actions"], json!([]), "nothing to cancel while the box works on it");

    // AI compute: endpoint and the GPUs it holds.
    let (s, b) = app.get_auth("/api/rmp/v1/aicompute", &alice).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["total"], 1);
    let item = &b["data"]["items"][0];
    assert_eq!(item["app_id"], "ollama");
    assert_eq!(item["endpoint"], "http://10.0.0.5:32768/");
    assert_eq!(item["gpus"].as_array().unwrap().len(), 1);

    for _ in 0..100 {
        let (_, d) = app.get_auth(&format!("/api/ebs/v2/devices/{dev}"), &alice).await;
        if d["data"]["status"] == "offline" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(get(&app, &alice, &web).await["device_status"], "offline");
    let (s, b) = act(&app, &alice, &web, "start").await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("Cannot launch while Z-APP is offline")));
    let (_, b) = zh_post(&app, &format!("/api/rmp/v1/apps/{web}/actions"), &json!({"action": "start"}), &alice).await;
    assert_eq!(b["msg"], "Z-APP 离线时无法启动");
    let (s, b) = act(&app, &alice, &web, "snapshot").await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("This operation is not allowed while the device is stopped or offline")));
    let (s, b) = act(&app, &alice, &ai, "stop").await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("Cannot manage while the AI compute app is offline")));
    let (_, b) = zh_post(&app, &format!("/api/rmp/v1/apps/{ai}/actions"), &json!({"action": "stop"}), &alice).await;
    assert_eq!(b["msg"], "AI 算力应用离线时无法管理");
    let (s, b) = install(&app, &alice, "vaultwarden", &dev).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("This operation is not allowed while the device is stopped or offline")));

    // Offline shows everywhere, with only what can be done at once: cancel what is under way,
    // remove what is settled.
    let d = get(&app, &alice, &ai).await;
    assert_eq!((d["device_online"].as_bool(), d["status_reason_code"].as_str()), (Some(false), Some("device_offline")));
    assert_eq!((d["status_reason"].as_str(), d["actions"].clone()), (Some("The device is offline"), json!(["uninstall"])));
    let (_, zh) = json_of(app.client.get(app.url(&format!("/api/rmp/v1/apps/{ai}"))).bearer_auth(&alice).header("Accept-Language", "zh").send().await.unwrap()).await;
    assert_eq!(zh["data"]["status_reason"], "设备离线");
    let (_, list) = app.get_auth("/api/rmp/v1/apps", &alice).await;
    assert!(list["data"]["items"].as_array().unwrap().iter().all(|i| i["device_online"] == false), "{list}");
    let d = get(&app, &alice, &stuck).await;
    assert_eq!((d["status"].as_str(), d["actions"].clone()), (Some("preparing"), json!(["cancel"])));
    let (s, b) = act(&app, &alice, &stuck, "cancel").await;
    assert_eq!((s, b["data"]["status"].as_str(), b["data"]["status_reason_code"].as_str()), (200, Some("not_install"), Some("cancelled")));
    // Removed at once here; the box removes the stopped app when it returns.
    let (s, b) = act(&app, &alice, &web, "uninstall").await;
    assert_eq!((s, b["data"]["status"].as_str()), (200, Some("not_install")));
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert_eq!(command_for(&cmds, &web)["kind"], "app_uninstall");
    assert_eq!(command_for(&cmds, &stuck)["kind"], "app_uninstall", "the cancelled install is not carried out: {cmds:?}");
    assert!(!cmds.iter().any(|c| c["kind"] == "app_install"), "{cmds:?}");
    let (_, b) = app.get_auth(&format!("/api/rmp/v1/apps/{stuck}/history"), &alice).await;
    assert_eq!(b["data"]["items"][0]["status"], "not_install");
    assert_eq!(b["data"]["items"][0]["reason"], "Cancelled while the device was offline");
}

#[tokio::test]
async fn history_is_newest_first_with_reasons_and_versions() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;
    let id = installed_running(&app, &alice, &secret, "grafana", &dev).await;
    beat(&app, &secret, json!([{"id": id, "status": "failed", "reason": {"code": "keeps_exiting", "exit_code": 3}}]), json!([])).await;
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/history?limit=2"), &alice).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["total"], 3);
    let items = b["data"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!((items[0]["status"].as_str(), items[0]["reason_code"].as_str()), (Some("failed"), Some("keeps_exiting")));
    assert_eq!(items[0]["reason"], "The app keeps exiting (exit code 3)");
    assert_eq!(items[1]["status"], "running");
    let version = get(&app, &alice, &id).await["version"].as_str().unwrap().to_string();
    assert!(!version.is_empty());
    assert!(items.iter().all(|i| i["version"] == version.as_str()), "{items:?}");
    let (_, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/history?offset=2"), &alice).await;
    assert_eq!(b["data"]["items"][0]["status"], "preparing");
    let (_, zh) = json_of(app.client.get(app.url(&format!("/api/rmp/v1/apps/{id}/history"))).bearer_auth(&alice).header("Accept-Language", "zh").send().await.unwrap()).await;
    assert_eq!(zh["data"]["items"][0]["reason"], "应用反复退出（退出码 3）");
    // Another person's installation is not found; bad paging is refused.
    assert_eq!(app.get_auth(&format!("/api/rmp/v1/apps/{id}/history"), &bob).await.0, 404);
    assert_eq!(app.get_auth(&format!("/api/rmp/v1/apps/{id}/history?limit=0"), &alice).await.0, 400);
}

#[tokio::test]
async fn a_report_that_contradicts_a_stop_stops_the_app_again() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;
    let id = installed_running(&app, &alice, &secret, "grafana", &dev).await;
    act(&app, &alice, &id, "stop").await;
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "stopped");
    // The provider starts it on the box: the person's stop holds, and a stop is sent again.
    let cmds = beat(&app, &secret, json!([{"id": id, "status": "running"}]), json!([])).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!((d["status"].as_str(), d["desired"].as_str()), (Some("stopping"), Some("stopped")));
    let cmds = if cmds.iter().any(|c| c["payload"]["installation_id"] == id.as_str()) { cmds } else { beat(&app, &secret, json!([]), json!([])).await };
    assert_eq!(command_for(&cmds, &id)["kind"], "app_stop");
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "stopped");
}

#[tokio::test]
async fn an_update_appears_with_a_newer_catalogue_version_and_rolls_back_or_switches() {
    use sea_orm::ConnectionTrait;
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;
    let id = installed_running(&app, &alice, &secret, "grafana", &dev).await;
    let before = get(&app, &alice, &id).await["version"].as_str().unwrap().to_string();
    assert_eq!(act(&app, &alice, &id, "update").await.0, 409, "nothing newer yet");
    // The operator publishes a newer version of the app.
    let db = &app.state.db;
    db.execute_unprepared("UPDATE apps SET version = '99.0.0' WHERE id = 'grafana'").await.unwrap();
    let d = get(&app, &alice, &id).await;
    assert_eq!(d["update_available"], "99.0.0");
    assert!(d["actions"].as_array().unwrap().contains(&json!("update")), "{d}");
    let (s, b) = act(&app, &alice, &id, "update").await;
    assert_eq!((s, b["data"]["status"].as_str()), (200, Some("updating")));
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let cmd = command_for(&cmds, &id).clone();
    assert_eq!((cmd["kind"].as_str(), cmd["payload"]["version"].as_str(), cmd["payload"]["from_version"].as_str()), (Some("app_update"), Some("99.0.0"), Some(before.as_str())));
    assert!(cmd["payload"]["limits"]["memory_bytes"].as_i64().unwrap() > 0, "{cmd}");
    // The new version did not start: the old one runs on.
    let reason = json!({"code": "rolled_back", "version": "99.0.0", "cause": {"code": "exited", "exit_code": 1}});
    beat(&app, &secret, json!([]), json!([{"id": cmd["id"], "ok": false, "reason": reason}])).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!((d["status"].as_str(), d["version"].as_str(), d["status_reason_code"].as_str()), (Some("running"), Some(before.as_str()), Some("rolled_back")));
    assert_eq!(d["status_reason"], "Updating to 99.0.0 failed; the previous version runs again: The app exited (exit code 1)");
    // Again, and this time it switches.
    act(&app, &alice, &id, "update").await;
    ack_pending(&app, &secret, &id, true, None).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!((d["status"].as_str(), d["version"].as_str(), d["update_available"].clone()), (Some("running"), Some("99.0.0"), Value::Null));
    let (_, h) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/history?limit=1"), &alice).await;
    assert_eq!(h["data"]["items"][0]["version"], "99.0.0");
}

#[tokio::test]
async fn members_see_assigned_apps_only_and_may_not_install() {
    let app = TestApp::spawn().await;
    let boss_s = app.signed_in("boss@example.com").await;
    let mia_s = app.signed_in("mia@example.com").await;
    let eve_s = app.signed_in("eve@example.com").await;
    let company = seed_company(&app, "Acme Labs", &boss_s, &[(&mia_s, "member")]).await;
    let boss = token_of(&app.switch(&boss_s, &company).await);
    let mia = token_of(&app.switch(&mia_s, &company).await);
    let eve = token_of(&eve_s);

    // The admin installs on a company device.
    let (dev, secret) = bound_device(&app, &boss, "Z-BOX", box_spec(8, 0)).await;
    let graf = installed_running(&app, &boss, &secret, "grafana", &dev).await;
    let vault = installed_running(&app, &boss, &secret, "vaultwarden", &dev).await;

    let (s, b) = install(&app, &mia, "syncthing", &dev).await;
    assert_eq!((s, b["msg"].as_str()), (403, Some("No permission to install or rent Z-APP, please contact the administrator")));
    let (_, b) = zh_post(&app, "/api/rmp/v1/apps/install", &json!({"app_id": "syncthing", "device_id": dev}), &mia).await;
    assert_eq!(b["msg"], "无权安装或租用 Z-APP，请联系管理员");
    let (s, _) = app.get_auth("/api/rmp/v1/apps/fit?app_id=grafana", &mia).await;
    assert_eq!(s, 403);

    // Nothing assigned: nothing seen. Grafana assigned: that one only.
    let (_, b) = app.get_auth("/api/rmp/v1/apps", &mia).await;
    assert_eq!(b["data"]["total"], 0);
    let mia_id = user_id_of(&app, &mia_s).await;
    let (s, b) = app.post_json("/api/ebs/v1/sme/resources/assign", &json!({"user_id": mia_id, "resource_type": "app", "resource_id": "grafana"}), Some(&boss)).await;
    assert_eq!(s, 200, "{b}");
    let (_, b) = app.get_auth("/api/rmp/v1/apps", &mia).await;
    assert_eq!(b["data"]["total"], 1);
    assert_eq!(b["data"]["items"][0]["id"], graf);
    let (s, _) = app.get_auth(&format!("/api/rmp/v1/apps/{vault}"), &mia).await;
    assert_eq!(s, 404);
    // A member is offered what they may do, and only that.
    assert_eq!(b["data"]["items"][0]["actions"], json!(["stop", "restart", "suspend"]));
    assert_eq!(get(&app, &boss, &graf).await["actions"], json!(["stop", "restart", "suspend", "snapshot", "uninstall"]));
    assert_eq!(act(&app, &mia, &graf, "snapshot").await.0, 403);
    // A member uses an assigned app but does not remove it.
    assert_eq!(act(&app, &mia, &graf, "stop").await.0, 200);
    let (s, b) = act(&app, &mia, &graf, "uninstall").await;
    assert_eq!((s, b["msg"].as_str()), (403, Some("No permission to install or rent Z-APP, please contact the administrator")));

    // Another person, and the admin's personal context, see none of the company's.
    let (s, _) = app.get_auth(&format!("/api/rmp/v1/apps/{graf}"), &eve).await;
    assert_eq!(s, 404);
    let (s, _) = act(&app, &eve, &graf, "start").await;
    assert_eq!(s, 404);
    let (s, _) = install(&app, &eve, "syncthing", &dev).await;
    assert_eq!(s, 404);
    let (_, b) = app.get_auth("/api/rmp/v1/apps", &token_of(&boss_s)).await;
    assert_eq!(b["data"]["total"], 0);

    // The device's apps panel: its managers only.
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/devices/{dev}/apps"), &boss).await;
    assert_eq!((s, b["data"]["total"].as_i64()), (200, Some(2)));
    let (s, _) = app.get_auth(&format!("/api/rmp/v1/devices/{dev}/apps"), &mia).await;
    assert_eq!(s, 403);
    let (s, _) = app.get_auth(&format!("/api/rmp/v1/devices/{dev}/apps"), &eve).await;
    assert_eq!(s, 404);

    // An AI server the company holds blocks deleting the company.
    installed_running(&app, &boss, &secret, "localai", &dev).await;
    let (s, b) = app.delete_json("/api/iam/v1/sme", &json!({}), &boss).await;
    assert_eq!(s, 409, "{b}");
    assert!(b["data"]["reasons"].as_array().unwrap().contains(&json!("ai_compute_held")), "{b}");
}

#[tokio::test]
async fn a_device_speaks_only_for_its_own_installations() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;
    let (_, bob_secret) = bound_device(&app, &bob, "Z-BOX", box_spec(8, 0)).await;
    let (_, b) = install(&app, &alice, "grafana", &dev).await;
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let cmd = command_for(&beat(&app, &secret, json!([]), json!([])).await, &id)["id"].clone();
    // Bob's box cannot report or acknowledge for Alice's.
    beat(&app, &bob_secret, json!([{"id": id, "status": "downloading", "progress": 10}]), json!([{"id": cmd, "ok": false}])).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "preparing");
    // Reports the table does not allow are ignored (preparing cannot jump to stopped), as are
    // reports of installations not on this box.
    beat(&app, &secret, json!([{"id": id, "status": "stopped"}, {"id": "nope", "status": "running"}]), json!([])).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "preparing");
    // A report that is not one (the protocol is typed) refuses the beat, naming it; nothing moves.
    let (s, b) = heartbeat(&app, &secret, json!({"installations": [{"id": id, "status": "downloading"}, {"bad": 1}], "acks": []})).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("installations[1].id")), "{b}");
    assert_eq!(get(&app, &alice, &id).await["status"], "preparing");
}

#[tokio::test]
async fn install_phases_shorter_than_a_heartbeat_still_show_in_the_history() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;
    let (_, b) = install(&app, &alice, "grafana", &dev).await;
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let cmd = command_for(&cmds, &id)["id"].clone();
    // One heartbeat after the whole install: the phases it passed, then the acknowledgement.
    let report = json!([{"id": id, "status": "running", "url": "http://10.0.0.5:32768/", "passed": ["downloading", "installing", "installed"]}]);
    beat(&app, &secret, report, json!([{"id": cmd, "ok": true}])).await;
    let d = get(&app, &alice, &id).await;
    let history: Vec<&str> = d["history"].as_array().unwrap().iter().map(|h| h["status"].as_str().unwrap()).collect();
    assert_eq!(history, ["preparing", "downloading", "installing", "installed", "running"]);
    // Passed phases never move an installation back.
    beat(&app, &secret, json!([{"id": id, "status": "running", "passed": ["downloading"]}]), json!([])).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "running");
}
