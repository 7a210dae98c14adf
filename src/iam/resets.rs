//! Password-reset links: "Forgot password" mails one, and opening a verification link of an
//! address with several pending sign-ups hands one out (the mailbox's owner chooses the password,
//! issue 29, finding 3). No HTTP types here.

use chrono::Duration;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};

use crate::db::entity::password_resets;
use crate::db::now;
use crate::error::AppError;
use crate::iam::tokens;
use crate::ids::UserId;

/// How long a reset link works.
pub const RESET_TTL_SECS: i64 = 3600;

/// A new reset token for `user_id`, in the caller's transaction; it replaces the account's
/// earlier ones (one working link at a time).
pub async fn new_reset_token(txn: &impl ConnectionTrait, user_id: &UserId) -> Result<String, AppError> {
    password_resets::Entity::delete_many().filter(password_resets::Column::UserId.eq(user_id)).exec(txn).await?;
    let token = tokens::random_token();
    let t = now();
    password_resets::ActiveModel {
        token_hash: Set(tokens::hash_token(&token)),
        user_id: Set(UserId::from(user_id)),
        expires_at: Set(t + Duration::seconds(RESET_TTL_SECS)),
        used_at: Set(None),
        created_at: Set(t),
    }
    .insert(txn)
    .await?;
    Ok(token)
}
