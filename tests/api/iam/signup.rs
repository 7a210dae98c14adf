//! Identity: signing up (every refusal in both languages, the mailed link, verification turned
//! off) and an address signed up more than once while pending: no second sign-up takes the
//! account, a resend never hands out a password the owner did not choose.

use serde_json::{Value, json};

use crate::common::{PASSWORD, TestApp, json_of, link_in, sign_up, token_in};
use crate::scenario::{Call, each_says, with};

/// A sign-up with `body`, as a scenario's request.
fn sign_up_with(body: Value) -> Call {
    with("POST", "/api/iam/v1/register", body)
}

async fn register(app: &TestApp, body: Value, lang: &str) -> (u16, Value) {
    json_of(
        app.client.post(app.url("/api/iam/v1/register")).header("accept-language", lang).json(&body).send().await.unwrap(),
    )
    .await
}

#[tokio::test]
async fn sign_up_validation_messages_in_both_languages() {
    let app = TestApp::spawn().await;
    let long = format!("{}@example.com", "a".repeat(250));
    let weak = ((400, "password_format_invalid", Some("password")), ["Password must be 8-15 characters with at least one letter and one digit", "密码须为 8-15 个字符，且至少包含一个字母和一个数字"]);
    let agree = ((400, "agreement_required", Some("agree")), ["Please agree to the Terms of Use and Privacy Policy", "请同意《使用条款》和《隐私政策》"]);
    let rows = [
        (sign_up_with(json!({"password": PASSWORD, "confirm_password": PASSWORD, "agree": true})), (400, "email_required", Some("email")), ["Email Required", "请输入邮箱"]),
        (sign_up_with(json!({"email": "not-an-email", "password": PASSWORD, "confirm_password": PASSWORD, "agree": true})), (400, "email_format_invalid", Some("email")), ["Email Format Invalid", "邮箱格式不正确"]),
        (sign_up_with(json!({"email": long, "password": PASSWORD, "confirm_password": PASSWORD, "agree": true})), (400, "email_too_long", Some("email")), ["Email Address is too long", "邮箱地址过长"]),
        (sign_up_with(json!({"email": "a@example.com", "confirm_password": PASSWORD, "agree": true})), (400, "password_required", Some("password")), ["Password Required", "请输入密码"]),
        (sign_up_with(json!({"email": "a@example.com", "password": "short1", "confirm_password": "short1", "agree": true})), weak.0, weak.1),
        (sign_up_with(json!({"email": "a@example.com", "password": "onlyletters", "confirm_password": "onlyletters", "agree": true})), weak.0, weak.1),
        (sign_up_with(json!({"email": "a@example.com", "password": "1234567890123456a", "confirm_password": "1234567890123456a", "agree": true})), weak.0, weak.1),
        (sign_up_with(json!({"email": "a@example.com", "password": PASSWORD, "confirm_password": "Other1234", "agree": true})), (400, "password_mismatch", Some("confirm_password")), ["Password doesn't match", "两次输入的密码不一致"]),
        (sign_up_with(json!({"email": "a@example.com", "password": PASSWORD, "confirm_password": PASSWORD, "username": "ab", "agree": true})), (400, "username_format_invalid", Some("name")), ["Username Format Invalid", "用户名格式不正确（3-50 个字符）"]),
        (sign_up_with(json!({"email": "a@example.com", "password": PASSWORD, "confirm_password": PASSWORD, "agree": false})), agree.0, agree.1),
        (sign_up_with(json!({"email": "a@example.com", "password": PASSWORD, "confirm_password": PASSWORD})), agree.0, agree.1),
    ];
    each_says(&app, None, &rows).await;
    // Nothing was created by any of them.
    assert!(app.mails().await.is_empty());
    let (status, _) = app.post_json("/api/iam/v2/login/password", &json!({"email": "a@example.com", "password": PASSWORD}), None).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn malformed_json_and_missing_content_type_get_the_envelope() {
    let app = TestApp::spawn().await;
    let res = app.client.post(app.url("/api/iam/v1/register")).header("content-type", "application/json").body("{not json").send().await.unwrap();
    let (status, body) = json_of(res).await;
    assert_eq!(status, 400);
    assert_eq!(body["msg"], "Malformed JSON body");
    assert_eq!(body["data"]["field"], "body");
    let res = app.client.post(app.url("/api/iam/v1/register")).body("{}").send().await.unwrap();
    let (status, body) = json_of(res).await;
    assert_eq!(status, 415);
    assert_eq!(body["code"], 415);
}

#[tokio::test]
async fn oversized_bodies_are_refused_with_413() {
    let app = TestApp::spawn_with(|c| c.server.body_limit_bytes = 64 * 1024).await;
    let big = "x".repeat(100 * 1024);
    let (status, body) = app.post_json("/api/iam/v1/register", &json!({"email": big}), None).await;
    assert_eq!(status, 413);
    assert_eq!(body["code"], 413);
}

#[tokio::test]
async fn sign_up_verify_sign_in() {
    let app = TestApp::spawn().await;
    let (status, body) = register(
        &app,
        json!({"email": "Ada@Example.com", "password": PASSWORD, "confirm_password": PASSWORD, "username": "Ada Lovelace", "agree": true}),
        "en",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"], json!({"email": "ada@example.com", "verification_required": true}));

    // Before verification: 403.
    let (status, body) = app.post_json("/api/iam/v2/login/password", &json!({"email": "ada@example.com", "password": PASSWORD}), None).await;
    assert_eq!(status, 403, "{body}");

    // A second sign-up with the same unverified email sends a new link, carrying its own
    // password; the first link opened decides and the other dies (issue 16, finding 3).
    let mails = app.wait_for_mails(1).await;
    let first_link = link_in(&mails[0]);
    // The link names the address the server listens on (server.public_url derived from bind).
    let port = app.base.rsplit(':').next().unwrap();
    assert!(first_link.starts_with(&format!("http://localhost:{port}/email-verified?token=")), "{first_link}");
    let (status, _) = register(&app, json!({"email": "ada@example.com", "password": PASSWORD, "confirm_password": PASSWORD, "agree": true}), "en").await;
    assert_eq!(status, 200);
    let mails = app.wait_for_mails(2).await;
    let link = link_in(&mails[1]);
    let old_token = first_link.split("token=").nth(1).unwrap();
    let token = link.split("token=").nth(1).unwrap();
    let (status, body) = app.get_json(&format!("/api/iam/v1/verify-email?token={token}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["email"], "ada@example.com");
    // Two sign-ups were pending (issue 29, finding 3): neither password became valid; the answer
    // lets the mailbox's owner choose one.
    assert_eq!(app.post_json("/api/iam/v2/login/password", &json!({"email": "ada@example.com", "password": PASSWORD}), None).await.0, 401);
    let chosen = body["data"]["password_token"].as_str().expect("a password to choose").to_string();
    let (status, b) = app.post_json("/api/iam/v1/password/reset", &json!({"token": chosen, "password": PASSWORD, "confirm_password": PASSWORD}), None).await;
    assert_eq!(status, 200, "{b}");
    let (status, _) = app.get_json(&format!("/api/iam/v1/verify-email?token={old_token}")).await;
    assert_eq!(status, 400);
    // Opening the link again is harmless.
    let (status, _) = app.get_json(&format!("/api/iam/v1/verify-email?token={token}")).await;
    assert_eq!(status, 200);
    let (status, body) = app.get_json("/api/iam/v1/verify-email?token=bogus").await;
    assert_eq!(status, 400);
    assert_eq!(body["msg"], "This verification link is invalid");

    // Now the email is taken.
    let (status, body) = register(&app, json!({"email": "ada@example.com", "password": PASSWORD, "confirm_password": PASSWORD, "agree": true}), "en").await;
    assert_eq!(status, 409, "{body}");

    let s = app.login("ADA@example.com", PASSWORD).await;
    assert!(s["token"].as_str().unwrap().split('.').count() == 3);
    assert!(!s["refresh_token"].as_str().unwrap().is_empty());
    let exp = s["access_token_expire"].as_i64().unwrap();
    let now = chrono::Utc::now().timestamp();
    assert!((exp - now - 7200).abs() < 10, "2 hours by default");
    assert_eq!(s["smeId"], "user");
    assert_eq!(s["userType"], "user");
    assert_eq!(s["userInfo"], json!({"name": "Ada Lovelace", "avatar_url": "", "email": "ada@example.com"}));
    assert_eq!(s["organizationList"][0]["id"], "user");

    // Wrong password: 401, same message as an unknown account.
    let (status, a) = app.post_json("/api/iam/v2/login/password", &json!({"email": "ada@example.com", "password": "Wrong1234"}), None).await;
    let (status2, b) = app.post_json("/api/iam/v2/login/password", &json!({"email": "nobody@example.com", "password": "Wrong1234"}), None).await;
    assert_eq!((status, status2), (401, 401));
    assert_eq!(a["msg"], b["msg"]);
}

#[tokio::test]
async fn verification_can_be_turned_off() {
    let app = TestApp::spawn_with(|c| c.auth.email_verification = false).await;
    let (status, body) = register(&app, json!({"email": "bo@example.com", "password": PASSWORD, "confirm_password": PASSWORD, "agree": true}), "en").await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["verification_required"], false);
    let s = app.login("bo@example.com", PASSWORD).await;
    assert_eq!(s["userInfo"]["name"], "bo@example.com");
}

/// Re-registering a pending address never replaces the password (issue 16, finding 3); with two
/// pending sign-ups the link opened activates neither password (issue 29, finding 3) but lets the
/// mailbox's owner choose one, and once one is opened the others are dead.
#[tokio::test]
async fn a_second_sign_up_of_a_pending_address_cannot_take_the_account() {
    let app = TestApp::spawn().await;
    let email = "owner@example.com";
    let (s, b) = app.post_json("/api/iam/v1/register", &sign_up(email, "Owner1234"), None).await;
    assert_eq!(s, 200, "{b}");
    let owners_mail = app.wait_for_mail_to(email, "token=", 0).await;
    // Someone else signs the same address up with their own password.
    let (s, b) = app.post_json("/api/iam/v1/register", &sign_up(email, "Attacker99"), None).await;
    assert_eq!(s, 200, "{b}");
    let attackers_mail = app.wait_for_mail_to(email, "token=", 1).await;
    assert_ne!(token_in(&owners_mail), token_in(&attackers_mail));

    // The owner opens the link of their own sign-up, and chooses the password.
    let (s, b) = app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&owners_mail))).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(app.login_status(email, "Owner1234").await, 401);
    assert_eq!(app.login_status(email, "Attacker99").await, 401);
    let chosen = b["data"]["password_token"].as_str().expect("a password to choose");
    let reset = json!({"token": chosen, "password": "Owner1234", "confirm_password": "Owner1234"});
    assert_eq!(app.post_json("/api/iam/v1/password/reset", &reset, None).await.0, 200);
    assert_eq!(app.login_status(email, "Owner1234").await, 200);
    // The other link no longer works, so it can never switch the password afterwards.
    let (s, b) = app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&attackers_mail))).await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(app.login_status(email, "Owner1234").await, 200);
    // Once verified, the address cannot be signed up again.
    let (s, b) = app.post_json("/api/iam/v1/register", &sign_up(email, "Attacker99"), None).await;
    assert_eq!(s, 409, "{b}");
}

/// With one pending sign-up, the password chosen with it becomes valid when its link is opened.
#[tokio::test]
async fn the_password_of_the_one_pending_sign_up_becomes_valid() {
    let app = TestApp::spawn().await;
    let email = "late@example.com";
    app.post_json("/api/iam/v1/register", &sign_up(email, "First1234"), None).await;
    let first = app.wait_for_mail_to(email, "token=", 0).await;
    let (s, b) = app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&first))).await;
    assert_eq!(s, 200);
    assert_eq!(b["data"]["password_token"], Value::Null, "{b}");
    assert_eq!(app.login_status(email, "First1234").await, 200);
}

/// The same through a resend: with two pending sign-ups of one address nobody knows whose
/// password the owner chose, so a resend mails nothing (each sign-up already mailed its own
/// link); with one, its link is replaced and its password travels on.
#[tokio::test]
async fn a_resend_never_hands_out_a_password_the_owner_did_not_choose() {
    let app = TestApp::spawn().await;
    let email = "owner@example.com";
    app.post_json("/api/iam/v1/register", &sign_up(email, "Owner1234"), None).await;
    let owners = app.wait_for_mail_to(email, "token=", 0).await;
    let (s, _) = app.post_json("/api/iam/v1/verify-email/resend", &json!({"email": email}), None).await;
    assert_eq!(s, 200);
    let resent = app.wait_for_mail_to(email, "token=", 1).await;
    assert_ne!(token_in(&owners), token_in(&resent));
    // The replaced link is dead; the new one carries the owner's password.
    assert_eq!(app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&owners))).await.0, 400);

    app.post_json("/api/iam/v1/register", &sign_up(email, "Attacker99"), None).await;
    app.wait_for_mail_to(email, "token=", 2).await;
    let (s, _) = app.post_json("/api/iam/v1/verify-email/resend", &json!({"email": email}), None).await;
    assert_eq!(s, 200, "the same answer");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(app.mail_count_to(email, "token=").await, 3, "nothing resent with two pending sign-ups");
    // Two sign-ups pending: the link opened activates neither password (issue 29, finding 3).
    let (s, b) = app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&resent))).await;
    assert_eq!(s, 200);
    assert!(b["data"]["password_token"].is_string(), "{b}");
    assert_eq!(app.login_status(email, "Owner1234").await, 401);
    assert_eq!(app.login_status(email, "Attacker99").await, 401);
}

/// The pre-account hijack (issue 29, finding 3): the victim signs up, the attacker signs the
/// same address up with another password, the victim opens the newest mail (the attacker's link).
/// Neither password becomes valid; the victim, who proved the mailbox, chooses the password. Each
/// mail says when and from where its sign-up came.
#[tokio::test]
async fn opening_any_link_of_a_contested_address_asks_for_a_new_password() {
    let app = TestApp::spawn().await;
    let email = "victim@example.com";
    assert_eq!(app.post_json("/api/iam/v1/register", &sign_up(email, "Victim123"), None).await.0, 200);
    let victims = app.wait_for_mail_to(email, "token=", 0).await;
    assert_eq!(app.post_json("/api/iam/v1/register", &sign_up(email, "Attacker9"), None).await.0, 200);
    let attackers = app.wait_for_mail_to(email, "token=", 1).await;
    for mail in [&victims, &attackers] {
        assert!(mail.contains("from the address 127.0.0.1") && mail.contains(" UTC"), "{mail}");
        assert!(mail.contains("从地址 127.0.0.1"), "{mail}");
    }
    let newest = token_in(&attackers);
    let (s, b) = app.get_json(&format!("/api/iam/v1/verify-email?token={newest}")).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(app.login_status(email, "Attacker9").await, 401);
    assert_eq!(app.login_status(email, "Victim123").await, 401);
    // The victim's own link is dead too: it cannot activate its password afterwards.
    let older = token_in(&victims);
    assert_eq!(app.get_json(&format!("/api/iam/v1/verify-email?token={older}")).await.0, 400);
    assert_eq!(app.login_status(email, "Victim123").await, 401);
    let token = b["data"]["password_token"].as_str().expect("a password to choose");
    let reset = json!({"token": token, "password": "Chosen123", "confirm_password": "Chosen123"});
    let (s, b) = app.post_json("/api/iam/v1/password/reset", &reset, None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(app.login_status(email, "Chosen123").await, 200);
    assert_eq!(app.login_status(email, "Attacker9").await, 401);
}
