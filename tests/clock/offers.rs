//! An offer's reliability (issue 39, docs/api.md §Offers and the meter): the share of the last 7
//! and 30 days the market heard a box's beats since it was bound, one mark an hour; none on its
//! first day; offers sorted by it and filtered by a minimum.

use chrono::Duration;
use serde_json::{Value, json};

use crate::boxes::{beat, bound_device, box_spec};
use crate::common::*;
use crate::{CLOCK, market, pass};

async fn offers(app: &TestApp, token: &str, query: &str) -> Vec<Value> {
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/rent-options?app_id=grafana{query}"), token).await;
    assert_eq!(s, 200, "{b}");
    b["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn reliability_is_the_share_of_hours_the_box_was_heard() {
    let _clock = CLOCK.lock().await;
    let app = market(|_| {}).await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let (steady, steady_secret) = bound_device(&app, &bob, "Z-BOX", box_spec(8, 0)).await;
    let (patchy, patchy_secret) = bound_device(&app, &bob, "Z-BOX", box_spec(8, 0)).await;
    for (id, price) in [(&steady, 500), (&patchy, 100)] {
        let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{id}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": price}), &bob).await;
        assert_eq!(s, 200, "{b}");
    }
    // Both beat every hour for a day; then the patchy box is silent for a day; both beat at the end.
    for hour in 0..48 {
        beat(&app, &steady_secret, json!([]), json!([])).await;
        if hour < 24 {
            beat(&app, &patchy_secret, json!([]), json!([])).await;
        }
        if hour == 12 {
            // Within its first day a box has no figure.
            let list = offers(&app, &alice, "").await;
            assert!(list.iter().all(|o| o["reliability"] == json!({"uptime_7d": null, "uptime_30d": null})), "{list:?}");
        }
        pass(Duration::hours(1));
    }
    beat(&app, &steady_secret, json!([]), json!([])).await;
    beat(&app, &patchy_secret, json!([]), json!([])).await;

    // 49 hours since each was bound (the hour it was bound counts): heard 49 and 25 of them.
    let list = offers(&app, &alice, "&sort=reliability").await;
    let ids: Vec<&str> = list.iter().map(|o| o["device_id"].as_str().unwrap()).collect();
    assert_eq!(ids, [steady.as_str(), patchy.as_str()], "most reliable first, whatever the price");
    assert_eq!(list[0]["reliability"], json!({"uptime_7d": 1.0, "uptime_30d": 1.0}));
    let patchy_30 = list[1]["reliability"]["uptime_30d"].as_f64().unwrap();
    assert!((patchy_30 - 25.0 / 49.0).abs() < 1e-9, "{}", list[1]["reliability"]);
    assert_eq!(list[1]["reliability"]["uptime_7d"], list[1]["reliability"]["uptime_30d"]);
    // Cheapest first by default; a minimum leaves the patchy box out.
    assert_eq!(offers(&app, &alice, "").await[0]["device_id"], patchy.as_str());
    let reliable = offers(&app, &alice, "&min_reliability=0.9").await;
    assert_eq!(reliable.iter().map(|o| o["device_id"].as_str().unwrap()).collect::<Vec<_>>(), [steady.as_str()]);
}
