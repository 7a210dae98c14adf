//! The operator's console, round two (issue 25 items 2, 5, 6): the market's settings kept in the
//! database and applied at once (the fee only to what starts after the change), top-up codes
//! issued, listed with their state and exported, and who may do it.

use serde_json::{Value, json};

use crate::boxes::{bound_device, box_spec, rent, rented_running};
use crate::common::*;
use crate::scenario::{Roles, get, refused_signed_out, refused_to, with};
use crate::ops::{make_operator, send};

const SETTINGS: &str = "/api/ops/v1/settings";
const CODES: &str = "/api/ops/v1/topup-codes";

async fn operator(app: &TestApp, email: &str) -> String {
    let s = app.signed_in(email).await;
    make_operator(app, email);
    token_of(&s)
}

async fn audit_of(app: &TestApp, token: &str, action: &str) -> Vec<Value> {
    let (s, b) = app.get_auth(&format!("/api/ops/v1/audit?action={action}"), token).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["items"].as_array().unwrap().clone()
}

#[tokio::test]
async fn every_console_call_refuses_people_company_admins_and_members() {
    let app = TestApp::spawn().await;
    let roles = Roles::new(&app).await;
    let op = token_of(&roles.operator);
    let calls = [
        get("/api/ops/v1/overview"),
        get(SETTINGS),
        with("PUT", SETTINGS, json!({"market_fee_percent": 50})),
        with("POST", CODES, json!({"amount": 500, "count": 2})),
        get(CODES),
    ];
    refused_to(&app, &roles.others(), &calls, "en", 403, "not_operator").await;
    refused_to(&app, &roles.others(), &[get("/api/ops/v1/topup-codes.csv")], "zh", 403, "not_operator").await;
    refused_signed_out(&app, &calls[..1]).await;
    // Nothing of it happened.
    let (_, b) = app.get_auth(SETTINGS, &op).await;
    assert_eq!(b["data"]["market_fee_percent"], app.state.config.billing.market_fee_percent, "{b}");
    let (_, b) = app.get_auth(CODES, &op).await;
    assert_eq!(b["data"]["total"], 0, "{b}");
    assert!(audit_of(&app, &op, "settings.update").await.is_empty());
    for c in &calls {
        let (s, b, _) = send(&app, c.method, &c.path, c.body.as_ref(), &op, "en", None).await;
        assert_eq!(s, 200, "{} {}: {b}", c.method, c.path);
    }
}

#[tokio::test]
async fn settings_apply_at_once_and_the_fee_only_to_rentals_started_after() {
    let app = TestApp::spawn_with(|c| {
        c.billing.market_fee_percent = 10;
        c.billing.signup_bonus = zmarket::coins::Coins::from_cents(10_000);
        c.downloads.windows = "https://example.com/old.exe".into();
    })
    .await;
    let op = operator(&app, "op@example.com").await;
    let (s, b) = app.get_auth(SETTINGS, &op).await;
    assert_eq!(s, 200, "{b}");
    let d = &b["data"];
    assert_eq!((d["market_fee_percent"].as_i64(), d["signup_bonus"].as_i64()), (Some(10), Some(10_000)), "{b}");
    assert_eq!(d["download_links"]["windows"], "https://example.com/old.exe");

    // A rental started before the change keeps the fee it started with.
    let (alice, _bob, dev, _secret, before) = rented_running(&app, 2).await;
    let change = json!({
        "market_fee_percent": 25,
        "signup_bonus": 500,
        "download_links": {"windows": " https://example.com/new.exe "},
        "how_to_get_coins": "Ask Carol at the front desk.",
        "how_to_get_coins_zh": "请向前台的 Carol 索取。",
        "low_balance_hours": 0,
    });
    let (s, b, _) = send(&app, "PUT", SETTINGS, Some(&change), &op, "en", None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["download_links"], json!({"windows": "https://example.com/new.exe", "mac": "", "android": ""}));
    assert_eq!(b["data"]["market_fee_percent"], 25);
    grant_by_email(&app, "alice@example.com", 2000).await;
    let (s, r) = rent(&app, &alice, "vaultwarden", &dev, 1).await;
    assert_eq!(s, 200, "{r}");
    let after = r["data"]["id"].as_str().unwrap().to_string();
    let fee_of = |id: String| {
        let db = app.state.db.clone();
        async move {
            use sea_orm::EntityTrait;
            zmarket::db::entity::installations::Entity::find_by_id(id).one(&db).await.unwrap().unwrap().rent_fee_percent
        }
    };
    assert_eq!(fee_of(before).await, Some(10));
    assert_eq!(fee_of(after).await, Some(25));

    // The bonus of an account verified after the change; the links and the top-up words.
    let carol = app.signed_in("carol@example.com").await;
    let (_, w) = app.get_auth("/api/billing/v1/wallet", &token_of(&carol)).await;
    assert_eq!(w["data"]["balance"], 500, "{w}");
    let (_, links) = app.get_json("/api/ebs/v1/download/links").await;
    assert_eq!(links["data"]["windows"], "https://example.com/new.exe", "{links}");
    let page = app.client.get(app.url("/market")).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("https://example.com/new.exe") && !page.contains("old.exe"), "every rendered page carries the new link in its state");
    for (lang, text) in [("en", "Ask Carol at the front desk."), ("zh-CN", "请向前台的 Carol 索取。")] {
        let res = app.client.get(app.url("/api/billing/v1/wallet/top-up-info")).bearer_auth(token_of(&carol)).header("Accept-Language", lang).send().await.unwrap();
        let b: Value = res.json().await.unwrap();
        assert_eq!(b["data"]["text"], text, "{b}");
    }

    // Audited once, with what changed only.
    let rows = audit_of(&app, &op, "settings.update").await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["detail"]["before"]["market_fee_percent"], 10);
    assert_eq!(rows[0]["detail"]["after"]["market_fee_percent"], 25);
    assert!(rows[0]["detail"]["after"].get("mac").is_none());
    // The same values again change nothing and write no audit row.
    let (s, _, _) = send(&app, "PUT", SETTINGS, Some(&json!({"market_fee_percent": 25})), &op, "en", None).await;
    assert_eq!(s, 200);
    assert_eq!(audit_of(&app, &op, "settings.update").await.len(), 1);
}

async fn grant_by_email(app: &TestApp, email: &str, cents: i64) {
    zmarket::billing::issuance::grant_by_email(&app.state.db, email, zmarket::coins::Coins::from_cents(cents), "test").await.unwrap();
}

#[tokio::test]
async fn bad_settings_are_refused_with_the_field_in_both_languages_and_change_nothing() {
    let app = TestApp::spawn().await;
    let op = operator(&app, "op@example.com").await;
    let (_, before) = app.get_auth(SETTINGS, &op).await;
    let cases = [
        (json!({"market_fee_percent": 101}), "market_fee_percent", "The market fee must be a whole percent from 0 to 100", "市场费率须为 0 到 100 之间的整数百分比"),
        (json!({"market_fee_percent": -1}), "market_fee_percent", "The market fee must be a whole percent from 0 to 100", "市场费率须为 0 到 100 之间的整数百分比"),
        (json!({"signup_bonus": -5}), "signup_bonus", "The sign-up bonus must be 0 or more coins", "注册奖励须为 0 或更多币"),
        (
            json!({"download_links": {"mac": "ftp://example.com/x.dmg"}}),
            "download_links.mac",
            "A download link must be empty or an http(s) address of at most 500 characters",
            "下载链接须为空，或不超过 500 个字符的 http(s) 地址",
        ),
        (
            json!({"download_links": {"android": "https://example.com/a b.apk"}}),
            "download_links.android",
            "A download link must be empty or an http(s) address of at most 500 characters",
            "下载链接须为空，或不超过 500 个字符的 http(s) 地址",
        ),
        (json!({"low_balance_hours": 721}), "low_balance_hours", "The low-balance notice must be between 0 and 720 hours", "余额不足提醒须在 0 到 720 小时之间"),
        (json!({"how_to_get_coins": "x".repeat(2001)}), "how_to_get_coins", "The text must be at most 2,000 characters", "文字最多 2,000 个字符"),
    ];
    for (body, field, en, zh) in cases {
        // A valid field beside the bad one is not applied either.
        let mut body = body;
        if body.get("market_fee_percent").is_none() {
            body["market_fee_percent"] = json!(40);
        }
        let (s, b, _) = send(&app, "PUT", SETTINGS, Some(&body), &op, "en", None).await;
        assert_eq!((s, b["data"]["field"].as_str(), b["msg"].as_str()), (400, Some(field), Some(en)), "{body}: {b}");
        let (s, b, _) = send(&app, "PUT", SETTINGS, Some(&body), &op, "zh-CN", None).await;
        assert_eq!((s, b["msg"].as_str()), (400, Some(zh)), "{body}: {b}");
    }
    let (s, b, _) = send(&app, "PUT", SETTINGS, Some(&json!({"market_fee_percent": "ten"})), &op, "en", None).await;
    assert_eq!(s, 400, "{b}");
    let (_, after) = app.get_auth(SETTINGS, &op).await;
    assert_eq!(before, after);
    assert!(audit_of(&app, &op, "settings.update").await.is_empty());
}

#[tokio::test]
async fn codes_are_issued_once_per_key_listed_with_their_state_and_exported() {
    let app = TestApp::spawn().await;
    let op = operator(&app, "op@example.com").await;
    let dave = app.signed_in("dave@example.com").await;
    let tomorrow = (zmarket::db::now() + chrono::Duration::days(1)).to_rfc3339();

    let body = json!({"amount": 500, "count": 3, "expires_at": tomorrow});
    let (s, b, _) = send(&app, "POST", CODES, Some(&body), &op, "en", Some("batch-1")).await;
    assert_eq!(s, 200, "{b}");
    let batch = b["data"]["batch"].as_str().unwrap().to_string();
    let codes: Vec<String> = b["data"]["items"].as_array().unwrap().iter().map(|c| c["code"].as_str().unwrap().to_string()).collect();
    assert_eq!(codes.len(), 3);
    assert!(b["data"]["items"].as_array().unwrap().iter().all(|c| c["amount"] == 500), "{b}");
    // A retry with the same key issues nothing more.
    let (s, again, _) = send(&app, "POST", CODES, Some(&body), &op, "en", Some("batch-1")).await;
    assert_eq!((s, again["data"]["batch"].as_str()), (200, Some(batch.as_str())));
    let (_, list) = app.get_auth(CODES, &op).await;
    assert_eq!(list["data"]["total"], 3, "{list}");

    // Redeemed by another person: its state and who.
    let res = app.client.post(app.url("/api/billing/v1/wallet/redeem")).bearer_auth(token_of(&dave)).json(&json!({"code": codes[1]})).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let (_, list) = app.get_auth(&format!("{CODES}?state=redeemed"), &op).await;
    let items = list["data"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{list}");
    assert_eq!(items[0]["redeemed_by"], "dave@example.com");
    assert_eq!(items[0]["hint"].as_str().unwrap(), &codes[1][codes[1].len() - 4..]);
    let (_, list) = app.get_auth(&format!("{CODES}?state=unused&batch={batch}"), &op).await;
    assert_eq!(list["data"]["total"], 2, "{list}");

    // One from the command line that has expired.
    zmarket::billing::codes::generate(&app.state.db, 100, 1, Some(zmarket::db::now() + chrono::Duration::milliseconds(1))).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let (_, list) = app.get_auth(&format!("{CODES}?state=expired"), &op).await;
    assert_eq!((list["data"]["total"].as_i64(), list["data"]["items"][0]["amount"].as_i64()), (Some(1), Some(100)), "{list}");

    // The CSV: a header in the reader's language and a row a code, no code in it.
    for (lang, head) in [("en", "Ends with,Amount (coins),State"), ("zh-CN", "末四位,金额 (币),状态")] {
        let res = app.client.get(app.url("/api/ops/v1/topup-codes.csv")).bearer_auth(&op).header("Accept-Language", lang).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 200);
        assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/csv"));
        let text = res.text().await.unwrap();
        let lines: Vec<&str> = text.trim_start_matches('\u{feff}').lines().collect();
        assert!(lines[0].starts_with(head), "{text}");
        assert_eq!(lines.len(), 5, "{text}");
        assert!(codes.iter().all(|c| !text.contains(c.as_str())));
        assert!(text.contains(if lang == "en" { "Redeemed" } else { "已兑换" }) && text.contains("dave@example.com"), "{text}");
    }

    // Audited with the batch.
    let rows = audit_of(&app, &op, "codes.issue").await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0]["target"].as_str(), rows[0]["detail"]["count"].as_i64()), (Some(format!("batch:{batch}").as_str()), Some(3)));

    // Bad input: the field, in both languages, and nothing issued.
    let past = (zmarket::db::now() - chrono::Duration::minutes(1)).to_rfc3339();
    let cases = [
        (json!({"amount": 0, "count": 1}), "amount"),
        (json!({"amount": 100, "count": 0}), "count"),
        (json!({"amount": 100, "count": 10_001}), "count"),
        (json!({"amount": 100}), "count"),
        (json!({"amount": 100, "count": 1, "expires_at": past}), "expires_at"),
    ];
    for (body, field) in cases {
        let (s, b, _) = send(&app, "POST", CODES, Some(&body), &op, "en", None).await;
        assert_eq!((s, b["data"]["field"].as_str()), (400, Some(field)), "{body}: {b}");
        let (s, zh, _) = send(&app, "POST", CODES, Some(&body), &op, "zh-CN", None).await;
        assert!(s == 400 && zh["msg"] != b["msg"], "{zh}");
    }
    let (s, b) = app.get_auth(&format!("{CODES}?state=lost"), &op).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("state")));
    let (_, list) = app.get_auth(CODES, &op).await;
    assert_eq!(list["data"]["total"], 4, "{list}");
}

#[tokio::test]
async fn the_overview_counts_people_boxes_what_runs_and_the_coins() {
    let app = TestApp::spawn_with(|c| c.billing.signup_bonus = zmarket::coins::Coins::from_cents(10_000)).await;
    let op = operator(&app, "op@example.com").await;
    let (s, b) = app.get_auth("/api/ops/v1/overview", &op).await;
    assert_eq!(s, 200, "{b}");
    let d = &b["data"];
    assert_eq!((d["users"].as_i64(), d["users_7d"].as_i64(), d["devices_total"].as_i64()), (Some(1), Some(1), Some(0)), "{b}");
    assert_eq!(d["coins_in_circulation"], 10_000);
    let days = d["fee_income_30d"].as_array().unwrap();
    assert_eq!(days.len(), 30);
    assert_eq!(days[29]["day"], zmarket::db::now().format("%Y-%m-%d").to_string());

    // Two more people, a box of Bob's and Alice renting an app on it.
    let (_alice, bob, _dev, _secret, _id) = rented_running(&app, 1).await;
    bound_device(&app, &bob, "Z-BOX", box_spec(4, 0)).await;
    let (_, b) = app.get_auth("/api/ops/v1/overview", &op).await;
    let d = &b["data"];
    assert_eq!((d["users"].as_i64(), d["devices_online"].as_i64(), d["devices_total"].as_i64()), (Some(3), Some(2), Some(2)), "{b}");
    assert_eq!((d["installations_running"].as_i64(), d["rentals_running"].as_i64()), (Some(1), Some(1)), "{b}");
    // Three bonuses and Alice's 20 coins; the rental holds its hour (600).
    assert_eq!(d["coins_in_circulation"], 3 * 10_000 + 2000, "{b}");
    assert_eq!(d["held"], 600, "{b}");
    assert!(d["last_backup"].is_null(), "{b}");

    // A backup taken by the job shows (SQLite; PostgreSQL markets use pg_dump).
    if app.state.config.database.url.is_empty() {
        let took = zmarket::ops::backup::run_due(&app.state.db, &app.state.config.data_dir, &app.state.config.backup, zmarket::db::now()).await.unwrap();
        let took = took.expect("a first backup is due");
        let (_, b) = app.get_auth("/api/ops/v1/overview", &op).await;
        assert_eq!(b["data"]["last_backup"]["file"], took.file, "{b}");
        assert!(b["data"]["last_backup"]["size"].as_u64().unwrap() > 0, "{b}");
    }
}

#[tokio::test]
async fn a_settings_change_reaches_the_other_instance_within_ten_seconds() {
    let (a, b) = crate::instances::pair(|_| {}).await;
    let op = operator(&a, "op@example.com").await;
    let change = json!({"download_links": {"android": "https://example.com/z.apk"}, "market_fee_percent": 33});
    let (s, body, _) = send(&a, "PUT", SETTINGS, Some(&change), &op, "en", None).await;
    assert_eq!(s, 200, "{body}");
    let started = std::time::Instant::now();
    let mut seen = Value::Null;
    // The other instance reads the settings every 5 s: give it twice the promise before failing.
    while started.elapsed() < std::time::Duration::from_secs(20) {
        seen = b.get_json("/api/ebs/v1/download/links").await.1;
        if seen["data"]["android"] == "https://example.com/z.apk" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(seen["data"]["android"], "https://example.com/z.apk", "{seen}");
    // Its server-rendered pages carry the new link in their state too (the render cache is keyed by it).
    let page = b.client.get(b.url("/market")).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("https://example.com/z.apk"));
    assert_eq!(b.state.market_settings.current().market_fee_percent, 33);
}

/// Operators changing the settings at once take turns: every change is kept and audited, and each
/// audit row's `before` is what the previous change left (on SQLite and, with TEST_DATABASE_URL, on
/// PostgreSQL, where the write transaction alone would let two writers read the same `before`).
#[tokio::test]
async fn concurrent_settings_changes_take_turns_and_each_is_audited() {
    const CALLERS: i64 = 8;
    let app = TestApp::spawn_with(|c| c.billing.low_balance_hours = 100).await;
    let op = operator(&app, "op@example.com").await;
    let answers = futures::future::join_all((0..CALLERS).map(|i| {
        let (app, op) = (&app, op.clone());
        async move {
            // Each caller changes the hours, half of them a link as well.
            let mut body = json!({"low_balance_hours": i});
            if i % 2 == 0 {
                body["download_links"] = json!({"mac": format!("https://example.com/mac-{i}.dmg")});
            }
            send(app, "PUT", SETTINGS, Some(&body), &op, "en", None).await.0
        }
    }))
    .await;
    assert!(answers.iter().all(|s| *s == 200), "{answers:?}");
    let mut rows = audit_of(&app, &op, "settings.update").await;
    assert_eq!(rows.len() as i64, CALLERS, "{rows:?}");
    rows.reverse();
    let mut hours = json!(100);
    for r in &rows {
        assert_eq!(r["detail"]["before"]["low_balance_hours"], hours, "{rows:?}");
        hours = r["detail"]["after"]["low_balance_hours"].clone();
    }
    let (_, now) = app.get_auth(SETTINGS, &op).await;
    assert_eq!(now["data"]["low_balance_hours"], hours);
}
