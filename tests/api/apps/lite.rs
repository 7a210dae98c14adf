//! The Lite App rules over HTTP: a device's sharing cannot be edited while one of its Lite Apps
//! runs ("Stop all LiteApps before editing"), nor edited or the device unlinked while a Lite App
//! on it is rented or offered ("… while any lite app is rentable"), in both languages.

use serde_json::{Value, json};

use super::{ack_pending, act, installed_running, box_spec};
use crate::common::*;
use crate::devices::bound_device;

async fn sharing(app: &TestApp, token: &str, dev: &str, rentable: bool, zh: bool) -> (u16, Value) {
    let body = json!({"mode": "manual", "rentable": rentable, "price_per_hour": 300});
    let req = app.client.put(app.url(&format!("/api/ebs/v2/devices/{dev}/sharing"))).bearer_auth(token).json(&body);
    let req = if zh { req.header("Accept-Language", "zh-CN") } else { req };
    json_of(req.send().await.unwrap()).await
}

#[tokio::test]
async fn lite_app_spaces_are_not_edited_while_lite_apps_run_or_are_rented() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(16, 1)).await;

    // Alice's own Lite App runs: her device's sharing waits until it is stopped.
    let lite = installed_running(&app, &alice, &secret, "open-webui", &dev).await;
    let (s, b) = sharing(&app, &alice, &dev, true, false).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("Stop all LiteApps before editing")));
    let (_, b) = sharing(&app, &alice, &dev, true, true).await;
    assert_eq!(b["msg"], "请先停止所有轻应用再编辑");
    // Another app running does not count.
    let other = installed_running(&app, &alice, &secret, "grafana", &dev).await;
    act(&app, &alice, &lite, "stop").await;
    ack_pending(&app, &secret, &lite, true, None).await;
    let (s, b) = sharing(&app, &alice, &dev, true, false).await;
    assert_eq!(s, 200, "{b}");

    // Offered for rent with a Lite App on it: not unlinked.
    let (s, b) = app.delete_json(&format!("/api/ebs/v2/devices/{dev}"), &json!({}), &alice).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("A lite app space cannot be edited or powered off while any lite app is rentable")));
    act(&app, &alice, &lite, "uninstall").await;
    ack_pending(&app, &secret, &lite, true, None).await;

    // Bob rents the Lite App on it: the space can be neither edited nor unlinked.
    let (s, b) = app.post_json("/api/rmp/v1/apps/rent", &json!({"app_id": "open-webui", "device_id": dev, "hours": 1}), Some(&bob)).await;
    assert_eq!(s, 200, "{b}");
    let rented = b["data"]["id"].as_str().unwrap().to_string();
    let (s, b) = sharing(&app, &alice, &dev, false, false).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("A lite app space cannot be edited or powered off while any lite app is rentable")));
    let (_, b) = sharing(&app, &alice, &dev, false, true).await;
    assert_eq!(b["msg"], "有轻应用可出租时，轻应用空间不能编辑或关机");
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{dev}"), &json!({}), &alice).await;
    assert_eq!(s, 409);

    // The rental runs, then ends: the device is Alice's to edit and unlink again.
    ack_pending(&app, &secret, &rented, true, None).await;
    act(&app, &bob, &rented, "uninstall").await;
    ack_pending(&app, &secret, &rented, true, None).await;
    let (s, b) = sharing(&app, &alice, &dev, false, false).await;
    assert_eq!(s, 200, "{b}");
    act(&app, &alice, &other, "stop").await;
    let (s, b) = app.delete_json(&format!("/api/ebs/v2/devices/{dev}"), &json!({}), &alice).await;
    assert_eq!(s, 200, "{b}");
}
