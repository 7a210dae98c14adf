//! Who may rent, and what suspending a renter or a provider does to rentals. The rental's money
//! by the minute (held, charged while seen running, released) is tested with the market's clock
//! moved ahead: tests/clock/rental.rs.

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
