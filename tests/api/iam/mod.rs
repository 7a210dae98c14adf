//! Identity: the profile and the password, avatars, menus by user type, switching into a company,
//! deleting the account, sign-in limits and the cleanup job; signing up (`signup.rs`); sessions
//! and their tokens (`sessions.rs`).

use serde_json::{Value, json};

use crate::common::{PASSWORD, TestApp, json_of, token_of};

mod sessions;
mod signup;

#[tokio::test]
async fn profile_name_and_password_changes() {
    let app = TestApp::spawn().await;
    let s = app.signed_in("pro@example.com").await;
    let other = app.login("pro@example.com", PASSWORD).await; // a second session, e.g. a phone
    let token = token_of(&s);

    let (status, body) = app.get_auth("/api/iam/v1/account/profile", &token).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["email"], "pro@example.com");
    assert_eq!(body["data"]["name"], "pro");
    assert!(chrono::DateTime::parse_from_rfc3339(body["data"]["created_at"].as_str().unwrap()).is_ok());

    for (name, msg) in [("", "Username Required"), ("ab", "Username Format Invalid")] {
        let (status, body) = app.put_json("/api/iam/v1/account/profile/info", &json!({"name": name}), &token).await;
        assert_eq!(status, 400);
        assert_eq!(body["msg"], msg);
    }
    let (status, body) = app.put_json("/api/iam/v1/account/profile/info", &json!({"name": "  Grace Hopper "}), &token).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["name"], "Grace Hopper");

    let change = |old: &str, new: &str, confirm: &str| json!({"old_password": old, "new_password": new, "confirm_password": confirm});
    let (status, body) = app.put_json("/api/iam/v1/account/password", &change("Wrong1234", "NewPass99", "NewPass99"), &token).await;
    assert_eq!((status, body["msg"].as_str().unwrap()), (400, "Password Incorrect"));
    let (status, body) = app.put_json("/api/iam/v1/account/password", &change(PASSWORD, "NewPass99", "NewPass98"), &token).await;
    assert_eq!((status, body["msg"].as_str().unwrap()), (400, "Password doesn't match"));
    let (status, body) = app.put_json("/api/iam/v1/account/password", &change(PASSWORD, "short", "short"), &token).await;
    assert_eq!((status, body["data"]["field"].as_str().unwrap()), (400, "new_password"));
    let (status, _) = app.put_json("/api/iam/v1/account/password", &change(PASSWORD, "NewPass99", "NewPass99"), &token).await;
    assert_eq!(status, 200);

    // This session goes on; the other one ended.
    let (status, _) = app.get_auth("/api/iam/v1/account/profile", &token).await;
    assert_eq!(status, 200);
    let (status, _) = app.get_auth("/api/iam/v1/account/profile", &token_of(&other)).await;
    assert_eq!(status, 401);
    let (status, _) = app.get_auth("/api/iam/v1/refresh", other["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 401);
    // Old password no longer signs in; the new one does.
    let (status, _) = app.post_json("/api/iam/v2/login/password", &json!({"email": "pro@example.com", "password": PASSWORD}), None).await;
    assert_eq!(status, 401);
    app.login("pro@example.com", "NewPass99").await;
}

pub(crate) fn png_bytes() -> Vec<u8> {
    // A 1x1 PNG.
    let mut v = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    v.extend_from_slice(&[0, 0, 0, 13, b'I', b'H', b'D', b'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89]);
    v.extend_from_slice(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]);
    v
}

pub(crate) async fn upload(app: &TestApp, token: &str, name: &str, bytes: Vec<u8>) -> (u16, Value) {
    let part = reqwest::multipart::Part::bytes(bytes).file_name(name.to_string());
    let form = reqwest::multipart::Form::new().part("file", part);
    json_of(app.client.put(app.url("/api/iam/v1/account/profile/avatar")).bearer_auth(token).multipart(form).send().await.unwrap()).await
}

#[tokio::test]
async fn avatar_upload_limits_and_serving() {
    let app = TestApp::spawn().await;
    let s = app.signed_in("pic@example.com").await;
    let token = token_of(&s);

    // Named .png but not an image: refused by content.
    let (status, body) = upload(&app, &token, "evil.png", b"<script>alert(1)</script>".to_vec()).await;
    assert_eq!(status, 415, "{body}");
    assert_eq!(body["msg"], "The avatar must be a JPG, JPEG, PNG, WEBP or GIF image");
    // An SVG (could carry script) is not accepted either.
    let (status, _) = upload(&app, &token, "a.svg", b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>".to_vec()).await;
    assert_eq!(status, 415);
    // Over 3 MB: 413.
    let mut big = png_bytes();
    big.resize(3 * 1024 * 1024 + 1, 0);
    let (status, body) = upload(&app, &token, "big.png", big).await;
    assert_eq!(status, 413, "{body}");
    // Far over: refused before reading (announced length).
    let mut huge = png_bytes();
    huge.resize(20 * 1024 * 1024, 0);
    let (status, _) = upload(&app, &token, "huge.png", huge).await;
    assert_eq!(status, 413);

    // A real PNG named .jpg is accepted: the content decides.
    let (status, body) = upload(&app, &token, "photo.jpg", png_bytes()).await;
    assert_eq!(status, 200, "{body}");
    let url = body["data"]["avatar_url"].as_str().unwrap().to_string();
    assert!(url.starts_with("/api/iam/v1/avatars/"));
    let res = app.get(&url).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "image/png");
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    assert_eq!(res.bytes().await.unwrap().to_vec(), png_bytes());
    let (_, profile) = app.get_auth("/api/iam/v1/account/profile", &token).await;
    assert_eq!(profile["data"]["avatar_url"], url);
    // A GIF replaces it with a new URL.
    let (status, body) = upload(&app, &token, "x.gif", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;".to_vec()).await;
    assert_eq!(status, 200, "{body}");
    assert_ne!(body["data"]["avatar_url"], url);
}

#[tokio::test]
async fn menus_per_user_type() {
    let app = TestApp::spawn().await;
    let s = app.signed_in("menu@example.com").await;
    let (status, body) = app.get_auth("/api/iam/v1/menus", &token_of(&s)).await;
    assert_eq!(status, 200);
    let paths = all_paths(&body["data"]);
    let expected = [
        "/app", "/app/details", "/app/aicompute", "/account", "/account/username", "/account/password", "/devices",
        "/devices/link", "/devices/details", "/devices/zcloud/create", "/friends", "/friends/tags", "/wallet", "/wallet/top-up", "/messages", "/demands-and-offers", "/history",
    ];
    assert_eq!(sorted(&paths), sorted(&expected.map(String::from)));
    let account = body["data"].as_array().unwrap().iter().find(|e| e["path"] == "/account").unwrap();
    assert_eq!(account["meta"]["isHide"], false);
    for child in account["children"].as_array().unwrap() {
        assert_eq!(child["meta"]["isHide"], true);
        for key in ["icon", "title", "isLink"] {
            assert!(!child["meta"][key].is_null(), "{key}");
        }
        assert!(child["component"].is_string() && child["name"].is_string());
    }

    // Admin and member of a company.
    let admin = app.signed_in("boss@example.com").await;
    let member = app.signed_in("staff@example.com").await;
    let company = crate::common::seed_company(&app, "Acme Compute", &admin, &[(&member, "member")]).await;

    let (status, body) = app.post_json("/api/iam/v1/switch", &json!({"smeId": company}), Some(&token_of(&admin))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["userType"], "admin");
    assert_eq!(body["data"]["smeId"], company.as_str());
    let (_, menu) = app.get_auth("/api/iam/v1/menus", body["data"]["token"].as_str().unwrap()).await;
    let expected = [
        "/app", "/app/details", "/app/aicompute", "/account", "/account/username", "/account/password", "/devices",
        "/devices/link", "/devices/details", "/devices/zcloud/create", "/company", "/company/history", "/company/allocate",
    ];
    assert_eq!(sorted(&all_paths(&menu["data"])), sorted(&expected.map(String::from)));

    let (status, body) = app.post_json("/api/iam/v1/switch", &json!({"smeId": company}), Some(&token_of(&member))).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["userType"], "member");
    let member_token = body["data"]["token"].as_str().unwrap().to_string();
    let (_, menu) = app.get_auth("/api/iam/v1/menus", &member_token).await;
    let expected = ["/app", "/account", "/account/username", "/account/password"];
    assert_eq!(sorted(&all_paths(&menu["data"])), sorted(&expected.map(String::from)));
    // The refresh keeps the company context.
    let (status, r) = app.get_auth("/api/iam/v1/refresh", body["data"]["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    let (_, menu) = app.get_auth("/api/iam/v1/menus", r["data"]["access_token"].as_str().unwrap()).await;
    assert_eq!(all_paths(&menu["data"]).len(), 4);

    // Back to personal.
    let (status, body) = app.post_json("/api/iam/v1/switch", &json!({"smeId": "user"}), Some(&member_token)).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["userType"], "user");
    assert_eq!(body["data"]["organizationList"][0]["id"], "user");
    assert_eq!(body["data"]["organizationList"][1]["name"], "Acme Compute");
}

#[tokio::test]
async fn switching_into_a_company_one_does_not_belong_to_is_403() {
    let app = TestApp::spawn().await;
    let owner = app.signed_in("own@example.com").await;
    let stranger = app.signed_in("str@example.com").await;
    let company = crate::common::seed_company(&app, "Private Co", &owner, &[]).await;
    let (status, body) = app.post_json("/api/iam/v1/switch", &json!({"smeId": company}), Some(&token_of(&stranger))).await;
    assert_eq!(status, 403);
    assert_eq!(body["msg"], "You are not a member of this company");
    let (status, _) = app.post_json("/api/iam/v1/switch", &json!({"smeId": "no-such-company"}), Some(&token_of(&stranger))).await;
    assert_eq!(status, 403);
    let (status, body) = app.post_json("/api/iam/v1/switch", &json!({}), Some(&token_of(&stranger))).await;
    assert_eq!(status, 400);
    assert_eq!(body["msg"], "Company id required");
}

#[tokio::test]
async fn account_deletion_preconditions() {
    let app = TestApp::spawn().await;
    let s = app.signed_in("del@example.com").await;
    let token = token_of(&s);
    let (status, body) = app.post_json("/api/iam/v1/account/check", &json!({}), Some(&token)).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"], json!({"deletable": true, "reasons": []}));

    let owner = app.signed_in("co@example.com").await;
    crate::common::seed_company(&app, "Joined Co", &owner, &[(&s, "member")]).await;
    let (_, body) = app.post_json("/api/iam/v1/account/check", &json!({}), Some(&token)).await;
    assert_eq!(body["data"], json!({"deletable": false, "reasons": ["companies_joined"]}));
    let (status, body) = app.delete_json("/api/iam/v1/account", &json!({"password": PASSWORD}), &token).await;
    assert_eq!(status, 409);
    assert_eq!(body["data"]["reasons"], json!(["companies_joined"]));
    // still there
    let (status, _) = app.get_auth("/api/iam/v1/account/profile", &token).await;
    assert_eq!(status, 200);

    let other = app.signed_in("free@example.com").await;
    let t = token_of(&other);
    let (status, body) = app.delete_json("/api/iam/v1/account", &json!({"password": "Wrong1234"}), &t).await;
    assert_eq!((status, body["msg"].as_str().unwrap()), (400, "Password Incorrect"));
    let (status, _) = app.delete_json("/api/iam/v1/account", &json!({"password": PASSWORD}), &t).await;
    assert_eq!(status, 200);
    let (status, _) = app.get_auth("/api/iam/v1/account/profile", &t).await;
    assert_eq!(status, 401);
    let (status, _) = app.post_json("/api/iam/v2/login/password", &json!({"email": "free@example.com", "password": PASSWORD}), None).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn sign_in_attempts_are_rate_limited_with_retry_after() {
    let app = TestApp::spawn().await;
    app.signed_in("victim@example.com").await;
    let mut limited = None;
    for i in 0..15 {
        let res = app
            .client
            .post(app.url("/api/iam/v2/login/password"))
            .json(&json!({"email": "victim@example.com", "password": format!("Guess{i:04}x")}))
            .send()
            .await
            .unwrap();
        if res.status() == 429 {
            let retry: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
            let (_, body) = json_of(res).await;
            assert_eq!(body["code"], 429);
            limited = Some((i, retry));
            break;
        }
        assert_eq!(res.status(), 401);
    }
    let (i, retry) = limited.expect("limited after a burst");
    assert!(i >= 5, "not limited too early ({i})");
    assert!((1..=60).contains(&retry), "{retry}");
    // Even the right password waits now (the account is closed for a short time, not forever).
    let (status, _) = app.post_json("/api/iam/v2/login/password", &json!({"email": "victim@example.com", "password": PASSWORD}), None).await;
    assert_eq!(status, 429);
}

#[tokio::test]
async fn the_cleanup_job_deletes_expired_sessions_and_links() {
    let app = TestApp::spawn().await;
    let s = app.signed_in("old@example.com").await;
    use sea_orm::{ActiveModelTrait, EntityTrait, PaginatorTrait, Set};
    use zmarket::db::entity::sessions;
    for row in sessions::Entity::find().all(&app.state.db).await.unwrap() {
        let mut a: sessions::ActiveModel = row.into();
        a.expires_at = Set(chrono::Utc::now() - chrono::Duration::seconds(1));
        a.update(&app.state.db).await.unwrap();
    }
    let (status, _) = app.get_auth("/api/iam/v1/account/profile", &token_of(&s)).await;
    assert_eq!(status, 401, "an expired session is refused at once");
    let n = zmarket::iam::sessions::cleanup_expired(&app.state.db).await.unwrap();
    assert!(n >= 1);
    assert_eq!(sessions::Entity::find().count(&app.state.db).await.unwrap(), 0);
}

fn all_paths(menu: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for e in menu.as_array().unwrap() {
        out.push(e["path"].as_str().unwrap().to_string());
        if let Some(children) = e["children"].as_array() {
            out.extend(children.iter().map(|c| c["path"].as_str().unwrap().to_string()));
        }
    }
    out
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}
