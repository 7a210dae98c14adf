//! The wallet over HTTP: Idempotency-Key retries, concurrent spends, company scoping, entries,
//! bills, the daily chart, the deletion check and runway notices.

use chrono::Duration;
use serde_json::{Value, json};
use zmarket::billing::ledger;
use zmarket::billing::ledger::{AccountRef, CaptureSpec, HoldSpec, MarketCapture, market_splits};

use super::{BILLS, ENTRIES, FUND, WALLET, grant, hold_spec, no_bonus, post, verified, wallet};
use crate::common::{TestApp, seed_company, token_of, user_id_of};

/// A person with `cents` coins who administers a company, in that company's context.
async fn admin_with(app: &TestApp, email: &str, cents: i64, company: &str) -> (Value, Value, String) {
    let person = app.signed_in(email).await;
    grant(app, email, cents).await;
    let id = seed_company(app, company, &person, &[]).await;
    let admin = app.switch(&person, &id).await;
    (person, admin, id)
}

#[tokio::test]
async fn a_retried_fund_moves_coins_once() {
    let app = no_bonus().await;
    let (person, admin, _) = admin_with(&app, "a@example.com", 10_000, "Acme Compute").await;
    let t = token_of(&admin);
    let (s, first, h) = post(&app, FUND, &json!({"amount": 2500, "memo": "for rentals"}), &t, Some("k-1"), "en").await;
    assert_eq!(s, 200, "{first}");
    assert!(h.get("idempotent-replayed").is_none());
    let e = &first["data"];
    assert_eq!((e["kind"].as_str(), e["amount"].as_i64(), e["balance_after"].as_i64(), e["memo"].as_str(), e["ref_type"].as_str()), (Some("income"), Some(2500), Some(2500), Some("for rentals"), Some("top_up")));
    // The same key and body: the first answer again, nothing moved.
    let (s, again, h) = post(&app, FUND, &json!({"amount": 2500, "memo": "for rentals"}), &t, Some("k-1"), "zh-CN").await;
    assert_eq!((s, &again), (200, &first));
    assert_eq!(h.get("idempotent-replayed").unwrap(), "true");
    assert_eq!(wallet(&app, &t).await["balance"], 2500);
    assert_eq!(wallet(&app, &token_of(&person)).await["balance"], 7500);
    // The same key with another body: refused, in both languages.
    for (lang, text) in [("en", "This Idempotency-Key was already used with a different request"), ("zh-CN", "该 Idempotency-Key 已用于另一个不同的请求")] {
        let (s, body, _) = post(&app, FUND, &json!({"amount": 2600}), &t, Some("k-1"), lang).await;
        assert_eq!((s, body["msg"].as_str().unwrap()), (409, text));
    }
    // A malformed key.
    let long = "k".repeat(256);
    for bad in [long.as_str(), "has space", "é"] {
        let (s, body, _) = post(&app, FUND, &json!({"amount": 1}), &t, Some(bad), "en").await;
        assert_eq!((s, body["data"]["field"].as_str()), (400, Some("Idempotency-Key")), "{bad}: {body}");
    }
    // A refusal is not kept: the same key succeeds once the request can.
    let (s, body, _) = post(&app, FUND, &json!({"amount": 9000}), &t, Some("k-2"), "en").await;
    assert_eq!(s, 409, "{body}");
    // An amount that is not positive, or not a number: 400 naming `amount`, in both languages.
    for bad in [json!(0), json!(-5), json!("ten"), json!(12.5), json!(null)] {
        let (s, body, _) = post(&app, FUND, &json!({ "amount": bad }), &t, Some("k-2"), "zh-CN").await;
        assert_eq!((s, body["data"]["field"].as_str()), (400, Some("amount")), "{bad}: {body}");
        assert!(body["msg"].as_str().unwrap().chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "{body}");
    }
    let (s, body, _) = post(&app, FUND, &json!({"amount": "ten"}), &t, Some("k-2"), "en").await;
    assert_eq!((s, body["data"]["field"].as_str()), (400, Some("amount")), "{body}");
    grant(&app, "a@example.com", 2000).await;
    let (s, body, _) = post(&app, FUND, &json!({"amount": 9000}), &t, Some("k-2"), "en").await;
    assert_eq!(s, 200, "{body}");
    // Keys are the caller's: another admin's "k-1" is theirs.
    let (_, other, _) = admin_with(&app, "b@example.com", 1000, "Beta Compute").await;
    let (s, body, _) = post(&app, FUND, &json!({"amount": 100}), &token_of(&other), Some("k-1"), "en").await;
    assert_eq!((s, body["data"]["balance_after"].as_i64()), (200, Some(100)));
    // Without a key every call moves.
    for _ in 0..2 {
        let (s, _, _) = post(&app, FUND, &json!({"amount": 100}), &t, None, "en").await;
        assert_eq!(s, 200);
    }
    assert_eq!(wallet(&app, &t).await["balance"], 2500 + 9000 + 200);
    verified(&app).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_retries_and_racing_spends_over_http() {
    let app = no_bonus().await;
    let (person, admin, _) = admin_with(&app, "a@example.com", 10_000, "Acme Compute").await;
    let t = token_of(&admin);
    // Ten copies of one request at once: one moves; the others answer it or "still running".
    let copies: Vec<_> = (0..10)
        .map(|_| {
            let (client, url, t) = (app.client.clone(), app.url(FUND), t.clone());
            tokio::spawn(async move {
                let res = client.post(url).bearer_auth(t).header("Idempotency-Key", "same").json(&json!({"amount": 700})).send().await.unwrap();
                (res.status().as_u16(), res.json::<Value>().await.unwrap())
            })
        })
        .collect();
    let mut ids = Vec::new();
    for c in copies {
        let (s, body) = c.await.unwrap();
        match s {
            200 => ids.push(body["data"]["id"].as_str().unwrap().to_string()),
            409 => assert_eq!(body["msg"], "A request with this Idempotency-Key is still being processed, please retry shortly"),
            other => panic!("{other}: {body}"),
        }
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(wallet(&app, &t).await["balance"], 700);
    // Fifty different spends of 3.00 from the 93.00 left: 31 succeed, never below zero.
    let spends: Vec<_> = (0..50)
        .map(|i| {
            let (client, url, t) = (app.client.clone(), app.url(FUND), t.clone());
            tokio::spawn(async move {
                let res = client.post(url).bearer_auth(t).header("Idempotency-Key", format!("spend-{i}")).json(&json!({"amount": 300})).send().await.unwrap();
                res.status().as_u16()
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for s in spends {
        statuses.push(s.await.unwrap());
    }
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 31, "{statuses:?}");
    assert!(statuses.iter().all(|s| *s == 200 || *s == 409));
    let w = wallet(&app, &token_of(&person)).await;
    assert_eq!((w["balance"].as_i64(), w["available"].as_i64()), (Some(0), Some(0)));
    verified(&app).await;
}

#[tokio::test]
async fn wallets_follow_the_context_and_companies_stay_apart() {
    let app = no_bonus().await;
    let (a, admin_a, acme) = admin_with(&app, "a@example.com", 5000, "Acme Compute").await;
    let (_, admin_b, _) = admin_with(&app, "b@example.com", 5000, "Beta Compute").await;
    let m = app.signed_in("m@example.com").await;
    let code = app.invite(&token_of(&admin_a), "m@example.com", "member").await;
    let (s, _) = app.post_json("/api/iam/v1/sme/join", &json!({"code": code, "accept": true}), Some(&token_of(&m))).await;
    assert_eq!(s, 200);
    let member = app.switch(&m, &acme).await;
    let (s, _, _) = post(&app, FUND, &json!({"amount": 1000}), &token_of(&admin_a), Some("x"), "en").await;
    assert_eq!(s, 200);
    assert_eq!(wallet(&app, &token_of(&admin_a)).await["balance"], 1000);
    assert_eq!(wallet(&app, &token_of(&a)).await["balance"], 4000);
    assert_eq!(wallet(&app, &token_of(&admin_b)).await["balance"], 0);
    let (_, body) = app.get_auth(ENTRIES, &token_of(&admin_b)).await;
    assert_eq!(body["data"], json!({"items": [], "total": 0}));
    // A member has no wallet of the company: 403, in both languages.
    for path in [WALLET, ENTRIES, BILLS, "/api/billing/v1/wallet/daily"] {
        let (s, body) = app.get_auth(path, &token_of(&member)).await;
        assert_eq!((s, body["msg"].as_str().unwrap()), (403, "Only company administrators can do this, please contact the administrator"), "{path}");
    }
    let (s, body, _) = post(&app, FUND, &json!({"amount": 1}), &token_of(&member), None, "zh-CN").await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (403, "只有企业管理员可以执行此操作，请联系管理员"));
    // Funding needs a company context; the member's personal wallet is their own.
    let (s, body, _) = post(&app, FUND, &json!({"amount": 1}), &token_of(&a), None, "en").await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (403, "Switch to a company first"));
    assert_eq!(wallet(&app, &token_of(&m)).await["balance"], 0);
    let (s, _) = app.get_json(WALLET).await;
    assert_eq!(s, 401);
    verified(&app).await;
}

#[tokio::test]
async fn entries_filter_and_page_newest_first() {
    let app = no_bonus().await;
    let (person, _admin, _) = admin_with(&app, "a@example.com", 1000, "Acme Compute").await;
    let admin = app.switch(&person, &seed_company(&app, "Second Co", &person, &[]).await).await;
    for i in 1..=3 {
        let (s, _, _) = post(&app, FUND, &json!({"amount": i * 100}), &token_of(&admin), None, "en").await;
        assert_eq!(s, 200);
    }
    let t = token_of(&person);
    let (_, all) = app.get_auth(ENTRIES, &t).await;
    assert_eq!(all["data"]["total"], 4);
    let amounts: Vec<i64> = all["data"]["items"].as_array().unwrap().iter().map(|e| e["amount"].as_i64().unwrap()).collect();
    assert_eq!(amounts, vec![-300, -200, -100, 1000]);
    let balances: Vec<i64> = all["data"]["items"].as_array().unwrap().iter().map(|e| e["balance_after"].as_i64().unwrap()).collect();
    assert_eq!(balances, vec![400, 700, 900, 1000]);
    let (_, income) = app.get_auth(&format!("{ENTRIES}?kind=income"), &t).await;
    assert_eq!((income["data"]["total"].as_i64(), income["data"]["items"][0]["ref_type"].as_str()), (Some(1), Some("grant")));
    let (_, page) = app.get_auth(&format!("{ENTRIES}?kind=expense&offset=1&limit=1"), &t).await;
    assert_eq!((page["data"]["total"].as_i64(), page["data"]["items"][0]["amount"].as_i64()), (Some(3), Some(-200)));
    let (s, body) = app.get_auth(&format!("{ENTRIES}?kind=gift"), &t).await;
    assert_eq!((s, body["data"]["field"].as_str()), (400, Some("kind")));
    let (s, _) = app.get_auth(&format!("{ENTRIES}?limit=101"), &t).await;
    assert_eq!(s, 400);
    let w = wallet(&app, &t).await;
    assert_eq!((w["income_total"].as_i64(), w["expense_total"].as_i64()), (Some(1000), Some(600)));
    let (_, days) = app.get_auth("/api/billing/v1/wallet/daily?days=7", &t).await;
    let days = days["data"].as_array().unwrap();
    assert_eq!(days.len(), 7);
    let today = zmarket::db::now().format("%Y-%m-%d").to_string();
    assert_eq!(days[6], json!({"day": today, "income": 1000, "expense": 600}));
    assert_eq!(days[0]["income"], 0);
    let (s, _) = app.get_auth("/api/billing/v1/wallet/daily?days=0", &t).await;
    assert_eq!(s, 400);
    verified(&app).await;
}

#[tokio::test]
async fn metered_usage_is_unbilled_until_its_period_closes() {
    let app = no_bonus().await;
    let (a, p) = (app.signed_in("a@example.com").await, app.signed_in("p@example.com").await);
    grant(&app, "a@example.com", 10_000).await;
    let (ua, up) = (AccountRef::User(user_id_of(&app, &a).await.into()), AccountRef::User(user_id_of(&app, &p).await.into()));
    let db = &app.state.db;
    let rental = zmarket::billing::ledger::Reference::new("rental", "rental:r9:hold");
    let h = ledger::hold(db, HoldSpec { burn_per_hour: 600, reference: rental, ..hold_spec(&ua, 3000, "rental:r9:hold") }).await.unwrap().hold;
    for n in 0..3 {
        let amount = zmarket::billing::ledger::minute_price(600, n);
        let spec = MarketCapture { hold_id: h.id.clone(), amount, provider: up.clone(), fee_percent: 10, key: format!("rental:r9:minute:{n}"), memo: "Rental".into(), metered: true };
        ledger::capture_market(db, spec).await.unwrap();
    }
    let t = token_of(&a);
    let (_, unbilled) = app.get_auth(&format!("{BILLS}?status=unbilled"), &t).await;
    assert_eq!(unbilled["data"]["total"], 1);
    let bill = &unbilled["data"]["items"][0];
    assert_eq!((bill["status"].as_str(), bill["amount"].as_i64(), bill["ref_type"].as_str(), bill["ref_id"].as_str()), (Some("unbilled"), Some(30), Some("rental"), Some("rental:r9:hold")));
    assert_eq!(wallet(&app, &t).await["unbilled"], 30);
    let reference = zmarket::billing::ledger::Reference::new("rental", "rental:r9:hold");
    let usage = zmarket::billing::bills::usage(db, &ua, &reference).await.unwrap();
    assert_eq!((usage.billed, usage.unbilled), (0, 30));
    // Open periods stay open; after the period's end the job bills it.
    assert_eq!(zmarket::billing::bills::close_due(db, zmarket::db::now()).await.unwrap(), 0);
    assert_eq!(zmarket::billing::bills::close_due(db, zmarket::db::now() + Duration::hours(2)).await.unwrap(), 1);
    let (_, billed) = app.get_auth(&format!("{BILLS}?status=billed"), &t).await;
    assert_eq!((billed["data"]["total"].as_i64(), billed["data"]["items"][0]["amount"].as_i64()), (Some(1), Some(30)));
    let (_, open) = app.get_auth(&format!("{BILLS}?status=unbilled"), &t).await;
    assert_eq!(open["data"]["total"], 0);
    let (_, all) = app.get_auth(BILLS, &t).await;
    assert_eq!(all["data"]["total"], 1);
    assert_eq!(wallet(&app, &t).await["unbilled"], 0);
    let usage = zmarket::billing::bills::usage(db, &ua, &reference).await.unwrap();
    assert_eq!((usage.billed, usage.unbilled), (30, 0));
    let (s, body) = app.get_auth(&format!("{BILLS}?status=paid"), &t).await;
    assert_eq!((s, body["data"]["field"].as_str()), (400, Some("status")));
    // The provider has income, no bill.
    let (_, pb) = app.get_auth(BILLS, &token_of(&p)).await;
    assert_eq!(pb["data"]["total"], 0);
    verified(&app).await;
}

#[tokio::test]
async fn held_coins_or_unbilled_usage_block_account_deletion() {
    let app = no_bonus().await;
    let a = app.signed_in("a@example.com").await;
    grant(&app, "a@example.com", 1000).await;
    let ua = AccountRef::User(user_id_of(&app, &a).await.into());
    let check = async || app.post_json("/api/iam/v1/account/check", &json!({}), Some(&token_of(&a))).await.1["data"].clone();
    assert_eq!(check().await, json!({"deletable": true, "reasons": []}));
    let h = ledger::hold(&app.state.db, hold_spec(&ua, 500, "h")).await.unwrap().hold;
    assert_eq!(check().await, json!({"deletable": false, "reasons": ["balance_outstanding"]}));
    let (s, body) = app.delete_json("/api/iam/v1/account", &json!({"password": crate::common::PASSWORD}), &token_of(&a)).await;
    assert_eq!((s, body["data"]["reasons"].clone()), (409, json!(["balance_outstanding"])));
    let spec = CaptureSpec { hold_id: h.id.clone(), amount: 100, splits: market_splits(100, AccountRef::MarketFee, 0), key: "c".into(), memo: String::new(), metered: true };
    ledger::capture(&app.state.db, spec).await.unwrap();
    ledger::release(&app.state.db, &h.id).await.unwrap();
    // Released, but the hour's usage is not billed yet.
    assert_eq!(check().await["reasons"], json!(["balance_outstanding"]));
    zmarket::billing::bills::close_due(&app.state.db, zmarket::db::now() + Duration::hours(2)).await.unwrap();
    assert_eq!(check().await, json!({"deletable": true, "reasons": []}));
    verified(&app).await;
}

#[tokio::test]
async fn runway_notices_when_a_running_rental_is_going_to_stop() {
    let app = no_bonus().await;
    let a = app.signed_in("a@example.com").await;
    grant(&app, "a@example.com", 10_000).await;
    let ua = AccountRef::User(user_id_of(&app, &a).await.into());
    let db = &app.state.db;
    let notices = async |lang: &str| -> Vec<Value> {
        let res = app.client.get(app.url("/api/ebs/v1/notifications")).bearer_auth(token_of(&a)).header("Accept-Language", lang).send().await.unwrap();
        let body: Value = res.json().await.unwrap();
        body["data"]["items"].as_array().unwrap().clone()
    };
    let titles = async |lang: &str| -> Vec<String> { notices(lang).await.iter().map(|n| n["title"].as_str().unwrap().to_string()).collect() };
    // The server's own job may run the notices too (every minute): what counts is what the person
    // was told, so each step runs them twice and reads the notifications.
    let notices_run = async || {
        for _ in 0..2 {
            zmarket::billing::runway::send_notices(&app.state.billing).await.unwrap();
        }
    };
    // Coins held for something that does not run (an order not started): nothing stops, no notice.
    ledger::hold(db, hold_spec(&ua, 2000, "o1")).await.unwrap();
    notices_run().await;
    assert_eq!(wallet(&app, &token_of(&a)).await["runway_secs"], Value::Null);
    assert!(titles("en").await.is_empty());
    // A rental holding 50.00 at 1.00 an hour: 50 hours, beyond the 24 of low_balance_hours.
    let h1 = ledger::hold(db, HoldSpec { burn_per_hour: 100, ..hold_spec(&ua, 5000, "r1") }).await.unwrap().hold;
    notices_run().await;
    assert_eq!(wallet(&app, &token_of(&a)).await["runway_secs"], 180_000);
    assert!(titles("en").await.is_empty());
    // At 3.00 an hour the held coins last 16 h 40 min: told once, with the top-up page.
    ledger::set_burn(db, &h1.id, 300).await.unwrap();
    notices_run().await;
    assert_eq!(titles("en").await, vec!["A running rental stops in about 16 h 40 min"]);
    {
        use sea_orm::EntityTrait;
        let rows = zmarket::db::entity::notifications::Entity::find().all(db).await.unwrap();
        assert!(rows.iter().any(|n| n.params.contains("/wallet/top-up")), "{rows:?}");
    }
    app.wait_for_mail_to("a@example.com", "/wallet/top-up", 0).await;
    // Spending faster: 50 minutes left.
    ledger::set_burn(db, &h1.id, 6000).await.unwrap();
    notices_run().await;
    assert_eq!(titles("en").await, vec!["A running rental stops in about 50 min", "A running rental stops in about 16 h 40 min"]);
    assert_eq!(titles("zh-CN").await, vec!["运行中的租用约 50 分钟 后暂停", "运行中的租用约 16 小时 40 分钟 后暂停"]);
    app.wait_for_mail_to("a@example.com", "/wallet/top-up", 1).await;
    assert_eq!(app.mail_count_to("a@example.com", "/wallet/top-up").await, 2);
    // Nothing burning any more: the notice level resets, nothing is sent.
    ledger::set_burn(db, &h1.id, 0).await.unwrap();
    ledger::release(db, &h1.id).await.unwrap();
    assert_eq!(zmarket::billing::runway::send_notices(&app.state.billing).await.unwrap(), 0);
    let account = ledger::account(db, &ua).await.unwrap().unwrap();
    assert_eq!(account.runway_notice, 0);
    assert_eq!(titles("en").await.len(), 2);
    verified(&app).await;
}

#[tokio::test]
async fn a_company_runway_notice_sends_its_admins_to_the_company_page() {
    let app = no_bonus().await;
    let (person, admin, id) = admin_with(&app, "a@example.com", 10_000, "Acme Compute").await;
    let (s, body, _) = post(&app, FUND, &json!({"amount": 5000}), &token_of(&admin), Some("f-1"), "en").await;
    assert_eq!(s, 200, "{body}");
    let company = AccountRef::Company(id.into());
    // A company rental holding 50.00 at 3.00 an hour: 16 h 40 min, within the 24 of low_balance_hours.
    ledger::hold(&app.state.db, HoldSpec { burn_per_hour: 300, ..hold_spec(&company, 5000, "r1") }).await.unwrap();
    zmarket::billing::runway::send_notices(&app.state.billing).await.unwrap();
    let res = app.client.get(app.url("/api/ebs/v1/notifications")).bearer_auth(token_of(&person)).header("Accept-Language", "en").send().await.unwrap();
    let told: Value = res.json().await.unwrap();
    let items = told["data"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{told}");
    assert_eq!(items[0]["title"], "A running rental stops in about 16 h 40 min");
    assert_eq!(items[0]["path"], "/company", "{told}");
    assert!(items[0]["body"].as_str().unwrap().contains("the company's wallet"), "{told}");
    app.wait_for_mail_to("a@example.com", "/company", 0).await;
    assert_eq!(app.mail_count_to("a@example.com", "/wallet/top-up").await, 0);
    verified(&app).await;
}

#[tokio::test]
async fn the_wallet_is_in_the_openapi_document() {
    let app = TestApp::spawn().await;
    let (_, doc) = app.get_json("/api/openapi.json").await;
    for path in [WALLET, ENTRIES, BILLS, FUND, "/api/billing/v1/wallet/daily"] {
        assert!(doc["paths"][path].is_object(), "{path}");
    }
    let params = doc["paths"][FUND]["post"]["parameters"].as_array().unwrap();
    assert!(params.iter().any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header"));
}
