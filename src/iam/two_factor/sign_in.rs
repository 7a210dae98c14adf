//! The second step of the password sign-in: a person with 2FA on gets a challenge (good once, for
//! `CHALLENGE_SECS`) instead of a session, unless this browser was remembered; the challenge and
//! a code then open the session, and may remember the browser for 30 days (an HttpOnly cookie
//! whose token is kept as SHA-256).

use std::net::IpAddr;

use chrono::Duration;
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};
use serde_json::json;

use crate::db::entity::{remembered_browsers, two_factor_challenges, users};
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::IamCtx;
use crate::iam::tokens::{hash_token, random_token};
use crate::iam::two_factor::model::SecondStep;
use crate::iam::two_factor::{enabled, use_code};
use crate::ids::UserId;

/// How long the code may take after the password.
pub const CHALLENGE_SECS: i64 = 300;
/// How long a remembered browser skips the code.
pub const REMEMBER_DAYS: i64 = 30;
/// The cookie of a remembered browser, sent only to the sign-in routes.
pub const REMEMBER_COOKIE: &str = "zm_2fa";
pub const REMEMBER_PATH: &str = "/api/iam/v2/login";

/// After a right password: Ok when no code is asked (2FA off, or this browser remembered for this
/// person), else 401 `two_factor_required` with `{challenge, expires_in}`.
pub async fn after_password(cx: &IamCtx, user: &users::Model, remembered: Option<&str>) -> Result<(), AppError> {
    if !enabled(&cx.db, &user.id).await? {
        return Ok(());
    }
    if let Some(token) = remembered {
        let hit = remembered_browsers::Entity::find_by_id(hash_token(token)).one(&cx.db).await?;
        if hit.is_some_and(|b| b.user_id == user.id && b.expires_at > now()) {
            return Ok(());
        }
    }
    let challenge = random_token();
    let t = now();
    two_factor_challenges::ActiveModel {
        token_hash: Set(hash_token(&challenge)),
        user_id: Set(user.id.clone()),
        created_at: Set(t),
        expires_at: Set(t + Duration::seconds(CHALLENGE_SECS)),
        used_at: Set(None),
    }
    .insert(&cx.db)
    .await?;
    Err(AppError::Explained { msg: Msg::TwoFactorRequired, data: json!({ "challenge": challenge, "expires_in": CHALLENGE_SECS }) })
}

/// The second step: the challenge (live, unused) and a good code let the person in (the caller,
/// `sessions::login_second_step`, opens the session); a wrong code is charged as a wrong password
/// and leaves the challenge usable until it expires. Answers the person and, when asked to
/// remember, the new cookie token.
pub async fn second_step(cx: &IamCtx, ip: IpAddr, req: SecondStep) -> Result<(users::Model, Option<String>), AppError> {
    let invalid = || AppError::invalid("challenge", Msg::TwoFactorChallengeInvalid);
    let hash = hash_token(&req.challenge);
    let challenge = two_factor_challenges::Entity::find_by_id(hash.clone()).one(&cx.db).await?.ok_or_else(invalid)?;
    if challenge.used_at.is_some() || challenge.expires_at <= now() {
        return Err(invalid());
    }
    let user = users::Entity::find_by_id(challenge.user_id.clone()).one(&cx.db).await?.ok_or_else(invalid)?;
    cx.limiter.login_attempt(ip, &user.email).await?;
    if user.suspended_at.is_some() {
        return Err(AppError::Refused(Msg::AccountSuspended(user.suspended_reason.clone().unwrap_or_default())));
    }
    let txn = write_txn(&cx.db).await?;
    if !use_code(&txn, &user.id, &req.code).await? {
        drop(txn);
        cx.limiter.login_failed(ip, &user.email).await?;
        return Err(AppError::invalid("code", Msg::TwoFactorCodeInvalid));
    }
    // The challenge is good once: of two requests racing with it, one wins.
    let won = two_factor_challenges::Entity::update_many()
        .col_expr(two_factor_challenges::Column::UsedAt, Expr::value(now()))
        .filter(two_factor_challenges::Column::TokenHash.eq(hash))
        .filter(two_factor_challenges::Column::UsedAt.is_null())
        .exec(&txn)
        .await?;
    if won.rows_affected != 1 {
        return Err(invalid());
    }
    let remember = if req.remember { Some(remember_browser(&txn, &user.id).await?) } else { None };
    txn.commit().await?;
    Ok((user, remember))
}

async fn remember_browser(conn: &impl ConnectionTrait, user_id: &UserId) -> Result<String, AppError> {
    let token = random_token();
    let t = now();
    remembered_browsers::ActiveModel {
        token_hash: Set(hash_token(&token)),
        user_id: Set(UserId::from(user_id)),
        created_at: Set(t),
        expires_at: Set(t + Duration::days(REMEMBER_DAYS)),
    }
    .insert(conn)
    .await?;
    Ok(token)
}

/// The `Set-Cookie` value of a remembered browser (`Secure` when the site is served over HTTPS).
pub fn remember_cookie(token: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{REMEMBER_COOKIE}={token}; Path={REMEMBER_PATH}; HttpOnly; SameSite=Strict; Max-Age={}{secure}", REMEMBER_DAYS * 86400)
}

/// The remembered-browser token of a `Cookie` header, if any.
pub fn remembered_token(cookie_header: Option<&str>) -> Option<&str> {
    cookie_header?.split(';').map(str::trim).find_map(|kv| kv.strip_prefix(REMEMBER_COOKIE)?.strip_prefix('=')).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_is_read_back() {
        assert_eq!(remembered_token(Some("a=1; zm_2fa=tok; b=2")), Some("tok"));
        assert_eq!(remembered_token(Some("zm_2fax=tok")), None);
        assert_eq!(remembered_token(None), None);
        assert!(remember_cookie("t", true).ends_with("; Secure"));
    }
}
