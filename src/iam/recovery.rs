//! Account recovery: "Forgot password" (a mailed, single-use, expiring link; every session ends
//! after the reset) and "Resend verification email". Both answer the same whether or not the
//! address has an account, and both are limited per address and per client IP with governor's
//! keyed limiters, like sign-in (ratelimit.rs). No HTTP types here.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use chrono::Duration as ChronoDuration;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};

use crate::db::entity::{password_resets, sessions, users};
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::IamCtx;
use crate::iam::model::{Email, PasswordReset, RecoveryAnswer};
use crate::iam::{password, signup, tokens};
use crate::mail::Mail;

/// How long a reset link works.
pub const RESET_TTL_SECS: i64 = 3600;
/// Recovery mails per address: a burst of 3, then one every 10 minutes.
const PER_EMAIL_BURST: u32 = 3;
const PER_EMAIL_EVERY: Duration = Duration::from_secs(600);
/// Recovery requests per client IP: a burst of 20, then one a minute.
const PER_IP_BURST: u32 = 20;
const PER_IP_EVERY: Duration = Duration::from_secs(60);

/// Limits recovery mails (both kinds share it: each is a mail to someone's inbox).
pub struct RecoveryLimiter {
    per_ip: DefaultKeyedRateLimiter<IpAddr>,
    per_email: DefaultKeyedRateLimiter<String>,
}

impl Default for RecoveryLimiter {
    fn default() -> Self {
        Self::new(PER_IP_BURST, PER_IP_EVERY, PER_EMAIL_BURST, PER_EMAIL_EVERY)
    }
}

impl RecoveryLimiter {
    pub fn new(ip_burst: u32, ip_every: Duration, email_burst: u32, email_every: Duration) -> Self {
        let quota = |burst: u32, every: Duration| {
            Quota::with_period(every).expect("non-zero period").allow_burst(NonZeroU32::new(burst.max(1)).expect("max(1)"))
        };
        RecoveryLimiter { per_ip: RateLimiter::keyed(quota(ip_burst, ip_every)), per_email: RateLimiter::keyed(quota(email_burst, email_every)) }
    }

    /// Charges one request to the IP and to the address; `Err` is the 429 with its wait.
    pub fn check(&self, ip: IpAddr, email: &str) -> Result<(), AppError> {
        let wait = |n: governor::NotUntil<governor::clock::QuantaInstant>| {
            let d = n.wait_time_from(DefaultClock::default().now());
            AppError::TooManyRequests { retry_after_secs: (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1) }
        };
        self.per_ip.check_key(&ip).map_err(wait)?;
        self.per_email.check_key(&email.to_string()).map_err(wait)?;
        Ok(())
    }

    pub fn retain_recent(&self) {
        self.per_ip.retain_recent();
        self.per_email.retain_recent();
    }
}

fn answer(email: &Email) -> RecoveryAnswer {
    RecoveryAnswer { email: email.as_str().to_string(), sent: true }
}

/// Mails a reset link when `email` has an account; answers the same either way.
pub async fn forgot_password(cx: &IamCtx, ip: IpAddr, email: Email) -> Result<RecoveryAnswer, AppError> {
    cx.recovery.check(ip, email.as_str())?;
    let txn = write_txn(&cx.db).await?;
    let Some(user) = users::Entity::find().filter(users::Column::Email.eq(email.as_str())).one(&txn).await? else {
        return Ok(answer(&email));
    };
    // One working link at a time: a new one replaces the others.
    password_resets::Entity::delete_many().filter(password_resets::Column::UserId.eq(user.id.clone())).exec(&txn).await?;
    let token = tokens::random_token();
    let t = now();
    password_resets::ActiveModel {
        token_hash: Set(tokens::hash_token(&token)),
        user_id: Set(user.id.clone()),
        expires_at: Set(t + ChronoDuration::seconds(RESET_TTL_SECS)),
        used_at: Set(None),
        created_at: Set(t),
    }
    .insert(&txn)
    .await?;
    let link = cx.site.link(&format!("/reset-password?token={token}"));
    let product = &cx.site.product_name;
    let minutes = RESET_TTL_SECS / 60;
    let body = format!(
        "Someone (hopefully you) asked to reset the password of your {product} account.\n\n\
         Open this link to choose a new password:\n{link}\n\n\
         The link works once, for {minutes} minutes. Setting a new password signs you out everywhere.\n\
         If you did not ask for this, ignore this message: your password stays as it is.\n\n\
         有人（希望是您本人）申请重置您的 {product} 账户密码。\n\n请打开以下链接设置新密码：\n{link}\n\n\
         链接只能使用一次，{minutes} 分钟内有效。设置新密码后，您将在所有设备上退出登录。\n如果不是您本人申请，请忽略本邮件：您的密码不会改变。\n"
    );
    let subject = format!("Reset your password / 重置密码 - {product}");
    cx.mailer.enqueue(&txn, Mail { to: email.as_str(), subject: &subject, body: &body, link: Some(&link) }).await?;
    txn.commit().await?;
    cx.mailer.wake();
    Ok(answer(&email))
}

/// Sets a new password with a mailed link: once, before it expires; every session of the account
/// ends, and the address counts as verified (the link reached it).
pub async fn reset_password(cx: &IamCtx, req: PasswordReset) -> Result<(), AppError> {
    let PasswordReset { token, password: new } = req;
    let hash = password::hash(new.as_str().to_string()).await?;
    let token_hash = tokens::hash_token(&token);
    let txn = write_txn(&cx.db).await?;
    let link = password_resets::Entity::find_by_id(token_hash.clone()).one(&txn).await?.ok_or(AppError::invalid("token", Msg::ResetLinkInvalid))?;
    if link.used_at.is_some() {
        return Err(AppError::conflict(Msg::ResetLinkUsed));
    }
    let t = now();
    if link.expires_at <= t {
        return Err(AppError::conflict(Msg::ResetLinkExpired));
    }
    // Single use on every backend: only the request that flips used_at goes on.
    let claimed = password_resets::Entity::update_many()
        .col_expr(password_resets::Column::UsedAt, Expr::value(Some(t)))
        .filter(password_resets::Column::TokenHash.eq(token_hash))
        .filter(password_resets::Column::UsedAt.is_null())
        .exec(&txn)
        .await?
        .rows_affected;
    if claimed != 1 {
        return Err(AppError::conflict(Msg::ResetLinkUsed));
    }
    let user = users::Entity::find_by_id(link.user_id.clone()).one(&txn).await?.ok_or(AppError::invalid("token", Msg::ResetLinkInvalid))?;
    let newly_verified = user.email_verified_at.is_none();
    let verified = user.email_verified_at.or(Some(t));
    let mut a: users::ActiveModel = user.into();
    a.password_hash = Set(hash);
    a.email_verified_at = Set(verified);
    a.updated_at = Set(t);
    a.update(&txn).await?;
    if newly_verified {
        // The mailed link proved the address, as verifying does (the signup bonus …).
        cx.on_verified.run(&txn, &link.user_id).await?;
    }
    sessions::Entity::update_many()
        .col_expr(sessions::Column::RevokedAt, t.into())
        .col_expr(sessions::Column::RevokeReason, "password_reset".into())
        .filter(sessions::Column::UserId.eq(link.user_id))
        .filter(sessions::Column::RevokedAt.is_null())
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(())
}

/// Mails a new verification link when `email` has an account still waiting for one; answers the
/// same for every address.
pub async fn resend_verification(cx: &IamCtx, ip: IpAddr, email: Email, redirect: Option<String>) -> Result<RecoveryAnswer, AppError> {
    cx.recovery.check(ip, email.as_str())?;
    if !cx.settings.email_verification {
        return Ok(answer(&email));
    }
    let txn = write_txn(&cx.db).await?;
    let waiting = users::Entity::find()
        .filter(users::Column::Email.eq(email.as_str()))
        .filter(users::Column::EmailVerifiedAt.is_null())
        .one(&txn)
        .await?;
    let Some(user) = waiting else { return Ok(answer(&email)) };
    signup::send_verification(cx, &txn, &user.id, &email, redirect.as_deref()).await?;
    txn.commit().await?;
    cx.mailer.wake();
    Ok(answer(&email))
}
