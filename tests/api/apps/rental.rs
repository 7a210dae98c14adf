//! Who may rent (not a member, not between a company and its administrator), what suspending a
//! renter or a provider does to rentals, extending a rental, and what a renter never gets (the
//! address on the box's network). The rental's money by the minute (held, charged while seen
//! running, released) is tested with the market's clock moved ahead: tests/clock/rental.rs.

use serde_json::json;
use zmarket::coins::Coins;

use super::{ack_pending, beat, box_spec, command_for};
use crate::boxes::{rent, rented_running, verified};
use crate::common::*;
use crate::devices::bound_device;

#[tokio::test]
async fn members_may_not_rent() {
    let app = TestApp::spawn().await;
    let boss_s = app.signed_in("boss@example.com").await;
    let mia_s = app.signed_in("mia@example.com").await;
    let company = seed_company(&app, "Acme Labs", &boss_s, &[(&mia_s, "member")]).await;
    let mia = token_of(&app.switch(&mia_s, &company).await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let (dev, _) = bound_device(&app, &bob, "Z-BOX", box_spec(8, 0)).await;
    app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 100}), &bob).await;
    let (s, b) = rent(&app, &mia, "grafana", &dev, 1).await;
    assert_eq!((s, b["msg"].as_str()), (403, Some("No permission to install or rent Z-APP, please contact the administrator")));
}

/// Issue 25: suspending a renter ends their running rental (the provider's agent is told to remove
/// it; the hold is settled when it is gone) and suspending a provider withdraws their boxes.
#[tokio::test]
async fn suspending_a_renter_ends_their_rental_and_a_provider_stops_offering_boxes() {
    let app = TestApp::spawn_with(|c| {
        c.billing.signup_bonus = Coins::from_cents(0);
        c.billing.market_fee_percent = 10;
    })
    .await;
    let (alice, bob, dev, secret, id) = rented_running(&app, 2).await;
    let op = token_of(&app.signed_in("op@example.com").await);
    crate::ops::make_operator(&app, "op@example.com");
    let alice_id = user_id_of_token(&app, &alice).await;
    let bob_id = user_id_of_token(&app, &bob).await;

    let (s, b) = app.post_json(&format!("/api/ops/v1/users/{alice_id}/suspend"), &json!({"reason": "chargeback"}), Some(&op)).await;
    assert_eq!(s, 200, "{b}");
    // The provider's agent is told to remove the app; once it has, the hold is released.
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert_eq!(command_for(&cmds, &id)["kind"], "app_uninstall");
    ack_pending(&app, &secret, &id, true, None).await;
    verified(&app).await;
    let (_, audit) = app.get_auth("/api/ops/v1/audit?action=user.suspend", &op).await;
    assert_eq!(audit["data"]["items"][0]["detail"]["rentals_ended"], json!([id]), "{audit}");
    let (s, _) = app.post_json(&format!("/api/ops/v1/users/{alice_id}/unsuspend"), &json!({}), Some(&op)).await;
    assert_eq!(s, 200);

    // Bob suspended: his box is no longer offered (Alice's new rental is refused) and the market
    // stops showing it at once (its index reloads on the change).
    // (The market's index reloads a moment after each change: read until it shows what is wanted.)
    assert_eq!(grafana_offers(&app, |o| !o.is_empty()).await, [dev.clone()]);
    let (s, b) = app.post_json(&format!("/api/ops/v1/users/{bob_id}/suspend"), &json!({"reason": "fraud"}), Some(&op)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(grafana_offers(&app, |o| o.is_empty()).await, Vec::<String>::new(), "the suspended provider's box is still offered");
    assert_eq!(b["data"]["devices"], 1);
    let alice = token_of(&app.login("alice@example.com", PASSWORD).await);
    let (s, b) = rent(&app, &alice, "grafana", &dev, 1).await;
    assert_ne!(s, 200, "{b}");
    let (_, audit) = app.get_auth("/api/ops/v1/audit?action=user.suspend", &op).await;
    assert_eq!(audit["data"]["items"][0]["detail"]["devices_withdrawn"], json!([dev]), "{audit}");
}

/// The devices the market offers grafana on, once `wanted` holds of them (or after two seconds).
async fn grafana_offers(app: &TestApp, wanted: impl Fn(&[String]) -> bool) -> Vec<String> {
    let mut shown = Vec::new();
    for _ in 0..100 {
        let (_, b) = app.get_json("/api/ebs/v1/market/applications/grafana").await;
        shown = b["data"]["offers"].as_array().unwrap().iter().map(|o| o["device_id"].as_str().unwrap().to_string()).collect();
        if wanted(&shown) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    shown
}

async fn user_id_of_token(app: &TestApp, token: &str) -> String {
    let (_, p) = app.get_auth("/api/iam/v1/account/profile", token).await;
    p["data"]["id"].as_str().unwrap().to_string()
}

async fn extend(app: &TestApp, token: &str, id: &str, body: serde_json::Value, key: Option<&str>, lang: &str) -> (u16, serde_json::Value) {
    let mut req = app.client.post(app.url(&format!("/api/rmp/v1/apps/{id}/extend"))).bearer_auth(token).header("Accept-Language", lang).json(&body);
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    json_of(req.send().await.unwrap()).await
}

fn ends_at(inst: &serde_json::Value) -> chrono::DateTime<chrono::Utc> {
    inst["rental"]["ends_at"].as_str().unwrap().parse().unwrap()
}

/// Issue 39: a running rental is extended (its hold grows by price × hours, its end moves), once
/// per Idempotency-Key; bad hours, another's rental, a wallet that cannot hold it and an ended
/// rental are refused and change nothing; a rental the wallet pays to its end sends no runway notice.
#[tokio::test]
async fn a_running_rental_is_extended_once_per_key_and_refused_what_it_cannot_hold() {
    let app = TestApp::spawn_with(|c| c.billing.signup_bonus = Coins::from_cents(0)).await;
    let (alice, bob, _dev, secret, id) = rented_running(&app, 1).await;
    let wallet = async |t: &str| crate::boxes::wallet(&app, t).await;
    assert_eq!(wallet(&alice).await["held"], 600);
    let first = crate::boxes::get(&app, &alice, &id).await;
    assert_eq!(first["rental"]["extendable"], true);
    // Held to its end: the wallet does not run out before it, so no runway notice.
    zmarket::billing::runway::send_notices(&app.state.billing).await.unwrap();
    let (_, n) = app.get_auth("/api/ebs/v1/notifications", &alice).await;
    assert!(n["data"]["items"].as_array().unwrap().iter().all(|n| !n["kind"].as_str().unwrap().starts_with("runway")), "{n}");

    for bad in [json!({"hours": 0}), json!({"hours": -2}), json!({"hours": 721}), json!({})] {
        let (s, b) = extend(&app, &alice, &id, bad, None, "en").await;
        assert_eq!((s, b["data"]["field"].as_str(), b["msg"].as_str()), (400, Some("hours"), Some("Invalid value for hours")));
    }
    let (s, b) = extend(&app, &alice, &id, json!({"hours": 0}), None, "zh-CN").await;
    assert_eq!((s, b["msg"].as_str()), (400, Some("参数 hours 无效")));
    let (s, _) = extend(&app, &bob, &id, json!({"hours": 1}), None, "en").await;
    assert_eq!(s, 404, "another's rental");
    // 14.00 available: 3 more hours (18.00) cannot be held.
    let (s, b) = extend(&app, &alice, &id, json!({"hours": 3}), None, "en").await;
    assert_eq!((s, &b["data"]), (409, &json!({"available": 1400, "needed": 1800})), "{b}");
    assert_eq!(wallet(&alice).await["held"], 600);

    let (s, b) = extend(&app, &alice, &id, json!({"hours": 2}), Some("x-1"), "en").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(ends_at(&b["data"]) - ends_at(&first), chrono::Duration::hours(2));
    assert_eq!(wallet(&alice).await["held"], 1800);
    let (s, again) = extend(&app, &alice, &id, json!({"hours": 2}), Some("x-1"), "en").await;
    assert_eq!((s, ends_at(&again["data"])), (200, ends_at(&b["data"])));
    assert_eq!(wallet(&alice).await["held"], 1800, "a retried extend holds once");
    verified(&app).await;

    // Ended (being removed from the box): refused, nothing held.
    let (s, b) = crate::boxes::act(&app, &alice, &id, "uninstall").await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = extend(&app, &alice, &id, json!({"hours": 1}), None, "en").await;
    assert_eq!((s, b["error"].as_str()), (409, Some("rental_not_extendable")), "{b}");
    let (_, b) = extend(&app, &alice, &id, json!({"hours": 1}), None, "zh-CN").await;
    assert_eq!(b["msg"], "只有进行中的租用可以续租：此次租用已结束、失败或已到期");
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(wallet(&alice).await["held"], 0);
    verified(&app).await;
}

/// Ten extends with different keys at once never hold more than the wallet has (SQLite and,
/// with TEST_DATABASE_URL, PostgreSQL).
#[tokio::test]
async fn ten_extends_at_once_never_overdraw() {
    let app = TestApp::spawn_with(|c| c.billing.signup_bonus = Coins::from_cents(0)).await;
    let (alice, _bob, _dev, _secret, id) = rented_running(&app, 1).await;
    let before = ends_at(&crate::boxes::get(&app, &alice, &id).await);
    // 14.00 available: two hours of 6.00 fit, a third does not.
    let calls = (0..10).map(|i| {
        let (app, alice, id) = (&app, alice.clone(), id.clone());
        async move { extend(app, &alice, &id, json!({"hours": 1}), Some(&format!("race-{i}")), "en").await.0 }
    });
    let mut answers = futures::future::join_all(calls).await;
    answers.sort();
    assert_eq!(answers, [200, 200, 409, 409, 409, 409, 409, 409, 409, 409]);
    let w = crate::boxes::wallet(&app, &alice).await;
    assert_eq!((w["held"].as_i64(), w["available"].as_i64()), (Some(1800), Some(200)));
    assert_eq!(ends_at(&crate::boxes::get(&app, &alice, &id).await) - before, chrono::Duration::hours(2));
    verified(&app).await;
}

/// Renting between a company and one of its administrators is refused, either way (before: the
/// company paid the admin's box, company −100, admin +90). Others still rent both boxes.
#[tokio::test]
async fn a_company_and_its_admin_cannot_rent_each_others_devices() {
    let app = TestApp::spawn().await;
    let admin_s = app.signed_in("admin@example.com").await;
    let admin = token_of(&admin_s);
    let company = seed_company(&app, "Acme", &admin_s, &[]).await;
    let in_company = token_of(&app.switch(&admin_s, &company).await);
    let stranger = token_of(&app.signed_in("stranger@example.com").await);
    let big = json!({"cpu_cores": 8, "memory_bytes": 64i64 << 30, "disk_bytes": 2048i64 << 30, "gpus": []});
    let rent = |token: String, device: String| {
        let app = &app;
        async move { app.post_json("/api/rmp/v1/apps/rent", &json!({"app_id": "grafana", "device_id": device, "hours": 1}), Some(&token)).await }
    };
    let mut boxes = Vec::new();
    for owner in [&admin, &in_company] {
        let (dev, _) = bound_device(&app, owner, "Z-BOX", big.clone()).await;
        let sharing = json!({"mode": "manual", "rentable": true, "price_per_hour": 100});
        let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &sharing, owner).await;
        assert_eq!(s, 200, "{b}");
        boxes.push(dev);
    }
    let within = "A company and its administrators cannot rent each other's devices";
    // The company rents the admin's personal box; the admin rents the company's box.
    for (renter, dev) in [(&in_company, &boxes[0]), (&admin, &boxes[1])] {
        let (s, b) = rent(renter.clone(), dev.clone()).await;
        assert_eq!((s, b["msg"].as_str()), (409, Some(within)), "{b}");
    }
    let res = app
        .client
        .post(app.url("/api/rmp/v1/apps/rent"))
        .bearer_auth(&admin)
        .header("accept-language", "zh-CN")
        .json(&json!({"app_id": "grafana", "device_id": boxes[1], "hours": 1}))
        .send()
        .await
        .unwrap();
    let (s, b) = json_of(res).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("企业与其管理员之间不能相互租用设备")));
    // Nothing moved, and someone else may rent either box.
    for dev in &boxes {
        let (_, b) = rent(stranger.clone(), dev.clone()).await;
        assert_ne!(b["msg"].as_str(), Some(within), "{b}");
    }
}

/// The renter's views never carry the address on the box's network (the owner's
/// device page does), and the app API's root answers alike with and without a trailing slash.
#[tokio::test]
async fn a_renter_never_gets_the_box_network_address_and_the_api_root_takes_a_slash() {
    let app = TestApp::spawn().await;
    let (alice, bob, dev, _secret, id) = rented_running(&app, 2).await;
    const ADDRESS: &str = "10.0.0.9:32768";

    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}"), &alice).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!((b["data"]["status"].as_str(), b["data"]["openable"].as_bool()), (Some("running"), Some(true)), "{b}");
    assert!(!b.to_string().contains(ADDRESS), "the renter got the box's address: {b}");
    for path in ["/api/rmp/v1/apps", "/api/rmp/v1/aicompute"] {
        let (s, b) = app.get_auth(path, &alice).await;
        assert_eq!(s, 200, "{path}: {b}");
        assert!(!b.to_string().contains(ADDRESS), "{path}: {b}");
    }
    // The box's owner sees where it runs on their network.
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/devices/{dev}/apps"), &bob).await;
    assert_eq!(s, 200, "{b}");
    let mine = b["data"]["items"].as_array().unwrap().iter().find(|i| i["id"] == id.as_str()).unwrap().clone();
    assert_eq!(mine["open_url"], format!("http://{ADDRESS}/"));

    // The API root: the same answer with the slash as without (the box's channel is not open
    // here, so both say so), never `api_not_found`.
    let (plain_s, plain) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/api"), &alice).await;
    let (slash_s, slash) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/api/"), &alice).await;
    assert_ne!(slash["error"], "api_not_found", "{slash}");
    assert_eq!((slash_s, &slash["error"]), (plain_s, &plain["error"]), "{slash} vs {plain}");
    let (s, b) = app.get_auth("/api/rmp/v1/apps/nope/api/", &alice).await;
    assert_eq!(s, 404, "{b}");
    assert_ne!(b["error"], "api_not_found", "{b}");
}
