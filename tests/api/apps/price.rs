//! One price (issue 24, docs/api.md "Money, shown as it is charged"): the market shows, per app, the
//! cheapest online rentable offer that fits it and how many there are; the details list the
//! offers; a rent charges exactly the offer chosen, and one whose price changed since it was
//! shown is refused with nothing held; an offline box is no offer.

use serde_json::{Value, json};
use zmarket::coins::Coins;

use super::{box_spec, zh_post};
use crate::common::*;
use crate::devices::bound_device;

/// The market's answer for `id` (the details, with its offers) once `ready` holds for it: the
/// market follows device changes by itself, a moment after them.
async fn details_when(app: &TestApp, id: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let path = format!("/api/ebs/v1/market/applications/{id}?language=en");
    let mut last = Value::Null;
    for _ in 0..200 {
        let (s, b) = app.get_json(&path).await;
        assert_eq!(s, 200, "{b}");
        last = b["data"].clone();
        if ready(&last) {
            return last;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the market never showed what was expected for {id}: {last}");
}

fn offers_of(details: &Value) -> Vec<(String, i64)> {
    details["offers"].as_array().unwrap().iter().map(|o| (o["device_name"].as_str().unwrap().to_string(), o["price_per_hour"].as_i64().unwrap())).collect()
}

async fn share(app: &TestApp, token: &str, device: &str, price: i64) {
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{device}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": price}), token).await;
    assert_eq!(s, 200, "{b}");
}

async fn named(app: &TestApp, token: &str, device: &str, name: &str) {
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{device}"), &json!({"name": name}), token).await;
    assert_eq!(s, 200, "{b}");
}

async fn wallet(app: &TestApp, token: &str) -> Value {
    let (s, b) = app.get_auth("/api/billing/v1/wallet", token).await;
    assert_eq!(s, 200, "{b}");
    b["data"].clone()
}

/// The list and search answers show the same price as the details.
async fn listed_price(app: &TestApp, id: &str, lang: &str) -> Value {
    let (s, b) = app.get_json(&format!("/api/ebs/v1/market/search?keyword={id}&language={lang}")).await;
    assert_eq!(s, 200, "{b}");
    let item = b["data"]["items"].as_array().unwrap().iter().find(|a| a["id"] == id).cloned().unwrap_or_else(|| panic!("{id} not found: {b}"));
    item["price_per_hour"].clone()
}

#[tokio::test]
async fn the_market_shows_the_cheapest_fitting_online_offer_and_the_rent_charges_the_one_chosen() {
    let app = TestApp::spawn_with(|c| c.billing.signup_bonus = Coins::from_cents(0)).await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let carol = token_of(&app.signed_in("carol@example.com").await);
    let dave = token_of(&app.signed_in("dave@example.com").await);
    zmarket::billing::issuance::grant_by_email(&app.state.db, "alice@example.com", Coins::from_cents(5000), "test").await.unwrap();

    // No box offered: no price, no offers.
    let d = details_when(&app, "terraria-server", |_| true).await;
    assert_eq!(d["price_per_hour"], json!({"from": null, "offers": 0}));
    assert_eq!(d["offers"], json!([]));
    assert_eq!(listed_price(&app, "terraria-server", "en").await, json!({"from": null, "offers": 0}));

    // Terraria needs 2 cores: Bob's and Dave's boxes fit it, Carol's 1-core box is cheaper but
    // does not; Grafana (1 core) fits all three.
    let (b_dev, _) = bound_device(&app, &bob, "Z-BOX", box_spec(8, 0)).await;
    let (c_dev, _) = bound_device(&app, &carol, "Z-BOX", box_spec(1, 0)).await;
    let (d_dev, _) = bound_device(&app, &dave, "Z-BOX", box_spec(4, 0)).await;
    named(&app, &bob, &b_dev, "Bob box").await;
    named(&app, &carol, &c_dev, "Carol box").await;
    named(&app, &dave, &d_dev, "Dave box").await;
    share(&app, &bob, &b_dev, 120).await;
    share(&app, &carol, &c_dev, 50).await;
    share(&app, &dave, &d_dev, 200).await;
    let d = details_when(&app, "terraria-server", |d| d["price_per_hour"]["offers"] == 2).await;
    assert_eq!(d["price_per_hour"], json!({"from": 120, "offers": 2}));
    assert_eq!(offers_of(&d), vec![("Bob box".to_string(), 120), ("Dave box".to_string(), 200)]);
    assert_eq!(d["offers"][0]["device_id"], b_dev.as_str());
    assert_eq!(listed_price(&app, "terraria-server", "en").await, json!({"from": 120, "offers": 2}));
    assert_eq!(listed_price(&app, "terraria-server", "zh").await, json!({"from": 120, "offers": 2}));
    let g = details_when(&app, "grafana", |d| d["price_per_hour"]["offers"] == 3).await;
    assert_eq!(g["price_per_hour"], json!({"from": 50, "offers": 3}));

    // The Rent dialog's offers are the market's (Alice owns no box), cheapest first.
    let (s, b) = app.get_auth("/api/rmp/v1/apps/rent-options?app_id=terraria-server", &alice).await;
    assert_eq!(s, 200, "{b}");
    let fitting: Vec<i64> = b["data"].as_array().unwrap().iter().filter(|f| f["fits"] == true).map(|f| f["price_per_hour"].as_i64().unwrap()).collect();
    assert_eq!(fitting, vec![120, 200]);

    // Alice rents Dave's offer for 2 hours at the price she saw: exactly 2 × 2.00 is held.
    let rent = |device: &str, price: i64| json!({"app_id": "terraria-server", "device_id": device, "hours": 2, "price_per_hour": price});
    let (s, b) = app.post_json("/api/rmp/v1/apps/rent", &rent(&d_dev, 200), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["rental"]["price_per_hour"], 200);
    let w = wallet(&app, &alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(5000), Some(400)));

    // Bob raises his price after Alice saw 1.20: her rent is refused, nothing more is held.
    share(&app, &bob, &b_dev, 150).await;
    let (s, b) = app.post_json("/api/rmp/v1/apps/rent", &rent(&b_dev, 120), Some(&alice)).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("This offer's price changed: it is now 1.50 coins per hour. Nothing was held; look at the offers again")));
    assert_eq!(b["data"]["price_per_hour"], 150);
    let (s, b) = zh_post(&app, "/api/rmp/v1/apps/rent", &rent(&b_dev, 120), &alice).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("该报价已变更：现为每小时 1.50 币。未冻结任何金额，请重新查看报价")));
    let w = wallet(&app, &alice).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64()), (Some(5000), Some(400)));
    let (_, list) = app.get_auth("/api/rmp/v1/apps", &alice).await;
    assert_eq!(list["data"]["total"], 1, "no installation was made: {list}");
    // A negative price is bad input.
    let (s, b) = app.post_json("/api/rmp/v1/apps/rent", &rent(&b_dev, -1), Some(&alice)).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("price_per_hour")));

    // Dave's box now holds Terraria: only Bob's offer is left, at its new price.
    let d = details_when(&app, "terraria-server", |d| d["price_per_hour"] == json!({"from": 150, "offers": 1})).await;
    assert_eq!(offers_of(&d), vec![("Bob box".to_string(), 150)]);
    // At that price the rent goes through and holds exactly it.
    let (s, b) = app.post_json("/api/rmp/v1/apps/rent", &rent(&b_dev, 150), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["rental"]["price_per_hour"], 150);
    assert_eq!(wallet(&app, &alice).await["held"], 400 + 300);
    let d = details_when(&app, "terraria-server", |d| d["price_per_hour"]["offers"] == 0).await;
    assert_eq!(d["price_per_hour"], json!({"from": null, "offers": 0}));
}

#[tokio::test]
async fn an_offline_or_withdrawn_box_is_no_offer() {
    use sea_orm::{ActiveModelTrait, EntityTrait, Set};
    use zmarket::db::entity::devices;
    let app = TestApp::spawn().await;
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let carol = token_of(&app.signed_in("carol@example.com").await);
    let (b_dev, _) = bound_device(&app, &bob, "Z-BOX", box_spec(8, 0)).await;
    let (c_dev, _) = bound_device(&app, &carol, "Z-BOX", box_spec(8, 0)).await;
    share(&app, &bob, &b_dev, 80).await;
    share(&app, &carol, &c_dev, 90).await;
    details_when(&app, "grafana", |d| d["price_per_hour"] == json!({"from": 80, "offers": 2})).await;

    // Bob's box stops reporting and is marked offline: Carol's is the only offer.
    let d = devices::Entity::find_by_id(b_dev.clone()).one(&app.state.db).await.unwrap().unwrap();
    let mut a: devices::ActiveModel = d.into();
    a.last_seen_at = Set(Some(zmarket::db::now() - chrono::Duration::hours(1)));
    a.update(&app.state.db).await.unwrap();
    assert_eq!(zmarket::devices::agent_api::mark_offline(&app.state.devices).await.unwrap(), 1);
    let d = details_when(&app, "grafana", |d| d["price_per_hour"] == json!({"from": 90, "offers": 1})).await;
    assert_eq!(d["offers"][0]["device_id"], c_dev.as_str());

    // Carol withdraws hers: no offers, in every language.
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{c_dev}/sharing"), &json!({"mode": "manual", "rentable": false}), &carol).await;
    assert_eq!(s, 200, "{b}");
    details_when(&app, "grafana", |d| d["price_per_hour"] == json!({"from": null, "offers": 0})).await;
    assert_eq!(listed_price(&app, "grafana", "zh").await, json!({"from": null, "offers": 0}));
}
