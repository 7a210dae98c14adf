//! The operator's console (`/api/ops/v1`): operators made on the command line, every call refused
//! to others, people (search, suspend, grant) and the audit (the command line's money writes too,
//! and a memo written as a formula reaching a CSV as text).

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::common::*;
use crate::scenario::{Roles, get, refused_signed_out, refused_to, says, with};

pub(crate) mod apps;

pub(crate) fn make_operator(app: &TestApp, email: &str) {
    let (ok, out, err) = cli(app, &["operator", "grant", "--email", email]);
    assert!(ok, "{out}{err}");
    assert!(out.contains(&format!("{} is now an operator", email.to_lowercase())), "{out}");
}

/// Signs in op@example.com and makes them an operator of the market: their token.
pub(crate) async fn signed_in_operator(app: &TestApp) -> String {
    let token = token_of(&app.signed_in("op@example.com").await);
    make_operator(app, "op@example.com");
    token
}

pub(crate) async fn send(app: &TestApp, method: &str, path: &str, body: Option<&Value>, token: &str, lang: &str, key: Option<&str>) -> (u16, Value, HeaderMap) {
    let mut req = match method {
        "GET" => app.client.get(app.url(path)),
        "PUT" => app.client.put(app.url(path)),
        _ => app.client.post(app.url(path)),
    }
    .bearer_auth(token)
    .header("Accept-Language", lang);
    if let Some(b) = body {
        req = req.json(b);
    }
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    let res = req.send().await.expect("request");
    let (status, headers) = (res.status().as_u16(), res.headers().clone());
    let text = res.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")), headers)
}

fn menu_paths(menu: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for e in menu.as_array().unwrap() {
        out.push(e["path"].as_str().unwrap().to_string());
        for c in e["children"].as_array().into_iter().flatten() {
            out.push(c["path"].as_str().unwrap().to_string());
        }
    }
    out
}

#[tokio::test]
async fn operators_are_made_on_the_command_line_and_the_last_one_stays() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("a@example.com").await;
    let b = app.signed_in("b@example.com").await;
    let (ta, tb) = (token_of(&a), token_of(&b));
    let (_, menu) = app.get_auth("/api/iam/v1/menus", &ta).await;
    assert!(!menu_paths(&menu["data"]).iter().any(|p| p.starts_with("/operator")), "{menu}");
    assert_eq!(app.get_auth("/api/ops/v1/users", &ta).await.0, 403);

    // Granted while the server runs: the next call (same token) sees it.
    make_operator(&app, "A@Example.com");
    let (_, menu) = app.get_auth("/api/iam/v1/menus", &ta).await;
    let paths = menu_paths(&menu["data"]);
    for p in ["/operator", "/operator/people", "/operator/audit"] {
        assert!(paths.contains(&p.to_string()), "{p} in {paths:?}");
    }
    let (s, body) = app.get_auth("/api/ops/v1/users", &ta).await;
    assert_eq!(s, 200, "{body}");
    let (ok, out, _) = cli(&app, &["operator", "grant", "--email", "a@example.com"]);
    assert!(ok && out.contains("already an operator"), "{out}");

    // The last operator cannot be revoked; once there is another, they can.
    let (ok, _, err) = cli(&app, &["operator", "revoke", "--email", "a@example.com"]);
    assert!(!ok && err.contains("at least one operator"), "{err}");
    assert_eq!(app.get_auth("/api/ops/v1/users", &ta).await.0, 200);
    make_operator(&app, "b@example.com");
    let (ok, out, err) = cli(&app, &["operator", "revoke", "--email", "a@example.com"]);
    assert!(ok && out.contains("a@example.com is no longer an operator"), "{out}{err}");
    assert_eq!(app.get_auth("/api/ops/v1/users", &ta).await.0, 403);
    assert_eq!(app.get_auth("/api/ops/v1/users", &tb).await.0, 200);
    let (_, menu) = app.get_auth("/api/iam/v1/menus", &ta).await;
    assert!(!menu_paths(&menu["data"]).iter().any(|p| p.starts_with("/operator")), "{menu}");

    // Unknown and malformed emails change nothing.
    let (ok, _, err) = cli(&app, &["operator", "grant", "--email", "nobody@example.com"]);
    assert!(!ok && err.contains("no account has the email nobody@example.com"), "{err}");
    let (ok, _, err) = cli(&app, &["operator", "grant", "--email", "not-an-email"]);
    assert!(!ok && err.contains("is not an email address"), "{err}");

    // Each change is in the audit, written by the command line.
    let (s, audit) = app.get_auth("/api/ops/v1/audit", &tb).await;
    assert_eq!(s, 200, "{audit}");
    let items = audit["data"]["items"].as_array().unwrap();
    let actions: Vec<&str> = items.iter().map(|i| i["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["operator.revoke", "operator.grant", "operator.grant"], "{audit}");
    assert_eq!(items[0]["operator"], "command line");
    assert_eq!(items[0]["detail"]["before"]["operator"], true);
    assert_eq!(items[0]["detail"]["after"]["operator"], false);
}

#[tokio::test]
async fn every_operator_call_refuses_people_company_admins_and_members() {
    let app = TestApp::spawn().await;
    let roles = Roles::new(&app).await;
    let target = user_id_of(&app, &roles.person).await;
    // The operator too, once switched into a company: the console is a personal context.
    let op_company = seed_company(&app, "OpCo", &roles.operator, &[]).await;
    let op_in_company = app.switch(&roles.operator, &op_company).await;
    let calls = [
        get("/api/ops/v1/users"),
        get("/api/ops/v1/users?q=user"),
        get("/api/ops/v1/audit"),
        with("POST", format!("/api/ops/v1/users/{target}/suspend"), json!({"reason": "spam"})),
        with("POST", format!("/api/ops/v1/users/{target}/unsuspend"), json!({})),
        with("POST", format!("/api/ops/v1/users/{target}/grant"), json!({"amount": 100, "memo": "x"})),
    ];
    let [person, admin, member] = roles.others();
    refused_to(&app, &[person, admin, member, &op_in_company], &calls, "en", 403, "not_operator").await;
    refused_to(&app, &[admin], &calls[..1], "zh", 403, "not_operator").await;
    refused_signed_out(&app, &calls[..1]).await;
    // Nothing of it happened.
    let (_, w) = app.get_auth("/api/billing/v1/wallet", &token_of(person)).await;
    assert_eq!(w["data"]["balance"], 10_000, "{w}");

    // The operator: 200 everywhere.
    for c in &calls {
        let (s, b, _) = send(&app, c.method, &c.path, c.body.as_ref(), &token_of(&roles.operator), "en", None).await;
        assert_eq!(s, 200, "{} {}: {b}", c.method, c.path);
    }
}

#[tokio::test]
async fn people_are_found_by_email_or_name_with_balance_and_devices() {
    let app = TestApp::spawn().await;
    let op = app.signed_in("op@example.com").await;
    make_operator(&app, "op@example.com");
    let t = token_of(&op);
    app.signed_in("alice.smith@example.com").await;
    let bob = app.signed_in("bob@example.org").await;
    let (s, _) = app.put_json("/api/iam/v1/account/profile/info", &json!({"name": "Wonder_Alice"}), &token_of(&bob)).await;
    assert_eq!(s, 200);
    let (s2, all) = app.get_auth("/api/ops/v1/users", &t).await;
    assert_eq!(s2, 200, "{all}");
    assert_eq!(all["data"]["total"], 3);
    let row = &all["data"]["items"][0];
    for k in ["id", "email", "name", "verified", "suspended", "balance", "devices", "created_at"] {
        assert!(row.get(k).is_some(), "{k} in {row}");
    }
    assert_eq!((row["balance"].as_i64(), row["devices"].as_i64(), row["verified"].as_bool()), (Some(10_000), Some(0), Some(true)));

    let (_, found) = app.get_auth("/api/ops/v1/users?q=SMITH", &t).await;
    assert_eq!(found["data"]["total"], 1, "{found}");
    assert_eq!(found["data"]["items"][0]["email"], "alice.smith@example.com");
    let (_, found) = app.get_auth("/api/ops/v1/users?q=example.org", &t).await;
    assert_eq!(found["data"]["items"][0]["email"], "bob@example.org", "{found}");
    let (_, found) = app.get_auth("/api/ops/v1/users?q=wonder", &t).await;
    assert_eq!(found["data"]["items"][0]["email"], "bob@example.org", "{found}");
    // `%` is a character, not a wildcard.
    let (_, found) = app.get_auth("/api/ops/v1/users?q=%25", &t).await;
    assert_eq!(found["data"]["total"], 0, "{found}");
    let (_, page) = app.get_auth("/api/ops/v1/users?offset=1&limit=1", &t).await;
    assert_eq!((page["data"]["total"].as_i64(), page["data"]["items"].as_array().unwrap().len()), (Some(3), 1));
    let (s, bad, _) = send(&app, "GET", "/api/ops/v1/users?limit=0", None, &t, "zh", None).await;
    assert_eq!((s, bad["data"]["field"].as_str()), (400, Some("limit")), "{bad}");
}

#[tokio::test]
async fn a_suspended_person_is_refused_at_once_and_at_sign_in_until_unsuspended() {
    let app = TestApp::spawn().await;
    let op = app.signed_in("op@example.com").await;
    make_operator(&app, "op@example.com");
    let t = token_of(&op);
    let victim = app.signed_in("victim@example.com").await;
    let vt = token_of(&victim);
    let vid = user_id_of(&app, &victim).await;
    let me = user_id_of(&app, &op).await;
    // A live, cached token.
    assert_eq!(app.get_auth("/api/iam/v1/account/profile", &vt).await.0, 200);

    // Bad input: 400 with the field, in both languages; nothing changes.
    for lang in ["en", "zh"] {
        let (s, b, _) = send(&app, "POST", &format!("/api/ops/v1/users/{vid}/suspend"), Some(&json!({"reason": "  "})), &t, lang, None).await;
        assert_eq!((s, b["data"]["field"].as_str()), (400, Some("reason")), "{b}");
        let want = if lang == "en" { "Give a reason of 1 to 500 characters" } else { "请填写 1 到 500 个字符的原因" };
        assert_eq!(b["msg"], want);
    }
    let (s, b, _) = send(&app, "POST", &format!("/api/ops/v1/users/{vid}/suspend"), Some(&json!({"reason": "x".repeat(501)})), &t, "en", None).await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(app.get_auth("/api/iam/v1/account/profile", &vt).await.0, 200);
    // Yourself: 409.
    let (s, b, _) = send(&app, "POST", &format!("/api/ops/v1/users/{me}/suspend"), Some(&json!({"reason": "oops"})), &t, "en", None).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("You cannot suspend yourself")), "{b}");
    let (s, _, _) = send(&app, "POST", "/api/ops/v1/users/nobody/suspend", Some(&json!({"reason": "x"})), &t, "en", None).await;
    assert_eq!(s, 404);

    let (s, b, _) = send(&app, "POST", &format!("/api/ops/v1/users/{vid}/suspend"), Some(&json!({"reason": "Spam in the market"})), &t, "en", None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!((b["data"]["suspended"].as_bool(), b["data"]["suspended_reason"].as_str()), (Some(true), Some("Spam in the market")));
    // Their live token is refused on its next call.
    assert_eq!(app.get_auth("/api/iam/v1/account/profile", &vt).await.0, 401);
    // Sign-in answers 403 with the reason, in their language.
    let sign_in = with("POST", "/api/iam/v2/login/password", json!({"email": "victim@example.com", "password": PASSWORD}));
    let suspended = ["This account is suspended: Spam in the market", "该账户已被停用：Spam in the market"];
    says(&app, &sign_in, None, (403, "account_suspended", None), suspended).await;
    let (_, list) = app.get_auth("/api/ops/v1/users?q=victim", &t).await;
    assert_eq!(list["data"]["items"][0]["suspended"], true);

    let (s, b, _) = send(&app, "POST", &format!("/api/ops/v1/users/{vid}/unsuspend"), Some(&json!({})), &t, "en", None).await;
    assert_eq!((s, b["data"]["suspended"].as_bool()), (200, Some(false)), "{b}");
    let again = app.login("victim@example.com", PASSWORD).await;
    assert_eq!(app.get_auth("/api/iam/v1/account/profile", &token_of(&again)).await.0, 200);

    let (_, audit) = app.get_auth("/api/ops/v1/audit?action=user.suspend", &t).await;
    assert_eq!(audit["data"]["total"], 1, "{audit}");
    let e = &audit["data"]["items"][0];
    assert_eq!((e["operator"].as_str(), e["target"].as_str()), (Some("op@example.com"), Some(format!("user:{vid}").as_str())));
    assert_eq!((e["detail"]["before"]["suspended"].as_bool(), e["detail"]["after"]["reason"].as_str()), (Some(false), Some("Spam in the market")));
    assert_eq!(e["detail"]["sessions_ended"], 1);
    let (_, audit) = app.get_auth("/api/ops/v1/audit", &t).await;
    assert_eq!(audit["data"]["items"][0]["action"], "user.unsuspend", "newest first: {audit}");
    let (s, b, _) = send(&app, "GET", "/api/ops/v1/audit?action=nonsense", None, &t, "zh", None).await;
    assert_eq!((s, b["data"]["field"].as_str(), b["msg"].as_str()), (400, Some("action"), Some("未知的操作类型")));
}

#[tokio::test]
async fn a_suspended_persons_api_key_is_refused() {
    let app = TestApp::spawn().await;
    let op = app.signed_in("op@example.com").await;
    make_operator(&app, "op@example.com");
    let victim = app.signed_in("victim@example.com").await;
    let vid = user_id_of(&app, &victim).await;
    let (s, key) = app.post_json("/api/iam/v1/api-keys", &json!({"name": "ci"}), Some(&token_of(&victim))).await;
    assert_eq!(s, 200, "{key}");
    let key = key["data"]["key"].as_str().expect("the key once").to_string();
    assert_eq!(app.get_auth("/api/iam/v1/account/profile", &key).await.0, 200);
    let (s, b, _) = send(&app, "POST", &format!("/api/ops/v1/users/{vid}/suspend"), Some(&json!({"reason": "abuse"})), &token_of(&op), "en", None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(app.get_auth("/api/iam/v1/account/profile", &key).await.0, 401);
    send(&app, "POST", &format!("/api/ops/v1/users/{vid}/unsuspend"), Some(&json!({})), &token_of(&op), "en", None).await;
    assert_eq!(app.get_auth("/api/iam/v1/account/profile", &key).await.0, 200);
}

#[tokio::test]
async fn an_operators_grant_goes_through_the_ledger_once_per_key() {
    let app = TestApp::spawn().await;
    let op = app.signed_in("op@example.com").await;
    make_operator(&app, "op@example.com");
    let t = token_of(&op);
    let p = app.signed_in("p@example.com").await;
    let pid = user_id_of(&app, &p).await;
    let path = format!("/api/ops/v1/users/{pid}/grant");

    for (body, field) in [(json!({"amount": 0}), "amount"), (json!({"amount": -5}), "amount"), (json!({"amount": 100, "memo": "x".repeat(201)}), "memo")] {
        let (s, b, _) = send(&app, "POST", &path, Some(&body), &t, "zh", Some("bad")).await;
        assert_eq!((s, b["data"]["field"].as_str()), (400, Some(field)), "{b}");
    }
    let (s, _, _) = send(&app, "POST", "/api/ops/v1/users/nobody/grant", Some(&json!({"amount": 100})), &t, "en", None).await;
    assert_eq!(s, 404);

    let body = json!({"amount": 2_550, "memo": "prize"});
    let (s, first, _) = send(&app, "POST", &path, Some(&body), &t, "en", Some("k-1")).await;
    assert_eq!(s, 200, "{first}");
    assert_eq!((first["data"]["amount"].as_i64(), first["data"]["memo"].as_str()), (Some(2_550), Some("prize")), "{first}");
    let (s, again, headers) = send(&app, "POST", &path, Some(&body), &t, "en", Some("k-1")).await;
    assert_eq!(s, 200, "{again}");
    assert_eq!(again["data"]["id"], first["data"]["id"]);
    assert_eq!(header(&headers, "idempotent-replayed"), "true");
    let (_, w) = app.get_auth("/api/billing/v1/wallet", &token_of(&p)).await;
    assert_eq!(w["data"]["balance"], 10_000 + 2_550, "granted once: {w}");
    // Another key grants again.
    let (s, _, _) = send(&app, "POST", &path, Some(&body), &t, "en", Some("k-2")).await;
    assert_eq!(s, 200);
    let (_, w) = app.get_auth("/api/billing/v1/wallet", &token_of(&p)).await;
    assert_eq!(w["data"]["balance"], 10_000 + 2 * 2_550);

    let (_, audit) = app.get_auth("/api/ops/v1/audit?action=user.grant", &t).await;
    assert_eq!(audit["data"]["total"], 2, "{audit}");
    let e = &audit["data"]["items"][0];
    assert_eq!((e["detail"]["before"]["balance"].as_i64(), e["detail"]["after"]["balance"].as_i64()), (Some(12_550), Some(15_100)), "{e}");
    let (ok, out, err) = cli(&app, &["ledger", "verify"]);
    assert!(ok, "{out}{err}");
}

/// `coins grant` and `coins codes` on the command line write the operator's audit ("command
/// line"); a memo written as a formula reaches the wallet's CSV as text.
#[tokio::test]
async fn command_line_money_is_audited_and_csv_formulas_are_text() {
    let app = TestApp::spawn().await;
    app.signed_in("op@example.com").await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    crate::ops::make_operator(&app, "op@example.com");
    let op = token_of(&app.login("op@example.com", PASSWORD).await);
    let (ok, out, err) = cli(&app, &["coins", "grant", "--email", "alice@example.com", "--amount", "12.50", "--memo", "=HYPERLINK(\"http://evil\",\"x\")"]);
    assert!(ok, "{out}{err}");
    let (ok, out, err) = cli(&app, &["coins", "codes", "--amount", "5", "--count", "2"]);
    assert!(ok && out.lines().count() == 2, "{out}{err}");
    // Bad input changes nothing and says why.
    let (ok, _, err) = cli(&app, &["coins", "grant", "--email", "nobody@example.com", "--amount", "1"]);
    assert!(!ok && err.contains("no account has the email nobody@example.com"), "{err}");
    let (s, audit) = app.get_auth("/api/ops/v1/audit", &op).await;
    assert_eq!(s, 200, "{audit}");
    let items = audit["data"]["items"].as_array().unwrap();
    let money: Vec<(&str, &str)> = items
        .iter()
        .filter(|i| i["action"] != "operator.grant")
        .map(|i| (i["action"].as_str().unwrap(), i["operator"].as_str().unwrap()))
        .collect();
    assert_eq!(money, [("codes.issue", "command line"), ("user.grant", "command line")], "{audit}");
    let grant = items.iter().find(|i| i["action"] == "user.grant").unwrap();
    assert_eq!(grant["detail"]["amount"], 1250, "{grant}");
    assert_eq!(grant["detail"]["after"]["balance"].as_i64().unwrap() - grant["detail"]["before"]["balance"].as_i64().unwrap(), 1250);
    let codes = items.iter().find(|i| i["action"] == "codes.issue").unwrap();
    assert_eq!(codes["detail"]["count"], 2, "{codes}");

    let csv = app.client.get(app.url("/api/billing/v1/wallet/entries.csv")).bearer_auth(&alice).send().await.unwrap().text().await.unwrap();
    assert!(csv.contains("'=HYPERLINK"), "{csv}");
    assert!(!csv.contains(",=HYPERLINK") && !csv.contains(",\"=HYPERLINK"), "{csv}");
}
