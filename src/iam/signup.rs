//! Sign-up and email verification. No HTTP types here.

use std::sync::Arc;

use chrono::Duration;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter, Set};

use crate::db::entity::{email_verifications, users};
use crate::db::{new_id, now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::IamCtx;
use crate::iam::model::*;
use crate::iam::password;
use crate::iam::tokens;
use crate::mail::Mail;

/// What another domain does when an account becomes verified (the wallet's signup bonus),
/// inside the verifying transaction. Registered when the server is assembled (src/server.rs).
#[async_trait::async_trait]
pub trait OnVerified: Send + Sync {
    async fn verified(&self, txn: &DatabaseTransaction, user_id: &str) -> Result<(), AppError>;
}

/// Every registered [`OnVerified`], run in order.
#[derive(Clone, Default)]
pub struct VerifiedHooks(Arc<Vec<Arc<dyn OnVerified>>>);

impl VerifiedHooks {
    pub fn new(hooks: Vec<Arc<dyn OnVerified>>) -> Self {
        VerifiedHooks(Arc::new(hooks))
    }
    pub(crate) async fn run(&self, txn: &DatabaseTransaction, user_id: &str) -> Result<(), AppError> {
        for h in self.0.iter() {
            h.verified(txn, user_id).await?;
        }
        Ok(())
    }
}

// ---- sign-up and verification ----

/// A new verification link for `user_id` (the earlier ones stop working), mailed inside the
/// caller's transaction. `redirect` (a path of this site) rides along in the link, so that the
/// verified person signs in and lands there (an invitation).
pub async fn send_verification(
    cx: &IamCtx,
    txn: &impl ConnectionTrait,
    user_id: &str,
    email: &Email,
    redirect: Option<&str>,
) -> Result<(), AppError> {
    email_verifications::Entity::delete_many().filter(email_verifications::Column::UserId.eq(user_id)).exec(txn).await?;
    let token = tokens::random_token();
    let t = now();
    email_verifications::ActiveModel {
        token_hash: Set(tokens::hash_token(&token)),
        user_id: Set(user_id.to_string()),
        expires_at: Set(t + Duration::seconds(cx.settings.verification_ttl_secs as i64)),
        used_at: Set(None),
        created_at: Set(t),
    }
    .insert(txn)
    .await?;
    let next = redirect.map(|r| format!("&redirect={}", url::form_urlencoded::byte_serialize(r.as_bytes()).collect::<String>())).unwrap_or_default();
    let link = cx.site.link(&format!("/email-verified?token={token}{next}"));
    let product = &cx.site.product_name;
    let hours = cx.settings.verification_ttl_secs / 3600;
    let body = format!(
        "Welcome to {product}!\n\nOpen this link to verify your email address:\n{link}\n\n\
         The link is valid for {hours} hours. If you did not sign up, ignore this message.\n\n\
         欢迎使用 {product}！\n\n请打开以下链接验证您的邮箱：\n{link}\n\n链接 {hours} 小时内有效。如果不是您本人注册，请忽略本邮件。\n"
    );
    let subject = format!("Verify your email address / 验证您的邮箱 - {product}");
    cx.mailer.enqueue(txn, Mail { to: email.as_str(), subject: &subject, body: &body, link: Some(&link) }).await?;
    Ok(())
}

pub async fn register(cx: &IamCtx, req: NewAccount) -> Result<RegisterResponse, AppError> {
    let NewAccount { email, password, username: given_name, redirect } = req;
    let verify = cx.settings.email_verification;
    let hash = password::hash(password.as_str().to_string()).await?;

    let txn = write_txn(&cx.db).await?;
    let existing = users::Entity::find().filter(users::Column::Email.eq(email.as_str())).one(&txn).await?;
    let t = now();
    let user_id = match existing {
        // A verified account keeps its owner.
        Some(u) if u.email_verified_at.is_some() || !verify => return Err(email_taken()),
        // An unverified sign-up may be repeated: new password, new link.
        Some(u) => {
            let id = u.id.clone();
            let mut a: users::ActiveModel = u.into();
            a.password_hash = Set(hash);
            if let Some(name) = given_name {
                a.name = Set(name.into_string());
            }
            a.updated_at = Set(t);
            a.update(&txn).await?;
            id
        }
        None => {
            let id = new_id();
            users::ActiveModel {
                id: Set(id.clone()),
                email: Set(email.as_str().to_string()),
                name: Set(given_name.unwrap_or_else(|| Username::from_email(&email)).into_string()),
                password_hash: Set(hash),
                email_verified_at: Set(if verify { None } else { Some(t) }),
                avatar: Set(None),
                avatar_type: Set(None),
                avatar_version: Set(0),
                created_at: Set(t),
                updated_at: Set(t),
            }
            .insert(&txn)
            .await
            .map_err(|e| match e.sql_err() {
                Some(sea_orm::SqlErr::UniqueConstraintViolation(_)) => email_taken(),
                _ => e.into(),
            })?;
            if !verify {
                cx.on_verified.run(&txn, &id).await?;
            }
            id
        }
    };
    if verify {
        send_verification(cx, &txn, &user_id, &email, redirect.as_deref()).await?;
    }
    txn.commit().await?;
    if verify {
        cx.mailer.wake();
    }
    Ok(RegisterResponse { email: email.as_str().to_string(), verification_required: verify })
}

pub async fn verify_email(cx: &IamCtx, token: Option<&str>) -> Result<EmailOnly, AppError> {
    let token = token.map(str::trim).filter(|t| !t.is_empty()).ok_or(AppError::invalid("token", Msg::VerificationInvalid))?;
    let txn = write_txn(&cx.db).await?;
    let Some(v) = email_verifications::Entity::find_by_id(tokens::hash_token(token)).one(&txn).await? else {
        return Err(AppError::invalid("token", Msg::VerificationInvalid));
    };
    let Some(user) = users::Entity::find_by_id(v.user_id.clone()).one(&txn).await? else {
        return Err(AppError::invalid("token", Msg::VerificationInvalid));
    };
    if v.used_at.is_some() {
        // Opening the link twice is fine.
        return Ok(EmailOnly { email: user.email });
    }
    if v.expires_at <= now() {
        return Err(AppError::conflict(Msg::VerificationExpired));
    }
    let t = now();
    let (email, user_id) = (user.email.clone(), user.id.clone());
    let mut u: users::ActiveModel = user.into();
    u.email_verified_at = Set(Some(t));
    u.updated_at = Set(t);
    u.update(&txn).await?;
    let mut v: email_verifications::ActiveModel = v.into();
    v.used_at = Set(Some(t));
    v.update(&txn).await?;
    cx.on_verified.run(&txn, &user_id).await?;
    txn.commit().await?;
    Ok(EmailOnly { email })
}

/// 409 for an address that already has an account, naming the field it is about.
fn email_taken() -> AppError {
    AppError::Conflict { msg: Msg::EmailTaken, data: Some(serde_json::json!({ "field": "email" })) }
}
