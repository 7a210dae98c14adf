//! The per-person event log behind the live stream (`GET /api/cim/v1/events`, src/social/stream.rs)
//! and this instance's wake-ups (`hub`). Every event gets the next number of
//! its person's sequence (`event_sequences`), in the writer's transaction, so an event exists
//! exactly when the change it tells of was committed. On PostgreSQL the same transaction sends
//! `NOTIFY zmarket_events, '<user id> <seq>'`, delivered to every instance at commit.
//!
//! The sequence row doubles as the person's lock for social writes: `lock_people` touches the
//! rows of everyone a change concerns, in one order, so two changes between the same people run
//! one after the other on PostgreSQL (SQLite has one writer anyway).

use chrono::Duration;
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict};
use sea_orm::{
    ActiveEnum, ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
    Statement,
};
use serde::Serialize;

pub mod hub;

use crate::db::entity::event_sequences as seqs;
use crate::db::entity::events;
pub use crate::db::enums::EventKind;
use crate::db::now;
use crate::error::AppError;
use crate::ids::UserId;

/// The PostgreSQL channel events are announced on.
pub const CHANNEL: &str = "zmarket_events";

/// Locks the sequence rows of `people` (sorted, so two writers never wait on each other in a
/// circle) until the transaction ends. Call it first in a transaction that checks, then writes.
pub async fn lock_people(conn: &impl ConnectionTrait, people: &[&UserId]) -> Result<(), AppError> {
    let mut ids: Vec<&UserId> = people.to_vec();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        seqs::Entity::insert(seqs::ActiveModel { user_id: Set(id.clone()), last_seq: Set(0) })
            .on_conflict(
                OnConflict::column(seqs::Column::UserId)
                    .value(seqs::Column::LastSeq, Expr::col((seqs::Entity, seqs::Column::LastSeq)))
                    .to_owned(),
            )
            .exec_without_returning(conn)
            .await?;
    }
    Ok(())
}

/// Adds an event for `user_id` and returns its id (the next number of their sequence).
pub async fn append(conn: &impl ConnectionTrait, user_id: &UserId, kind: EventKind, payload: &impl Serialize) -> Result<i64, AppError> {
    let seq = seqs::Entity::insert(seqs::ActiveModel { user_id: Set(user_id.clone()), last_seq: Set(1) })
        .on_conflict(
            OnConflict::column(seqs::Column::UserId)
                .value(seqs::Column::LastSeq, Expr::col((seqs::Entity, seqs::Column::LastSeq)).add(1))
                .to_owned(),
        )
        .exec_with_returning(conn)
        .await?
        .last_seq;
    let payload = serde_json::to_string(payload).map_err(|e| AppError::Internal(e.into()))?;
    events::Entity::insert(events::ActiveModel {
        user_id: Set(user_id.clone()),
        seq: Set(seq),
        kind: Set(kind),
        payload: Set(payload),
        created_at: Set(now()),
        ..Default::default()
    })
    .exec_without_returning(conn)
    .await?;
    if conn.get_database_backend() == DbBackend::Postgres {
        let sql = "SELECT pg_notify($1, $2)";
        conn.execute_raw(Statement::from_sql_and_values(DbBackend::Postgres, sql, [CHANNEL.into(), format!("{user_id} {seq}").into()]))
            .await?;
    }
    Ok(seq)
}

/// The SSE `event:` name of a kind.
pub fn kind_name(kind: EventKind) -> String {
    kind.to_value()
}

/// Where a person's log stands: the last id given, and the oldest one still kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub last: i64,
    pub oldest_kept: Option<i64>,
}

impl Cursor {
    /// True when a client that has seen everything up to `seen` can be brought up to date from
    /// the log: nothing it missed was pruned, and `seen` is not from a future this log never had.
    pub fn can_resume(&self, seen: i64) -> bool {
        seen >= 0 && seen <= self.last && (seen == self.last || self.oldest_kept.is_some_and(|o| o <= seen + 1))
    }
}

pub async fn cursor(conn: &impl ConnectionTrait, user_id: &UserId) -> Result<Cursor, AppError> {
    let last = seqs::Entity::find_by_id(user_id.clone()).one(conn).await?.map(|s| s.last_seq).unwrap_or(0);
    let oldest_kept = events::Entity::find()
        .select_only()
        .column(events::Column::Seq)
        .filter(events::Column::UserId.eq(user_id))
        .order_by_asc(events::Column::Seq)
        .limit(1)
        .into_tuple::<i64>()
        .one(conn)
        .await?;
    Ok(Cursor { last, oldest_kept })
}

/// An event as the log keeps it: its `seq` (the stream's id), kind and JSON payload.
pub type Logged = events::Model;

/// The person's events after `seen`, oldest first, at most `limit`.
pub async fn after(conn: &impl ConnectionTrait, user_id: &UserId, seen: i64, limit: u64) -> Result<Vec<Logged>, AppError> {
    Ok(events::Entity::find()
        .filter(events::Column::UserId.eq(user_id))
        .filter(events::Column::Seq.gt(seen))
        .order_by_asc(events::Column::Seq)
        .limit(limit)
        .all(conn)
        .await?)
}

/// The highest row id written so far (0 for none): where an SQLite instance starts watching.
pub async fn last_row_id(conn: &impl ConnectionTrait) -> Result<i64, AppError> {
    let id = events::Entity::find()
        .select_only()
        .column(events::Column::Id)
        .order_by_desc(events::Column::Id)
        .limit(1)
        .into_tuple::<i64>()
        .one(conn)
        .await?;
    Ok(id.unwrap_or(0))
}

/// The people with events written after row `since`, each with their newest event id, and the
/// highest row id seen. On SQLite rows are committed in id order (one writer), so nothing
/// committed later can carry a lower id.
pub async fn written_since(conn: &impl ConnectionTrait, since: i64) -> Result<(Vec<(String, i64)>, i64), AppError> {
    let rows: Vec<(String, i64, i64)> = events::Entity::find()
        .select_only()
        .column(events::Column::UserId)
        .column_as(events::Column::Seq.max(), "seq")
        .column_as(events::Column::Id.max(), "id")
        .filter(events::Column::Id.gt(since))
        .group_by(events::Column::UserId)
        .into_tuple()
        .all(conn)
        .await?;
    let top = rows.iter().map(|r| r.2).max().unwrap_or(since);
    Ok((rows.into_iter().map(|(u, s, _)| (u, s)).collect(), top))
}

/// Drops the events older than `keep_days`, and all but the newest `keep_per_user` of each
/// person. Returns how many went.
pub async fn prune(db: &DatabaseConnection, keep_per_user: u32, keep_days: u32) -> Result<u64, AppError> {
    let old = now() - Duration::days(i64::from(keep_days));
    let by_age = events::Entity::delete_many().filter(events::Column::CreatedAt.lt(old)).exec(db).await?.rows_affected;
    let backend = db.get_database_backend();
    let placeholder = if backend == DbBackend::Postgres { "$1" } else { "?" };
    let sql = format!(
        "DELETE FROM events WHERE seq <= (SELECT s.last_seq FROM event_sequences s WHERE s.user_id = events.user_id) - {placeholder}"
    );
    let keep = i64::from(keep_per_user);
    let by_count = db.execute_raw(Statement::from_sql_and_values(backend, &sql, [keep.into()])).await?.rows_affected();
    Ok(by_age + by_count)
}

#[cfg(test)]
mod tests {
    use super::Cursor;

    #[test]
    fn resume_only_without_a_gap() {
        let c = Cursor { last: 10, oldest_kept: Some(4) };
        assert!(c.can_resume(10));
        assert!(c.can_resume(3));
        assert!(!c.can_resume(2), "event 3 was pruned");
        assert!(!c.can_resume(11), "an id this log never gave");
        assert!(!c.can_resume(-1));
        let empty = Cursor { last: 5, oldest_kept: None };
        assert!(empty.can_resume(5));
        assert!(!empty.can_resume(4), "everything after 4 was pruned");
        assert!(Cursor { last: 0, oldest_kept: None }.can_resume(0));
    }
}
