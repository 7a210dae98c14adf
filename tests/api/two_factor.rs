//! Two-factor sign-in: enrolment on the account page (a secret, its otpauth:// URI and QR code,
//! confirmed with a code; 10 recovery codes shown once), the sign-in's second step (a challenge
//! good once, a code good once, recovery codes good once, wrong codes limited like wrong
//! passwords), "remember this browser" (an HttpOnly cookie, forgotten when 2FA goes off or the
//! password changes), the operator's requirement for operators and company administrators, and the
//! code asked again for a large money move.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use totp_rs::{Algorithm, Builder, Secret, Totp};
use zmarket::coins::Coins;

use crate::common::*;
use crate::scenario::{get, says, with};

const STATUS: &str = "/api/iam/v1/account/two-factor";
const SETUP: &str = "/api/iam/v1/account/two-factor/setup";
const CONFIRM: &str = "/api/iam/v1/account/two-factor/confirm";
const OFF: &str = "/api/iam/v1/account/two-factor/off";
const LOGIN: &str = "/api/iam/v2/login/password";
const SECOND: &str = "/api/iam/v2/login/two-factor";
const FUND: &str = "/api/billing/v1/wallet/fund";
const WRONG_CODE: &str = "That code is not right, or it was already used";
const WRONG_CODE_ZH: &str = "验证码不正确或已被使用";
const CODE_REQUIRED: &str = "Enter the 6-digit code from your authenticator app, or a recovery code";
const CODE_REQUIRED_ZH: &str = "请输入身份验证器应用中的 6 位验证码，或一个恢复码";

/// The person's authenticator app: codes of steps never used before (a code is good once), the
/// earliest the server still accepts (one step of skew either way), waiting for the next step
/// when the three it accepts are used.
struct Authenticator {
    totp: Totp,
    last: u64,
}

impl Authenticator {
    fn new(secret: &str) -> Self {
        let totp = Builder::new()
            .with_algorithm(Algorithm::SHA1)
            .with_digits(6)
            .with_skew(1)
            .with_step_duration(30)
            .with_secret(Secret::try_from_base32(secret).unwrap())
            .build()
            .unwrap();
        Authenticator { totp, last: 0 }
    }
    async fn code(&mut self) -> String {
        loop {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
            let (cur, secs_in) = (now / 30, now % 30);
            // The previous step, unless the server may have moved on by the time it checks.
            let earliest = if secs_in < 25 { cur - 1 } else { cur };
            let step = earliest.max(self.last + 1);
            if step <= cur + 1 {
                self.last = step;
                return self.totp.generate(step * 30).to_string();
            }
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
    }
    /// A code the server does not accept now.
    fn wrong(&self) -> String {
        let cur = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() / 30;
        self.totp.generate((cur + 20) * 30).to_string()
    }
}

async fn call(app: &TestApp, path: &str, body: &Value, token: Option<&str>, lang: &str) -> (u16, Value) {
    let mut req = app.client.post(app.url(path)).header("accept-language", lang).json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    json_of(req.send().await.expect("request")).await
}

/// Turns 2FA on for the session: the app holding the secret, and the recovery codes.
async fn enrol(app: &TestApp, token: &str) -> (Authenticator, Vec<String>) {
    let (s, setup) = app.post_json(SETUP, &json!({}), Some(token)).await;
    assert_eq!(s, 200, "{setup}");
    let mut phone = Authenticator::new(setup["data"]["secret"].as_str().unwrap());
    let (s, body) = app.post_json(CONFIRM, &json!({"code": phone.code().await}), Some(token)).await;
    assert_eq!(s, 200, "{body}");
    let codes = body["data"]["recovery_codes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    (phone, codes)
}

/// The password sign-in of a person with 2FA on: the challenge.
async fn challenge(app: &TestApp, email: &str) -> String {
    let (s, body) = app.post_json(LOGIN, &json!({"email": email, "password": PASSWORD}), None).await;
    assert_eq!((s, body["error"].as_str()), (401, Some("two_factor_required")), "{body}");
    body["data"]["challenge"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn enrolment_shows_a_qr_code_then_takes_a_code_and_answers_recovery_codes_once() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let token = token_of(&ada);
    let (s, body) = app.get_auth(STATUS, &token).await;
    assert_eq!((s, &body["data"]), (200, &json!({"enabled": false, "recovery_codes_left": 0, "required": false})), "{body}");

    let (s, setup) = app.post_json(SETUP, &json!({}), Some(&token)).await;
    assert_eq!(s, 200, "{setup}");
    let secret = setup["data"]["secret"].as_str().unwrap();
    assert_eq!(secret.len(), 32, "160 bits in base32: {secret}");
    let uri = setup["data"]["otpauth_uri"].as_str().unwrap();
    assert!(uri.starts_with("otpauth://totp/ZMarket:ada@example.com?secret=") && uri.contains(secret), "{uri}");
    assert!(setup["data"]["qr_svg"].as_str().unwrap().contains("<svg"), "an SVG made on the server");
    // Not in force before it is confirmed: the password alone still signs in.
    app.login("ada@example.com", PASSWORD).await;

    let mut phone = Authenticator::new(secret);
    let wrong = with("POST", CONFIRM, json!({"code": phone.wrong()}));
    says(&app, &wrong, Some(&token), (400, "two_factor_code_invalid", Some("code")), [WRONG_CODE, WRONG_CODE_ZH]).await;
    let none = with("POST", CONFIRM, json!({}));
    says(&app, &none, Some(&token), (400, "two_factor_code_required", Some("code")), [CODE_REQUIRED, CODE_REQUIRED_ZH]).await;
    let (s, body) = app.get_auth(STATUS, &token).await;
    assert_eq!((s, body["data"]["enabled"].as_bool()), (200, Some(false)), "wrong codes changed nothing");

    let (s, body) = app.post_json(CONFIRM, &json!({"code": phone.code().await}), Some(&token)).await;
    assert_eq!(s, 200, "{body}");
    let codes = body["data"]["recovery_codes"].as_array().unwrap();
    assert_eq!(codes.len(), 10);
    assert!(codes.iter().all(|c| c.as_str().unwrap().len() == 11), "{codes:?}");
    let (_, body) = app.get_auth(STATUS, &token).await;
    assert_eq!(body["data"], json!({"enabled": true, "recovery_codes_left": 10, "required": false}));
    // The codes are kept hashed, never as shown.
    let plain = codes[0].as_str().unwrap().replace('-', "");
    let kept = stored(&app, "SELECT code_hash FROM two_factor_recovery_codes").await;
    assert_eq!(kept.len(), 10);
    assert!(kept.iter().all(|r| r[0].len() == 64 && r[0] != plain));
    // A second enrolment while on: 409, localized; nothing changes.
    says(&app, &with("POST", SETUP, json!({})), Some(&token), (409, "two_factor_already_on", None), ["Two-factor sign-in is already on", "两步验证已开启"]).await;
    assert_eq!(stored(&app, "SELECT secret FROM two_factor").await, vec![vec![secret.to_string()]]);
}

#[tokio::test]
async fn sign_in_asks_for_a_code_each_good_once() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let (mut phone, recovery) = enrol(&app, &token_of(&ada)).await;

    let sign_in = with("POST", LOGIN, json!({"email": "ada@example.com", "password": PASSWORD}));
    let required = ["Enter the 6-digit code from your authenticator app", "请输入身份验证器应用中的 6 位验证码"];
    for body in says(&app, &sign_in, None, (401, "two_factor_required", None), required).await {
        assert!(body["data"]["token"].is_null() && body["data"]["challenge"].is_string(), "no session, a challenge: {body}");
        assert_eq!(body["data"]["expires_in"], 300);
    }
    // A wrong password is still only that.
    let (s, body) = app.post_json(LOGIN, &json!({"email": "ada@example.com", "password": "Wrong-pass-1"}), None).await;
    assert_eq!((s, body["error"].as_str()), (401, Some("credentials_incorrect")), "{body}");

    let ch = challenge(&app, "ada@example.com").await;
    let wrong = with("POST", SECOND, json!({"challenge": ch, "code": phone.wrong()}));
    says(&app, &wrong, None, (400, "two_factor_code_invalid", Some("code")), [WRONG_CODE, WRONG_CODE_ZH]).await;
    let code = phone.code().await;
    let (s, body) = app.post_json(SECOND, &json!({"challenge": ch, "code": code}), None).await;
    assert_eq!(s, 200, "{body}");
    let (s, _) = app.get_auth("/api/iam/v1/account/profile", body["data"]["token"].as_str().unwrap()).await;
    assert_eq!(s, 200, "the session works");
    // The challenge is good once.
    for (lang, text) in [("en", "This sign-in has expired: enter your email and password again"), ("zh-CN", "本次登录已过期：请重新输入邮箱和密码")] {
        let (s, body) = call(&app, SECOND, &json!({"challenge": ch, "code": phone.code().await}), None, lang).await;
        assert_eq!((s, body["error"].as_str(), body["msg"].as_str()), (400, Some("two_factor_challenge_invalid"), Some(text)), "{body}");
    }
    let (s, body) = app.post_json(SECOND, &json!({"challenge": "made-up", "code": "123456"}), None).await;
    assert_eq!((s, body["error"].as_str()), (400, Some("two_factor_challenge_invalid")), "{body}");
    // The same TOTP code again, with a new challenge: refused (its step was used).
    let ch = challenge(&app, "ada@example.com").await;
    let (s, body) = app.post_json(SECOND, &json!({"challenge": ch, "code": code}), None).await;
    assert_eq!((s, body["error"].as_str()), (400, Some("two_factor_code_invalid")), "{body}");
    // A recovery code instead (typed without its dash, in capitals): once.
    let typed = recovery[3].replace('-', "").to_uppercase();
    let (s, body) = app.post_json(SECOND, &json!({"challenge": ch, "code": typed}), None).await;
    assert_eq!(s, 200, "{body}");
    let ch = challenge(&app, "ada@example.com").await;
    let (s, body) = app.post_json(SECOND, &json!({"challenge": ch, "code": recovery[3]}), None).await;
    assert_eq!((s, body["error"].as_str()), (400, Some("two_factor_code_invalid")), "{body}");
    let (_, body) = app.get_auth(STATUS, &token_of(&ada)).await;
    assert_eq!(body["data"]["recovery_codes_left"], 9);
}

#[tokio::test]
async fn wrong_codes_are_limited_like_wrong_passwords() {
    let app = TestApp::spawn_with(|c| c.auth.login_account_burst = 3).await;
    let ada = app.signed_in("ada@example.com").await;
    let (mut phone, _) = enrol(&app, &token_of(&ada)).await;
    let ch = challenge(&app, "ada@example.com").await;
    for _ in 0..3 {
        let (s, body) = app.post_json(SECOND, &json!({"challenge": ch, "code": phone.wrong()}), None).await;
        assert_eq!(s, 400, "{body}");
    }
    let (s, body) = app.post_json(SECOND, &json!({"challenge": ch, "code": phone.code().await}), None).await;
    assert_eq!((s, body["error"].as_str()), (429, Some("too_many_requests")), "{body}");
}

#[tokio::test]
async fn a_remembered_browser_skips_the_code_until_the_password_changes() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let (mut phone, _) = enrol(&app, &token_of(&ada)).await;
    let ch = challenge(&app, "ada@example.com").await;
    let res = app.client.post(app.url(SECOND)).json(&json!({"challenge": ch, "code": phone.code().await, "remember": true})).send().await.unwrap();
    let cookie = header(res.headers(), "set-cookie").to_string();
    assert!(cookie.starts_with("zm_2fa=") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Max-Age=2592000") && cookie.contains("Path=/api/iam/v2/login"), "{cookie}");
    let (s, body) = json_of(res).await;
    assert_eq!(s, 200, "{body}");
    let pair = cookie.split(';').next().unwrap().to_string();
    let kept = stored(&app, "SELECT token_hash FROM remembered_browsers").await;
    assert_eq!(kept.len(), 1);
    assert!(!pair.contains(&kept[0][0]), "kept hashed");

    let login = |cookie: Option<String>| {
        let mut req = app.client.post(app.url(LOGIN)).json(&json!({"email": "ada@example.com", "password": PASSWORD}));
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        async move { json_of(req.send().await.unwrap()).await }
    };
    let (s, body) = login(Some(pair.clone())).await;
    assert_eq!(s, 200, "this browser skips the code: {body}");
    let (s, body) = login(Some("zm_2fa=forged".into())).await;
    assert_eq!((s, body["error"].as_str()), (401, Some("two_factor_required")), "{body}");
    let (s, _) = login(None).await;
    assert_eq!(s, 401, "another browser is asked");

    let session = body_token(login(Some(pair.clone())).await);
    let (s, body) = app
        .put_json("/api/iam/v1/account/password", &json!({"old_password": PASSWORD, "new_password": "New-pass-123", "confirm_password": "New-pass-123"}), &session)
        .await;
    assert_eq!(s, 200, "{body}");
    let res = app.client.post(app.url(LOGIN)).header("cookie", pair).json(&json!({"email": "ada@example.com", "password": "New-pass-123"})).send().await.unwrap();
    let (s, body) = json_of(res).await;
    assert_eq!((s, body["error"].as_str()), (401, Some("two_factor_required")), "a new password forgets the browser: {body}");
}

fn body_token((s, body): (u16, Value)) -> String {
    assert_eq!(s, 200, "{body}");
    body["data"]["token"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn turning_off_needs_the_password_and_a_code() {
    let app = TestApp::spawn().await;
    let ada = app.signed_in("ada@example.com").await;
    let token = token_of(&ada);
    let (mut phone, recovery) = enrol(&app, &token).await;
    let wrong = with("POST", OFF, json!({"password": "Wrong-pass-1", "code": phone.wrong()}));
    says(&app, &wrong, Some(&token), (400, "password_incorrect", Some("password")), ["Password Incorrect", "密码错误"]).await;
    let (s, body) = call(&app, OFF, &json!({"password": PASSWORD, "code": phone.wrong()}), Some(&token), "en").await;
    assert_eq!((s, body["error"].as_str(), body["data"]["field"].as_str()), (400, Some("two_factor_code_invalid"), Some("code")), "{body}");
    let (s, body) = call(&app, OFF, &json!({"password": PASSWORD}), Some(&token), "zh-CN").await;
    assert_eq!((s, body["data"]["field"].as_str(), body["msg"].as_str()), (400, Some("code"), Some(CODE_REQUIRED_ZH)), "{body}");
    let (_, body) = app.get_auth(STATUS, &token).await;
    assert_eq!(body["data"]["enabled"], true, "refusals changed nothing");

    // Remember a browser first: turning off forgets it.
    let ch = challenge(&app, "ada@example.com").await;
    let (s, body) = app.post_json(SECOND, &json!({"challenge": ch, "code": phone.code().await, "remember": true}), None).await;
    assert_eq!(s, 200, "{body}");
    let (s, body) = app.post_json(OFF, &json!({"password": PASSWORD, "code": recovery[0]}), Some(&token)).await;
    assert_eq!(s, 200, "{body}");
    let (_, body) = app.get_auth(STATUS, &token).await;
    assert_eq!(body["data"], json!({"enabled": false, "recovery_codes_left": 0, "required": false}));
    for table in ["two_factor", "two_factor_recovery_codes", "remembered_browsers"] {
        assert!(stored(&app, &format!("SELECT user_id FROM {table}")).await.is_empty(), "{table}");
    }
    app.login("ada@example.com", PASSWORD).await;
    let off = with("POST", OFF, json!({"password": PASSWORD, "code": "123456"}));
    says(&app, &off, Some(&token), (409, "two_factor_not_on", None), ["Two-factor sign-in is not on", "两步验证未开启"]).await;
    // Confirming without a started enrolment.
    let (s, body) = app.post_json(CONFIRM, &json!({"code": "123456"}), Some(&token)).await;
    assert_eq!((s, body["error"].as_str()), (409, Some("two_factor_not_started")), "{body}");
}

#[tokio::test]
async fn operators_and_company_admins_enrol_first_when_the_operator_requires_it() {
    let app = TestApp::spawn().await;
    let op = app.signed_in("op@example.com").await;
    crate::ops::make_operator(&app, "op@example.com");
    let token = token_of(&op);
    // Off by default (`auth.two_factor_required_for_staff`); the operator turns it on in the
    // console's settings. A value that is not a boolean changes nothing.
    let (s, body) = app.get_auth("/api/ops/v1/overview", &token).await;
    assert_eq!(s, 200, "{body}");
    let (s, body) = app.put_json("/api/ops/v1/settings", &json!({"two_factor_required_for_staff": "yes"}), &token).await;
    assert_eq!((s, body["data"]["field"].as_str()), (400, Some("two_factor_required_for_staff")), "{body}");
    let (s, body) = app.get_auth("/api/ops/v1/settings", &token).await;
    assert_eq!((s, &body["data"]["two_factor_required_for_staff"]), (200, &json!(false)), "{body}");
    let (s, body) = app.put_json("/api/ops/v1/settings", &json!({"two_factor_required_for_staff": true}), &token).await;
    assert_eq!((s, &body["data"]["two_factor_required_for_staff"]), (200, &json!(true)), "{body}");
    let enrol_first = [
        "Turn on two-factor sign-in on your account page first: it is required for operators and company administrators",
        "请先在账户页面开启两步验证：运营者和企业管理员必须开启",
    ];
    says(&app, &get("/api/ops/v1/overview"), Some(&token), (403, "two_factor_enrolment_required", None), enrol_first).await;
    let (_, body) = app.get_auth(STATUS, &token).await;
    assert_eq!(body["data"]["required"], true);
    enrol(&app, &token).await;
    let (s, body) = app.get_auth("/api/ops/v1/overview", &token).await;
    assert_eq!(s, 200, "{body}");
    let (_, body) = app.get_auth(STATUS, &token).await;
    assert_eq!(body["data"]["required"], false);

    // A company administrator, in the company's context.
    let ann = app.signed_in("ann@example.com").await;
    let company = seed_company(&app, "Acme", &ann, &[]).await;
    let admin = app.switch(&ann, &company).await;
    let (s, body) = app.get_auth("/api/iam/v1/sme/history", &token_of(&admin)).await;
    assert_eq!((s, body["error"].as_str()), (403, Some("two_factor_enrolment_required")), "{body}");
    // Nor does she act as one where a route asks "administrator?" itself (an assignment), while
    // what she reads there stays open.
    let assign = json!({"user_id": "nobody", "resource_type": "app", "resource_id": "grafana"});
    let (s, body) = app.post_json("/api/ebs/v1/sme/resources/assign", &assign, Some(&token_of(&admin))).await;
    assert_eq!((s, body["error"].as_str()), (403, Some("two_factor_enrolment_required")), "{body}");
    let (s, body) = app.get_auth("/api/ebs/v1/sme/resources", &token_of(&admin)).await;
    assert_eq!(s, 200, "{body}");
    // In her personal context she is neither: nothing is asked.
    let (_, body) = app.get_auth(STATUS, &token_of(&ann)).await;
    assert_eq!(body["data"]["required"], false);
    enrol(&app, &token_of(&admin)).await;
    let (s, body) = app.get_auth("/api/iam/v1/sme/history", &token_of(&admin)).await;
    assert_eq!(s, 200, "{body}");
}

#[tokio::test]
async fn a_large_money_move_asks_for_a_current_code() {
    let app = TestApp::spawn_with(|c| c.auth.two_factor_step_up = Coins::from_cents(50 * 100)).await;
    let ann = app.signed_in("ann@example.com").await;
    let company = seed_company(&app, "Acme", &ann, &[]).await;
    let admin = token_of(&app.switch(&ann, &company).await);
    // 2FA off: nothing is asked.
    let (s, body) = app.post_json(FUND, &json!({"amount": 5100}), Some(&admin)).await;
    assert_eq!(s, 200, "{body}");

    let (mut phone, _) = enrol(&app, &token_of(&ann)).await;
    let step_up = [
        "Moving more than 50.00 coins needs a current code from your authenticator app (field code)",
        "转移超过 50.00 币需要身份验证器应用中的当前验证码（字段 code）",
    ];
    says(&app, &with("POST", FUND, json!({"amount": 5001})), Some(&admin), (400, "two_factor_step_up", Some("code")), step_up).await;
    let (s, body) = app.post_json(FUND, &json!({"amount": 5001, "code": phone.wrong()}), Some(&admin)).await;
    assert_eq!((s, body["error"].as_str()), (400, Some("two_factor_code_invalid")), "{body}");
    let (_, w) = app.get_auth("/api/billing/v1/wallet", &admin).await;
    assert_eq!(w["data"]["balance"], 5100, "refusals moved nothing: {w}");
    let (s, body) = app.post_json(FUND, &json!({"amount": 4000, "code": phone.code().await}), Some(&admin)).await;
    assert_eq!(s, 200, "{body}");
    // At or under the threshold: no code.
    let (s, body) = app.post_json(FUND, &json!({"amount": 500}), Some(&admin)).await;
    assert_eq!(s, 200, "{body}");
    let (_, w) = app.get_auth("/api/billing/v1/wallet", &admin).await;
    assert_eq!(w["data"]["balance"], 9600, "{w}");
}

/// The default of the setting comes from config.toml.
#[tokio::test]
async fn the_requirement_defaults_from_the_config() {
    let app = TestApp::spawn_with(|c| c.auth.two_factor_required_for_staff = true).await;
    let op = app.signed_in("op@example.com").await;
    crate::ops::make_operator(&app, "op@example.com");
    let (s, body) = app.get_auth("/api/ops/v1/settings", &token_of(&op)).await;
    assert_eq!((s, body["error"].as_str()), (403, Some("two_factor_enrolment_required")), "{body}");
}
