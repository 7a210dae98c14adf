//! Demands and orders over HTTP: posting with the wallet's hold, the board, the matcher's gaps
//! field by field (check, take and the live count agree), taking (refusals in both languages,
//! 20 providers racing), every transition of the state machine through the API and the sweep
//! (time-outs included), the money at each end, `ledger verify` after each test; a demand's
//! minimum CUDA and VRAM (orders/gpus.rs).

mod flow;
mod gpus;

use chrono::Duration;
use serde_json::{Value, json};
use zmarket::coins::Coins;

use crate::common::*;
use crate::devices::{bound_device, heartbeat};

pub const GIB: i64 = 1024 * 1024 * 1024;
pub const SPEC_MSG: &str = "Order requirements not satisfied, cannot take this order.";
pub const SPEC_MSG_ZH: &str = "不满足订单要求，无法接单。";

pub fn gpu_box(gpus: &[&str], memory_gib: i64) -> Value {
    let gpus: Vec<Value> = gpus.iter().map(|n| json!({"name": n, "passthrough": false, "vram": 24 * GIB})).collect();
    json!({"cpu_cores": 8, "memory_bytes": memory_gib * GIB, "disk_bytes": 1024 * GIB, "gpus": gpus})
}

pub async fn spawn() -> TestApp {
    TestApp::spawn_with(|c| {
        c.billing.signup_bonus = Coins::from_cents(0);
        c.billing.market_fee_percent = 10;
    })
    .await
}

pub async fn verified(app: &TestApp) {
    if let Err(e) = zmarket::billing::verify::verify(&app.state.db).await {
        panic!("ledger verify: {e}");
    }
}

pub async fn grant(app: &TestApp, email: &str, cents: i64) {
    zmarket::billing::issuance::grant_by_email(&app.state.db, email, Coins::from_cents(cents), "test").await.unwrap();
}

pub async fn wallet(app: &TestApp, token: &str) -> Value {
    let (s, b) = app.get_auth("/api/billing/v1/wallet", token).await;
    assert_eq!(s, 200, "{b}");
    b["data"].clone()
}

/// A provider's online, rentable device at a point; returns (device id, secret).
pub async fn offered(app: &TestApp, token: &str, gpus: &[&str], at: (f64, f64)) -> (String, String) {
    offered_spec(app, token, gpu_box(gpus, 64), at).await
}

/// [`offered`] with the box's whole spec.
pub async fn offered_spec(app: &TestApp, token: &str, spec: Value, at: (f64, f64)) -> (String, String) {
    let (dev, secret) = bound_device(app, token, "Z-BOX", spec).await;
    let (s, b) = heartbeat(app, &secret, json!({"acks": []})).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 100}), token).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{dev}/location"), &json!({"lat": at.0, "lng": at.1}), token).await;
    assert_eq!(s, 200, "{b}");
    (dev, secret)
}

/// The device stops heartbeating (as the offline job would see it an hour later).
pub async fn set_offline(app: &TestApp, id: &str) {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
    use zmarket::db::entity::devices;
    devices::Entity::update_many()
        .col_expr(devices::Column::Status, Expr::value(zmarket::db::enums::DeviceStatus::Offline))
        .filter(devices::Column::Id.eq(id))
        .exec(&app.state.db)
        .await
        .unwrap();
}

/// Shenzhen, and points about 38 km and 1100 km from it.
pub const SZ: (f64, f64) = (22.5431, 114.0579);
pub const NEAR_38: (f64, f64) = (22.8831, 114.0579);
pub const FAR: (f64, f64) = (31.2304, 121.4737);

pub fn demand(extra: Value) -> Value {
    let mut d = json!({"name": "Render farm", "app_id": "grafana", "gpu_count": 1, "gpu_models": "A100, 4090", "distance_km": 25,
        "lat": SZ.0, "lng": SZ.1, "hours": 2, "price_per_hour": 600});
    for (k, v) in extra.as_object().unwrap() {
        d[k] = v.clone();
    }
    d
}

pub async fn post(app: &TestApp, token: &str, body: &Value) -> (u16, Value) {
    app.post_json("/api/rmp/v1/demands", body, Some(token)).await
}

pub async fn posted(app: &TestApp, token: &str, body: &Value) -> String {
    let (s, b) = post(app, token, body).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["id"].as_str().unwrap().to_string()
}

pub async fn take(app: &TestApp, token: &str, id: &str, device: &str) -> (u16, Value) {
    app.post_json(&format!("/api/rmp/v1/demands/{id}/take"), &json!({"device_id": device}), Some(token)).await
}

pub async fn zh(app: &TestApp, method: reqwest::Method, path: &str, body: Option<&Value>, token: &str) -> (u16, Value) {
    let mut r = app.client.request(method, app.url(path)).bearer_auth(token).header("Accept-Language", "zh-CN");
    if let Some(b) = body {
        r = r.json(b);
    }
    json_of(r.send().await.unwrap()).await
}

pub async fn order(app: &TestApp, token: &str, id: &str) -> Value {
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/orders/{id}"), token).await;
    assert_eq!(s, 200, "{b}");
    b["data"].clone()
}

/// The order job as if run `secs` from now.
pub async fn sweep_at(app: &TestApp, secs: i64) -> usize {
    zmarket::orders::flow::sweep(&app.state.db, &app.state.orders.settings, zmarket::db::now() + Duration::seconds(secs)).await.expect("sweep")
}

pub async fn check(app: &TestApp, token: &str, id: &str, device: &str) -> Value {
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/demands/{id}/check?device_id={device}"), token).await;
    assert_eq!(s, 200, "{b}");
    b["data"].clone()
}

async fn count(app: &TestApp, query: &str) -> i64 {
    let (s, b) = app.get_json(&format!("/api/rmp/v1/demands/qualifying?{query}")).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["count"].as_i64().unwrap()
}

#[tokio::test]
async fn posting_holds_price_times_hours_and_every_refusal_is_localized() {
    let app = spawn().await;
    let alice_s = app.signed_in("alice@example.com").await;
    let alice = token_of(&alice_s);
    grant(&app, "alice@example.com", 1000).await;

    for (body, field) in [
        (demand(json!({"name": " "})), "name"),
        (demand(json!({"app_id": null})), "app_id"),
        (demand(json!({"gpu_count": -1})), "gpu_count"),
        (demand(json!({"hours": 0})), "hours"),
        (demand(json!({"hours": 721})), "hours"),
        (demand(json!({"price_per_hour": 0})), "price_per_hour"),
        (demand(json!({"distance_km": 0})), "distance_km"),
        (demand(json!({"lat": 91.0})), "lat"),
    ] {
        let (s, b) = post(&app, &alice, &body).await;
        assert_eq!((s, b["data"]["field"].as_str()), (400, Some(field)), "{body}: {b}");
    }
    let (s, b) = post(&app, &alice, &demand(json!({"lat": null, "lng": null}))).await;
    assert_eq!((s, b["data"]["field"].as_str(), b["msg"].as_str()), (400, Some("lat"), Some("A distance limit needs your location")));
    let (s, b) = zh(&app, reqwest::Method::POST, "/api/rmp/v1/demands", Some(&demand(json!({"lat": null, "lng": null}))), &alice).await;
    assert_eq!((s, b["msg"].as_str()), (400, Some("设置距离限制需要提供您的位置")));
    let (s, _) = post(&app, &alice, &demand(json!({"app_id": "no-such-app"}))).await;
    assert_eq!(s, 404);

    // 6 coins an hour for 2 hours is 12 coins: more than the 10 available.
    let (s, b) = post(&app, &alice, &demand(json!({}))).await;
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["data"], json!({"available": 1000, "needed": 1200}));
    let (s, b) = zh(&app, reqwest::Method::POST, "/api/rmp/v1/demands", Some(&demand(json!({}))), &alice).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("余额不足：可用 10.00 币，需要 12.00 币")));

    // 3 coins an hour for 2 hours: held.
    let (s, b) = post(&app, &alice, &demand(json!({"price_per_hour": 300}))).await;
    assert_eq!(s, 200, "{b}");
    let d = &b["data"];
    assert_eq!(d["status"], "order_pending");
    assert_eq!((d["gpu_models"].as_str(), d["distance_km"].as_i64(), d["total"].as_i64()), (Some("A100, 4090"), Some(25), Some(600)));
    assert_eq!(d["demander"]["user_id"], user_id_of(&app, &alice_s).await);
    assert_eq!(d["provider"], Value::Null);
    assert_eq!(d["history"][0]["status"], "order_pending");
    let w = wallet(&app, &alice).await;
    assert_eq!((w["held"].as_i64(), w["available"].as_i64()), (Some(600), Some(400)));
    let second = posted(&app, &alice, &demand(json!({"name": "Second", "price_per_hour": 100, "distance_km": null, "lat": null, "lng": null}))).await;

    // The board is public, newest first, with the distance from the viewer's point.
    let (s, b) = app.get_json(&format!("/api/rmp/v1/demands?lat={}&lng={}", NEAR_38.0, NEAR_38.1)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["total"], 2);
    assert_eq!(b["data"]["items"][0]["id"], second.as_str());
    assert_eq!(b["data"]["items"][0]["distance_from_you_km"], Value::Null);
    assert_eq!(b["data"]["items"][1]["distance_from_you_km"], 38);

    // Demands are for individual operation: a company context answers 403, in both languages.
    let company = seed_company(&app, "Acme Compute", &alice_s, &[]).await;
    let in_company = token_of(&app.switch(&alice_s, &company).await);
    let (s, b) = post(&app, &in_company, &demand(json!({"price_per_hour": 100}))).await;
    assert_eq!((s, b["msg"].as_str()), (403, Some("Demands and orders are for individual operation only: switch to your personal account")));
    let (s, b) = zh(&app, reqwest::Method::GET, "/api/rmp/v1/orders", None, &in_company).await;
    assert_eq!((s, b["msg"].as_str()), (403, Some("需求与订单仅限个人操作：请切换到个人账户")));
    for path in [format!("/api/rmp/v1/demands/{second}/check?device_id=ZB0000000001"), format!("/api/rmp/v1/orders/{second}")] {
        assert_eq!(app.get_auth(&path, &in_company).await.0, 403, "{path}");
    }
    assert_eq!(take(&app, &in_company, &second, "ZB0000000001").await.0, 403);
    let (s, _) = app.post_json(&format!("/api/rmp/v1/orders/{second}/cancel"), &json!({}), Some(&in_company)).await;
    assert_eq!(s, 403);
    // Signed out: 401.
    assert_eq!(app.post_json("/api/rmp/v1/demands", &demand(json!({})), None).await.0, 401);
    verified(&app).await;
}

#[tokio::test]
async fn the_matcher_names_each_gap_and_check_take_and_count_agree() {
    let app = spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    grant(&app, "alice@example.com", 100_000).await;
    let id = posted(&app, &alice, &demand(json!({}))).await;
    let terms = format!("app_id=grafana&gpu_count=1&gpu_models=A100,%204090&distance_km=25&lat={}&lng={}", SZ.0, SZ.1);
    assert_eq!(count(&app, &terms).await, 0);

    // Qualifies: an RTX 4090 in Shenzhen.
    let (good, _) = offered(&app, &bob, &["NVIDIA GeForce RTX 4090"], SZ).await;
    assert_eq!(check(&app, &bob, &id, &good).await, json!({"ok": true, "gaps": []}));
    assert_eq!(count(&app, &terms).await, 1);
    assert_eq!(count(&app, "app_id=grafana").await, 1);

    // The wrong GPU model, 38 km away.
    let (wrong, _) = offered(&app, &bob, &["NVIDIA GeForce RTX 3060"], NEAR_38).await;
    let c = check(&app, &bob, &id, &wrong).await;
    assert_eq!(c["ok"], false);
    assert_eq!(
        c["gaps"],
        json!([{"field": "distance_km", "need": 25, "have": 38}, {"field": "gpu_models", "need": "A100, 4090", "have": "NVIDIA GeForce RTX 3060"}])
    );
    // Too few GPUs, far away, no location at all.
    let (few, _) = offered(&app, &bob, &["NVIDIA RTX 4090"], SZ).await;
    let id4 = posted(&app, &alice, &demand(json!({"gpu_count": 4, "price_per_hour": 100}))).await;
    let c = check(&app, &bob, &id4, &few).await;
    assert_eq!(c["gaps"], json!([{"field": "gpu_count", "need": 4, "have": 1}, {"field": "gpu_models", "need": "A100, 4090", "have": "NVIDIA RTX 4090"}]));
    let (nowhere, nowhere_secret) = bound_device(&app, &bob, "Z-BOX", gpu_box(&["A100"], 64)).await;
    heartbeat(&app, &nowhere_secret, json!({"acks": []})).await;
    let c = check(&app, &bob, &id, &nowhere).await;
    assert_eq!(c["gaps"], json!([{"field": "rentable", "need": true, "have": false}, {"field": "distance_km", "need": 25, "have": null}]));
    // Too little memory for the app (Grafana needs 1 GB).
    let (small, small_secret) = bound_device(&app, &bob, "Z-BOX", gpu_box(&["A100"], 0)).await;
    heartbeat(&app, &small_secret, json!({"acks": []})).await;
    app.put_json(&format!("/api/ebs/v2/devices/{small}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 1}), &bob).await;
    app.put_json(&format!("/api/ebs/v2/devices/{small}/location"), &json!({"lat": SZ.0, "lng": SZ.1}), &bob).await;
    let c = check(&app, &bob, &id, &small).await;
    assert_eq!(c["gaps"], json!([{"field": "memory_bytes", "need": GIB, "have": 0}]));
    // Offline.
    let far = FAR;
    let (gone, _) = offered(&app, &bob, &["A100"], far).await;
    set_offline(&app, &gone).await;
    let c = check(&app, &bob, &id, &gone).await;
    assert_eq!(c["gaps"][0], json!({"field": "status", "need": "online", "have": "offline"}));
    assert_eq!(c["gaps"][1]["field"], "distance_km");
    assert_eq!(count(&app, &terms).await, 2, "the good box and the one-GPU 4090 box; the offline one is not counted");

    // The take refuses with the message of docs/product.md §5 and the same gaps, in both languages.
    heartbeat(&app, &nowhere_secret, json!({"acks": []})).await;
    let (s, b) = take(&app, &bob, &id, &wrong).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some(SPEC_MSG)));
    assert_eq!(b["data"]["gaps"][1]["field"], "gpu_models");
    let (s, b) = zh(&app, reqwest::Method::POST, &format!("/api/rmp/v1/demands/{id}/take"), Some(&json!({"device_id": wrong})), &bob).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some(SPEC_MSG_ZH)));
    // The board's "your devices": every device of the caller with its gaps.
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/demands/{id}/devices"), &bob).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"].as_array().unwrap().len(), 6);
    // Someone else's device, an unknown demand, a malformed device id.
    assert_eq!(app.get_auth(&format!("/api/rmp/v1/demands/{id}/check?device_id={good}"), &alice).await.0, 404);
    assert_eq!(app.get_auth(&format!("/api/rmp/v1/demands/nope/check?device_id={good}"), &bob).await.0, 404);
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/demands/{id}/check"), &bob).await;
    assert_eq!((s, b["msg"].as_str()), (400, Some("Invalid Device ID")));
    verified(&app).await;
}

#[tokio::test]
async fn twenty_providers_race_for_one_demand_and_exactly_one_wins() {
    let app = spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    grant(&app, "alice@example.com", 100_000).await;
    let id = posted(&app, &alice, &demand(json!({}))).await;
    let mut racers = Vec::new();
    for i in 0..20 {
        let t = token_of(&app.signed_in(&format!("p{i}@example.com")).await);
        let (dev, _) = offered(&app, &t, &["NVIDIA A100"], SZ).await;
        racers.push((t, dev));
    }
    let tries = racers.iter().map(|(t, dev)| take(&app, t, &id, dev));
    let results = futures::future::join_all(tries).await;
    let won: Vec<&(u16, Value)> = results.iter().filter(|(s, _)| *s == 200).collect();
    assert_eq!(won.len(), 1, "{results:?}");
    for (s, b) in results.iter().filter(|(s, _)| *s != 200) {
        assert_eq!((*s, b["msg"].as_str()), (409, Some("This demand has already been taken or closed")), "{b}");
    }
    let o = order(&app, &alice, &id).await;
    assert_eq!(o["status"], "order_processing");
    let winner = racers.iter().find(|(_, d)| o["device_id"] == d.as_str()).expect("the winner's device");
    // One installation was started, on the winner's device only.
    let (_, b) = app.get_auth("/api/rmp/v1/apps", &alice).await;
    assert_eq!(b["data"]["total"], 1);
    assert_eq!(b["data"]["items"][0]["device_id"], winner.1.as_str());
    verified(&app).await;
}

/// The public board (/on-demand) is server-rendered with its open demands (the page state's
/// `data.onDemand`), and posting or cancelling a demand reaches the cached page at once.
#[tokio::test]
async fn the_public_board_is_rendered_with_its_demands_and_follows_changes() {
    let app = spawn().await;
    let alice_s = app.signed_in("alice@example.com").await;
    let alice = token_of(&alice_s);
    grant(&app, "alice@example.com", 10_000).await;
    let page = || async {
        let res = app.get("/on-demand").await;
        assert_eq!(res.status(), 200);
        res.text().await.unwrap()
    };
    let empty = page().await;
    assert!(!empty.contains("Kiln render 7"));
    let id = posted(&app, &alice, &demand(json!({"name": "Kiln render 7"}))).await;
    let shown = page().await;
    if !shown.contains("The UI bundle was not built") {
        assert!(shown.contains("\"onDemand\""), "the page state carries the board");
        assert!(shown.contains("Kiln render 7"), "the new demand is on the rendered board");
    }
    let (s, b) = app.post_json(&format!("/api/rmp/v1/orders/{id}/cancel"), &json!({}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    assert!(!page().await.contains("Kiln render 7"), "a cancelled demand leaves the cached board");
    verified(&app).await;
}
