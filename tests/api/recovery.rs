//! Account recovery: "Forgot password" and "Resend verification email", every call and refusal in
//! English and Chinese, over HTTP against a fresh database.

use serde_json::{Value, json};

use crate::common::{PASSWORD, TestApp, json_of, link_in, token_of};
use crate::scenario::{Call, each_says, says, with};

async fn post_lang(app: &TestApp, lang: &str, path: &str, body: &Value) -> (u16, Value) {
    json_of(app.client.post(app.url(path)).header("Accept-Language", lang).json(body).send().await.unwrap()).await
}

/// The newest mail to `email` whose link contains `needle`, and that link.
async fn mailed_link(app: &TestApp, email: &str, needle: &str) -> Option<String> {
    app.mails().await.iter().rev().filter(|m| m.contains(&format!("To: {email}"))).map(|m| link_in(m)).find(|l| l.contains(needle))
}

fn token_in(link: &str) -> String {
    link.split("token=").nth(1).unwrap().split('&').next().unwrap().to_string()
}

async fn reset(app: &TestApp, lang: &str, token: &str, password: &str, confirm: &str) -> (u16, Value) {
    post_lang(app, lang, "/api/iam/v1/password/reset", &json!({"token": token, "password": password, "confirm_password": confirm})).await
}

/// Choosing the new password with the mailed link's `token`.
fn new_password(token: &str, password: &str, confirm: &str) -> Call {
    with("POST", "/api/iam/v1/password/reset", json!({"token": token, "password": password, "confirm_password": confirm}))
}

#[tokio::test]
async fn forgot_password_mails_a_single_use_link_and_ends_every_session() {
    let app = TestApp::spawn().await;
    let first = app.signed_in("forgetful@example.com").await;
    let second = app.login("forgetful@example.com", PASSWORD).await;

    let (s, b) = post_lang(&app, "en", "/api/iam/v1/password/forgot", &json!({"email": "Forgetful@Example.com"})).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"], json!({"email": "forgetful@example.com", "sent": true}));
    app.wait_for_mails(2).await;
    let link = mailed_link(&app, "forgetful@example.com", "/reset-password?token=").await.expect("reset mail");
    assert!(link.starts_with(&app.public_url()), "{link}");
    let token = token_in(&link);

    // Refusals of the new password, in both languages; the link stays usable after them.
    let weak = ["Password must be 8-15 characters with at least one letter and one digit", "密码须为 8-15 个字符，且至少包含一个字母和一个数字"];
    let refusals = [
        (&new_password(&token, "short1", "short1"), (400, "password_format_invalid", Some("password")), weak),
        (&new_password(&token, "NewSecret1", "NewSecret2"), (400, "password_mismatch", Some("confirm_password")), ["Password doesn't match", "两次输入的密码不一致"]),
    ];
    each_says(&app, None, &refusals).await;

    let (s, b) = reset(&app, "en", &token, "NewSecret1", "NewSecret1").await;
    assert_eq!(s, 200, "{b}");
    // Every session ended: access tokens and refresh tokens of both.
    for session in [&first, &second] {
        let (s, _) = app.get_auth("/api/iam/v1/account/profile", &token_of(session)).await;
        assert_eq!(s, 401);
        let (s, _) = app.get_auth("/api/iam/v1/refresh", session["refresh_token"].as_str().unwrap()).await;
        assert_eq!(s, 401);
    }
    // The old password no longer signs in; the new one does.
    let (s, _) = app.post_json("/api/iam/v2/login/password", &json!({"email": "forgetful@example.com", "password": PASSWORD}), None).await;
    assert_eq!(s, 401);
    app.login("forgetful@example.com", "NewSecret1").await;

    // Single use.
    let used = ["This password reset link has already been used, please ask for a new one", "该密码重置链接已使用过，请重新获取"];
    says(&app, &new_password(&token, "Another1x", "Another1x"), None, (409, "reset_link_used", None), used).await;
    app.login("forgetful@example.com", "NewSecret1").await;
}

#[tokio::test]
async fn a_reset_link_expires_and_a_new_one_replaces_the_old() {
    let app = TestApp::spawn().await;
    app.signed_in("late@example.com").await;
    let (s, _) = post_lang(&app, "en", "/api/iam/v1/password/forgot", &json!({"email": "late@example.com"})).await;
    assert_eq!(s, 200);
    app.wait_for_mails(2).await;
    let old = token_in(&mailed_link(&app, "late@example.com", "/reset-password").await.unwrap());
    let (s, _) = post_lang(&app, "en", "/api/iam/v1/password/forgot", &json!({"email": "late@example.com"})).await;
    assert_eq!(s, 200);
    app.wait_for_mails(3).await;
    let new = token_in(&mailed_link(&app, "late@example.com", "/reset-password").await.unwrap());
    assert_ne!(old, new);
    // The older link stopped working when the newer was sent.
    let (s, b) = reset(&app, "en", &old, "NewSecret1", "NewSecret1").await;
    assert_eq!((s, b["msg"].as_str().unwrap()), (400, "This password reset link is invalid"));

    // Past its expiry the link is refused (and the password is unchanged).
    use sea_orm::{ActiveModelTrait, EntityTrait, Set};
    use zmarket::db::entity::password_resets;
    for row in password_resets::Entity::find().all(&app.state.db).await.unwrap() {
        let mut a: password_resets::ActiveModel = row.into();
        a.expires_at = Set(chrono::Utc::now() - chrono::Duration::seconds(1));
        a.update(&app.state.db).await.unwrap();
    }
    let expired = ["This password reset link has expired, please ask for a new one", "该密码重置链接已过期，请重新获取"];
    says(&app, &new_password(&new, "NewSecret1", "NewSecret1"), None, (409, "reset_link_expired", None), expired).await;
    app.login("late@example.com", PASSWORD).await;
    // The cleanup job deletes expired links.
    zmarket::iam::sessions::cleanup_expired(&app.state.db).await.unwrap();
    assert!(password_resets::Entity::find().all(&app.state.db).await.unwrap().is_empty());
}

#[tokio::test]
async fn recovery_refusals_in_both_languages() {
    let app = TestApp::spawn().await;
    let (forgot, resend) = ("/api/iam/v1/password/forgot", "/api/iam/v1/verify-email/resend");
    let invalid = (400, "reset_link_invalid", Some("token"));
    let required = (400, "email_required", Some("email"));
    let format = (400, "email_format_invalid", None);
    let (invalid_text, required_text, format_text) = (["This password reset link is invalid", "密码重置链接无效"], ["Email Required", "请输入邮箱"], ["Email Format Invalid", "邮箱格式不正确"]);
    let elsewhere = json!({"email": "a@example.com", "redirect": "https://evil.example/"});
    each_says(&app, None, &[
        (&new_password("", "NewSecret1", "NewSecret1"), invalid, invalid_text),
        (&new_password("not-a-real-token", "NewSecret1", "NewSecret1"), invalid, invalid_text),
        (&with("POST", forgot, json!({})), required, required_text),
        (&with("POST", forgot, json!({"email": "nope"})), format, format_text),
        (&with("POST", resend, json!({})), required, required_text),
        (&with("POST", resend, json!({"email": "nope"})), format, format_text),
        (&with("POST", resend, elsewhere), (400, "redirect_invalid", Some("redirect")), ["The page to return to must be a path of this site", "返回页面必须是本站的路径"]),
    ])
    .await;
    assert!(app.mails().await.is_empty(), "no refusal sends mail");
}

#[tokio::test]
async fn unknown_addresses_get_the_same_answer_and_no_mail() {
    let app = TestApp::spawn().await;
    app.signed_in("known@example.com").await;
    let before = app.mails().await.len();
    for path in ["/api/iam/v1/password/forgot", "/api/iam/v1/verify-email/resend"] {
        let (s, b) = post_lang(&app, "en", path, &json!({"email": "nobody@example.com"})).await;
        assert_eq!((s, &b), (200, &json!({"code": 200, "data": {"email": "nobody@example.com", "sent": true}, "msg": "success"})));
    }
    // A verified account gets no new verification mail either, with the same answer.
    let (s, b) = post_lang(&app, "en", "/api/iam/v1/verify-email/resend", &json!({"email": "known@example.com"})).await;
    assert_eq!((s, &b["data"]), (200, &json!({"email": "known@example.com", "sent": true})));
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(app.mails().await.len(), before);
}

#[tokio::test]
async fn resend_verification_mails_a_new_link_that_verifies_and_keeps_the_invitation() {
    let app = TestApp::spawn().await;
    let join = "/iam/v1/sme/join?code=abc_DEF-123";
    let (s, b) = app
        .post_json(
            "/api/iam/v1/register",
            &json!({"email": "newbie@example.com", "password": PASSWORD, "confirm_password": PASSWORD, "agree": true, "redirect": join}),
            None,
        )
        .await;
    assert_eq!(s, 200, "{b}");
    app.wait_for_mails(1).await;
    let first = mailed_link(&app, "newbie@example.com", "email-verified").await.unwrap();
    // The invitation rides along in the link, encoded.
    assert!(first.ends_with("&redirect=%2Fiam%2Fv1%2Fsme%2Fjoin%3Fcode%3Dabc_DEF-123"), "{first}");
    let (s, b) = post_lang(&app, "zh", "/api/iam/v1/verify-email/resend", &json!({"email": "newbie@example.com", "redirect": join})).await;
    assert_eq!(s, 200, "{b}");
    app.wait_for_mails(2).await;
    let second = mailed_link(&app, "newbie@example.com", "email-verified").await.unwrap();
    assert_ne!(token_in(&first), token_in(&second));
    assert!(second.contains("&redirect=%2Fiam%2Fv1%2Fsme%2Fjoin"), "{second}");
    // The old link stopped working; the new one verifies.
    let (s, _) = app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&first))).await;
    assert_eq!(s, 400);
    let (s, b) = app.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&second))).await;
    assert_eq!((s, &b["data"]["email"]), (200, &json!("newbie@example.com")));
    app.login("newbie@example.com", PASSWORD).await;
    // A redirect that is not a path of this site is refused at sign-up.
    let (s, b) = app
        .post_json(
            "/api/iam/v1/register",
            &json!({"email": "other@example.com", "password": PASSWORD, "confirm_password": PASSWORD, "agree": true, "redirect": "//evil.example"}),
            None,
        )
        .await;
    assert_eq!((s, b["data"]["field"].as_str().unwrap()), (400, "redirect"));
}

#[tokio::test]
async fn recovery_mails_are_rate_limited_per_address() {
    let app = TestApp::spawn().await;
    app.signed_in("spammed@example.com").await;
    let mut limited = None;
    for i in 0..6 {
        let res = app.client.post(app.url("/api/iam/v1/password/forgot")).header("Accept-Language", "zh").json(&json!({"email": "spammed@example.com"})).send().await.unwrap();
        if res.status() == 429 {
            let retry: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
            let (_, b) = json_of(res).await;
            assert_eq!(b["msg"], "尝试次数过多，请稍后再试");
            limited = Some((i, retry));
            break;
        }
    }
    let (i, retry) = limited.expect("limited after a burst");
    assert_eq!(i, 3, "a burst of three, then limited");
    assert!((1..=600).contains(&retry), "{retry}");
    // Resending a verification to the same address shares the limit (both are mails to that inbox).
    let (s, b) = post_lang(&app, "en", "/api/iam/v1/verify-email/resend", &json!({"email": "spammed@example.com"})).await;
    assert_eq!((s, b["msg"].as_str().unwrap()), (429, "Too many attempts, please try again later"));
    // Another address is not affected.
    let (s, _) = post_lang(&app, "en", "/api/iam/v1/password/forgot", &json!({"email": "someone@example.com"})).await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn two_resets_racing_with_one_link_one_wins() {
    let app = TestApp::spawn().await;
    app.signed_in("racer@example.com").await;
    let (s, _) = post_lang(&app, "en", "/api/iam/v1/password/forgot", &json!({"email": "racer@example.com"})).await;
    assert_eq!(s, 200);
    app.wait_for_mails(2).await;
    let token = token_in(&mailed_link(&app, "racer@example.com", "/reset-password").await.unwrap());
    let passwords: Vec<String> = (0..8).map(|i| format!("Racing{i}pass")).collect();
    let results = futures::future::join_all(passwords.iter().map(|p| reset(&app, "en", &token, p, p))).await;
    let won: Vec<&String> = passwords.iter().zip(&results).filter(|(_, (s, _))| *s == 200).map(|(p, _)| p).collect();
    assert_eq!(won.len(), 1, "{results:?}");
    for (s, b) in results.iter().filter(|(s, _)| *s != 200) {
        assert_eq!((*s, b["msg"].as_str().unwrap()), (409, "This password reset link has already been used, please ask for a new one"));
    }
    // The winner's password is the one that holds.
    app.login("racer@example.com", won[0]).await;
}
