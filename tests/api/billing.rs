//! The wallet: signup bonus, grants (and the CLI), holds (capture, release, expiry), refusals
//! below zero, Idempotency-Key retries over HTTP, concurrency on one account, company scoping,
//! bills, runway notices, deletion check, and `ledger verify` (after every test that moves
//! coins, and against corrupted rows). The seeded simulation is in billing/sim.rs.

mod http;
mod fees;
mod topup;
mod sim;

use chrono::Duration;
use reqwest::header::HeaderMap;
use sea_orm::{ConnectionTrait, EntityTrait};
use zmarket::db::entity::ledger_holds as holds;
use serde_json::{Value, json};
use zmarket::billing::ledger;
use zmarket::billing::ledger::{AccountRef, CaptureSpec, HoldSpec, Reference, Split, market_splits};
use zmarket::coins::Coins;
use zmarket::db::enums::HoldStatus;
use zmarket::error::{AppError, Msg};
use zmarket::lang::Lang;

use crate::common::{TestApp, cli, seed_company, token_of, user_id_of};
use crate::scenario::{says, with};

const WALLET: &str = "/api/billing/v1/wallet";
const ENTRIES: &str = "/api/billing/v1/wallet/entries";
const BILLS: &str = "/api/billing/v1/bills";
const FUND: &str = "/api/billing/v1/wallet/fund";

/// `zmarket ledger verify` on the app's database: every invariant holds.
pub async fn verified(app: &TestApp) {
    if let Err(e) = zmarket::billing::verify::verify(&app.state.db).await {
        panic!("{e}");
    }
}

/// An app whose new accounts get no signup bonus (so amounts are exact).
/// The configuration without a signup bonus, so a wallet holds only what a test puts there.
fn without_bonus(c: &mut zmarket::config::Config) {
    c.billing.signup_bonus = Coins::from_cents(0);
}

async fn no_bonus() -> TestApp {
    TestApp::spawn_with(without_bonus).await
}

async fn grant(app: &TestApp, email: &str, cents: i64) -> i64 {
    zmarket::billing::issuance::grant_by_email(&app.state.db, email, Coins::from_cents(cents), "test grant").await.expect("grant")
}

async fn wallet(app: &TestApp, token: &str) -> Value {
    let (s, body) = app.get_auth(WALLET, token).await;
    assert_eq!(s, 200, "{body}");
    body["data"].clone()
}

/// POST with an optional Idempotency-Key and language; answers status, body and headers.
async fn post(app: &TestApp, path: &str, body: &Value, token: &str, key: Option<&str>, lang: &str) -> (u16, Value, HeaderMap) {
    let mut req = app.client.post(app.url(path)).bearer_auth(token).header("Accept-Language", lang).json(body);
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    let res = req.send().await.expect("request");
    let (status, headers) = (res.status().as_u16(), res.headers().clone());
    let text = res.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")), headers)
}

fn hold_spec(account: &AccountRef, amount: i64, key: &str) -> HoldSpec {
    HoldSpec {
        account: account.clone(),
        amount,
        key: key.into(),
        // Not a rental or an order: those are captured with the exact fee (capture_market).
        reference: Reference::new("test", key),
        memo: "test hold".into(),
        expires_at: zmarket::db::now() + Duration::hours(2),
        burn_per_hour: 0,
    }
}

fn conflict_msg(e: &AppError) -> Msg {
    assert_eq!(e.status(), 409, "expected a 409, got {e:?}");
    e.msg()
}

#[tokio::test]
async fn the_signup_bonus_is_credited_once_per_verified_account() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("a@example.com").await;
    let w = wallet(&app, &token_of(&a)).await;
    assert_eq!(w, json!({"balance": 10000, "held": 0, "available": 10000, "income_total": 10000, "expense_total": 0, "unbilled": 0, "runway_secs": null}));
    let (_, body) = app.get_auth(ENTRIES, &token_of(&a)).await;
    assert_eq!(body["data"]["total"], 1);
    let e = &body["data"]["items"][0];
    assert_eq!((e["kind"].as_str(), e["amount"].as_i64(), e["balance_after"].as_i64(), e["ref_type"].as_str()), (Some("income"), Some(10000), Some(10000), Some("signup_bonus")));
    // Opening the link again, or the ledger asked again, gives nothing more.
    let mail = app.mails().await.into_iter().find(|m| m.contains("To: a@example.com")).unwrap();
    let token = crate::common::link_in(&mail).split("token=").nth(1).unwrap().to_string();
    let (s, _) = app.get_json(&format!("/api/iam/v1/verify-email?token={token}")).await;
    assert_eq!(s, 200);
    let id = user_id_of(&app, &a).await;
    let again = ledger::signup_bonus(&app.state.db, &id.as_str().into(), 10000).await.unwrap().unwrap();
    assert!(again.replayed);
    assert_eq!(wallet(&app, &token_of(&a)).await["balance"], 10000);
    verified(&app).await;

    // 0 disables it; without email verification it comes at sign-up.
    let off = no_bonus().await;
    let b = off.signed_in("b@example.com").await;
    assert_eq!(wallet(&off, &token_of(&b)).await["balance"], 0);
    let direct = TestApp::spawn_with(|c| {
        c.auth.email_verification = false;
        c.billing.signup_bonus = Coins::parse("2.50").unwrap();
    })
    .await;
    let (s, body) = direct
        .post_json("/api/iam/v1/register", &json!({"email": "c@example.com", "password": crate::common::PASSWORD, "confirm_password": crate::common::PASSWORD, "agree": true}), None)
        .await;
    assert_eq!(s, 200, "{body}");
    let c = direct.login("c@example.com", crate::common::PASSWORD).await;
    assert_eq!(wallet(&direct, &token_of(&c)).await["balance"], 250);
    verified(&direct).await;
}

#[tokio::test]
async fn the_bonus_is_configured_in_coins() {
    let c = zmarket::config::Config::from_toml("[billing]\nsignup_bonus = 100\n").unwrap();
    assert_eq!(c.billing.signup_bonus.cents(), 10000);
    let c = zmarket::config::Config::from_toml("[billing]\nsignup_bonus = \"12.50\"\n").unwrap();
    assert_eq!(c.billing.signup_bonus.cents(), 1250);
    assert_eq!(zmarket::config::Config::default().billing.signup_bonus.cents(), 10000);
    for bad in ["signup_bonus = -1", "signup_bonus = \"1.234\"", "market_fee_percent = 101"] {
        let e = zmarket::config::Config::from_toml(&format!("[billing]\n{bad}\n")).unwrap_err().to_string();
        assert!(e.contains("billing."), "{bad}: {e}");
    }
}

#[tokio::test]
async fn coins_grant_and_ledger_verify_on_the_command_line() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("a@example.com").await;
    let (ok, out, err) = cli(&app, &["coins", "grant", "--email", "A@Example.com", "--amount", "12.50", "--memo", "welcome"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("granted 12.50 coins to a@example.com; balance: 112.50 coins"), "{out}");
    let (_, body) = app.get_auth(&format!("{ENTRIES}?kind=income"), &token_of(&a)).await;
    let e = &body["data"]["items"][0];
    assert_eq!((e["amount"].as_i64(), e["memo"].as_str(), e["ref_type"].as_str()), (Some(1250), Some("welcome"), Some("grant")));
    for (args, says) in [
        (vec!["--email", "nobody@example.com", "--amount", "5"], "no account has the email nobody@example.com"),
        (vec!["--email", "a@example.com", "--amount", "0"], "positive number of coins"),
        (vec!["--email", "a@example.com", "--amount", "-3"], "positive number of coins"),
        (vec!["--email", "a@example.com", "--amount", "1.234"], "positive number of coins"),
        (vec!["--email", "a@example.com", "--amount", "ten"], "positive number of coins"),
    ] {
        let mut full = vec!["coins", "grant"];
        full.extend(args);
        let (ok, out, err) = cli(&app, &full);
        assert!(!ok, "{full:?} succeeded: {out}");
        assert!(err.contains(says), "{full:?}: {err}");
    }
    assert_eq!(wallet(&app, &token_of(&a)).await["balance"], 11250);
    let (ok, out, err) = cli(&app, &["ledger", "verify"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("every invariant holds") && out.contains("2 transfers"), "{out}");

    // A corrupted entry: the command fails and names the breach.
    let db = &app.state.db;
    db.execute_unprepared("UPDATE ledger_entries SET amount = amount + 1 WHERE ref_type = 'grant' AND amount > 0").await.unwrap();
    let (ok, _, err) = cli(&app, &["ledger", "verify"]);
    assert!(!ok);
    assert!(err.contains("ledger breach: a transfer whose entries do not sum to zero"), "{err}");
    db.execute_unprepared("UPDATE ledger_entries SET amount = amount - 1 WHERE ref_type = 'grant' AND amount > 0").await.unwrap();
    verified(&app).await;
}

/// Each corruption is caught by `ledger verify`, and undone before the next.
#[tokio::test]
async fn ledger_verify_catches_corrupted_rows() {
    let app = no_bonus().await;
    let (a, p) = (app.signed_in("a@example.com").await, app.signed_in("p@example.com").await);
    grant(&app, "a@example.com", 5000).await;
    let (ua, up) = (AccountRef::User(user_id_of(&app, &a).await.into()), AccountRef::User(user_id_of(&app, &p).await.into()));
    let h = ledger::hold(&app.state.db, hold_spec(&ua, 3000, "h1")).await.unwrap().hold;
    let spec = CaptureSpec { hold_id: h.id.clone(), amount: 1000, splits: market_splits(1000, up, 10), key: "c1".into(), memo: "m".into(), metered: true };
    ledger::capture(&app.state.db, spec).await.unwrap();
    verified(&app).await;
    let cases = [
        ("UPDATE ledger_accounts SET balance = balance + 5 WHERE kind = 'market_fee'", "an account whose cached balance is not the sum of its entries", "UPDATE ledger_accounts SET balance = balance - 5 WHERE kind = 'market_fee'"),
        ("UPDATE ledger_accounts SET held = held - 1 WHERE kind = 'user' AND held > 0", "cached held amount", "UPDATE ledger_accounts SET held = held + 1 WHERE kind = 'user' AND held > 0"),
        ("UPDATE ledger_entries SET balance_after = balance_after + 1 WHERE ref_type = 'grant' AND amount > 0", "running sum", "UPDATE ledger_entries SET balance_after = balance_after - 1 WHERE ref_type = 'grant' AND amount > 0"),
        ("UPDATE ledger_holds SET status = 'released', resolved_at = created_at", "a hold whose amounts or state do not add up", "UPDATE ledger_holds SET status = 'pending', resolved_at = NULL"),
        ("UPDATE ledger_holds SET captured = captured + 1", "a hold whose captured amount is not what its captures took", "UPDATE ledger_holds SET captured = captured - 1"),
        ("UPDATE bills SET amount = amount + 1", "a bill (billed or unbilled) that is not the metered usage posted to it", "UPDATE bills SET amount = amount - 1"),
        ("UPDATE ledger_transfers SET amount = amount + 1 WHERE kind = 'capture'", "not the sum of its credits", "UPDATE ledger_transfers SET amount = amount - 1 WHERE kind = 'capture'"),
    ];
    for (corrupt, says, undo) in cases {
        app.state.db.execute_unprepared(corrupt).await.unwrap();
        let e = zmarket::billing::verify::verify(&app.state.db).await.expect_err(corrupt).to_string();
        assert!(e.contains(says), "{corrupt}: {e}");
        app.state.db.execute_unprepared(undo).await.unwrap();
        verified(&app).await;
    }
}

#[tokio::test]
async fn hold_capture_with_the_market_fee_then_release_once() {
    let app = no_bonus().await;
    let (a, p) = (app.signed_in("a@example.com").await, app.signed_in("p@example.com").await);
    grant(&app, "a@example.com", 10_000).await;
    let (ua, up) = (AccountRef::User(user_id_of(&app, &a).await.into()), AccountRef::User(user_id_of(&app, &p).await.into()));
    let db = &app.state.db;
    let spec = HoldSpec { burn_per_hour: 1200, ..hold_spec(&ua, 3000, "rental:r1:hold") };
    let held = ledger::hold(db, spec.clone()).await.unwrap();
    assert!(!held.replayed);
    assert_eq!(held.hold.status, HoldStatus::Pending);
    // 30.00 held at 12.00 an hour: the rental stops in 2 h 30 min (whatever is available besides).
    let w = wallet(&app, &token_of(&a)).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64(), w["available"].as_i64(), w["runway_secs"].as_i64()), (Some(10_000), Some(3000), Some(7000), Some(9000)));
    // The same key again is the same hold; with another amount it is refused.
    let again = ledger::hold(db, spec.clone()).await.unwrap();
    assert!(again.replayed);
    assert_eq!(again.hold.id, held.hold.id);
    let e = ledger::hold(db, HoldSpec { amount: 3100, ..spec }).await.unwrap_err();
    assert_eq!(conflict_msg(&e), Msg::IdempotencyKeyReused);
    assert_eq!(wallet(&app, &token_of(&a)).await["held"], 3000);

    let capture = |key: &str, amount: i64| CaptureSpec {
        hold_id: held.hold.id.clone(),
        amount,
        splits: market_splits(amount, up.clone(), 10),
        key: key.into(),
        memo: "Rental minute".into(),
        metered: true,
    };
    let posted = ledger::capture(db, capture("rental:r1:minute:0", 1000)).await.unwrap();
    assert_eq!(posted.entries.iter().map(|e| e.amount).sum::<i64>(), 0);
    assert_eq!(posted.entry_of(&AccountRef::MarketFee).unwrap().amount, 100);
    assert!(ledger::capture(db, capture("rental:r1:minute:0", 1000)).await.unwrap().replayed);
    let w = wallet(&app, &token_of(&a)).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64(), w["available"].as_i64(), w["expense_total"].as_i64(), w["unbilled"].as_i64()), (Some(9000), Some(2000), Some(7000), Some(1000), Some(1000)));
    let pw = wallet(&app, &token_of(&p)).await;
    assert_eq!((pw["balance"].as_i64(), pw["income_total"].as_i64()), (Some(900), Some(900)));
    // More than is left of the hold.
    let e = ledger::capture(db, capture("rental:r1:minute:1", 2001)).await.unwrap_err();
    assert_eq!(conflict_msg(&e), Msg::CaptureExceedsHold { left: 2000, asked: 2001 });
    assert_eq!(Msg::CaptureExceedsHold { left: 2000, asked: 2001 }.text(Lang::En), "The hold has only 20.00 coins left, 20.01 asked");

    let released = ledger::release(db, &held.hold.id).await.unwrap();
    assert_eq!((released.status, released.released, released.captured), (HoldStatus::Released, 2000, 1000));
    let twice = ledger::release(db, &held.hold.id).await.unwrap();
    assert_eq!((twice.status, twice.released, twice.resolved_at), (HoldStatus::Released, 2000, released.resolved_at));
    let w = wallet(&app, &token_of(&a)).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64(), w["available"].as_i64(), w["runway_secs"].clone()), (Some(9000), Some(0), Some(9000), Value::Null));
    let e = ledger::capture(db, capture("rental:r1:minute:2", 10)).await.unwrap_err();
    assert_eq!(conflict_msg(&e), Msg::HoldResolved);
    assert!(matches!(ledger::release(db, &"no-such-hold".into()).await, Err(AppError::Refused(Msg::HoldNotFound))));
    verified(&app).await;
}

#[tokio::test]
async fn partial_captures_until_the_hold_is_captured_whole() {
    let app = no_bonus().await;
    let (a, p) = (app.signed_in("a@example.com").await, app.signed_in("p@example.com").await);
    grant(&app, "a@example.com", 600).await;
    let (ua, up) = (AccountRef::User(user_id_of(&app, &a).await.into()), AccountRef::User(user_id_of(&app, &p).await.into()));
    let db = &app.state.db;
    let h = ledger::hold(db, hold_spec(&ua, 600, "h")).await.unwrap().hold;
    for (i, amount) in [100, 250, 250].into_iter().enumerate() {
        let spec = CaptureSpec { hold_id: h.id.clone(), amount, splits: vec![Split { account: up.clone(), amount }], key: format!("c{i}"), memo: String::new(), metered: false };
        ledger::capture(db, spec).await.unwrap();
    }
    let h = holds::Entity::find_by_id(h.id.clone()).one(db).await.unwrap().unwrap();
    assert_eq!((h.status, h.captured, h.released), (HoldStatus::Captured, 600, 0));
    assert!(h.resolved_at.is_some());
    // Resolved: a release answers it as it is, a capture is refused.
    assert_eq!(ledger::release(db, &h.id).await.unwrap().status, HoldStatus::Captured);
    let spec = CaptureSpec { hold_id: h.id.clone(), amount: 1, splits: vec![Split { account: up.clone(), amount: 1 }], key: "c9".into(), memo: String::new(), metered: false };
    assert_eq!(conflict_msg(&ledger::capture(db, spec).await.unwrap_err()), Msg::HoldResolved);
    let w = wallet(&app, &token_of(&a)).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64(), w["available"].as_i64()), (Some(0), Some(0), Some(0)));
    assert_eq!(wallet(&app, &token_of(&p)).await["balance"], 600);
    verified(&app).await;
}

#[tokio::test]
async fn an_expired_hold_is_released_by_the_job() {
    let app = no_bonus().await;
    let a = app.signed_in("a@example.com").await;
    grant(&app, "a@example.com", 1000).await;
    let ua = AccountRef::User(user_id_of(&app, &a).await.into());
    let db = &app.state.db;
    let t = zmarket::db::now();
    let soon = ledger::hold(db, HoldSpec { expires_at: t + Duration::minutes(5), ..hold_spec(&ua, 300, "soon") }).await.unwrap().hold;
    let later = ledger::hold(db, HoldSpec { expires_at: t + Duration::hours(5), ..hold_spec(&ua, 200, "later") }).await.unwrap().hold;
    assert_eq!(ledger::expire_due(db, t).await.unwrap(), 0);
    assert_eq!(wallet(&app, &token_of(&a)).await["held"], 500);
    assert_eq!(ledger::expire_due(db, t + Duration::minutes(6)).await.unwrap(), 1);
    let h = holds::Entity::find_by_id(soon.id.clone()).one(db).await.unwrap().unwrap();
    assert_eq!((h.status, h.released), (HoldStatus::Expired, 300));
    assert_eq!(ledger::expire_due(db, t + Duration::minutes(6)).await.unwrap(), 0);
    let w = wallet(&app, &token_of(&a)).await;
    assert_eq!((w["held"].as_i64(), w["available"].as_i64()), (Some(200), Some(800)));
    // An expired hold cannot be captured; releasing it answers it as expired.
    let spec = CaptureSpec { hold_id: soon.id.clone(), amount: 1, splits: vec![Split { account: AccountRef::MarketFee, amount: 1 }], key: "late".into(), memo: String::new(), metered: false };
    assert_eq!(conflict_msg(&ledger::capture(db, spec).await.unwrap_err()), Msg::HoldResolved);
    assert_eq!(ledger::release(db, &soon.id).await.unwrap().status, HoldStatus::Expired);
    assert_eq!(ledger::release(db, &later.id).await.unwrap().status, HoldStatus::Released);
    verified(&app).await;
}

#[tokio::test]
async fn a_hold_or_spend_below_zero_is_refused_naming_what_is_missing() {
    let app = no_bonus().await;
    let a = app.signed_in("a@example.com").await;
    grant(&app, "a@example.com", 1250).await;
    let ua = AccountRef::User(user_id_of(&app, &a).await.into());
    let e = ledger::hold(&app.state.db, hold_spec(&ua, 3000, "big")).await.unwrap_err();
    let msg = conflict_msg(&e);
    assert_eq!(msg.text(Lang::En), "Insufficient balance: 12.50 coins available, 30.00 needed");
    assert_eq!(msg.text(Lang::Zh), "余额不足：可用 12.50 币，需要 30.00 币");
    // Nothing of the refused hold stays behind.
    assert_eq!(holds::Entity::find().all(&app.state.db).await.unwrap().len(), 0);
    // Over HTTP: a company top-up of 30.00 from a wallet of 12.50.
    let company = seed_company(&app, "Acme Compute", &a, &[]).await;
    let admin = app.switch(&a, &company).await;
    let short = ["Insufficient balance: 12.50 coins available, 30.00 needed", "余额不足：可用 12.50 币，需要 30.00 币"];
    for body in says(&app, &with("POST", FUND, json!({"amount": 3000})), Some(&token_of(&admin)), (409, "insufficient_balance", None), short).await {
        assert_eq!(body["data"], json!({"available": 1250, "needed": 3000}));
    }
    // Held coins are not available: 10.00 held leaves 2.50.
    ledger::hold(&app.state.db, hold_spec(&ua, 1000, "small")).await.unwrap();
    let (s, body, _) = post(&app, FUND, &json!({"amount": 251}), &token_of(&admin), None, "en").await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (409, "Insufficient balance: 2.50 coins available, 2.51 needed"));
    let (s, body, _) = post(&app, FUND, &json!({"amount": 250}), &token_of(&admin), None, "en").await;
    assert_eq!(s, 200, "{body}");
    let w = wallet(&app, &token_of(&a)).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64(), w["available"].as_i64()), (Some(1000), Some(1000), Some(0)));
    verified(&app).await;
}

/// 50 holds at once on one account: exactly as many succeed as the balance covers.
async fn fifty_concurrent_holds(app: &TestApp) {
    let a = app.signed_in("a@example.com").await;
    grant(app, "a@example.com", 10_000).await;
    let ua = AccountRef::User(user_id_of(app, &a).await.into());
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let (db, spec) = (app.state.db.clone(), hold_spec(&ua, 300, &format!("race:{i}")));
            tokio::spawn(async move { ledger::hold(&db, spec).await })
        })
        .collect();
    let (mut ok, mut refused) = (0, 0);
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(e) => {
                assert!(matches!(conflict_msg(&e), Msg::InsufficientBalance { needed: 300, .. }), "{e:?}");
                refused += 1;
            }
        }
    }
    assert_eq!((ok, refused), (33, 17));
    let w = wallet(app, &token_of(&a)).await;
    assert_eq!((w["balance"].as_i64(), w["held"].as_i64(), w["available"].as_i64()), (Some(10_000), Some(9900), Some(100)));
    verified(app).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_holds_on_one_account_never_overdraw() {
    fifty_concurrent_holds(&no_bonus().await).await;
}
