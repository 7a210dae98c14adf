//! Personal API keys: `zk_…` keys made from a signed-in session, shown once, stored hashed,
//! accepted as `Authorization: Bearer` wherever an access token is, acting as their owner in the
//! context they were made in; revoked, expired, a removed membership or a deleted account end them
//! at once, on every instance; a key that is not valid says so (and `zmarket tunnel` with it).

use chrono::{Duration, Utc};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{Value, json};
use zmarket::db::entity::api_keys;

use crate::common::*;
use crate::scenario::{each_says, with};

const KEYS: &str = "/api/iam/v1/api-keys";
const PROFILE: &str = "/api/iam/v1/account/profile";

/// A call in a language: (status, envelope).
async fn call(app: &TestApp, method: reqwest::Method, path: &str, body: Option<&Value>, token: &str, lang: &str) -> (u16, Value) {
    let mut req = app.client.request(method, app.url(path)).bearer_auth(token).header("accept-language", lang);
    if let Some(b) = body {
        req = req.json(b);
    }
    json_of(req.send().await.expect("request")).await
}

/// Creates a key from `token` (a session's access token) and returns its data.
async fn create_key(app: &TestApp, token: &str, name: &str, expires_at: Option<String>) -> Value {
    let (status, body) = app.post_json(KEYS, &json!({"name": name, "expires_at": expires_at}), Some(token)).await;
    assert_eq!(status, 200, "{body}");
    body["data"].clone()
}

fn key_of(created: &Value) -> String {
    created["key"].as_str().expect("key").to_string()
}

async fn list(app: &TestApp, token: &str) -> Value {
    let (status, body) = app.get_auth(KEYS, token).await;
    assert_eq!(status, 200, "{body}");
    body["data"].clone()
}

async fn revoke(app: &TestApp, token: &str, id: &str, lang: &str) -> (u16, Value) {
    call(app, reqwest::Method::DELETE, &format!("{KEYS}/{id}"), None, token, lang).await
}

#[tokio::test]
async fn a_key_acts_as_its_owner_until_revoked() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let session = token_of(&ada);
    let ada_id = user_id_of(&app, &ada).await;

    let created = create_key(&app, &session, "  deploy script  ", None).await;
    let key = key_of(&created);
    // `zk_` and 256 random bits, URL-safe base64 (43 characters).
    assert!(key.starts_with("zk_") && key.len() == 46, "{key}");
    assert!(key[3..].chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'), "{key}");
    assert_eq!(created["name"], "deploy script", "the name is trimmed");
    assert_eq!(created["prefix"], &key[..9]);
    // No expiry asked: 90 days (issue 43, item 4); the default scopes.
    let expires = chrono::DateTime::parse_from_rfc3339(created["expires_at"].as_str().expect("an expiry")).unwrap();
    let days = (expires.with_timezone(&Utc) - Utc::now()).num_hours() as f64 / 24.0;
    assert!((89.9..=90.0).contains(&days), "{days}");
    assert_eq!(created["scopes"], json!(["read", "apps"]));
    assert!(created["created_at"].as_str().is_some());
    let id = created["id"].as_str().unwrap().to_string();
    // A second key is another secret.
    let other = create_key(&app, &session, "other", None).await;
    assert_ne!(key_of(&other), key);

    // The database keeps the hash, never the key.
    let row = api_keys::Entity::find_by_id(id.clone()).one(&app.state.db).await.unwrap().expect("row");
    assert_ne!(row.key_hash, key);
    assert!(!row.key_hash.contains(&key[3..]));
    assert_eq!(row.key_hash.len(), 64, "SHA-256, hex");

    // Used as a Bearer credential, it is its owner (the scheme is case-insensitive).
    let (status, body) = app.get_auth(PROFILE, &key).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["id"], ada_id.as_str());
    let res = app.client.get(app.url(PROFILE)).header("authorization", format!("bearer {key}")).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    // Anything that only looks like a key is refused.
    for bogus in ["zk_", "zk_bogus", &format!("{key}x"), &key[..45]] {
        let (status, body) = app.get_auth(PROFILE, bogus).await;
        assert_eq!(status, 401, "{bogus}: {body}");
    }

    // Listed (newest first) with its prefix, its use recorded; never the key itself.
    let listed = list(&app, &session).await;
    assert_eq!(listed["total"], 2);
    let item = &listed["items"][1];
    assert_eq!(item["id"], id.as_str());
    assert_eq!(item["name"], "deploy script");
    assert_eq!(item["prefix"], &key[..9]);
    assert_eq!(item["smeId"], "user");
    assert_eq!(item["expires_at"], created["expires_at"]);
    assert_eq!(item["scopes"], json!(["read", "apps"]));
    assert!(item.get("key").is_none());
    let used = item["last_used_at"].as_str().expect("last_used_at set after a use").to_string();
    assert!(listed["items"][0]["last_used_at"].is_null(), "the other key was never used");
    assert!(!listed.to_string().contains(&key[3..]));

    // Used again within the minute: no new write (at most one a minute per key).
    for _ in 0..3 {
        assert_eq!(app.get_auth(PROFILE, &key).await.0, 200);
    }
    let row = api_keys::Entity::find_by_id(id.clone()).one(&app.state.db).await.unwrap().unwrap();
    assert_eq!(list(&app, &session).await["items"][1]["last_used_at"], used.as_str());
    assert!(row.last_used_at.is_some());

    // Revoked: refused at once, although this instance had resolved it just before.
    let (status, body) = revoke(&app, &session, &id, "en").await;
    assert_eq!(status, 200, "{body}");
    assert!(body["data"].is_null());
    let (status, body) = app.get_auth(PROFILE, &key).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!((body["error"].as_str(), body["msg"].as_str()), (Some("api_key_invalid"), Some("This API key is not valid: create a new one on your account page")));
    // Gone from the list; revoking again is unknown.
    let listed = list(&app, &session).await;
    assert_eq!(listed["total"], 1);
    assert_eq!(listed["items"][0]["id"], other["id"]);
    let (status, body) = revoke(&app, &session, &id, "en").await;
    assert_eq!((status, body["msg"].as_str().unwrap()), (404, "API key not found"));
    // The other key still works.
    assert_eq!(app.get_auth(PROFILE, &key_of(&other)).await.0, 200);
}

#[tokio::test]
async fn another_persons_key_is_not_found() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let bob = app.signed_in("bob@example.com").await;
    let created = create_key(&app, &token_of(&ada), "ada's", None).await;
    let id = created["id"].as_str().unwrap();

    let (status, body) = revoke(&app, &token_of(&bob), id, "en").await;
    assert_eq!((status, body["msg"].as_str().unwrap()), (404, "API key not found"));
    let (status, body) = revoke(&app, &token_of(&bob), id, "zh-CN").await;
    assert_eq!((status, body["msg"].as_str().unwrap()), (404, "API 密钥不存在"));
    // Nor with Bob's own key: a key revokes no key (that takes a session, issue 43 item 4).
    let bobs = key_of(&create_key(&app, &token_of(&bob), "bob's", None).await);
    assert_eq!(revoke(&app, &bobs, id, "en").await.1["error"], "session_required");
    for unknown in ["0190c1d2-0000-7000-8000-000000000000", "nope"] {
        assert_eq!(revoke(&app, &token_of(&ada), unknown, "en").await.0, 404, "{unknown}");
    }
    // Bob lists only his own; Ada's key still works.
    let listed = list(&app, &token_of(&bob)).await;
    assert_eq!(listed["total"], 1);
    assert_eq!(listed["items"][0]["name"], "bob's");
    assert_eq!(app.get_auth(PROFILE, &key_of(&created)).await.0, 200);
    // Without a credential, the list is 401.
    assert_eq!(app.get_json(KEYS).await.0, 401);
}

#[tokio::test]
async fn bad_input_is_refused_in_both_languages_and_creates_nothing() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let token = token_of(&ada);
    let past = (Utc::now() - Duration::minutes(1)).to_rfc3339();
    let far = (Utc::now() + Duration::days(400)).to_rfc3339();
    let create = |body: Value| with("POST", KEYS, body);
    let unnamed = ((400, "api_key_name_required", Some("name")), ["Please name the key", "请输入密钥名称"]);
    let bad_name = ((400, "api_key_name_invalid", Some("name")), ["The key name must be at most 64 characters, without control characters", "密钥名称最多 64 个字符，且不能包含控制字符"]);
    let not_a_time = ((400, "api_key_expiry_invalid", Some("expires_at")), ["The expiry must be a date and time such as 2030-01-31T00:00:00Z", "过期时间必须是日期和时间，例如 2030-01-31T00:00:00Z"]);
    let rows = [
        (create(json!({})), unnamed.0, unnamed.1),
        (create(json!({"name": "   ", "expires_at": null})), unnamed.0, unnamed.1),
        (create(json!({"name": "x".repeat(65)})), bad_name.0, bad_name.1),
        (create(json!({"name": "line\nbreak"})), bad_name.0, bad_name.1),
        (create(json!({"name": "bell\u{7}"})), bad_name.0, bad_name.1),
        (create(json!({"name": "ci", "expires_at": "next tuesday"})), not_a_time.0, not_a_time.1),
        (create(json!({"name": "ci", "expires_at": "2030-01-31"})), not_a_time.0, not_a_time.1),
        (create(json!({"name": "ci", "expires_at": past})), (400, "api_key_expiry_past", Some("expires_at")), ["The expiry must be in the future", "过期时间必须晚于当前时间"]),
        (create(json!({"name": "ci", "expires_at": far})), (400, "api_key_expiry_too_far", Some("expires_at")), ["A key can live at most 365 days", "密钥的有效期最长为 365 天"]),
        (create(json!({"name": "ci", "scopes": []})), (400, "api_key_scopes_required", Some("scopes")), ["Choose at least one thing the key may do", "请至少选择一项密钥权限"]),
        (create(json!({"name": "ci", "scopes": ["read", "admin"]})), (400, "api_key_scope_unknown", Some("scopes")), ["A key's scopes are read, apps, wallet and ops", "密钥的权限只能是 read、apps、wallet 和 ops"]),
    ];
    each_says(&app, Some(&token), &rows).await;
    assert_eq!(list(&app, &token).await["total"], 0, "nothing was created");
    assert_eq!(api_keys::Entity::find().count(&app.state.db).await.unwrap(), 0);

    // The edges that pass: 64 characters (of any script), an expiry with an offset.
    let name = "密".repeat(64);
    let later = chrono::SubsecRound::trunc_subsecs(Utc::now() + Duration::days(30), 3).with_timezone(&chrono::FixedOffset::east_opt(8 * 3600).unwrap()).to_rfc3339();
    let created = create_key(&app, &token, &name, Some(later.clone())).await;
    assert_eq!(created["name"], name.as_str());
    let expires = chrono::DateTime::parse_from_rfc3339(created["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!(expires, chrono::DateTime::parse_from_rfc3339(&later).unwrap());
}

#[tokio::test]
async fn at_most_twenty_live_keys_per_person() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let token = token_of(&ada);
    let mut ids = Vec::new();
    for i in 0..20 {
        ids.push(create_key(&app, &token, &format!("key {i}"), None).await["id"].as_str().unwrap().to_string());
    }
    let body = json!({"name": "one too many"});
    let (status, res) = call(&app, reqwest::Method::POST, KEYS, Some(&body), &token, "en").await;
    assert_eq!((status, res["msg"].as_str().unwrap()), (409, "You can have at most 20 API keys: revoke one first"));
    let (status, res) = call(&app, reqwest::Method::POST, KEYS, Some(&body), &token, "zh-CN").await;
    assert_eq!((status, res["msg"].as_str().unwrap()), (409, "最多只能有 20 个 API 密钥：请先撤销一个"));
    assert_eq!(list(&app, &token).await["total"], 20);
    // Another person is not limited by Ada's keys.
    let bob = app.signed_in("bob@example.com").await;
    create_key(&app, &token_of(&bob), "bob's", None).await;
    // A revoked key makes room.
    assert_eq!(revoke(&app, &token, &ids[0], "en").await.0, 200);
    create_key(&app, &token, "in its place", None).await;
    assert_eq!(call(&app, reqwest::Method::POST, KEYS, Some(&body), &token, "en").await.0, 409);
}

#[tokio::test]
async fn a_key_cannot_make_keys_switch_or_sign_out() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let key = key_of(&create_key(&app, &token_of(&ada), "script", None).await);
    let body = json!({"name": "made by a key"});
    let (status, res) = call(&app, reqwest::Method::POST, KEYS, Some(&body), &key, "en").await;
    assert_eq!((status, res["msg"].as_str().unwrap()), (403, "Sign in to do this: an API key cannot"));
    let (status, res) = call(&app, reqwest::Method::POST, KEYS, Some(&body), &key, "zh-CN").await;
    assert_eq!((status, res["msg"].as_str().unwrap()), (403, "请登录后操作：API 密钥不能执行此操作"));
    let (status, res) = app.post_json("/api/iam/v1/switch", &json!({"smeId": "user"}), Some(&key)).await;
    assert_eq!(status, 403, "{res}");
    let (status, res) = app.post_json("/api/iam/v1/logout", &json!({}), Some(&key)).await;
    assert_eq!(status, 403, "{res}");
    // It may read its owner's keys; nothing was made, and it still works.
    let listed = list(&app, &key).await;
    assert_eq!(listed["total"], 1);
    assert_eq!(app.get_auth(PROFILE, &key).await.0, 200);
    // A key is not a refresh token.
    assert_eq!(app.get_auth("/api/iam/v1/refresh", &key).await.0, 401);
}

#[tokio::test]
async fn a_company_key_acts_in_its_company_until_the_member_is_removed() {
    let app = TestApp::spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let bob = app.signed_in("bob@example.com").await;
    let company = seed_company(&app, "Acme Compute", &owner, &[(&bob, "member")]).await;
    let in_company = app.switch(&bob, &company).await;
    let company_key = key_of(&create_key(&app, &token_of(&in_company), "acme ci", None).await);
    let personal_key = key_of(&create_key(&app, &token_of(&bob), "home", None).await);

    // The company key sees what Bob sees as a member there (the member's menu, the company's
    // members); the personal key what he sees as himself.
    let (_, member_menu) = app.get_auth("/api/iam/v1/menus", &token_of(&in_company)).await;
    let (_, personal_menu) = app.get_auth("/api/iam/v1/menus", &token_of(&bob)).await;
    assert_ne!(member_menu["data"], personal_menu["data"]);
    assert_eq!(app.get_auth("/api/iam/v1/menus", &company_key).await.1["data"], member_menu["data"]);
    assert_eq!(app.get_auth("/api/iam/v1/menus", &personal_key).await.1["data"], personal_menu["data"]);
    let (status, body) = app.get_auth("/api/iam/v1/sme/members", &company_key).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["total"], 2);
    let listed = list(&app, &token_of(&bob)).await;
    let by_name = |name: &str| listed["items"].as_array().unwrap().iter().find(|k| k["name"] == name).unwrap().clone();
    assert_eq!(by_name("acme ci")["smeId"], company.as_str());
    assert_eq!(by_name("home")["smeId"], "user");

    // Removed from the company: the company key stops at once; the personal one goes on.
    let admin = app.switch(&owner, &company).await;
    let bob_id = user_id_of(&app, &bob).await;
    let (status, body) = app.post_json("/api/iam/v1/sme/remove-member", &json!({"user_id": bob_id}), Some(&token_of(&admin))).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = app.get_auth(PROFILE, &company_key).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(app.get_auth(PROFILE, &personal_key).await.0, 200);
}

#[tokio::test]
async fn an_expired_key_is_refused() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let token = token_of(&ada);
    let expires = Utc::now() + Duration::seconds(3);
    let created = create_key(&app, &token, "short-lived", Some(expires.to_rfc3339())).await;
    let key = key_of(&created);
    // Resolved (and kept by this instance) while it is live.
    assert_eq!(app.get_auth(PROFILE, &key).await.0, 200);
    let left = expires - Utc::now() + Duration::milliseconds(200);
    if let Ok(wait) = left.to_std() {
        tokio::time::sleep(wait).await;
    }
    let (status, body) = app.get_auth(PROFILE, &key).await;
    assert_eq!(status, 401, "{body}");
    // Still listed, with its expiry, and no longer counted among the live ones.
    let listed = list(&app, &token).await;
    assert_eq!(listed["total"], 1);
    assert!(listed["items"][0]["expires_at"].as_str().is_some());

    // An expiry moved into the past by a write elsewhere ends a key resolved before, at once.
    let other = create_key(&app, &token, "moved", None).await;
    assert_eq!(app.get_auth(PROFILE, &key_of(&other)).await.0, 200);
    api_keys::Entity::update_many()
        .col_expr(api_keys::Column::ExpiresAt, (Utc::now() - Duration::seconds(1)).into())
        .filter(api_keys::Column::Id.eq(other["id"].as_str().unwrap()))
        .exec(&app.state.db)
        .await
        .unwrap();
    assert_eq!(app.get_auth(PROFILE, &key_of(&other)).await.0, 401);
}

#[tokio::test]
async fn deleting_the_account_removes_its_keys() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let key = key_of(&create_key(&app, &token_of(&ada), "script", None).await);
    assert_eq!(app.get_auth(PROFILE, &key).await.0, 200);
    let (status, body) = app.delete_json("/api/iam/v1/account", &json!({"password": PASSWORD}), &token_of(&ada)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(app.get_auth(PROFILE, &key).await.0, 401);
    assert_eq!(api_keys::Entity::find().count(&app.state.db).await.unwrap(), 0);
}

#[tokio::test]
async fn a_key_revoked_on_one_instance_ends_on_both() {
    let (a, b) = crate::instances::pair(|_| {}).await;
    let ada = a.signed_in("roamer@example.com").await;
    let created = create_key(&a, &token_of(&ada), "roaming", None).await;
    let key = key_of(&created);
    // Used on both; B has resolved it.
    assert_eq!(a.get_auth(PROFILE, &key).await.0, 200);
    let (status, body) = b.get_auth(PROFILE, &key).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(b.get_auth(PROFILE, &key).await.0, 200);
    // Its use was recorded once, by the first instance that saw it.
    let row = api_keys::Entity::find().filter(api_keys::Column::Id.eq(created["id"].as_str().unwrap())).one(&a.state.db).await.unwrap().unwrap();
    assert!(row.last_used_at.is_some());
    let (status, _) = revoke(&a, &token_of(&ada), created["id"].as_str().unwrap(), "en").await;
    assert_eq!(status, 200);
    let (status, body) = b.get_auth(PROFILE, &key).await;
    assert_eq!(status, 401, "{body}");
}

// ---- issue 43, item 4: keys end with the password, expire, and do only what they may ----

/// A password change ends every key of the person (and a reset does too); the list is empty
/// after, and a new key works again.
#[tokio::test]
async fn a_password_change_or_reset_revokes_every_key() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let session = token_of(&ada);
    let keys = [key_of(&create_key(&app, &session, "ci", None).await), key_of(&create_key(&app, &session, "laptop", None).await)];
    for k in &keys {
        assert_eq!(app.get_auth(PROFILE, k).await.0, 200);
    }
    let change = json!({"old_password": PASSWORD, "new_password": "Another-pass-1", "confirm_password": "Another-pass-1"});
    let (status, body) = app.put_json("/api/iam/v1/account/password", &change, &session).await;
    assert_eq!(status, 200, "{body}");
    for k in &keys {
        let (status, body) = app.get_auth(PROFILE, k).await;
        assert_eq!((status, body["error"].as_str()), (401, Some("api_key_invalid")), "{body}");
    }
    assert_eq!(list(&app, &session).await["total"], 0);

    // A reset by the mailed link ends the keys made since.
    let key = key_of(&create_key(&app, &session, "after", None).await);
    assert_eq!(app.get_auth(PROFILE, &key).await.0, 200);
    let (status, _) = app.post_json("/api/iam/v1/password/forgot", &json!({"email": "ada@example.com"}), None).await;
    assert_eq!(status, 200);
    let mail = app.wait_for_mail_to("ada@example.com", "reset-password?token=", 0).await;
    let token = link_in(&mail).split("token=").nth(1).unwrap().split('&').next().unwrap().to_string();
    let (status, body) = app.post_json("/api/iam/v1/password/reset", &json!({"token": token, "password": "Third-pass-1", "confirm_password": "Third-pass-1"}), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(app.get_auth(PROFILE, &key).await.0, 401);
    let again = app.login("ada@example.com", "Third-pass-1").await;
    let fresh = key_of(&create_key(&app, &token_of(&again), "new", None).await);
    assert_eq!(app.get_auth(PROFILE, &fresh).await.0, 200);
}

/// A key answers only the requests its scopes cover: the others are refused with 403
/// `api_key_scope` naming the scope (en, zh), or `session_required` for what no key may do.
#[tokio::test]
async fn a_key_does_only_what_its_scopes_allow() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let session = token_of(&ada);
    let default = key_of(&create_key(&app, &session, "default", None).await);
    let (status, body) = app.post_json(KEYS, &json!({"name": "reader", "scopes": ["read"]}), Some(&session)).await;
    assert_eq!(status, 200, "{body}");
    let reader = key_of(&body["data"]);
    let (status, body) = app.post_json(KEYS, &json!({"name": "payer", "scopes": ["wallet", "read", "wallet"]}), Some(&session)).await;
    assert_eq!((status, &body["data"]["scopes"]), (200, &json!(["read", "wallet"])), "{body}");
    let payer = key_of(&body["data"]);

    assert_eq!(app.get_auth(PROFILE, &reader).await.0, 200);
    assert_eq!(app.get_auth("/api/billing/v1/wallet", &reader).await.0, 200);
    let redeem = json!({"code": "NOPE-NOPE-NOPE"});
    for (key, lang, en_or_zh) in [(&default, "en", "This API key may not do this: it needs the \"wallet\" scope"), (&reader, "zh-CN", "此 API 密钥无权执行此操作：需要“wallet”权限")] {
        let (status, body) = call(&app, reqwest::Method::POST, "/api/billing/v1/wallet/redeem", Some(&redeem), key, lang).await;
        assert_eq!((status, body["error"].as_str(), body["msg"].as_str()), (403, Some("api_key_scope"), Some(en_or_zh)), "{body}");
    }
    // The wallet key gets past the scope (the code itself is unknown).
    let (status, body) = call(&app, reqwest::Method::POST, "/api/billing/v1/wallet/redeem", Some(&redeem), &payer, "en").await;
    assert_ne!(body["error"], "api_key_scope", "{status} {body}");
    // Apps: a read key may not install; a default one may try.
    let install = json!({"app_id": "nothing", "device_id": "nothing"});
    let (status, body) = call(&app, reqwest::Method::POST, "/api/rmp/v1/apps/install", Some(&install), &reader, "en").await;
    assert_eq!((status, body["msg"].as_str()), (403, Some("This API key may not do this: it needs the \"apps\" scope")), "{body}");
    let (_, body) = call(&app, reqwest::Method::POST, "/api/rmp/v1/apps/install", Some(&install), &default, "en").await;
    assert_ne!(body["error"], "api_key_scope", "{body}");
    let (status, body) = app.get_auth("/api/rmp/v1/apps/anything/api/models", &reader).await;
    assert_eq!((status, body["error"].as_str()), (403, Some("api_key_scope")), "the app's API door is apps: {body}");
    let (status, body) = app.get_auth("/api/rmp/v1/apps/anything/api/models", &payer).await;
    assert_eq!((status, body["error"].as_str()), (403, Some("api_key_scope")), "{body}");
    // What no scope covers needs a session.
    let (status, body) = call(&app, reqwest::Method::PUT, "/api/iam/v1/account/profile/info", Some(&json!({"name": "keyed"})), &default, "en").await;
    assert_eq!((status, body["error"].as_str()), (403, Some("session_required")), "{body}");
    // Nothing of the console without `ops`, even for an operator's key.
    crate::ops::make_operator(&app, "ada@example.com");
    let (status, body) = app.get_auth("/api/ops/v1/users", &default).await;
    assert_eq!((status, body["msg"].as_str()), (403, Some("This API key may not do this: it needs the \"ops\" scope")), "{body}");
    assert_eq!(app.get_auth("/api/ops/v1/users", &session).await.0, 200);
}

/// An `ops` key is made only by an operator, in their personal context, with their password;
/// it reaches the console. Anyone else is refused, and nothing is made.
#[tokio::test]
async fn only_an_operator_makes_an_ops_key_and_confirms_it_with_the_password() {
    let app = TestApp::spawn().await;
    let bob = app.signed_in("bob@example.com").await;
    let ops = json!({"name": "console", "scopes": ["ops"], "password": PASSWORD});
    let (status, body) = call(&app, reqwest::Method::POST, KEYS, Some(&ops), &token_of(&bob), "en").await;
    assert_eq!((status, body["error"].as_str(), body["msg"].as_str()), (403, Some("api_key_ops_operator_only"), Some("Only an operator, in their personal account, can make a key for the operator's console")), "{body}");
    let (status, body) = call(&app, reqwest::Method::POST, KEYS, Some(&ops), &token_of(&bob), "zh-CN").await;
    assert_eq!((status, body["msg"].as_str()), (403, Some("只有运营者在个人账户中才能创建用于运营控制台的密钥")), "{body}");

    let op = app.signed_in("op@example.com").await;
    crate::ops::make_operator(&app, "op@example.com");
    let token = token_of(&op);
    let (status, body) = call(&app, reqwest::Method::POST, KEYS, Some(&json!({"name": "console", "scopes": ["ops"]})), &token, "en").await;
    assert_eq!((status, body["data"]["field"].as_str(), body["msg"].as_str()), (400, Some("password"), Some("Enter your password to make a key for the operator's console")), "{body}");
    let (status, body) = call(&app, reqwest::Method::POST, KEYS, Some(&json!({"name": "console", "scopes": ["ops"], "password": "wrong-Pass-1"})), &token, "en").await;
    assert_eq!((status, body["error"].as_str()), (400, Some("password_incorrect")), "{body}");
    assert_eq!(list(&app, &token).await["total"], 0, "nothing was made");

    let (status, body) = app.post_json(KEYS, &ops, Some(&token)).await;
    assert_eq!((status, &body["data"]["scopes"]), (200, &json!(["ops"])), "{body}");
    let key = key_of(&body["data"]);
    let (status, body) = app.get_auth("/api/ops/v1/users", &key).await;
    assert_eq!(status, 200, "{body}");
    // Only the console: reading the rest needs `read`.
    assert_eq!(app.get_auth(PROFILE, &key).await.1["error"], "api_key_scope");
}

/// A key that is not valid says so, in both languages; a session keeps its own words.
#[tokio::test]
async fn an_invalid_api_key_is_named_and_the_tunnel_says_so_in_sentences() {
    let app = TestApp::spawn().await;
    let session = token_of(&app.signed_in("ada@example.com").await);
    let (s, b) = app.post_json("/api/iam/v1/api-keys", &json!({"name": "laptop"}), Some(&session)).await;
    assert_eq!(s, 200, "{b}");
    let (key, key_id) = (b["data"]["key"].as_str().unwrap().to_string(), b["data"]["id"].as_str().unwrap().to_string());
    assert_eq!(app.get_auth("/api/iam/v1/account/profile", &key).await.0, 200);
    let (s, _) = call(&app, reqwest::Method::DELETE, &format!("/api/iam/v1/api-keys/{key_id}"), None, &session, "en").await;
    assert_eq!(s, 200);
    for bad in [key.as_str(), "zk_not-a-key", "zk_"] {
        let (s, b) = call(&app, reqwest::Method::GET, "/api/iam/v1/account/profile", None, bad, "en").await;
        assert_eq!((s, b["error"].as_str(), b["msg"].as_str()), (401, Some("api_key_invalid"), Some("This API key is not valid: create a new one on your account page")), "{bad}");
        let (_, b) = call(&app, reqwest::Method::GET, "/api/iam/v1/account/profile", None, bad, "zh-CN").await;
        assert_eq!(b["msg"], "此 API 密钥无效：请在账户页面新建一个");
    }
    let (s, b) = app.get_auth("/api/iam/v1/account/profile", "not-a-token").await;
    assert_eq!((s, b["error"].as_str()), (401, Some("session_expired")));

    // `zmarket tunnel` with the revoked key: the market's sentence in the user's language.
    for (lang, want) in [
        (zmarket::lang::Lang::En, "The market refused the tunnel: This API key is not valid: create a new one on your account page."),
        (zmarket::lang::Lang::Zh, "市场拒绝了隧道：此 API 密钥无效：请在账户页面新建一个。"),
    ] {
        let err = crate::connect::doors::tunnel_error(&app, "/api/rmp/v1/apps/anything/tcp?port=80", &key, lang).await;
        assert_eq!(err, want);
        assert!(!err.contains('{') && !err.contains("401"), "{err}");
    }
    // A refusal of a valid caller (no such installation) reads alike.
    let err = crate::connect::doors::tunnel_error(&app, "/api/rmp/v1/apps/nope/tcp?port=80", &session, zmarket::lang::Lang::En).await;
    assert!(err.starts_with("The market refused the tunnel: ") && !err.contains('{'), "{err}");
}
