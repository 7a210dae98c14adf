//! Renting over HTTP with the wallet's ledger, the market's clock moved ahead while the box
//! beats: the hold, minute postings while seen running (none while not, none for a silence), the
//! provider credited the price less the market fee in the same transfer, the hold released on
//! uninstall, on a failed install (`rent_failed`) and at the rental's end, the grace period;
//! every refusal; `ledger verify` after each step.

use chrono::Duration;
use serde_json::json;
use zmarket::coins::Coins;

use crate::boxes::{ack_pending, act, beat, bound_device, box_spec, command_for, get, rent, rented_running, running, verified, wallet};
use crate::common::*;
use crate::{CLOCK, market, meter, pass, reporting};

/// Issue 39 item 5: a company pays from its own wallet. Empty, it cannot rent (409 naming what is
/// available); an administrator funds it from their own wallet; a rental made in the company
/// context is held and charged on the company's wallet (the renter's own stays as it was), and the
/// company's bill names the person who rented, to every administrator; the provider is paid.
#[tokio::test]
async fn a_company_rental_is_held_and_charged_on_the_company_wallet_and_its_bill_names_the_renter() {
    let _clock = CLOCK.lock().await;
    let app = market(|_| {}).await;
    let boss_s = app.signed_in("boss@example.com").await;
    let ann_s = app.signed_in("ann@example.com").await;
    zmarket::billing::issuance::grant_by_email(&app.state.db, "ann@example.com", Coins::from_cents(5000), "test").await.unwrap();
    let company = seed_company(&app, "Acme Labs", &boss_s, &[(&ann_s, "admin")]).await;
    let ann = token_of(&app.switch(&ann_s, &company).await);
    let boss = token_of(&app.switch(&boss_s, &company).await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let (dev, secret) = bound_device(&app, &bob, "Z-BOX", box_spec(8, 0)).await;
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 600}), &bob).await;
    assert_eq!(s, 200, "{b}");

    let (s, b) = rent(&app, &ann, "grafana", &dev, 2).await;
    assert_eq!((s, b["data"].clone()), (409, json!({"available": 0, "needed": 1200})), "{b}");
    let (s, b) = app.post_json("/api/billing/v1/wallet/fund", &json!({"amount": 1500}), Some(&ann)).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = rent(&app, &ann, "grafana", &dev, 2).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let w = wallet(&app, &boss).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64(), w["available"].as_i64()), (Some(1500), Some(1200), Some(300)));
    let mine = wallet(&app, &token_of(&ann_s)).await;
    assert_eq!((mine["balance"].as_i64(), mine["held"].as_i64()), (Some(3500), Some(0)));
    verified(&app).await;

    running(&app, &secret, &id).await;
    reporting(&app, &secret, json!([{"id": id, "status": "running"}]), 3).await;
    meter(&app).await;
    let w = wallet(&app, &boss).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64(), w["expense_total"].as_i64()), (Some(1470), Some(1170), Some(30)));
    assert_eq!(wallet(&app, &token_of(&ann_s)).await["balance"], 3500);
    assert_eq!(wallet(&app, &bob).await["balance"], 27, "the provider gets the price less 10%");
    let (s, b) = app.get_auth("/api/billing/v1/bills", &boss).await;
    assert_eq!(s, 200, "{b}");
    let bill = &b["data"]["items"][0];
    assert_eq!((bill["ref_id"].as_str(), bill["amount"].as_i64(), bill["by"].as_str()), (Some(id.as_str()), Some(30), ann_s["userInfo"]["name"].as_str()), "{b}");
    // The company's bills CSV names who rented in its last column.
    let res = app.client.get(app.url("/api/billing/v1/bills.csv")).bearer_auth(&boss).header("Accept-Language", "en").send().await.unwrap();
    let csv = res.text().await.unwrap();
    let mut lines = csv.trim_start_matches('\u{feff}').lines();
    assert!(lines.next().unwrap().ends_with(",Reference,By"), "{csv}");
    let name = ann_s["userInfo"]["name"].as_str().unwrap();
    assert!(lines.any(|l| l.contains(id.as_str()) && l.ends_with(&format!(",{name}"))), "{csv}");
    act(&app, &ann, &id, "uninstall").await;
    ack_pending(&app, &secret, &id, true, None).await;
    let w = wallet(&app, &boss).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(1470), Some(0)));
    verified(&app).await;
}

#[tokio::test]
async fn a_rental_is_held_charged_by_the_running_minute_and_released() {
    let _clock = CLOCK.lock().await;
    let app = market(|_| {}).await;
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
    reporting(&app, &secret, json!([]), 5).await;
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 0);
    running(&app, &secret, &id).await;
    reporting(&app, &secret, json!([{"id": id, "status": "running"}]), 3).await;
    meter(&app).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!(d["rental"]["billed"], 30);
    assert_eq!(wallet(&app, &alice).await["balance"], 1970);
    assert_eq!(wallet(&app, &bob).await["balance"], 27, "the provider gets the price less 10%");
    verified(&app).await;

    // Stopped: the minutes not running are not charged.
    act(&app, &alice, &id, "stop").await;
    ack_pending(&app, &secret, &id, true, None).await;
    reporting(&app, &secret, json!([{"id": id, "status": "stopped"}]), 30).await;
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 30);
    act(&app, &alice, &id, "start").await;
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "running");
    reporting(&app, &secret, json!([{"id": id, "status": "running"}]), 2).await;
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 50);
    // The same minutes are never charged twice.
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 50);
    verified(&app).await;

    // Uninstalled: the rest of the hold comes back.
    act(&app, &alice, &id, "uninstall").await;
    let w = wallet(&app, &alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(1950), Some(0)));
    assert_eq!(wallet(&app, &bob).await["balance"], 45);
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "not_install");
    // Ended, it keeps its total and stays in the history of ended ones (`/app?show=ended`).
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 50);
    let (s, b) = app.get_auth("/api/rmp/v1/apps?status=not_install", &alice).await;
    assert_eq!(s, 200, "{b}");
    let ended = b["data"]["items"].as_array().unwrap().iter().find(|i| i["id"] == id.as_str()).cloned().expect("in the history");
    assert_eq!(ended["rental"]["billed"], 50);
    let (_, b) = app.get_auth("/api/rmp/v1/apps", &alice).await;
    assert!(b["data"]["items"].as_array().unwrap().iter().all(|i| i["id"] != id.as_str()), "not among the current ones: {b}");
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
    reporting(&app, &secret, json!([{"id": short, "status": "running"}]), 90).await;
    meter(&app).await;
    assert_eq!(get(&app, &alice, &short).await["status"], "suspending");
    ack_pending(&app, &secret, &short, true, None).await;
    pass(Duration::hours(26));
    meter(&app).await;
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
async fn a_box_that_stops_reporting_is_not_charged_for_the_silence() {
    let _clock = CLOCK.lock().await;
    let app = market(|_| {}).await;
    let (alice, bob, _dev, secret, id) = rented_running(&app, 3).await;
    let up = json!([{"id": id, "status": "running"}]);
    // Half an hour of silence, not yet marked offline (the sweep has not run): the meter charges
    // only up to the last heartbeat, which came as it started.
    pass(Duration::minutes(30));
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 0);
    assert_eq!(wallet(&app, &alice).await["balance"], 2000);
    verified(&app).await;
    // It reports the app running again: the silence stays free, the meter starts from this beat.
    beat(&app, &secret, up.clone(), json!([])).await;
    reporting(&app, &secret, up.clone(), 3).await;
    meter(&app).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!(d["rental"]["billed"], 30, "{d}");
    assert_eq!(wallet(&app, &alice).await["balance"], 1970);
    assert_eq!(wallet(&app, &bob).await["balance"], 27);
    verified(&app).await;
    // Silent again, and this time the sweep marks it offline before the meter runs: the same.
    pass(Duration::minutes(20));
    assert_eq!(zmarket::devices::agent_api::mark_offline(&app.state.devices).await.unwrap(), 1);
    assert_eq!(get(&app, &alice, &id).await["device_status"], "offline");
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 30);
    beat(&app, &secret, up.clone(), json!([])).await;
    meter(&app).await;
    reporting(&app, &secret, up, 2).await;
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 50);
    verified(&app).await;
}

#[tokio::test]
async fn a_rental_whose_hold_cannot_pay_is_suspended_not_deleted() {
    let _clock = CLOCK.lock().await;
    let app = market(|_| {}).await;
    let (alice, bob, _dev, secret, id) = rented_running(&app, 1).await;
    reporting(&app, &secret, json!([{"id": id, "status": "running"}]), 2).await;
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 20);
    // The hold expires (the market was down past the rental's end): nothing left to pay with.
    let expired = zmarket::billing::ledger::expire_due(&app.state.db, zmarket::db::now() + Duration::hours(3)).await.unwrap();
    assert_eq!(expired, 1);
    reporting(&app, &secret, json!([{"id": id, "status": "running"}]), 2).await;
    meter(&app).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!((d["status"].as_str(), d["rental"]["billed"].as_i64()), (Some("suspending"), Some(20)), "{d}");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert_eq!(command_for(&cmds, &id)["kind"], "app_suspend");
    ack_pending(&app, &secret, &id, true, None).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "suspended");
    let (_, n) = app.get_auth("/api/ebs/v1/notifications", &alice).await;
    assert!(n["data"]["items"].as_array().unwrap().iter().any(|i| i["kind"] == "rental_suspended"), "{n}");
    // Nothing more is charged; it cannot run for free; the rest came back to the renter.
    reporting(&app, &secret, json!([{"id": id, "status": "suspended"}]), 20).await;
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["rental"]["billed"], 20);
    let w = wallet(&app, &alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(1980), Some(0)));
    assert_eq!(wallet(&app, &bob).await["balance"], 18);
    // Resuming needs a new hold of the rental's hours (6.00): with the coins tied up elsewhere it
    // is refused and nothing changes ...
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let alice_row = zmarket::db::entity::users::Entity::find().filter(zmarket::db::entity::users::Column::Email.eq("alice@example.com")).one(&app.state.db).await.unwrap().unwrap();
    let ua = zmarket::billing::ledger::AccountRef::User(alice_row.id.into());
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
    meter(&app).await;
    reporting(&app, &secret, json!([{"id": id, "status": "running"}]), 2).await;
    meter(&app).await;
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
    let _clock = CLOCK.lock().await;
    let app = market(|_| {}).await;
    let (alice, bob, _dev, secret, id) = rented_running(&app, 1).await;
    meter(&app).await;
    // The hour is up: suspended, not removed; charged up to its end (the meter started a moment
    // after the rental, so 3599 seconds: 599 cents, not the 590 of 59 whole minutes).
    reporting(&app, &secret, json!([{"id": id, "status": "running"}]), 61).await;
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "suspending");
    ack_pending(&app, &secret, &id, true, None).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!((d["status"].as_str(), d["rental"]["billed"].as_i64()), (Some("suspended"), Some(599)), "{d}");
    // Within the grace period it stays (the box still reserved for it).
    pass(Duration::hours(20));
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "suspended");
    // After it, the rental ends and the app is removed from the provider's box.
    pass(Duration::hours(6));
    meter(&app).await;
    assert_eq!(get(&app, &alice, &id).await["status"], "shutting_down");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert_eq!(command_for(&cmds, &id)["kind"], "app_uninstall");
    // The market kept exactly its 10% of what was charged (59 cents of 599); the provider the rest.
    assert_eq!(wallet(&app, &bob).await["balance"], 540);
    verified(&app).await;
}

/// Issue 39: the renter is told when the box of their running rental goes offline and comes back,
/// once ten minutes before the rental's end with a link to its Extend (and again before an extended
/// end); the owner that the box was rented and, when the rental ends, what it earned them.
#[tokio::test]
async fn both_sides_are_told_of_a_rental_its_box_and_its_end() {
    let _clock = CLOCK.lock().await;
    let app = market(|_| {}).await;
    let (alice, bob, dev, secret, id) = rented_running(&app, 1).await;
    let up = json!([{"id": id, "status": "running"}]);
    let told = async |t: &str, kind: &str, lang: &str| -> Vec<serde_json::Value> {
        let res = app.client.get(app.url("/api/ebs/v1/notifications?limit=100")).bearer_auth(t).header("Accept-Language", lang).send().await.unwrap();
        let (_, b) = json_of(res).await;
        b["data"]["items"].as_array().unwrap().iter().filter(|n| n["kind"] == kind).cloned().collect()
    };
    let ending = async || {
        for _ in 0..2 {
            zmarket::apps::extend::ending_notices(&app.state.db, zmarket::db::now()).await.unwrap();
        }
    };
    let rented = told(&bob, "device_rented", "en").await;
    assert_eq!(rented.len(), 1, "{rented:?}");
    assert_eq!(rented[0]["path"], format!("/devices/details?id={dev}"));
    assert_eq!(told(&bob, "device_rented", "zh-CN").await[0]["title"], "设备已被租用");

    // The box goes silent and the sweep marks it offline: the renter is told; then it is back.
    pass(Duration::minutes(5));
    assert_eq!(zmarket::devices::agent_api::mark_offline(&app.state.devices).await.unwrap(), 1);
    let off = told(&alice, "rental_device_offline", "en").await;
    assert_eq!((off.len(), off[0]["path"].as_str()), (1, Some(format!("/app/details?id={id}").as_str())));
    assert_eq!(told(&alice, "rental_device_offline", "zh-CN").await[0]["title"], "租用的设备离线");
    beat(&app, &secret, up.clone(), json!([])).await;
    beat(&app, &secret, up.clone(), json!([])).await;
    assert_eq!(told(&alice, "rental_device_back", "en").await.len(), 1);
    assert_eq!(told(&alice, "rental_device_back", "zh-CN").await[0]["title"], "租用的设备已恢复在线");

    // Eleven minutes before the end: nothing yet; nine: told once, with the Extend link.
    reporting(&app, &secret, up.clone(), 44).await;
    ending().await;
    assert!(told(&alice, "rental_ending", "en").await.is_empty());
    reporting(&app, &secret, up.clone(), 2).await;
    ending().await;
    let soon = told(&alice, "rental_ending", "en").await;
    assert_eq!(soon.len(), 1, "{soon:?}");
    assert_eq!((soon[0]["title"].as_str(), soon[0]["path"].as_str()), (Some("Rental ending soon"), Some(format!("/app/details?id={id}&extend=1").as_str())));
    assert_eq!(told(&alice, "rental_ending", "zh-CN").await[0]["title"], "租用即将结束");
    // Extended by an hour: told again before the new end, once.
    let (s, b) = app.post_json(&format!("/api/rmp/v1/apps/{id}/extend"), &json!({"hours": 1}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    reporting(&app, &secret, up.clone(), 40).await;
    ending().await;
    assert_eq!(told(&alice, "rental_ending", "en").await.len(), 1);
    reporting(&app, &secret, up.clone(), 20).await;
    ending().await;
    assert_eq!(told(&alice, "rental_ending", "en").await.len(), 2);
    // No runway notice: the held coins pay to the end.
    zmarket::billing::runway::send_notices(&app.state.billing).await.unwrap();
    assert!(told(&alice, "runway_1h", "en").await.is_empty() && told(&alice, "runway_24h", "en").await.is_empty());
    verified(&app).await;

    // It ends: the owner is told what it earned them (the captures less the 10% fee).
    act(&app, &alice, &id, "uninstall").await;
    ack_pending(&app, &secret, &id, true, None).await;
    let billed = get(&app, &alice, &id).await["rental"]["billed"].as_i64().unwrap();
    assert!(billed > 0);
    let earned = zmarket::coins::format_coins(billed - billed / 10);
    let ended = told(&bob, "rental_ended", "en").await;
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["body"], format!("The rental of Grafana on box one has ended: it earned you {earned} coins."));
    assert_eq!(ended[0]["path"], format!("/devices/details?id={dev}"));
    assert_eq!(told(&bob, "rental_ended", "zh-CN").await[0]["body"], format!("box one 上 Grafana 的租用已结束：您获得 {earned} 币。"));
    assert_eq!(told(&alice, "rental_ended", "en").await.len(), 1);
    verified(&app).await;
}

/// Issue 39: a renter who stops a little before every minute pays for every second seen running,
/// and the provider's income entries carry the gross and the fee beside the net, in the list and
/// in the CSV.
#[tokio::test]
async fn a_rental_stopped_every_59_seconds_is_charged_by_the_second() {
    let _clock = CLOCK.lock().await;
    let app = market(|_| {}).await;
    let (alice, bob, _dev, secret, id) = rented_running(&app, 2).await;
    let run = json!([{"id": id, "status": "running"}]);
    // Ten stretches of 59 seconds seen running (beats 20, 20 and 19 seconds apart), each stopped 5
    // seconds after the box's last report and started again.
    for _ in 0..10 {
        for step in [20, 20, 19] {
            pass(Duration::seconds(step));
            beat(&app, &secret, run.clone(), json!([])).await;
        }
        pass(Duration::seconds(5));
        act(&app, &alice, &id, "stop").await;
        ack_pending(&app, &secret, &id, true, None).await;
        assert_eq!(get(&app, &alice, &id).await["status"], "stopped");
        act(&app, &alice, &id, "start").await;
        ack_pending(&app, &secret, &id, true, None).await;
        assert_eq!(get(&app, &alice, &id).await["status"], "running");
    }
    meter(&app).await;
    // 590 seconds seen (a second more per stretch at most, should requests take that long) at
    // 6 coins an hour: 98 cents, each stop's fraction of a cent carried to the next. By the
    // minute nothing was charged at all.
    let billed = get(&app, &alice, &id).await["rental"]["billed"].as_i64().unwrap();
    assert!((98..=100).contains(&billed), "{billed}");
    assert_eq!(wallet(&app, &alice).await["balance"], 2000 - billed);
    verified(&app).await;

    // The provider's income: per capture the gross, the market's exact fee and the net.
    let (s, b) = app.get_auth("/api/billing/v1/wallet/entries?limit=100", &bob).await;
    assert_eq!(s, 200, "{b}");
    let items = b["data"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 10, "one capture per stretch: {b}");
    let mut gross = 0;
    let mut fee = 0;
    for e in items {
        assert_eq!((e["kind"].as_str(), e["ref_type"].as_str()), (Some("income"), Some("rental")), "{e}");
        assert_eq!(e["amount"].as_i64().unwrap(), e["gross"].as_i64().unwrap() - e["fee"].as_i64().unwrap(), "{e}");
        assert!(e["memo"].as_str().unwrap().starts_with("Rental charged: "), "{e}");
        gross += e["gross"].as_i64().unwrap();
        fee += e["fee"].as_i64().unwrap();
    }
    assert_eq!((gross, fee), (billed, billed / 10), "the fee is exact over the rental");
    assert_eq!(wallet(&app, &bob).await["balance"], billed - billed / 10);
    // The renter's expense entries carry none.
    let (_, b) = app.get_auth("/api/billing/v1/wallet/entries?kind=expense&limit=1", &alice).await;
    assert!(b["data"]["items"][0]["gross"].is_null() && b["data"]["items"][0]["fee"].is_null(), "{b}");
    let res = app.client.get(app.url("/api/billing/v1/wallet/entries.csv")).bearer_auth(&bob).send().await.unwrap();
    let text = String::from_utf8(res.bytes().await.unwrap()[3..].to_vec()).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let head: Vec<String> = rows.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(&head[4..7], ["Amount (coins)", "Gross (coins)", "Market fee (coins)"]);
    let coins = |s: &str| (s.parse::<f64>().unwrap() * 100.0).round() as i64;
    let (mut g, mut f, mut n) = (0, 0, 0);
    for r in rows.records().map(Result::unwrap) {
        (n, g, f) = (n + coins(&r[4]), g + coins(&r[5]), f + coins(&r[6]));
    }
    assert_eq!((g, f, n), (billed, billed / 10, billed - billed / 10));
}
