//! Sign-up and email verification. No HTTP types here.

use std::net::IpAddr;
use std::sync::Arc;

use chrono::Duration;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter, Set};

use crate::db::entity::{email_verifications, users};
use crate::db::{for_update, now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::IamCtx;
use crate::iam::model::*;
use crate::iam::tokens;
use crate::mail::Mail;
use crate::ids::UserId;

/// What another domain does when an account becomes verified (the wallet's signup bonus),
/// inside the verifying transaction. Registered when the server is assembled (src/server.rs).
#[async_trait::async_trait]
pub trait OnVerified: Send + Sync {
    async fn verified(&self, txn: &DatabaseTransaction, user_id: &UserId) -> Result<(), AppError>;
}

/// Every registered [`OnVerified`], run in order.
#[derive(Clone, Default)]
pub struct VerifiedHooks(Arc<Vec<Arc<dyn OnVerified>>>);

impl VerifiedHooks {
    pub fn new(hooks: Vec<Arc<dyn OnVerified>>) -> Self {
        VerifiedHooks(Arc::new(hooks))
    }
    pub(crate) async fn run(&self, txn: &DatabaseTransaction, user_id: &UserId) -> Result<(), AppError> {
        for h in self.0.iter() {
            h.verified(txn, user_id).await?;
        }
        Ok(())
    }
}

// ---- sign-up and verification ----

/// What a pending sign-up chose, travelling with its own link (issue 16, finding 3): the
/// password (and name) that become the account's when that link is opened.
#[derive(Debug, Clone, Default)]
pub struct Chosen {
    pub password_hash: Option<String>,
    pub name: Option<String>,
}

/// A new verification link for `user_id` carrying `chosen`, mailed inside the caller's
/// transaction. Earlier links stay valid until one of them is opened (the first opened decides
/// and kills the others). `redirect` (a path of this site) rides along in the link, so that the
/// verified person signs in and lands there (an invitation).
pub async fn send_verification(
    cx: &IamCtx,
    txn: &impl ConnectionTrait,
    user_id: &UserId,
    email: &Email,
    chosen: Chosen,
    redirect: Option<&str>,
    from: IpAddr,
) -> Result<(), AppError> {
    let token = tokens::random_token();
    let t = now();
    email_verifications::ActiveModel {
        token_hash: Set(tokens::hash_token(&token)),
        user_id: Set(UserId::from(user_id)),
        expires_at: Set(t + Duration::seconds(cx.settings.verification_ttl_secs as i64)),
        used_at: Set(None),
        created_at: Set(t),
        password_hash: Set(chosen.password_hash),
        name: Set(chosen.name),
    }
    .insert(txn)
    .await?;
    let next = redirect.map(|r| format!("&redirect={}", url::form_urlencoded::byte_serialize(r.as_bytes()).collect::<String>())).unwrap_or_default();
    let link = cx.site.link(&format!("/email-verified?token={token}{next}"));
    let product = &cx.site.product_name;
    let hours = cx.settings.verification_ttl_secs / 3600;
    let when = t.format("%Y-%m-%d %H:%M UTC");
    let body = format!(
        "Welcome to {product}!\n\nOpen this link to verify your email address:\n{link}\n\n\
         This sign-up was made on {when} from the address {from}. If you receive several of these \
         messages, someone else may have signed up with your address: opening any of the links \
         then asks you to choose a new password.\n\n\
         The link is valid for {hours} hours. If you did not sign up, ignore this message.\n\n\
         欢迎使用 {product}！\n\n请打开以下链接验证您的邮箱：\n{link}\n\n\
         本次注册于 {when} 从地址 {from} 发起。如果您收到多封此类邮件，可能有他人用您的邮箱注册：打开任一链接后，您需要设置新密码。\n\n\
         链接 {hours} 小时内有效。如果不是您本人注册，请忽略本邮件。\n"
    );
    let subject = format!("Verify your email address / 验证您的邮箱 - {product}");
    cx.mailer.enqueue(txn, Mail { to: email.as_str(), subject: &subject, body: &body, link: Some(&link) }).await?;
    Ok(())
}

/// What a resent link carries: the choice of the one pending sign-up, whose link it replaces.
/// `None` with several pending sign-ups (nobody knows whose choice the mailbox owner made) or
/// none (expired: the password the account was created with may be anyone's): then nothing is
/// resent, and the person signs up again, which mails a link with their own password.
pub async fn replace_pending(txn: &impl ConnectionTrait, user_id: &UserId) -> Result<Option<Chosen>, AppError> {
    let pending = email_verifications::Entity::find()
        .filter(email_verifications::Column::UserId.eq(user_id))
        .filter(email_verifications::Column::UsedAt.is_null())
        .filter(email_verifications::Column::ExpiresAt.gt(now()))
        .all(txn)
        .await?;
    let [one] = pending.as_slice() else { return Ok(None) };
    email_verifications::Entity::delete_by_id(one.token_hash.clone()).exec(txn).await?;
    Ok(Some(Chosen { password_hash: one.password_hash.clone(), name: one.name.clone() }))
}

/// Signs up `req.email`. A repeated sign-up of an address not yet verified never touches the
/// account: its password (and name) travel with its own link, and only the link that is opened
/// decides which password becomes valid (issue 16, finding 3). Limited per IP and per address
/// before any hashing.
pub async fn register(cx: &IamCtx, ip: IpAddr, req: NewAccount) -> Result<RegisterResponse, AppError> {
    let NewAccount { email, password, username: given_name, redirect } = req;
    cx.limiter.register_attempt(ip, email.as_str()).await?;
    let verify = cx.settings.email_verification;
    let hash = cx.hasher.hash(password.as_str().to_string()).await?;

    let txn = write_txn(&cx.db).await?;
    let existing = users::Entity::find().filter(users::Column::Email.eq(email.as_str())).one(&txn).await?;
    let t = now();
    let user_id = match existing {
        // A verified account keeps its owner.
        Some(u) if u.email_verified_at.is_some() || !verify => return Err(email_taken()),
        // A pending sign-up may be repeated: a new link carrying this attempt's password.
        Some(u) => u.id,
        None => {
            let id = UserId::new();
            users::ActiveModel {
                id: Set(id.clone()),
                email: Set(email.as_str().to_string()),
                name: Set(given_name.clone().unwrap_or_else(|| Username::from_email(&email)).into_string()),
                password_hash: Set(hash.clone()),
                email_verified_at: Set(if verify { None } else { Some(t) }),
                avatar: Set(None),
                avatar_type: Set(None),
                avatar_version: Set(0),
                created_at: Set(t),
                updated_at: Set(t),
                operator: Set(false),
                suspended_at: Set(None),
                suspended_reason: Set(None),
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
            id.into()
        }
    };
    if verify {
        let chosen = Chosen { password_hash: Some(hash), name: given_name.map(Username::into_string) };
        send_verification(cx, &txn, &user_id, &email, chosen, redirect.as_deref(), ip).await?;
    }
    txn.commit().await?;
    if verify {
        cx.mailer.wake();
    }
    Ok(RegisterResponse { email: email.as_str().to_string(), verification_required: verify })
}

/// A password hash no password matches (not a PHC string): the account of a contested address
/// until the mailbox's owner chooses a password.
const NO_PASSWORD: &str = "!contested-sign-up";

/// Opens a verification link. With one pending sign-up of the address, the password chosen with
/// it becomes the account's. With several, whoever opens a link proves the mailbox but not
/// which sign-up was theirs: none of the pending passwords becomes valid, every link dies, and
/// the answer carries a reset token to choose the password with (issue 29, finding 3).
pub async fn verify_email(cx: &IamCtx, token: Option<&str>) -> Result<EmailVerified, AppError> {
    let token = token.map(str::trim).filter(|t| !t.is_empty()).ok_or(AppError::invalid("token", Msg::VerificationInvalid))?;
    let txn = write_txn(&cx.db).await?;
    let Some(v) = email_verifications::Entity::find_by_id(tokens::hash_token(token)).one(&txn).await? else {
        return Err(AppError::invalid("token", Msg::VerificationInvalid));
    };
    // Locked: of two links opened at once, one decides.
    let Some(user) = for_update(&txn, users::Entity::find_by_id(v.user_id.clone())).one(&txn).await? else {
        return Err(AppError::invalid("token", Msg::VerificationInvalid));
    };
    if v.used_at.is_some() {
        // Opening the link twice is fine.
        return Ok(EmailVerified { email: user.email, password_token: None });
    }
    if v.expires_at <= now() {
        return Err(AppError::Refused(Msg::VerificationExpired));
    }
    if user.email_verified_at.is_some() {
        // Another link of this address was opened first: it chose the password.
        return Err(AppError::invalid("token", Msg::VerificationInvalid));
    }
    let t = now();
    let pending = email_verifications::Entity::find()
        .filter(email_verifications::Column::UserId.eq(user.id.clone()))
        .filter(email_verifications::Column::UsedAt.is_null())
        .filter(email_verifications::Column::ExpiresAt.gt(t))
        .all(&txn)
        .await?;
    let contested = pending.iter().any(|p| p.token_hash != v.token_hash);
    let (email, user_id) = (user.email.clone(), user.id.clone());
    let mut u: users::ActiveModel = user.into();
    u.email_verified_at = Set(Some(t));
    u.updated_at = Set(t);
    if contested {
        u.password_hash = Set(NO_PASSWORD.to_string());
    } else {
        // The password (and name) chosen with this link become the account's.
        if let Some(hash) = v.password_hash.clone() {
            u.password_hash = Set(hash);
        }
        if let Some(name) = v.name.clone() {
            u.name = Set(name);
        }
    }
    u.update(&txn).await?;
    let token_hash = v.token_hash.clone();
    let mut v: email_verifications::ActiveModel = v.into();
    v.used_at = Set(Some(t));
    v.update(&txn).await?;
    // The other pending links of this address stop working.
    email_verifications::Entity::delete_many()
        .filter(email_verifications::Column::UserId.eq(user_id.clone()))
        .filter(email_verifications::Column::TokenHash.ne(token_hash))
        .filter(email_verifications::Column::UsedAt.is_null())
        .exec(&txn)
        .await?;
    cx.on_verified.run(&txn, &user_id).await?;
    let password_token = if contested { Some(crate::iam::resets::new_reset_token(&txn, &user_id).await?) } else { None };
    txn.commit().await?;
    Ok(EmailVerified { email, password_token })
}

/// 409 for an address that already has an account, naming the field it is about.
fn email_taken() -> AppError {
    AppError::Explained { msg: Msg::EmailTaken, data: serde_json::json!({ "field": "email" }) }
}
