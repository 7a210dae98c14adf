//! Friend requests: sent to an email address (an address nobody has answers exactly like one
//! somebody has: no account enumeration), accepted or declined by the account with that address,
//! cancelled by their sender. One pending request per pair of people, whichever way it goes (a
//! partial unique index); deciding is a conditional update, so an accept racing a decline has one
//! winner. A request from someone the recipient blocked stays pending for its sender and is never
//! shown to the recipient.

use sea_orm::sea_query::{Expr, Query};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use crate::config::SocialConfig;
use crate::db::enums::EventKind;
use crate::db::entity::friend_requests::{self as requests, RequestStatus};
use crate::db::entity::{blocks as blocks_t, friendships};
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::iam::auth::Auth;
use crate::social::model::{Addressee, Direction, FriendChange, FriendChangeKind, FriendRequest, NewFriendRequest, Person};
use crate::events;
use crate::social::shared::{friendship, has_blocked, is_unique_violation, pair_key, people, per_minute, person, user_id_by_email};
use crate::ids::{FriendRequestId, UserId};

/// What a person does with a pending request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The recipient becomes a friend.
    Accept,
    /// The recipient says no.
    Decline,
    /// The sender takes it back.
    Cancel,
}

/// The one transition table of a request: only a pending request moves, and only once.
pub fn next_status(from: RequestStatus, decision: Decision) -> Option<RequestStatus> {
    match (from, decision) {
        (RequestStatus::Pending, Decision::Accept) => Some(RequestStatus::Accepted),
        (RequestStatus::Pending, Decision::Decline) => Some(RequestStatus::Declined),
        (RequestStatus::Pending, Decision::Cancel) => Some(RequestStatus::Cancelled),
        _ => None,
    }
}

fn view(r: &requests::Model, from: Person, reader: &UserId) -> FriendRequest {
    FriendRequest {
        id: r.id.clone().into(),
        from,
        to: Addressee { email: r.to_email.clone() },
        status: r.status,
        direction: if r.from_user_id == *reader { Direction::Outgoing } else { Direction::Incoming },
        created_at: r.created_at,
    }
}

fn me_missing() -> AppError {
    AppError::Refused(Msg::SessionExpired)
}

/// Sends a friend request from the caller to `to`.
pub async fn send(db: &DatabaseConnection, cfg: &SocialConfig, auth: &Auth, req: &NewFriendRequest) -> Result<FriendRequest, AppError> {
    let to = &req.to;
    let txn = write_txn(db).await?;
    let me = person(&txn, &auth.user_id).await?.ok_or_else(me_missing)?;
    if me.email == to.as_str() {
        return Err(AppError::invalid("email", Msg::FriendRequestToSelf));
    }
    let target = user_id_by_email(&txn, to.as_str()).await?;
    let mut lock = vec![&auth.user_id];
    lock.extend(target.as_ref());
    events::lock_people(&txn, &lock).await?;

    let nth = requests::Entity::find()
        .select_only()
        .column(requests::Column::CreatedAt)
        .filter(requests::Column::FromUserId.eq(me.user_id.clone()))
        .order_by_desc(requests::Column::CreatedAt)
        .offset(u64::from(cfg.friend_requests_per_minute) - 1)
        .into_tuple()
        .one(&txn)
        .await?;
    per_minute(nth)?;

    let mut hidden_from_target = false;
    if let Some(t) = &target {
        if has_blocked(&txn, &auth.user_id, t).await? {
            return Err(AppError::Refused(Msg::UnblockFirst));
        }
        if friendship(&txn, &auth.user_id, t).await?.is_some() {
            return Err(AppError::Refused(Msg::AlreadyFriends));
        }
        hidden_from_target = has_blocked(&txn, t, &auth.user_id).await?;
    }
    let key = pair_key(&me.email, to.as_str());
    let waiting = requests::Entity::find()
        .filter(requests::Column::PairKey.eq(key.clone()))
        .filter(requests::Column::Status.eq(RequestStatus::Pending))
        .one(&txn)
        .await?;
    if let Some(w) = waiting {
        let msg = if w.from_user_id == auth.user_id { Msg::FriendRequestWaiting } else { Msg::FriendRequestFromThem };
        return Err(AppError::Refused(msg));
    }
    let row = requests::Model {
        id: FriendRequestId::new(),
        from_user_id: auth.user_id.clone(),
        from_email: me.email.clone(),
        to_email: to.as_str().to_string(),
        pair_key: key,
        status: RequestStatus::Pending,
        created_at: now(),
        decided_at: None,
    };
    let insert = requests::Entity::insert(requests::ActiveModel::from(row.clone())).exec_without_returning(&txn).await;
    match insert {
        Err(e) if is_unique_violation(&e) => return Err(AppError::Refused(Msg::FriendRequestWaiting)),
        other => {
            other?;
        }
    }
    events::append(&txn, &auth.user_id, EventKind::FriendRequest, &view(&row, me.clone(), &auth.user_id)).await?;
    if let Some(t) = target.as_ref().filter(|_| !hidden_from_target) {
        events::append(&txn, t, EventKind::FriendRequest, &view(&row, me.clone(), t)).await?;
    }
    txn.commit().await?;
    Ok(view(&row, me, &auth.user_id))
}

/// The incoming requests the caller can see: to their address, pending, from nobody they blocked.
fn incoming(email: &str, user_id: &UserId) -> Condition {
    incoming_where(requests::Column::ToEmail.eq(email), user_id)
}

/// Requests addressed as `to` says, from people `user_id` has not blocked.
fn incoming_where(to: sea_orm::sea_query::SimpleExpr, user_id: &UserId) -> Condition {
    let blocked = Query::select()
        .column(blocks_t::Column::BlockedId)
        .from(blocks_t::Entity)
        .and_where(blocks_t::Column::UserId.eq(user_id))
        .to_owned();
    Condition::all().add(to).add(requests::Column::FromUserId.not_in_subquery(blocked))
}

async fn email_of(conn: &impl ConnectionTrait, user_id: &UserId) -> Result<String, AppError> {
    Ok(person(conn, user_id).await?.ok_or_else(me_missing)?.email)
}

/// The caller's pending requests, incoming and outgoing, newest first.
pub async fn list(conn: &impl ConnectionTrait, auth: &Auth, offset: u64, limit: u64) -> Result<List<FriendRequest>, AppError> {
    let email = email_of(conn, &auth.user_id).await?;
    let q = requests::Entity::find().filter(requests::Column::Status.eq(RequestStatus::Pending)).filter(
        Condition::any().add(incoming(&email, &auth.user_id)).add(requests::Column::FromUserId.eq(auth.user_id.clone())),
    );
    let total = q.clone().count(conn).await?;
    let rows = q.order_by_desc(requests::Column::CreatedAt).order_by_desc(requests::Column::Id).offset(offset).limit(limit).all(conn).await?;
    let senders: Vec<UserId> = rows.iter().map(|r| r.from_user_id.clone()).collect();
    let mut who = people(conn, &senders).await?;
    let items = rows
        .iter()
        .filter_map(|r| who.get_mut(&r.from_user_id).map(|p| view(r, p.clone(), &auth.user_id)))
        .collect();
    Ok(List { items, total })
}

/// How many requests wait for the caller's answer.
pub async fn pending_incoming(conn: &impl ConnectionTrait, user_id: &UserId) -> Result<u64, AppError> {
    let email = email_of(conn, user_id).await?;
    Ok(requests::Entity::find()
        .filter(requests::Column::Status.eq(RequestStatus::Pending))
        .filter(incoming(&email, user_id))
        .count(conn)
        .await?)
}

/// `pending_friend_requests_exists` of the notification stats.
/// The pending requests waiting for `user_id`'s answer, as a query the stats poll counts in its
/// one statement (the address is a subquery).
pub fn pending_for(user_id: &UserId) -> sea_orm::Select<requests::Entity> {
    let my_email = crate::iam::people::email_of(user_id);
    requests::Entity::find()
        .filter(requests::Column::Status.eq(RequestStatus::Pending))
        .filter(incoming_where(requests::Column::ToEmail.in_subquery(my_email), user_id))
}

/// Accepts, declines (the recipient) or cancels (the sender) request `id`. A request the caller
/// may not act on is not found; one already decided is refused with 409.
pub async fn decide(db: &DatabaseConnection, auth: &Auth, id: &str, decision: Decision) -> Result<FriendRequest, AppError> {
    let not_found = || AppError::Refused(Msg::FriendRequestNotFound);
    let txn = write_txn(db).await?;
    let me = person(&txn, &auth.user_id).await?.ok_or_else(me_missing)?;
    let r = requests::Entity::find_by_id(id.to_string()).one(&txn).await?.ok_or_else(not_found)?;
    let (sender, recipient) = match decision {
        Decision::Accept | Decision::Decline => {
            if r.to_email != me.email || has_blocked(&txn, &auth.user_id, &r.from_user_id).await? {
                return Err(not_found());
            }
            (r.from_user_id.clone(), Some(auth.user_id.clone()))
        }
        Decision::Cancel => {
            if r.from_user_id != auth.user_id {
                return Err(not_found());
            }
            (auth.user_id.clone(), user_id_by_email(&txn, &r.to_email).await?)
        }
    };
    let mut lock = vec![&sender];
    lock.extend(recipient.as_ref());
    events::lock_people(&txn, &lock).await?;

    let next = next_status(r.status, decision).ok_or(AppError::Refused(Msg::FriendRequestHandled))?;
    let t = now();
    let changed = requests::Entity::update_many()
        .col_expr(requests::Column::Status, Expr::value(next))
        .col_expr(requests::Column::DecidedAt, Expr::value(t))
        .filter(requests::Column::Id.eq(id))
        .filter(requests::Column::Status.eq(RequestStatus::Pending))
        .exec(&txn)
        .await?
        .rows_affected;
    if changed == 0 {
        return Err(AppError::Refused(Msg::FriendRequestHandled));
    }
    let decided = requests::Model { status: next, decided_at: Some(t), ..r };
    let from = person(&txn, &sender).await?.ok_or_else(not_found)?;
    if decision == Decision::Accept {
        for (a, b) in [(&sender, &auth.user_id), (&auth.user_id, &sender)] {
            let side = friendships::ActiveModel { user_id: Set(a.clone()), friend_id: Set(b.clone()), alias: Set(None), since: Set(t) };
            friendships::Entity::insert(side).on_conflict_do_nothing().exec_without_returning(&txn).await?;
        }
    }
    let hidden = match &recipient {
        Some(rcp) => has_blocked(&txn, rcp, &sender).await?,
        None => true,
    };
    events::append(&txn, &sender, EventKind::FriendRequest, &view(&decided, from.clone(), &sender)).await?;
    if let Some(rcp) = recipient.as_ref().filter(|_| !hidden) {
        events::append(&txn, rcp, EventKind::FriendRequest, &view(&decided, from.clone(), rcp)).await?;
    }
    if decision == Decision::Accept {
        let recipient = &auth.user_id;
        for (reader, other) in [(&sender, recipient), (recipient, &sender)] {
            let change = FriendChange { user_id: other.to_string(), change: FriendChangeKind::Added };
            events::append(&txn, reader, EventKind::Friend, &change).await?;
        }
    }
    txn.commit().await?;
    Ok(view(&decided, from, &auth.user_id))
}

/// Ends the caller's pending requests to `other` (when `other` is blocked): silently, for both.
pub(crate) async fn cancel_between(conn: &impl ConnectionTrait, from_email: &str, to_email: &str) -> Result<u64, AppError> {
    Ok(requests::Entity::update_many()
        .col_expr(requests::Column::Status, Expr::value(RequestStatus::Cancelled))
        .col_expr(requests::Column::DecidedAt, Expr::value(now()))
        .filter(requests::Column::FromEmail.eq(from_email))
        .filter(requests::Column::ToEmail.eq(to_email))
        .filter(requests::Column::Status.eq(RequestStatus::Pending))
        .exec(conn)
        .await?
        .rows_affected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sea_orm::Iterable;

    #[test]
    fn only_a_pending_request_moves() {
        assert_eq!(next_status(RequestStatus::Pending, Decision::Accept), Some(RequestStatus::Accepted));
        assert_eq!(next_status(RequestStatus::Pending, Decision::Decline), Some(RequestStatus::Declined));
        assert_eq!(next_status(RequestStatus::Pending, Decision::Cancel), Some(RequestStatus::Cancelled));
        for s in RequestStatus::iter().filter(|s| *s != RequestStatus::Pending) {
            for d in [Decision::Accept, Decision::Decline, Decision::Cancel] {
                assert_eq!(next_status(s, d), None, "{s:?} {d:?}");
            }
        }
    }
}
