//! The operator's overview counts the market's fee income as the rental meter posts it: an hour of
//! a rented app at 6 coins an hour with a 10% fee puts 60 cents in today's bar of the chart.

use serde_json::json;

use crate::boxes::rented_running;
use crate::common::*;
use crate::{CLOCK, market, meter, reporting};

#[tokio::test]
async fn the_overview_shows_the_fee_income_of_each_day() {
    let _clock = CLOCK.lock().await;
    let app = market(|_| {}).await;
    let op = token_of(&app.signed_in("op@example.com").await);
    let (ok, out, err) = cli(&app, &["operator", "grant", "--email", "op@example.com"]);
    assert!(ok, "{out}{err}");
    let (_alice, _bob, _dev, secret, id) = rented_running(&app, 2).await;
    reporting(&app, &secret, json!([{"id": id, "status": "running", "url": "http://10.0.0.9:32768/"}]), 60).await;
    meter(&app).await;

    let (s, b) = app.get_auth("/api/ops/v1/overview", &op).await;
    assert_eq!(s, 200, "{b}");
    let d = &b["data"];
    assert_eq!(d["fee_income"], 60, "{b}");
    let days = d["fee_income_30d"].as_array().unwrap();
    assert_eq!(days.len(), 30);
    let today = zmarket::db::now().format("%Y-%m-%d").to_string();
    assert_eq!((days[29]["day"].as_str(), days[29]["amount"].as_i64()), (Some(today.as_str()), Some(60)), "{b}");
    assert_eq!(days.iter().map(|d| d["amount"].as_i64().unwrap()).sum::<i64>(), 60);
    // Of the 6 coins Alice paid, 5.40 went to Bob and 0.60 to the market: 60 cents left the wallets.
    assert_eq!(d["coins_in_circulation"], 2000 - 60, "{b}");
}
