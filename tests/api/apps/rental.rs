//! Renting over HTTP with the wallet's ledger: the hold, minute postings while running (none while
//! not), the provider credited the price less the market fee in the same transfer, the hold
//! released on uninstall, on a failed install (`rent_failed`) and at the rental's end; every
//! refusal; `ledger verify` after each step.

use chrono::Duration;
use serde_json::{Value, json};
use zmarket::coins::Coins;

use super::{ack_pending, act, beat, box_spec, command_for, get};
use crate::common::*;
use crate::devices::bound_device;

async fn verified(app: &TestApp) {
    if let Err(e) = zmarket::billing::verify::verify(&app.state.db).await {
        panic!("ledger verify: {e}");
    }
}

async fn wallet(app: &TestApp, token: &str) -> Value {
    let (s, b) = app.get_auth("/api/billing/v1/wallet", token).await;
    assert_eq!(s, 200, "{b}");
    b["data"].clone()
}

async fn rent(app: &TestApp, token: &str, app_id: &str, device: &str, hours: i64) -> (u16, Value) {
    app.post_json("/api/rmp/v1/apps/rent", &json!({"app_id": app_id, "device_id": device, "hours": hours}), Some(token)).await
}

/// The rental meter run as if at `minutes` from now.
async fn meter_at(app: &TestApp, minutes: i64) {
    zmarket::apps::rental::meter(&app.state.db, zmarket::db::now() + Duration::minutes(minutes), Duration::hours(24)).await.expect("meter");
}

/// Plays the provider's agent through the install to running.
async fn running(app: &TestApp, secret: &str, id: &str) {
    let cmds = beat(app, secret, json!([]), json!([])).await;
    let cmd = command_for(&cmds, id)["id"].clone();
    beat(app, secret, json!([{"id": id, "status": "running", "url": "http://10.0.0.9:32768/"}]), json!([{"id": cmd, "ok": true}])).await;
}

#[tokio::test]
async fn a_rental_is_held_charged_by_the_running_minute_and_released() {
    let app = TestApp::spawn_with(|c| {
        c.billing.signup_bonus = Coins::from_cents(0);
        c.billing.market_fee_percent = 10;
    })
    .await;
    let alice_s = app.signed_in("alice@example.com").await;
    let alice = token_of(&alice_s);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    zmarket::billing::issuance::grant_by_email(&app.state.db, "alice@example.com", Coins::from_cents(2000), "test").await.unwrap();
    let (dev, secret) = bound_device(&app, &bob, "Z-BOX", box_spec(8, 0)).await;
    let (own, _) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;

    // Not offered yet; then 6 coins an hour (10 cents a minute).
    let (s, b) = rent(&app, &alice, "grafana", &dev, 2).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("This device is not offered for rent")));
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 600}), &bob).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = rent(&app, &alice, "grafana", &own, 2).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("This is your own device: install the app instead of renting it")));
    let (s, b) = rent(&app, &alice, "grafana", &dev, 0).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("hours")));
    let (s, b) = rent(&app, &alice, "grafana", &dev, 10).await;
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["data"], json!({"available": 2000, "needed": 6000}));
    let (s, b) = app.get_auth("/api/rmp/v1/apps/rent-options?app_id=grafana", &alice).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"].as_array().unwrap().len(), 1);
    assert_eq!(b["data"][0]["price_per_hour"], 600);
    assert_eq!(b["data"][0]["fits"], true);

    // Rented for 2 hours: 12 coins held.
    let (s, b) = rent(&app, &alice, "grafana", &dev, 2).await;
    assert_eq!(s, 200, "{b}");
    let inst = &b["data"];
    assert_eq!(inst["kind"], "rent");
    assert_eq!(inst["rental"]["price_per_hour"], 600);
    assert_eq!(inst["rental"]["billed"], 0);
    let id = inst["id"].as_str().unwrap().to_string();
    let w = wallet(&app, &alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64(), w["available"].as_i64()), (Some(2000), Some(1200), Some(800)));
    verified(&app).await;
    // The provider sees it on the device, not in their own list.
    let (_, b) = app.get_auth(&format!("/api/rmp/v1/devices/{dev}/apps"), &bob).await;
    assert_eq!(b["data"]["items"][0]["kind"], "rent");
    let (_, b) = app.get_auth("/api/rmp/v1/apps", &bob).await;
    assert_eq!(b["data"]["total"], 0);

    // Nothing is charged before it runs.
    meter_at(&app, 5).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 0);
    running(&app, &secret, &id).await;
    meter_at(&app, 3).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!(d["rental"]["billed"], 30);
    assert_eq!(wallet(&app, &alice).await["balance"], 1970);
    assert_eq!(wallet(&app, &bob).await["balance"], 27, "the provider gets the price less 10%");
    verified(&app).await;

    // Stopped: the minutes not running are not charged.
    act(&app, &alice, &id, "stop").await;
    ack_pending(&app, &secret, &id, true, None).await;
    meter_at(&app, 30).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 30);
    act(&app, &alice, &id, "start").await;
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "running");
    meter_at(&app, 2).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 50);
    // The same minutes are never charged twice.
    meter_at(&app, 2).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 50);
    verified(&app).await;

    // Uninstalled: the rest of the hold comes back.
    act(&app, &alice, &id, "uninstall").await;
    let w = wallet(&app, &alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(1950), Some(0)));
    assert_eq!(wallet(&app, &bob).await["balance"], 45);
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "not_install");
    let (_, n) = app.get_auth("/api/ebs/v1/notifications", &alice).await;
    let kinds: Vec<&str> = n["data"]["items"].as_array().unwrap().iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"rental_started") && kinds.contains(&"rental_ended"), "{kinds:?}");
    verified(&app).await;

    // The provider's box fails the install: rent_failed, the hold released in full.
    let (_, b) = rent(&app, &alice, "grafana", &dev, 1).await;
    let failed = b["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(wallet(&app, &alice).await["held"], 600);
    ack_pending(&app, &secret, &failed, false, Some(serde_json::json!({"code": "docker_unavailable"}))).await;
    let d = get(&app, &alice, &failed).await;
    assert_eq!((d["status"].as_str(), d["actions"].clone()), (Some("rent_failed"), json!(["uninstall"])));
    let w = wallet(&app, &alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(1950), Some(0)));
    act(&app, &alice, &failed, "uninstall").await;
    ack_pending(&app, &secret, &failed, true, None).await;
    verified(&app).await;

    // A rental whose time is up is suspended (kept for the grace period, charged no further),
    // then removed from the box.
    let (_, b) = rent(&app, &alice, "grafana", &dev, 1).await;
    let short = b["data"]["id"].as_str().unwrap().to_string();
    running(&app, &secret, &short).await;
    meter_at(&app, 90).await;
    assert_eq!(get(&app, &alice, &short).await["status"], "suspending");
    ack_pending(&app, &secret, &short, true, None).await;
    meter_at(&app, 60 * 26).await;
    let d = get(&app, &alice, &short).await;
    assert_eq!(d["status"], "shutting_down");
    let billed = d["rental"]["billed"].as_i64().unwrap();
    assert!((590..=600).contains(&billed), "charged up to the end only: {billed}");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert_eq!(command_for(&cmds, &short)["kind"], "app_uninstall");
    ack_pending(&app, &secret, &short, true, None).await;
    assert_eq!(get(&app, &alice, &short).await["status"], "not_install");
    let w = wallet(&app, &alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(1950 - billed), Some(0)));
    // Renter debit = provider credit + market fee.
    let provider = wallet(&app, &bob).await["balance"].as_i64().unwrap();
    assert_eq!(provider, 45 + billed - billed / 10);
    verified(&app).await;
}

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

/// Alice rents Bob's box (6 coins an hour) for `hours`; the app runs. Returns (alice, bob,
/// device, secret, installation).
async fn rented_running(app: &TestApp, hours: i64) -> (String, String, String, String, String) {
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

#[tokio::test]
async fn a_box_that_stops_reporting_is_not_charged_for_the_silence() {
    let app = TestApp::spawn_with(|c| {
        c.billing.signup_bonus = Coins::from_cents(0);
        c.billing.market_fee_percent = 10;
        c.devices.offline_after_secs = 2;
        c.devices.heartbeat_secs = 1;
    })
    .await;
    let (alice, bob, dev, secret, id) = rented_running(&app, 2).await;
    // The box goes silent and is marked offline.
    for _ in 0..100 {
        let (_, d) = app.get_auth(&format!("/api/ebs/v2/devices/{dev}"), &bob).await;
        if d["data"]["status"] == "offline" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(get(&app, &alice, &id).await["device_status"], "offline");
    // Half an hour of silence: only what ran before its last heartbeat (under a minute) counts.
    meter_at(&app, 30).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 0);
    assert_eq!(wallet(&app, &alice).await["balance"], 2000);
    verified(&app).await;
    // It reports the app running again: the meter starts again from then.
    beat(&app, &secret, json!([{"id": id, "status": "running"}]), json!([])).await;
    meter_at(&app, 0).await;
    meter_at(&app, 3).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!(d["rental"]["billed"], 30, "{d}");
    assert_eq!(wallet(&app, &alice).await["balance"], 1970);
    assert_eq!(wallet(&app, &bob).await["balance"], 27);
    verified(&app).await;
}

#[tokio::test]
async fn a_rental_whose_hold_cannot_pay_is_suspended_not_deleted() {
    let app = TestApp::spawn_with(|c| {
        c.billing.signup_bonus = Coins::from_cents(0);
        c.billing.market_fee_percent = 10;
    })
    .await;
    let (alice, bob, _dev, secret, id) = rented_running(&app, 1).await;
    meter_at(&app, 2).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 20);
    // The hold expires (the market was down past the rental's end): nothing left to pay with.
    let expired = zmarket::billing::ledger::expire_due(&app.state.db, zmarket::db::now() + Duration::hours(3)).await.unwrap();
    assert_eq!(expired, 1);
    meter_at(&app, 4).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!((d["status"].as_str(), d["rental"]["billed"].as_i64()), (Some("suspending"), Some(20)), "{d}");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert_eq!(command_for(&cmds, &id)["kind"], "app_suspend");
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "suspended");
    let (_, n) = app.get_auth("/api/ebs/v1/notifications", &alice).await;
    assert!(n["data"]["items"].as_array().unwrap().iter().any(|i| i["kind"] == "rental_suspended"), "{n}");
    // Nothing more is charged; it cannot run for free; the rest came back to the renter.
    meter_at(&app, 20).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 20);
    let w = wallet(&app, &alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(1980), Some(0)));
    assert_eq!(wallet(&app, &bob).await["balance"], 18);
    // Resuming needs a new hold of the rental's hours (6.00): with the coins tied up elsewhere it
    // is refused and nothing changes ...
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let alice_row = zmarket::db::entity::users::Entity::find().filter(zmarket::db::entity::users::Column::Email.eq("alice@example.com")).one(&app.state.db).await.unwrap().unwrap();
    let ua = zmarket::billing::ledger::AccountRef::User(alice_row.id);
    let other = zmarket::billing::ledger::HoldSpec {
        account: ua,
        amount: 1980,
        key: "elsewhere".into(),
        reference: zmarket::billing::ledger::Reference::new("test", "elsewhere"),
        memo: String::new(),
        expires_at: zmarket::db::now() + Duration::hours(5),
        burn_per_hour: 0,
    };
    zmarket::billing::ledger::hold(&app.state.db, other).await.unwrap();
    let (s, b) = act(&app, &alice, &id, "resume").await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("Insufficient balance: 0.00 coins available, 6.00 needed")), "{b}");
    assert_eq!(get(&app, &alice, &id).await["status"], "suspended");
    // ... and after a top-up code is redeemed it resumes with a new hold and runs again.
    let code = zmarket::billing::codes::generate(&app.state.db, 600, 1, None).await.unwrap().remove(0);
    let (s, b) = app.post_json("/api/billing/v1/wallet/redeem", &json!({"code": code}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = act(&app, &alice, &id, "resume").await;
    assert_eq!((s, b["data"]["status"].as_str()), (200, Some("resuming")), "{b}");
    ack_pending(&app, &secret, &id, true, None).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!(d["status"], "running", "{d}");
    assert_eq!(wallet(&app, &alice).await["held"], 1980 + 600);
    meter_at(&app, 0).await;
    meter_at(&app, 2).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 40);
    verified(&app).await;
    // Still the renter's to remove.
    act(&app, &alice, &id, "uninstall").await;
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "not_install");
    verified(&app).await;
}

#[tokio::test]
async fn a_rental_whose_time_is_up_is_suspended_for_the_grace_period_then_ended() {
    let app = TestApp::spawn_with(|c| {
        c.billing.signup_bonus = Coins::from_cents(0);
        c.billing.market_fee_percent = 10;
    })
    .await;
    let (alice, bob, _dev, secret, id) = rented_running(&app, 1).await;
    meter_at(&app, 0).await;
    // The hour is up: suspended, not removed; charged up to its end (the meter started a moment
    // after the rental, so 59 whole minutes).
    meter_at(&app, 61).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "suspending");
    ack_pending(&app, &secret, &id, true, None).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!((d["status"].as_str(), d["rental"]["billed"].as_i64()), (Some("suspended"), Some(590)), "{d}");
    // Within the grace period it stays (the box still reserved for it).
    meter_at(&app, 60 * 20).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "suspended");
    // After it, the rental ends and the app is removed from the provider's box.
    meter_at(&app, 60 * 26).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "shutting_down");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert_eq!(command_for(&cmds, &id)["kind"], "app_uninstall");
    // The market kept exactly its 10% of what was charged (59 cents); the provider the rest.
    assert_eq!(wallet(&app, &bob).await["balance"], 531);
    verified(&app).await;
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
    meter_at(&app, 30).await;
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

    // Bob suspended: his box is no longer offered (Alice's new rental is refused).
    let (s, b) = app.post_json(&format!("/api/ops/v1/users/{bob_id}/suspend"), &json!({"reason": "fraud"}), Some(&op)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["devices"], 1);
    let alice = token_of(&app.login("alice@example.com", PASSWORD).await);
    let (s, b) = rent(&app, &alice, "grafana", &dev, 1).await;
    assert_ne!(s, 200, "{b}");
    let (_, audit) = app.get_auth("/api/ops/v1/audit?action=user.suspend", &op).await;
    assert_eq!(audit["data"]["items"][0]["detail"]["devices_withdrawn"], json!([dev]), "{audit}");
}

async fn user_id_of_token(app: &TestApp, token: &str) -> String {
    let (_, p) = app.get_auth("/api/iam/v1/account/profile", token).await;
    p["data"]["id"].as_str().unwrap().to_string()
}
