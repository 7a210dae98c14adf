//! Tests that move the market's clock (`zmarket::db::move_clock_ahead`) to play hours of a rental
//! in seconds, with the box heartbeating through it: the rental meter's charges by the second, its
//! pauses, ends and grace period, and its property test; Z-CLOUD rentals and orders on the same
//! meter. The clock is one for the whole process,
//! so these live in a test binary of their own and each holds `CLOCK` while it runs.

#[allow(dead_code)]
#[path = "../api/common.rs"]
mod common;
#[allow(dead_code)]
#[path = "../api/boxes.rs"]
mod boxes;
mod meter;
mod offers;
mod orders;
mod overview;
mod rental;
mod zcloud;

use chrono::Duration;
use serde_json::Value;

use crate::boxes::beat;
use crate::common::TestApp;

/// Held by each test while it moves the clock: one test at a time.
pub static CLOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A market with no signup bonus and a 10% fee (the figures the tests count with), `adjust`ed.
pub async fn market(adjust: impl FnOnce(&mut zmarket::config::Config)) -> TestApp {
    TestApp::spawn_with(|c| {
        c.billing.signup_bonus = zmarket::coins::Coins::from_cents(0);
        c.billing.market_fee_percent = 10;
        adjust(c);
    })
    .await
}

/// The market's clock moves `d` ahead (the box says nothing meanwhile).
pub fn pass(d: Duration) {
    zmarket::db::move_clock_ahead(d);
}

/// `minutes` go by with the box beating once a minute, reporting `installations` each time.
pub async fn reporting(app: &TestApp, secret: &str, installations: Value, minutes: i64) {
    for _ in 0..minutes {
        pass(Duration::minutes(1));
        beat(app, secret, installations.clone(), serde_json::json!([])).await;
    }
}

/// The rental meter's job, run now.
pub async fn meter(app: &TestApp) {
    zmarket::apps::rental::meter(&app.state.db, zmarket::db::now(), Duration::hours(24)).await.expect("meter");
}
