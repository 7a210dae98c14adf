//! Getting coins: top-up codes printed by the operator and redeemed once into the wallet of the
//! caller's context, races on SQLite and PostgreSQL, guessing codes limited per person and per
//! address like signing in, the top-up page's text, memos and titles in the reader's language, and
//! the CSV exports (UTF-8 with a byte-order mark).

use serde_json::{Value, json};
use zmarket::billing::codes;
use zmarket::billing::ledger::{self, AccountRef, HoldSpec, Reference};

use super::{no_bonus, verified, wallet};
use crate::common::{TestApp, seed_company, token_of, user_id_of};

const REDEEM: &str = "/api/billing/v1/wallet/redeem";

async fn redeem(app: &TestApp, token: &str, code: &str, lang: &str) -> (u16, Value) {
    let res = app.client.post(app.url(REDEEM)).bearer_auth(token).header("Accept-Language", lang).json(&json!({ "code": code })).send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

#[tokio::test]
async fn a_code_is_redeemed_once_into_the_wallet_of_the_context() {
    let app = no_bonus().await;
    let a = app.signed_in("a@example.com").await;
    let b = app.signed_in("b@example.com").await;
    let (ta, tb) = (token_of(&a), token_of(&b));
    let db = &app.state.db;
    let code = codes::generate(db, 2500, 1, None).await.unwrap().remove(0);
    // Bad input changes nothing, with a localized reason.
    let (s, body) = redeem(&app, &ta, "", "zh-CN").await;
    assert_eq!((s, body["data"]["field"].as_str(), body["msg"].as_str()), (400, Some("code"), Some("请按收到的原样输入充值码")));
    let (s, body) = redeem(&app, &ta, "ZM-2222-3333-4444-5555", "en").await;
    assert_eq!((s, body["msg"].as_str()), (404, Some("This top-up code does not exist")));
    // As typed: lower case and spaces are fine.
    let (s, body) = redeem(&app, &ta, &code.to_lowercase().replace('-', " "), "en").await;
    assert_eq!(s, 200, "{body}");
    assert_eq!((body["data"]["balance"].as_i64(), body["data"]["available"].as_i64()), (Some(2500), Some(2500)));
    // Used: 409 for anyone, nothing moves.
    let (s, body) = redeem(&app, &tb, &code, "zh-CN").await;
    assert_eq!((s, body["msg"].as_str()), (409, Some("该充值码已被使用")));
    let (s, _) = redeem(&app, &ta, &code, "en").await;
    assert_eq!(s, 409);
    assert_eq!(wallet(&app, &tb).await["balance"], 0);
    // The entry says what it was, in the reader's language.
    let (_, entries) = app.get_auth("/api/billing/v1/wallet/entries", &ta).await;
    assert_eq!(entries["data"]["items"][0]["memo"], "Top-up code redeemed");
    let res = app.client.get(app.url("/api/billing/v1/wallet/entries")).bearer_auth(&ta).header("Accept-Language", "zh").send().await.unwrap();
    assert_eq!(res.json::<Value>().await.unwrap()["data"]["items"][0]["memo"], "兑换充值码");
    // Expired codes are refused.
    let old = codes::generate(db, 100, 1, Some(zmarket::db::now() + chrono::Duration::milliseconds(1))).await.unwrap().remove(0);
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let (s, body) = redeem(&app, &tb, &old, "en").await;
    assert_eq!((s, body["msg"].as_str()), (409, Some("This top-up code has expired")));
    // A company's administrator redeems into the company's wallet; a member may not.
    let boss = app.signed_in("boss@example.com").await;
    let member = app.signed_in("member@example.com").await;
    let company = seed_company(&app, "Acme", &boss, &[(&member, "member")]).await;
    let admin = token_of(&app.switch(&boss, &company).await);
    let c = codes::generate(db, 700, 1, None).await.unwrap().remove(0);
    let (s, _) = redeem(&app, &token_of(&app.switch(&member, &company).await), &c, "en").await;
    assert_eq!(s, 403);
    let (s, body) = redeem(&app, &admin, &c, "en").await;
    assert_eq!((s, body["data"]["balance"].as_i64()), (200, Some(700)));
    assert_eq!(ledger::balance(db, &AccountRef::Company(company.into())).await.unwrap().balance, 700);
    verified(&app).await;
}

#[tokio::test]
async fn a_retried_redeem_with_its_key_answers_again_and_moves_nothing() {
    let app = no_bonus().await;
    let t = token_of(&app.signed_in("a@example.com").await);
    let code = codes::generate(&app.state.db, 900, 1, None).await.unwrap().remove(0);
    let send = async || {
        let res = app.client.post(app.url(REDEEM)).bearer_auth(&t).header("Idempotency-Key", "redeem-1").json(&json!({ "code": code })).send().await.unwrap();
        let replayed = res.headers().get("idempotent-replayed").is_some();
        (res.status().as_u16(), replayed, res.json::<Value>().await.unwrap())
    };
    let (s1, r1, b1) = send().await;
    let (s2, r2, b2) = send().await;
    assert_eq!((s1, r1, s2, r2), (200, false, 200, true));
    assert_eq!(b1, b2);
    assert_eq!(wallet(&app, &t).await["balance"], 900);
    verified(&app).await;
}

#[tokio::test]
async fn two_redeems_of_one_code_at_once_credit_it_once() {
    let app = no_bonus().await;
    let (a, b) = (app.signed_in("a@example.com").await, app.signed_in("b@example.com").await);
    let (ta, tb) = (token_of(&a), token_of(&b));
    for round in 0..8 {
        let code = codes::generate(&app.state.db, 100, 1, None).await.unwrap().remove(0);
        let ((sa, _), (sb, _)) = tokio::join!(redeem(&app, &ta, &code, "en"), redeem(&app, &tb, &code, "en"));
        let mut got = [sa, sb];
        got.sort();
        assert_eq!(got, [200, 409], "round {round}");
    }
    let total = wallet(&app, &ta).await["balance"].as_i64().unwrap() + wallet(&app, &tb).await["balance"].as_i64().unwrap();
    assert_eq!(total, 800);
    verified(&app).await;
}

#[tokio::test]
async fn a_redeem_and_a_rental_hold_at_once_never_overdraw() {
    let app = no_bonus().await;
    let a = app.signed_in("a@example.com").await;
    let t = token_of(&a);
    let ua = AccountRef::User(user_id_of(&app, &a).await.into());
    let db = &app.state.db;
    for round in 0..8 {
        let code = codes::generate(db, 500, 1, None).await.unwrap().remove(0);
        let spec = HoldSpec {
            account: ua.clone(),
            amount: 500,
            key: format!("rental:race{round}:hold"),
            reference: Reference::new("rental", format!("race{round}")),
            memo: String::new(),
            expires_at: zmarket::db::now() + chrono::Duration::hours(1),
            burn_per_hour: 0,
        };
        let ((s, _), held) = tokio::join!(redeem(&app, &t, &code, "en"), ledger::hold(db, spec));
        assert_eq!(s, 200, "round {round}");
        // The hold sees the coins or it does not: held in full or refused, never below zero.
        let w = wallet(&app, &t).await;
        assert!(w["available"].as_i64().unwrap() >= 0);
        assert_eq!(w["held"].as_i64().unwrap() % 500, 0);
        if held.is_err() {
            assert!(w["available"].as_i64().unwrap() >= 0);
        }
    }
    verified(&app).await;
}

#[tokio::test]
async fn the_top_up_page_says_how_coins_are_had() {
    let app = TestApp::spawn_with(|c| {
        c.billing.how_to_get_coins = "Ask Mei at the front desk for a code.".into();
        c.billing.how_to_get_coins_zh = "向前台的梅索取充值码。".into();
    })
    .await;
    let t = token_of(&app.signed_in("a@example.com").await);
    let (_, en) = app.get_auth("/api/billing/v1/wallet/top-up-info", &t).await;
    assert_eq!(en["data"]["text"], "Ask Mei at the front desk for a code.");
    let res = app.client.get(app.url("/api/billing/v1/wallet/top-up-info")).bearer_auth(&t).header("Accept-Language", "zh").send().await.unwrap();
    assert_eq!(res.json::<Value>().await.unwrap()["data"]["text"], "向前台的梅索取充值码。");
    let (s, _) = app.get_json("/api/billing/v1/wallet/top-up-info").await;
    assert_eq!(s, 401);
}

#[tokio::test]
async fn entries_and_bills_export_as_csv_with_chinese_intact() {
    let app = no_bonus().await;
    let a = app.signed_in("a@example.com").await;
    let t = token_of(&a);
    zmarket::billing::issuance::grant_by_email(&app.state.db, "a@example.com", zmarket::coins::Coins::from_cents(1234), "给测试的币, \"引号\"").await.unwrap();
    let get = async |path: &str, lang: &str| {
        let res = app.client.get(app.url(path)).bearer_auth(&t).header("Accept-Language", lang).send().await.unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()["content-type"], "text/csv; charset=utf-8");
        res.bytes().await.unwrap().to_vec()
    };
    let body = get("/api/billing/v1/wallet/entries.csv", "zh-CN").await;
    assert_eq!(&body[..3], b"\xEF\xBB\xBF");
    let text = String::from_utf8(body[3..].to_vec()).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(rows.headers().unwrap().iter().collect::<Vec<_>>(), vec!["时间 (UTC)", "类型", "项目", "备注", "金额 (币)", "总额 (币)", "市场费 (币)", "余额 (币)", "编号"]);
    let records: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 1);
    assert_eq!((&records[0][1], &records[0][2], &records[0][3], &records[0][4]), ("收入", "运营者发放", "给测试的币, \"引号\"", "12.34"));
    // A grant has no gross nor fee (a provider's income has: tests/clock/rental.rs).
    assert_eq!((&records[0][5], &records[0][6], &records[0][7]), ("", "", "12.34"));
    let en = String::from_utf8(get("/api/billing/v1/wallet/entries.csv?kind=expense", "en").await[3..].to_vec()).unwrap();
    assert_eq!(en.lines().count(), 1, "{en}");
    let bills = String::from_utf8(get("/api/billing/v1/bills.csv", "en").await[3..].to_vec()).unwrap();
    assert!(bills.starts_with("Period start (UTC),Period end (UTC),Status,For,Amount (coins),Reference"), "{bills}");
    let res = app.client.get(app.url("/api/billing/v1/bills.csv?status=paid")).bearer_auth(&t).send().await.unwrap();
    assert_eq!(res.status(), 400);
    let (s, _) = app.get_json("/api/billing/v1/bills.csv").await;
    assert_eq!(s, 401);
}

/// Guessing codes closes the guesser's redemptions after the sign-in limiter's allowance of
/// failures (429, localized), not another person's; a good code still counts once the guesser
/// waits (it is refused while closed, and nothing moves).
#[tokio::test]
async fn guessing_top_up_codes_is_limited_per_person() {
    let app = TestApp::spawn_with(|c| {
        c.auth.login_account_burst = 3;
        c.auth.login_account_refill_secs = 3600;
    })
    .await;
    let guesser = token_of(&app.signed_in("guesser@example.com").await);
    let other = token_of(&app.signed_in("other@example.com").await);
    let codes = codes::generate(&app.state.db, 500, 2, None).await.unwrap();
    for i in 2..5 {
        let (s, b) = redeem(&app, &guesser, &format!("ZM-2222-3333-4444-555{i}"), "en").await;
        assert_eq!(s, 404, "{b}");
    }
    let (s, b) = redeem(&app, &guesser, "ZM-2222-3333-4444-5559", "en").await;
    assert_eq!((s, b["msg"].as_str()), (429, Some("Too many attempts, please try again later")), "{b}");
    let (_, before) = app.get_auth("/api/billing/v1/wallet", &guesser).await;
    let (s, b) = redeem(&app, &guesser, &codes[0], "zh-CN").await;
    assert_eq!((s, b["msg"].as_str()), (429, Some("尝试次数过多，请稍后再试")), "{b}");
    let (_, w) = app.get_auth("/api/billing/v1/wallet", &guesser).await;
    assert_eq!(w["data"]["balance"], before["data"]["balance"], "a refused redemption moves nothing");
    // Another person is not closed by the guesser.
    let (s, b) = redeem(&app, &other, &codes[0], "en").await;
    assert_eq!(s, 200, "{b}");
}

/// Every attempt counts against the client's address (the sign-in limiter's `login_ip_*`):
/// after five from 127.0.0.1, whoever asks from there waits, even with a good code.
#[tokio::test]
async fn redeeming_is_limited_per_address() {
    let app = TestApp::spawn_with(|c| {
        c.auth.login_ip_burst = 5;
        c.auth.login_ip_refill_secs = 3600;
    })
    .await;
    let a = token_of(&app.signed_in("a@example.com").await);
    let b = token_of(&app.signed_in("b@example.com").await);
    let code = codes::generate(&app.state.db, 100, 1, None).await.unwrap().remove(0);
    let mut statuses = Vec::new();
    for i in 2..7 {
        statuses.push(redeem(&app, if i % 2 == 0 { &a } else { &b }, &format!("ZM-2222-3333-4444-555{i}"), "en").await.0);
    }
    assert_eq!(statuses, vec![404; 5]);
    let (_, before) = app.get_auth("/api/billing/v1/wallet", &b).await;
    let (s, body) = redeem(&app, &b, &code, "zh-CN").await;
    assert_eq!((s, body["msg"].as_str()), (429, Some("尝试次数过多，请稍后再试")), "{body}");
    let (_, w) = app.get_auth("/api/billing/v1/wallet", &b).await;
    assert_eq!(w["data"]["balance"], before["data"]["balance"]);
}
