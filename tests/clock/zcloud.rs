//! Z-CLOUD machines on another owner's server group are rentals (issue 29, finding 2): priced by
//! the host's offer, held and charged through the ledger with the market fee, visible to the
//! host's owner with an End (notice, then stop, settled); a withdrawn host takes no new ones and
//! gives notice to the running ones; unlinking the host (and then deleting its owner's account)
//! ends them at once. Charged by the second while the host reports (the market's clock moved
//! ahead, the host beating through it), never a silence. `ledger verify` after each step that
//! moves coins.

use chrono::Duration;
use sea_orm::EntityTrait;
use serde_json::{Value, json};
use zmarket::coins::Coins;

use crate::boxes::{GIB, bound_device, heartbeat, verified};
use crate::common::*;
use crate::{CLOCK, pass};

async fn wallet(app: &TestApp, token: &str) -> (i64, i64, i64) {
    let (s, b) = app.get_auth("/api/billing/v1/wallet", token).await;
    assert_eq!(s, 200, "{b}");
    let w = &b["data"];
    (w["balance"].as_i64().unwrap(), w["held"].as_i64().unwrap(), w["available"].as_i64().unwrap())
}

/// `minutes` go by with the host beating once a minute, then the Z-CLOUD meter runs.
async fn meter_at(app: &TestApp, secret: &str, minutes: i64) -> usize {
    for _ in 0..minutes {
        pass(Duration::minutes(1));
        let (s, b) = heartbeat(app, secret, json!({})).await;
        assert_eq!(s, 200, "{b}");
    }
    meter(app).await
}

/// The Z-CLOUD meter, run now.
async fn meter(app: &TestApp) -> usize {
    zmarket::devices::rental::meter(&app.state.db, zmarket::db::now()).await.expect("meter")
}

/// A 16-core, 64 GiB server group with four passthrough H100s.
fn host_spec() -> Value {
    let h100 = json!({"name": "NVIDIA H100", "passthrough": true, "vram": 80 * GIB});
    json!({"cpu_cores": 16, "memory_bytes": 64 * GIB, "disk_bytes": 4096 * GIB, "gpus": [h100, h100, h100, h100]})
}

fn ask(name: &str, cores: i64, gpus: i64, hours: i64) -> Value {
    json!({"name": name, "cpu_cores": cores, "memory_bytes": 8 * GIB, "disk_bytes": 100 * GIB, "gpu_count": gpus, "gpu_model": "H100", "passthrough": gpus > 0, "hours": hours})
}

async fn create(app: &TestApp, token: &str, body: &Value) -> (u16, Value) {
    app.post_json("/api/ebs/v2/zcloud", body, Some(token)).await
}

/// The host acknowledges every pending create: its machines are online.
async fn host_makes_them(app: &TestApp, secret: &str) {
    let (_, b) = heartbeat(app, secret, json!({})).await;
    let acks: Vec<Value> = b["data"]["commands"].as_array().unwrap().iter().filter(|c| c["kind"] == "zcloud_create").map(|c| json!({"id": c["id"], "ok": true})).collect();
    let (s, b) = heartbeat(app, secret, json!({"acks": acks})).await;
    assert_eq!(s, 200, "{b}");
}

async fn notification_kinds(app: &TestApp, token: &str) -> Vec<String> {
    let (_, n) = app.get_auth("/api/ebs/v1/notifications", token).await;
    n["data"]["items"].as_array().unwrap().iter().map(|i| i["kind"].as_str().unwrap().to_string()).collect()
}

async fn rentals_on(app: &TestApp, host: &str, token: &str) -> (u16, Value) {
    app.get_auth(&format!("/api/ebs/v2/devices/{host}/zcloud-rentals"), token).await
}

/// Alice offers her server group at 16 coins an hour; Bob has 100 coins.
async fn market() -> (TestApp, String, String, String, String) {
    let app = TestApp::spawn_with(|c| {
        c.billing.signup_bonus = Coins::from_cents(0);
        c.billing.market_fee_percent = 10;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    zmarket::billing::issuance::grant_by_email(&app.state.db, "bob@example.com", Coins::from_cents(10_000), "test").await.unwrap();
    let (host, secret) = bound_device(&app, &alice, "server group", host_spec()).await;
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{host}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 1600}), &alice).await;
    assert_eq!(s, 200, "{b}");
    (app, alice, bob, host, secret)
}

#[tokio::test]
async fn a_machine_on_another_owners_host_is_held_charged_and_ended_by_the_host_owner() {
    let _clock = CLOCK.lock().await;
    let (app, alice, bob, host, secret) = market().await;

    // More than the wallet holds: 409 with the amounts, in English and Chinese, and nothing made.
    let big = ask("big", 8, 4, 720);
    let (s, b) = create(&app, &bob, &big).await;
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["data"], json!({"available": 10000, "needed": 1600 * 720}), "four of four H100s: the whole host's price");
    assert!(b["msg"].as_str().unwrap().starts_with("Insufficient balance"), "{b}");
    let zh = app.client.post(app.url("/api/ebs/v2/zcloud")).bearer_auth(&bob).header("Accept-Language", "zh-CN").json(&big).send().await.unwrap();
    let (s, b) = json_of(zh).await;
    assert_eq!(s, 409);
    assert!(!b["msg"].as_str().unwrap().is_ascii(), "a Chinese message: {b}");
    let (_, b) = app.get_auth("/api/ebs/v2/devices", &bob).await;
    assert_eq!(b["data"]["total"], 0, "nothing was made: {b}");
    assert_eq!(wallet(&app, &bob).await, (10_000, 0, 10_000));
    let (s, b) = create(&app, &bob, &ask("vm", 8, 0, 0)).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("hours")));
    verified(&app).await;

    // Half the cores for 2 hours: 8 coins an hour (the largest share taken), 16 held.
    let (s, b) = create(&app, &bob, &ask("bob vm", 8, 0, 2)).await;
    assert_eq!(s, 200, "{b}");
    let vm = b["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(b["data"]["host_id"], host.as_str());
    assert_eq!(wallet(&app, &bob).await, (10_000, 1600, 8400));
    verified(&app).await;

    // On her own host Alice pays nothing (she has no coins at all).
    let (s, b) = create(&app, &alice, &ask("alice vm", 4, 0, 2)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["host_id"], host.as_str());
    assert_eq!(wallet(&app, &alice).await, (0, 0, 0));

    // The host's owner sees Bob's machine (not her own) with its price; Bob cannot list her host.
    let (s, b) = rentals_on(&app, &host, &alice).await;
    assert_eq!(s, 200, "{b}");
    let items = b["data"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{b}");
    assert_eq!((items[0]["machine_id"].as_str(), items[0]["status"].as_str(), items[0]["price_per_hour"].as_i64()), (Some(vm.as_str()), Some("running"), Some(800)));
    assert_eq!((items[0]["renter_kind"].as_str(), items[0]["cpu_cores"].as_i64(), items[0]["hours"].as_i64()), (Some("user"), Some(8), Some(2)));
    let (s, _) = rentals_on(&app, &host, &bob).await;
    assert_eq!(s, 404);
    let (s, _) = app.post_json(&format!("/api/ebs/v2/devices/{host}/zcloud-rentals/{vm}/end"), &json!({}), Some(&bob)).await;
    assert_eq!(s, 404, "only the host's owner ends it");

    // Not charged while it is being made; then by the second, the host's owner paid less 10%.
    meter_at(&app, &secret, 5).await;
    assert_eq!(wallet(&app, &bob).await.0, 10_000);
    host_makes_them(&app, &secret).await;
    meter_at(&app, &secret, 5).await;
    assert_eq!(wallet(&app, &bob).await, (10_000 - 66, 1600 - 66, 8400), "5 minutes at 8 coins an hour");
    assert_eq!(wallet(&app, &alice).await.0, 66 - 6);
    // The same seconds are never charged twice.
    meter(&app).await;
    assert_eq!(wallet(&app, &bob).await.0, 10_000 - 66);
    verified(&app).await;

    // Alice ends it: Bob is told, it keeps running through the notice (15 minutes) …
    let (s, b) = app.post_json(&format!("/api/ebs/v2/devices/{host}/zcloud-rentals/{vm}/end"), &json!({}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["status"], "ending");
    assert!(b["data"]["stop_at"].is_string(), "{b}");
    let (s, b) = app.post_json(&format!("/api/ebs/v2/devices/{host}/zcloud-rentals/{vm}/end"), &json!({}), Some(&alice)).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("This Z-CLOUD machine is already being stopped")));
    assert!(notification_kinds(&app, &bob).await.contains(&"zcloud_ending".to_string()));
    let (_, n) = app.get_auth("/api/ebs/v1/notifications", &bob).await;
    let ending = n["data"]["items"].as_array().unwrap().iter().find(|i| i["kind"] == "zcloud_ending").unwrap().clone();
    assert!(ending["body"].as_str().unwrap().contains("bob vm"), "{ending}");
    let (_, b) = rentals_on(&app, &host, &alice).await;
    assert_eq!(b["data"][0]["status"], "ending");
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{vm}"), &bob).await;
    assert_eq!(s, 200, "still there during the notice");

    // … then it is stopped: removed from the host, charged up to the stop, the hold's rest back.
    assert_eq!(meter_at(&app, &secret, 60).await, 1);
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{vm}"), &bob).await;
    assert_eq!(s, 404);
    let (_, b) = rentals_on(&app, &host, &alice).await;
    assert_eq!(b["data"], json!([]));
    let (balance, held, available) = wallet(&app, &bob).await;
    assert_eq!((held, available), (0, balance));
    let billed = 10_000 - balance;
    // 20 minutes at 8 coins an hour, the fraction of a cent of the first 5 carried.
    assert!((266..=267).contains(&billed), "charged up to the stop (15 minutes after the end), not to the meter's run: {billed}");
    assert_eq!(wallet(&app, &alice).await.0, billed - billed * 10 / 100, "the fee is exact over the rental");
    let (_, b) = heartbeat(&app, &secret, json!({})).await;
    assert!(b["data"]["commands"].as_array().unwrap().iter().any(|c| c["kind"] == "zcloud_delete" && c["payload"]["machine_id"] == vm.as_str()), "{b}");
    assert!(notification_kinds(&app, &bob).await.contains(&"zcloud_ended".to_string()));
    // Nothing more is charged.
    meter_at(&app, &secret, 10).await;
    assert_eq!(wallet(&app, &bob).await.0, balance);
    verified(&app).await;
}

#[tokio::test]
async fn a_withdrawn_host_takes_no_new_machines_and_gives_notice_to_running_ones() {
    let _clock = CLOCK.lock().await;
    let (app, alice, bob, host, secret) = market().await;
    let (s, b) = create(&app, &bob, &ask("bob vm", 2, 1, 3)).await;
    assert_eq!(s, 200, "{b}");
    let vm = b["data"]["id"].as_str().unwrap().to_string();
    // One H100 of four: a quarter of the host, 4 coins an hour, 12 held.
    assert_eq!(wallet(&app, &bob).await, (10_000, 1200, 8800));
    host_makes_them(&app, &secret).await;

    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{host}/sharing"), &json!({"mode": "manual", "rentable": false}), &alice).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = create(&app, &bob, &ask("another", 1, 0, 1)).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("No server has enough free capacity")));
    let (_, b) = rentals_on(&app, &host, &alice).await;
    assert_eq!((b["data"][0]["machine_id"].as_str(), b["data"][0]["status"].as_str()), (Some(vm.as_str()), Some("ending")), "{b}");
    assert!(notification_kinds(&app, &bob).await.contains(&"zcloud_ending".to_string()));

    assert_eq!(meter_at(&app, &secret, 20).await, 1);
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{vm}"), &bob).await;
    assert_eq!(s, 404);
    let (balance, held, _) = wallet(&app, &bob).await;
    assert_eq!(held, 0);
    assert!(balance < 10_000, "the minutes up to the stop are paid");
    verified(&app).await;
}

/// Suspending the host's owner withdraws the host as the owner's own withdrawal does: the running
/// machines of others get the notice, and no new one is placed on it.
#[tokio::test]
async fn suspending_the_hosts_owner_gives_notice_to_the_machines_rented_on_it() {
    let _clock = CLOCK.lock().await;
    let (app, alice, bob, _host, secret) = market().await;
    let (s, b) = create(&app, &bob, &ask("bob vm", 2, 1, 3)).await;
    assert_eq!(s, 200, "{b}");
    let vm = b["data"]["id"].as_str().unwrap().to_string();
    host_makes_them(&app, &secret).await;
    let op = app.signed_in("op@example.com").await;
    let (ok, out, err) = cli(&app, &["operator", "grant", "--email", "op@example.com"]);
    assert!(ok, "{out}{err}");
    let (_, profile) = app.get_auth("/api/iam/v1/account/profile", &alice).await;
    let alice_id = profile["data"]["id"].as_str().unwrap().to_string();
    let (s, b) = app.post_json(&format!("/api/ops/v1/users/{alice_id}/suspend"), &json!({"reason": "spam"}), Some(&token_of(&op))).await;
    assert_eq!(s, 200, "{b}");

    assert!(notification_kinds(&app, &bob).await.contains(&"zcloud_ending".to_string()));
    let stored = zmarket::db::entity::zcloud_rentals::Entity::find_by_id(vm.clone()).one(&app.state.db).await.unwrap().unwrap();
    assert_eq!(stored.status, zmarket::db::enums::ZcloudRentalStatus::Ending);
    assert!(stored.stop_at.is_some());
    let (s, b) = create(&app, &bob, &ask("another", 1, 0, 1)).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("No server has enough free capacity")));
    verified(&app).await;
}

#[tokio::test]
async fn the_host_and_its_owners_account_go_with_a_strangers_machine_running() {
    let _clock = CLOCK.lock().await;
    let (app, alice, bob, host, secret) = market().await;
    let (s, b) = create(&app, &bob, &ask("bob vm", 4, 0, 2)).await;
    assert_eq!(s, 200, "{b}");
    let vm = b["data"]["id"].as_str().unwrap().to_string();
    host_makes_them(&app, &secret).await;
    meter_at(&app, &secret, 10).await;
    assert_eq!(wallet(&app, &bob).await.0, 10_000 - 66);

    // Her own machine still keeps the host (she deletes it herself) …
    let (s, b) = create(&app, &alice, &ask("alice vm", 2, 0, 1)).await;
    assert_eq!(s, 200, "{b}");
    let own = b["data"]["id"].as_str().unwrap().to_string();
    let (s, b) = app.delete_json(&format!("/api/ebs/v2/devices/{host}"), &json!({}), &alice).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("Delete the Z-CLOUD machines running on this server first")));
    assert_eq!(wallet(&app, &bob).await.1, 800 - 66, "a refused unlink ends nothing");
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{own}"), &json!({}), &alice).await;
    assert_eq!(s, 200);

    // … Bob's does not: it ends at once, settled, and Bob is told.
    let (s, b) = app.delete_json(&format!("/api/ebs/v2/devices/{host}"), &json!({}), &alice).await;
    assert_eq!(s, 200, "{b}");
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{vm}"), &bob).await;
    assert_eq!(s, 404);
    let (balance, held, _) = wallet(&app, &bob).await;
    assert_eq!((balance, held), (10_000 - 66, 0));
    assert!(notification_kinds(&app, &bob).await.contains(&"zcloud_ended".to_string()));
    verified(&app).await;

    // Nothing blocks her account's deletion any more.
    let (s, b) = app.delete_json("/api/iam/v1/account", &json!({"password": PASSWORD}), &alice).await;
    assert_eq!(s, 200, "{b}");
    pass(Duration::minutes(30));
    assert_eq!(meter(&app).await, 0);
    assert_eq!(wallet(&app, &bob).await.0, 10_000 - 66);
}

#[tokio::test]
async fn the_renter_deleting_the_machine_settles_it() {
    let _clock = CLOCK.lock().await;
    let (app, alice, bob, host, secret) = market().await;
    let (s, b) = create(&app, &bob, &ask("bob vm", 4, 0, 2)).await;
    assert_eq!(s, 200, "{b}");
    let vm = b["data"]["id"].as_str().unwrap().to_string();
    host_makes_them(&app, &secret).await;
    meter_at(&app, &secret, 60).await;
    assert_eq!(wallet(&app, &bob).await, (9600, 400, 9200));
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{vm}"), &json!({}), &bob).await;
    assert_eq!(s, 200);
    assert_eq!(wallet(&app, &bob).await, (9600, 0, 9600));
    assert_eq!(wallet(&app, &alice).await.0, 360);
    let (_, b) = rentals_on(&app, &host, &alice).await;
    assert_eq!(b["data"], json!([]));
    verified(&app).await;
}

/// Issue 39: a silence of the host is never charged, whether the meter runs during it or not,
/// and the seconds seen on either side of it are, to the second.
#[tokio::test]
async fn a_silence_of_the_host_is_not_charged() {
    let _clock = CLOCK.lock().await;
    let (app, _alice, bob, _host, secret) = market().await;
    // A quarter of the host: 4 coins an hour.
    let (s, b) = create(&app, &bob, &ask("bob vm", 4, 0, 2)).await;
    assert_eq!(s, 200, "{b}");
    host_makes_them(&app, &secret).await;
    meter_at(&app, &secret, 5).await;
    assert_eq!(wallet(&app, &bob).await.0, 10_000 - 33, "5 minutes");
    // The host says nothing for 20 minutes; the meter runs meanwhile; then it reports again.
    pass(Duration::minutes(20));
    meter(&app).await;
    assert_eq!(wallet(&app, &bob).await.0, 10_000 - 33);
    let (s, b) = heartbeat(&app, &secret, json!({})).await;
    assert_eq!(s, 200, "{b}");
    meter_at(&app, &secret, 4).await;
    // 9 minutes seen in all, the fraction of a cent of the first 5 carried: 60 cents.
    assert_eq!(wallet(&app, &bob).await.0, 10_000 - 60);
    verified(&app).await;
}
