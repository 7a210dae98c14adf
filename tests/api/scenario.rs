//! Scenarios as data: a request is a row (method, path, body), and who may not make it is a list
//! of people, each refusal checked against the one message table's status and stable name; what
//! a refusal says is checked in both languages at once (`says`). The authorization matrices (the
//! operator's console, publishing apps, the market's settings) and the localized refusals are
//! written with it instead of a set-up and a loop each.

use std::borrow::Borrow;

use serde_json::Value;

use crate::common::*;

/// One request of a scenario.
pub(crate) struct Call {
    pub method: &'static str,
    pub path: String,
    pub body: Option<Value>,
}

/// A request without a body.
pub(crate) fn get(path: impl Into<String>) -> Call {
    Call { method: "GET", path: path.into(), body: None }
}

/// A request without a body, by any method.
pub(crate) fn bare(method: &'static str, path: impl Into<String>) -> Call {
    Call { method, path: path.into(), body: None }
}

/// A request with a JSON body.
pub(crate) fn with(method: &'static str, path: impl Into<String>, body: Value) -> Call {
    Call { method, path: path.into(), body: Some(body) }
}

/// The people an authorization matrix asks as: a person on their own, a company's administrator
/// and a member (each switched into the company), and an operator of the market (in their
/// personal context, where the console is).
pub(crate) struct Roles {
    pub operator: Value,
    pub person: Value,
    pub admin: Value,
    pub member: Value,
}

impl Roles {
    pub(crate) async fn new(app: &TestApp) -> Roles {
        let operator = app.signed_in("op@example.com").await;
        crate::ops::make_operator(app, "op@example.com");
        let person = app.signed_in("user@example.com").await;
        let owner = app.signed_in("owner@example.com").await;
        let member = app.signed_in("member@example.com").await;
        let company = seed_company(app, "Acme", &owner, &[(&member, "member")]).await;
        let admin = app.switch(&owner, &company).await;
        let member = app.switch(&member, &company).await;
        Roles { operator, person, admin, member }
    }

    /// Everyone but the operator.
    pub(crate) fn others(&self) -> [&Value; 3] {
        [&self.person, &self.admin, &self.member]
    }
}

/// Asks `c` with `token` (none: signed out) in `lang`: (status, envelope).
pub(crate) async fn ask(app: &TestApp, c: &Call, token: Option<&str>, lang: &str) -> (u16, Value) {
    let mut req = app.client.request(c.method.parse().unwrap(), app.url(&c.path)).header("accept", "application/json").header("accept-language", lang);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = &c.body {
        req = req.json(b);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// Each row's call, asked by each of `who` in `lang`, answers the row's status with the table's
/// name (`error` in the envelope) and a text in that language.
pub(crate) async fn each_refused(app: &TestApp, who: &[&Value], rows: &[(&Call, u16, &str)], lang: &str) {
    for person in who {
        for (c, status, name) in rows {
            let (s, b) = ask(app, c, Some(&token_of(person)), lang).await;
            assert_eq!((s, b["error"].as_str()), (*status, Some(*name)), "{} {} as {}: {b}", c.method, c.path, person["userInfo"]);
            let chinese = b["msg"].as_str().is_some_and(|m| m.chars().any(|ch| ch > '\u{2e80}'));
            assert_eq!(chinese, lang.starts_with("zh"), "{} {} in {lang}: {b}", c.method, c.path);
        }
    }
}

/// Every call, asked by each of `who` in `lang`, answers `status` with the table's `name`.
pub(crate) async fn refused_to(app: &TestApp, who: &[&Value], calls: &[Call], lang: &str, status: u16, name: &str) {
    let rows: Vec<(&Call, u16, &str)> = calls.iter().map(|c| (c, status, name)).collect();
    each_refused(app, who, &rows, lang).await;
}

/// Every call answers 401 to someone who is not signed in.
pub(crate) async fn refused_signed_out(app: &TestApp, calls: &[Call]) {
    for c in calls {
        assert_eq!(ask(app, c, None, "en").await.0, 401, "{} {}", c.method, c.path);
    }
}

/// A refusal as the message table writes it: its status, its stable name, and the input it names
/// in `data.field` (`None`: not checked).
pub(crate) type Refusal<'a> = (u16, &'a str, Option<&'a str>);

/// Asks `c` as `token` (none: signed out) in English, then in Chinese: each answers the refusal
/// (status, name, field) with the text of its language (`texts`: English, Chinese). Returns the two
/// envelopes, English first, for what else a test reads in them.
pub(crate) async fn says(app: &TestApp, c: &Call, token: Option<&str>, (status, name, field): Refusal<'_>, texts: [&str; 2]) -> [Value; 2] {
    let mut envelopes = [Value::Null, Value::Null];
    for (i, lang) in ["en", "zh-CN"].into_iter().enumerate() {
        let (s, b) = ask(app, c, token, lang).await;
        assert_eq!((s, b["error"].as_str(), b["msg"].as_str()), (status, Some(name), Some(texts[i])), "{} {} in {lang}: {b}", c.method, c.path);
        assert_eq!(b["code"], status, "the envelope's code is the status: {b}");
        if let Some(field) = field {
            assert_eq!(b["data"]["field"], field, "{} {}: {b}", c.method, c.path);
        }
        envelopes[i] = b;
    }
    envelopes
}

/// Each row's call, asked as `token` in English and in Chinese, answers as `says` checks: the
/// row's refusal, with its text in each language.
pub(crate) async fn each_says<C: Borrow<Call>>(app: &TestApp, token: Option<&str>, rows: &[(C, Refusal<'_>, [&str; 2])]) {
    for (c, refusal, texts) in rows {
        says(app, c.borrow(), token, *refusal, *texts).await;
    }
}
