//! An order from take to its end, over HTTP with the provider's agent played through the
//! heartbeat: each transition of the state machine (and the refusals of the ones a state does
//! not allow), the sweep's time-outs, the money and the device at each end.

use serde_json::{Value, json};

use super::*;

/// One heartbeat with these reports and acks; returns the commands answered.
async fn beat(app: &TestApp, secret: &str, installations: Value, acks: Value) -> Vec<Value> {
    let (s, b) = heartbeat(app, secret, json!({"installations": installations, "acks": acks})).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["commands"].as_array().unwrap().clone()
}

/// The agent carries out the pending install command of `inst`: `ok` reports it running.
async fn agent_installs(app: &TestApp, secret: &str, inst: &str, ok: bool) {
    let cmds = beat(app, secret, json!([]), json!([])).await;
    let cmd = cmds.iter().find(|c| c["payload"]["installation_id"] == inst).unwrap_or_else(|| panic!("no command for {inst}: {cmds:?}"));
    assert_eq!(cmd["kind"], "app_install");
    let reports = if ok { json!([{"id": inst, "status": "running", "url": "http://10.0.0.7:32768/"}]) } else { json!([]) };
    let ack = if ok { json!([{"id": cmd["id"], "ok": true}]) } else { json!([{"id": cmd["id"], "ok": false, "error": "image not found", "reason": {"code": "image_missing", "image": "jupyter/base:1"}}]) };
    beat(app, secret, reports, ack).await;
}

struct Sides {
    app: TestApp,
    alice: String,
    bob: String,
    dev: String,
    secret: String,
}

/// Alice (100 coins) posts 6 coins an hour for 2 hours; Bob offers a qualifying device.
async fn sides() -> (Sides, String) {
    let app = spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    grant(&app, "alice@example.com", 10_000).await;
    let (dev, secret) = offered(&app, &bob, &["NVIDIA A100"], SZ).await;
    let id = posted(&app, &alice, &demand(json!({}))).await;
    (Sides { app, alice, bob, dev, secret }, id)
}

async fn taken(s: &Sides, id: &str) -> String {
    let (st, b) = take(&s.app, &s.bob, id, &s.dev).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["data"]["status"], "order_processing");
    b["data"]["installation_id"].as_str().unwrap().to_string()
}

async fn demander_does(s: &Sides, id: &str, action: &str, token: &str) -> (u16, Value) {
    s.app.post_json(&format!("/api/rmp/v1/orders/{id}/{action}"), &json!({}), Some(token)).await
}

async fn kinds(app: &TestApp, token: &str) -> Vec<String> {
    let (_, b) = app.get_auth("/api/ebs/v1/notifications?limit=100", token).await;
    let items = b["data"]["items"].as_array().unwrap();
    // An order's news links to the orders page (issue 26).
    for n in items.iter().filter(|n| n["kind"].as_str().is_some_and(|k| k.starts_with("order_"))) {
        assert_eq!(n["path"], "/demands-and-offers", "{n}");
    }
    items.iter().map(|n| n["kind"].as_str().unwrap_or_default().to_string()).collect()
}

#[tokio::test]
async fn an_order_runs_from_take_to_finish_and_no_silence_of_the_box_is_charged() {
    let (s, id) = sides().await;
    let app = &s.app;
    assert_eq!(wallet(app, &s.alice).await["held"], 1200);
    // The demander cannot take their own demand; confirm and finish wait for their states.
    let (own, _) = offered(app, &s.alice, &["NVIDIA A100"], SZ).await;
    let (st, b) = take(app, &s.alice, &id, &own).await;
    assert_eq!((st, b["msg"].as_str()), (409, Some("You cannot take your own demand")));
    let (st, b) = demander_does(&s, &id, "confirm", &s.alice).await;
    assert_eq!((st, b["msg"].as_str()), (409, Some("Cannot confirm an order that is pending")));
    let (st, b) = zh(app, reqwest::Method::POST, &format!("/api/rmp/v1/orders/{id}/finish"), Some(&json!({})), &s.alice).await;
    assert_eq!((st, b["msg"].as_str()), (409, Some("订单状态为“待接单”，无法结束")));

    // Taken: the device is reserved (no second order, no rental) and the app is being installed,
    // owned by the demander.
    let inst = taken(&s, &id).await;
    let (_, b) = app.get_auth(&format!("/api/rmp/v1/apps/{inst}"), &s.alice).await;
    assert_eq!((b["data"]["status"].as_str(), b["data"]["kind"].as_str()), (Some("preparing"), Some("rent")));
    let other = posted(app, &s.alice, &demand(json!({"name": "Other", "price_per_hour": 100}))).await;
    assert_eq!(
        check(app, &s.bob, &other, &s.dev).await["gaps"],
        json!([{"field": "reserved", "need": false, "have": true}, {"field": "app", "need": "not_installed", "have": "installed"}])
    );
    let carol = token_of(&app.signed_in("carol@example.com").await);
    grant(app, "carol@example.com", 10_000).await;
    let (st, b) = app.post_json("/api/rmp/v1/apps/rent", &json!({"app_id": "grafana", "device_id": s.dev, "hours": 1}), Some(&carol)).await;
    assert_eq!((st, b["msg"].as_str()), (409, Some("This device is reserved for an order")), "{b}");
    let (st, b) = take(app, &carol, &id, &s.dev).await;
    assert_eq!((st, b["msg"].as_str()), (409, Some("This demand has already been taken or closed")));
    // Cancelling is for demands nobody took; the provider may not act for the demander.
    let (st, b) = demander_does(&s, &id, "cancel", &s.alice).await;
    assert_eq!((st, b["msg"].as_str()), (409, Some("Cannot cancel an order that is processing")));
    let (st, b) = demander_does(&s, &id, "confirm", &s.bob).await;
    assert_eq!((st, b["msg"].as_str()), (403, Some("Only the demander can do this")));
    assert_eq!(app.get_auth(&format!("/api/rmp/v1/orders/{id}"), &carol).await.0, 404);

    // Not running yet: the sweep leaves it; running: accepted.
    assert_eq!(sweep_at(app, 0).await, 0);
    agent_installs(app, &s.secret, &inst, true).await;
    assert_eq!(sweep_at(app, 0).await, 1);
    let o = order(app, &s.bob, &id).await;
    assert_eq!((o["status"].as_str(), o["app_status"].as_str()), (Some("order_accepted"), Some("running")));
    // The renter opens it through the market: the provider's network address is never sent.
    assert_eq!((o["openable"].as_bool(), o.get("open_url")), (Some(true), None), "{o}");

    // Confirmed: charged by the second while the box reports it running (tests/clock/orders.rs);
    // the box said nothing since, so a sweep minutes later charges nothing (a silence is never
    // charged).
    let (st, b) = demander_does(&s, &id, "confirm", &s.alice).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["data"]["status"], "order_confirmed");
    let (st, _) = demander_does(&s, &id, "confirm", &s.alice).await;
    assert_eq!(st, 409, "confirmed once");
    sweep_at(app, 3 * 60 + 5).await;
    assert_eq!(order(app, &s.alice, &id).await["billed"], 0);
    assert_eq!(wallet(app, &s.bob).await["balance"], 0);
    verified(app).await;

    // Finished early: the seconds seen so far are charged (none here), the rest released.
    let (st, b) = demander_does(&s, &id, "finish", &s.alice).await;
    assert_eq!(st, 200, "{b}");
    let o = &b["data"];
    assert_eq!((o["status"].as_str(), o["status_reason"].as_str()), (Some("order_finished"), Some("Finished early by the demander")));
    let w = wallet(app, &s.alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(10_000), Some(100 * 2)), "only the other demand stays held");
    // The device is free again and the app is removed from it.
    assert_eq!(check(app, &s.bob, &other, &s.dev).await["gaps"], json!([{"field": "app", "need": "not_installed", "have": "installed"}]));
    sweep_at(app, 0).await;
    let (_, b) = app.get_auth(&format!("/api/rmp/v1/apps/{inst}"), &s.alice).await;
    assert_eq!(b["data"]["status"], "shutting_down");
    // History and lists by role.
    let o = order(app, &s.alice, &id).await;
    let steps: Vec<&str> = o["history"].as_array().unwrap().iter().map(|h| h["status"].as_str().unwrap()).collect();
    assert_eq!(steps, ["order_pending", "order_processing", "order_accepted", "order_confirmed", "order_finished"]);
    let (_, b) = app.get_auth("/api/rmp/v1/orders?role=provider", &s.bob).await;
    assert_eq!((b["data"]["total"].as_i64(), b["data"]["items"][0]["id"].as_str()), (Some(1), Some(id.as_str())));
    let (_, b) = app.get_auth("/api/rmp/v1/orders?role=demander&status=order_pending", &s.alice).await;
    assert_eq!(b["data"]["total"], 1);
    assert_eq!(app.get_auth("/api/rmp/v1/orders?role=boss", &s.alice).await.0, 400);
    // Both sides were told at each step.
    for t in [&s.alice, &s.bob] {
        let k = kinds(app, t).await;
        for want in ["order_taken", "order_accepted", "order_confirmed", "order_finished"] {
            assert!(k.iter().any(|x| x == want), "{want} in {k:?}");
        }
    }
    verified(app).await;
}

#[tokio::test]
async fn an_order_finishes_when_its_hours_are_used_up() {
    let (s, id) = sides().await;
    let app = &s.app;
    let inst = taken(&s, &id).await;
    agent_installs(app, &s.secret, &inst, true).await;
    sweep_at(app, 0).await;
    assert_eq!(demander_does(&s, &id, "confirm", &s.alice).await.0, 200);
    // The box says nothing after confirming: the hours run out, nothing is charged for them.
    sweep_at(app, 60 * 60).await;
    assert_eq!(order(app, &s.alice, &id).await["billed"], 0);
    assert_eq!(sweep_at(app, 2 * 3600 + 30).await, 1);
    let o = order(app, &s.alice, &id).await;
    assert_eq!((o["status"].as_str(), o["status_reason"].as_str(), o["billed"].as_i64()), (Some("order_finished"), Some("The hours ordered are used up"), Some(0)));
    let w = wallet(app, &s.alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(10_000), Some(0)));
    assert_eq!(wallet(app, &s.bob).await["balance"], 0);
    verified(app).await;
}

/// Each failure releases the hold in full, frees the device, and says why (both languages).
async fn failed_and_released(s: &Sides, id: &str, reason_en: &str, reason_zh: &str) {
    let o = order(&s.app, &s.alice, id).await;
    assert_eq!((o["status"].as_str(), o["status_reason"].as_str()), (Some("order_failed"), Some(reason_en)));
    let (_, b) = zh(&s.app, reqwest::Method::GET, &format!("/api/rmp/v1/orders/{id}"), None, &s.alice).await;
    assert_eq!(b["data"]["status_reason"], reason_zh);
    let w = wallet(&s.app, &s.alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(10_000), Some(0)));
    assert!(kinds(&s.app, &s.alice).await.contains(&"order_failed".to_string()));
    let next = posted(&s.app, &s.alice, &demand(json!({"name": "Again", "app_id": "jupyterlab", "price_per_hour": 1}))).await;
    let gaps = check(&s.app, &s.bob, &next, &s.dev).await["gaps"].clone();
    assert!(!gaps.as_array().unwrap().iter().any(|g| g["field"] == "reserved"), "the device is free: {gaps}");
    verified(&s.app).await;
}

#[tokio::test]
async fn a_demand_nobody_takes_expires_and_one_cancelled_is_released() {
    let (s, id) = sides().await;
    assert_eq!(sweep_at(&s.app, 60).await, 0);
    let pending = s.app.state.orders.settings.pending_timeout_secs as i64;
    assert_eq!(sweep_at(&s.app, pending + 1).await, 1);
    failed_and_released(&s, &id, "Nobody took this demand in time", "该需求在有效期内无人接单").await;
    let (_, b) = s.app.get_auth(&format!("/api/rmp/v1/orders/{id}"), &s.alice).await;
    assert_eq!(b["data"]["cancelled"], false, "an expired demand was not cancelled: {b}");
    let (st, _) = take(&s.app, &s.bob, &id, &s.dev).await;
    assert_eq!(st, 409);

    let id = posted(&s.app, &s.alice, &demand(json!({}))).await;
    let (_, b) = s.app.get_auth(&format!("/api/rmp/v1/orders/{id}"), &s.alice).await;
    assert_eq!(b["data"]["cancelled"], false);
    let (st, b) = demander_does(&s, &id, "cancel", &s.alice).await;
    assert_eq!((st, b["data"]["status"].as_str()), (200, Some("order_failed")));
    // Shown as cancelled, not as a failure (issue 26).
    assert_eq!(b["data"]["cancelled"], true, "{b}");
    let (st, b) = demander_does(&s, &id, "cancel", &s.alice).await;
    assert_eq!((st, b["msg"].as_str()), (409, Some("Cannot cancel an order that is failed")));
}

#[tokio::test]
async fn a_failed_install_fails_the_order() {
    let (s, id) = sides().await;
    let inst = taken(&s, &id).await;
    agent_installs(&s.app, &s.secret, &inst, false).await;
    assert_eq!(sweep_at(&s.app, 0).await, 1);
    failed_and_released(
        &s,
        &id,
        "The app could not be started on the provider's device: The image jupyter/base:1 is not on the device and could not be fetched",
        "应用未能在接单方的设备上启动：设备上没有镜像 jupyter/base:1，且无法获取",
    )
    .await;
    // What the failed install left is removed.
    sweep_at(&s.app, 0).await;
    let (_, b) = s.app.get_auth(&format!("/api/rmp/v1/apps/{inst}"), &s.alice).await;
    assert_eq!(b["data"]["status"], "deleting");
}

#[tokio::test]
async fn an_app_not_running_in_time_fails_the_order() {
    let (s, id) = sides().await;
    taken(&s, &id).await;
    let limit = s.app.state.orders.settings.start_timeout_secs as i64;
    assert_eq!(sweep_at(&s.app, limit - 60).await, 0);
    assert_eq!(sweep_at(&s.app, limit + 1).await, 1);
    failed_and_released(&s, &id, "The app was not running on the provider's device within 60 minutes", "应用未在 60 分钟内在接单方的设备上运行").await;
}

#[tokio::test]
async fn an_order_not_confirmed_in_time_fails() {
    let (s, id) = sides().await;
    let inst = taken(&s, &id).await;
    agent_installs(&s.app, &s.secret, &inst, true).await;
    sweep_at(&s.app, 0).await;
    let limit = s.app.state.orders.settings.confirm_timeout_secs as i64;
    assert_eq!(sweep_at(&s.app, limit + 1).await, 1);
    failed_and_released(&s, &id, "The demander did not confirm within 60 minutes", "需求方未在 60 分钟内确认").await;
    // The app is shut down on the provider's device.
    sweep_at(&s.app, 0).await;
    let (_, b) = s.app.get_auth(&format!("/api/rmp/v1/apps/{inst}"), &s.alice).await;
    assert_eq!(b["data"]["status"], "shutting_down");
    let (st, b) = demander_does(&s, &id, "confirm", &s.alice).await;
    assert_eq!((st, b["msg"].as_str()), (409, Some("Cannot confirm an order that is failed")));
}
