//! How coins enter: the signup bonus (once per verified account) and the operator's grant
//! (`zmarket coins grant`). Both debit the issuance account, the only one allowed below zero.

use sea_orm::DatabaseConnection;

use crate::billing::ledger::{self, AMOUNT_MAX, AccountRef, Conn};
use crate::billing::posting::Posted;
use crate::coins::Coins;
use crate::db::new_id;
use crate::error::AppError;
use crate::iam::model::Email;
use crate::ids::UserId;

/// The signup bonus of `amount` coins, once per person (call it when an account becomes
/// verified, inside that transaction: the key `signup_bonus:<user id>` makes a second call a no-op).
pub async fn signup_bonus(conn: &impl Conn, amount: Coins, user_id: &UserId) -> Result<(), AppError> {
    ledger::signup_bonus(conn, user_id, amount.cents()).await?;
    Ok(())
}

/// The operator's grant: refuses unknown emails and non-positive amounts; answers the
/// person's new balance.
pub async fn grant_by_email(db: &DatabaseConnection, email: &str, amount: Coins, memo: &str) -> Result<i64, GrantError> {
    Ok(grant_by_email_in(db, email, amount, memo).await?.1)
}

/// [`grant_by_email`] on `conn` (a transaction the caller commits, with its audit): the person's
/// id, the posting's ledger key and the balance after.
pub async fn grant_by_email_in(conn: &impl Conn, email: &str, amount: Coins, memo: &str) -> Result<(String, i64), GrantError> {
    let email = Email::parse(Some(email)).map_err(|_| GrantError::BadEmail(email.to_string()))?;
    if amount.cents() <= 0 || amount.cents() > AMOUNT_MAX {
        return Err(GrantError::BadAmount);
    }
    let user = crate::iam::people::by_email(conn, email.as_str())
        .await
        .map_err(GrantError::Failed)?
        .ok_or_else(|| GrantError::UnknownEmail(email.as_str().to_string()))?;
    // No memo by default: the entry's `ref_type` (grant) says what it is, in the reader's language.
    let memo = memo.trim().to_string();
    let to = AccountRef::User(user.id.clone());
    let posted = grant_to_user(conn, &user.id, amount.cents(), format!("grant:{}", new_id()), memo).await.map_err(GrantError::Failed)?;
    Ok((user.id.to_string(), posted.entry_of(&to).map(|e| e.balance_after).unwrap_or_default()))
}

/// The operator's grant to one person's wallet, from the command line (`grant_by_email`) or the
/// console (`ops::people::grant`, the key derived from its `Idempotency-Key`): a second call
/// with the same key posts nothing and answers the first posting.
pub async fn grant_to_user(conn: &impl Conn, user_id: &UserId, cents: i64, key: String, memo: String) -> Result<Posted, AppError> {
    ledger::grant(conn, AccountRef::User(user_id.into()), cents, key, memo).await
}

#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    #[error("{0} is not an email address")]
    BadEmail(String),
    #[error("no account has the email {0}")]
    UnknownEmail(String),
    #[error("the amount must be a positive number of coins with at most two decimals, e.g. 12.50")]
    BadAmount,
    #[error("the grant failed: {0}")]
    Failed(AppError),
}
