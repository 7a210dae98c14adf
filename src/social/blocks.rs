//! Blocking: the blocked person's requests to the blocker stay pending for them and are never
//! shown; a friendship between the two ends (as a removal would: nothing says "blocked"), so
//! their messages are refused like any stranger's; the blocker's own pending request to them is
//! withdrawn.

use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set};

use crate::db::entity::blocks as blocks_t;
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::iam::auth::Auth;
use crate::social::model::BlockedPerson;
use crate::events;
use crate::social::shared::{people, person};
use crate::social::{friends, requests};
use crate::ids::UserId;

pub async fn block(db: &DatabaseConnection, auth: &Auth, other: &UserId) -> Result<(), AppError> {
    if auth.user_id == *other {
        return Err(AppError::invalid("user_id", Msg::BlockSelf));
    }
    let txn = write_txn(db).await?;
    let them = person(&txn, other).await?.ok_or(AppError::Refused(Msg::UserNotFound))?;
    let me = person(&txn, &auth.user_id).await?.ok_or(AppError::Refused(Msg::SessionExpired))?;
    events::lock_people(&txn, &[&auth.user_id, other]).await?;
    let row = blocks_t::ActiveModel { user_id: Set(auth.user_id.clone()), blocked_id: Set(other.clone()), created_at: Set(now()) };
    blocks_t::Entity::insert(row).on_conflict_do_nothing().exec_without_returning(&txn).await?;
    friends::end(&txn, &auth.user_id, other).await?;
    requests::cancel_between(&txn, &me.email, &them.email).await?;
    txn.commit().await?;
    Ok(())
}

/// Unblocks (again is fine); a request they sent meanwhile shows up again.
pub async fn unblock(db: &DatabaseConnection, auth: &Auth, other: &UserId) -> Result<(), AppError> {
    let txn = write_txn(db).await?;
    person(&txn, other).await?.ok_or(AppError::Refused(Msg::UserNotFound))?;
    blocks_t::Entity::delete_many()
        .filter(blocks_t::Column::UserId.eq(auth.user_id.clone()))
        .filter(blocks_t::Column::BlockedId.eq(other))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(())
}

/// The people the caller blocked, most recent first.
pub async fn list(conn: &impl ConnectionTrait, auth: &Auth) -> Result<List<BlockedPerson>, AppError> {
    let rows = blocks_t::Entity::find()
        .filter(blocks_t::Column::UserId.eq(auth.user_id.clone()))
        .order_by_desc(blocks_t::Column::CreatedAt)
        .all(conn)
        .await?;
    let ids: Vec<UserId> = rows.iter().map(|b| b.blocked_id.clone()).collect();
    let who = people(conn, &ids).await?;
    let items: Vec<BlockedPerson> = rows
        .into_iter()
        .filter_map(|b| {
            let p = who.get(&b.blocked_id)?.clone();
            Some(BlockedPerson { user_id: p.user_id, name: p.name, email: p.email, avatar_url: p.avatar_url, since: b.created_at })
        })
        .collect();
    Ok(List { total: items.len() as u64, items })
}
