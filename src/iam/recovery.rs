//! Account recovery: "Forgot password" (a mailed, single-use, expiring link; every session ends
//! after the reset) and "Resend verification email". Both answer the same whether or not the
//! address has an account, and both are limited per address and per client IP like sign-in, on
//! every instance together (iam/ratelimit.rs). No HTTP types here.

use std::net::IpAddr;

use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};

use crate::db::entity::{password_resets, users};
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::IamCtx;
use crate::iam::model::{Email, PasswordReset, RecoveryAnswer};
use crate::iam::{signup, tokens};
use crate::mail::Mail;

pub use crate::iam::resets::RESET_TTL_SECS;
use crate::iam::resets::new_reset_token;

fn answer(email: &Email) -> RecoveryAnswer {
    RecoveryAnswer { email: email.as_str().to_string(), sent: true }
}

/// Mails a reset link when `email` has an account; answers the same either way.
pub async fn forgot_password(cx: &IamCtx, ip: IpAddr, email: Email) -> Result<RecoveryAnswer, AppError> {
    cx.limiter.recovery_attempt(ip, email.as_str()).await?;
    let txn = write_txn(&cx.db).await?;
    let Some(user) = users::Entity::find().filter(users::Column::Email.eq(email.as_str())).one(&txn).await? else {
        return Ok(answer(&email));
    };
    // One working link at a time: a new one replaces the others.
    let token = new_reset_token(&txn, &user.id).await?;
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
    let hash = cx.hasher.hash(new.as_str().to_string()).await?;
    let token_hash = tokens::hash_token(&token);
    let txn = write_txn(&cx.db).await?;
    let link = password_resets::Entity::find_by_id(token_hash.clone()).one(&txn).await?.ok_or(AppError::invalid("token", Msg::ResetLinkInvalid))?;
    if link.used_at.is_some() {
        return Err(AppError::Refused(Msg::ResetLinkUsed));
    }
    let t = now();
    if link.expires_at <= t {
        return Err(AppError::Refused(Msg::ResetLinkExpired));
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
        return Err(AppError::Refused(Msg::ResetLinkUsed));
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
    crate::iam::sessions::end_all(&txn, &link.user_id, None, "password_reset", t).await?;
    crate::iam::api_keys::revoke_all(&txn, &link.user_id).await?;
    // Two-factor sign-in stays on (a mailbox is not the second factor); remembered browsers go.
    crate::iam::two_factor::forget_browsers(&txn, &link.user_id).await?;
    txn.commit().await?;
    Ok(())
}

/// Mails a new verification link when `email` has an account still waiting for one; answers the
/// same for every address.
pub async fn resend_verification(cx: &IamCtx, ip: IpAddr, email: Email, redirect: Option<String>) -> Result<RecoveryAnswer, AppError> {
    cx.limiter.recovery_attempt(ip, email.as_str()).await?;
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
    // The one pending sign-up's link is replaced (its password travels on); otherwise nothing
    // is sent (issue 16, finding 3: signup::replace_pending).
    let Some(chosen) = signup::replace_pending(&txn, &user.id).await? else { return Ok(answer(&email)) };
    signup::send_verification(cx, &txn, &user.id, &email, chosen, redirect.as_deref(), ip).await?;
    txn.commit().await?;
    cx.mailer.wake();
    Ok(answer(&email))
}
