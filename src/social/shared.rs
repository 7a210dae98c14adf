//! What the social rules share: looking people up (without their avatar bytes), the pair keys,
//! blocks and friendships, the per-minute limit, unique-key violations.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr, EntityTrait, SqlErr};

use crate::db::entity::{blocks as blocks_t, friendships};
use crate::db::now;
use crate::error::AppError;
use crate::ids::UserId;
use crate::social::model::Person;

/// The two values sorted and joined: the same key whichever way round.
pub(crate) fn pair_key(a: &str, b: &str) -> String {
    if a <= b { format!("{a}\n{b}") } else { format!("{b}\n{a}") }
}

pub(crate) fn is_unique_violation(e: &DbErr) -> bool {
    matches!(e.sql_err(), Some(SqlErr::UniqueConstraintViolation(_)))
}

/// People by id, without their avatar bytes.
pub(crate) async fn people(conn: &impl ConnectionTrait, ids: &[UserId]) -> Result<HashMap<UserId, Person>, AppError> {
    Ok(crate::iam::people::by_ids(conn, ids.iter().cloned())
        .await?
        .into_iter()
        .map(|(id, p)| {
            let avatar_url = p.avatar_url();
            (id, Person { user_id: p.id.into(), name: p.name, email: p.email, avatar_url })
        })
        .collect())
}

pub(crate) async fn person(conn: &impl ConnectionTrait, id: &UserId) -> Result<Option<Person>, AppError> {
    Ok(people(conn, std::slice::from_ref(id)).await?.remove(id))
}

/// The account that has `email`, if any.
pub(crate) async fn user_id_by_email(conn: &impl ConnectionTrait, email: &str) -> Result<Option<UserId>, AppError> {
    Ok(crate::iam::people::by_email(conn, email).await?.map(|p| p.id))
}

pub(crate) async fn has_blocked(conn: &impl ConnectionTrait, user_id: &UserId, other: &UserId) -> Result<bool, AppError> {
    Ok(blocks_t::Entity::find_by_id((user_id.clone(), other.clone())).one(conn).await?.is_some())
}

pub(crate) async fn friendship(conn: &impl ConnectionTrait, user_id: &UserId, other: &UserId) -> Result<Option<friendships::Model>, AppError> {
    Ok(friendships::Entity::find_by_id((user_id.clone(), other.clone())).one(conn).await?)
}

/// Refuses a person's next action when their `limit`-th newest one (`nth`, from an index read
/// with `OFFSET limit - 1`) falls within the last minute: 429 with the seconds until it leaves it.
pub(crate) fn per_minute(nth: Option<DateTime<Utc>>) -> Result<(), AppError> {
    let Some(nth) = nth else { return Ok(()) };
    let age = (now() - nth).num_milliseconds();
    if age >= 60_000 {
        return Ok(());
    }
    let wait = ((60_000 - age) as u64).div_ceil(1000).max(1);
    Err(AppError::TooManyRequests { retry_after_secs: wait })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[test]
    fn pair_keys_ignore_direction() {
        assert_eq!(pair_key("a@x.io", "b@x.io"), pair_key("b@x.io", "a@x.io"));
        assert_ne!(pair_key("a", "b"), pair_key("a", "c"));
    }

    #[test]
    fn per_minute_counts_the_last_minute() {
        assert!(per_minute(None).is_ok(), "fewer actions than the limit");
        match per_minute(Some(now() - Duration::seconds(50))) {
            Err(AppError::TooManyRequests { retry_after_secs }) => assert!((9..=11).contains(&retry_after_secs), "{retry_after_secs}"),
            other => panic!("{other:?}"),
        }
        assert!(per_minute(Some(now() - Duration::seconds(61))).is_ok(), "it left the minute");
    }
}
