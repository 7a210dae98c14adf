//! Direct messages between friends: sending (friends only, at most `messages_per_minute`), the
//! conversation list with each one's last message and unread count, the history paged backwards
//! by message id, and marking a conversation read. Unread counts are counted from the messages
//! themselves (an index on recipient, read, sender), so no counter can drift.

use std::collections::HashMap;

use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use crate::config::SocialConfig;
use crate::db::enums::EventKind;
use crate::db::entity::{conversations, friendships, messages};
use crate::db::{new_id, now, write_txn};
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::iam::auth::Auth;
use crate::social::model::{Conversation, HistoryPage, Message, NewMessage, Peer, ReadReceipt, SocialStats};
use crate::events;
use crate::social::shared::{pair_key, people, per_minute};
use crate::social::{friends, requests};
use crate::ids::UserId;

fn view(m: messages::Model) -> Message {
    Message { id: m.id, from: m.sender_id.into(), to: m.recipient_id.into(), body: m.body, created_at: m.created_at, read: m.read }
}

fn not_found() -> AppError {
    AppError::Refused(Msg::ConversationNotFound)
}

/// Sends a message to a friend; anyone else (a stranger, a former friend, an unknown id,
/// oneself) is refused with the same 403.
pub async fn send(db: &DatabaseConnection, cfg: &SocialConfig, auth: &Auth, m: NewMessage) -> Result<Message, AppError> {
    let me = &auth.user_id;
    if m.to == *me {
        return Err(AppError::Refused(Msg::FriendsOnly));
    }
    let txn = write_txn(db).await?;
    // Checked before locking (an unknown id has no row to lock) and again once locked.
    for locked in [false, true] {
        if !friends::are_friends(&txn, me, &m.to).await? {
            return Err(AppError::Refused(Msg::FriendsOnly));
        }
        if !locked {
            events::lock_people(&txn, &[me, &m.to]).await?;
        }
    }
    let nth = messages::Entity::find()
        .select_only()
        .column(messages::Column::CreatedAt)
        .filter(messages::Column::SenderId.eq(me))
        .order_by_desc(messages::Column::CreatedAt)
        .offset(u64::from(cfg.messages_per_minute) - 1)
        .into_tuple()
        .one(&txn)
        .await?;
    per_minute(nth)?;

    let row = messages::Model {
        id: new_id(),
        sender_id: me.clone(),
        recipient_id: m.to.clone(),
        pair_key: pair_key(me.as_str(), m.to.as_str()),
        body: m.body.as_str().to_string(),
        read: false,
        created_at: now(),
    };
    messages::Entity::insert(messages::ActiveModel::from(row.clone())).exec_without_returning(&txn).await?;
    for (side, peer) in [(me, &m.to), (&m.to, me)] {
        let c = conversations::ActiveModel {
            user_id: Set(side.clone()),
            peer_id: Set(peer.clone()),
            last_message_id: Set(row.id.clone()),
            last_at: Set(row.created_at),
        };
        conversations::Entity::insert(c)
            .on_conflict(
                OnConflict::columns([conversations::Column::UserId, conversations::Column::PeerId])
                    .update_columns([conversations::Column::LastMessageId, conversations::Column::LastAt])
                    .to_owned(),
            )
            .exec_without_returning(&txn)
            .await?;
    }
    let message = view(row);
    for reader in [me, &m.to] {
        events::append(&txn, reader, EventKind::Message, &message).await?;
    }
    txn.commit().await?;
    Ok(message)
}

/// A conversation exists for the caller once a message went either way, or while they are friends.
async fn check_conversation(conn: &impl ConnectionTrait, me: &UserId, peer: &UserId) -> Result<(), AppError> {
    let has = conversations::Entity::find_by_id((me.clone(), peer.clone())).one(conn).await?.is_some();
    if has || friends::are_friends(conn, me, peer).await? { Ok(()) } else { Err(not_found()) }
}

/// Unread messages per sender among `peers` (all senders when `peers` is None).
async fn unread_by_sender(conn: &impl ConnectionTrait, me: &UserId, peers: Option<&[UserId]>) -> Result<HashMap<UserId, u64>, AppError> {
    let mut q = messages::Entity::find()
        .select_only()
        .column(messages::Column::SenderId)
        .column_as(messages::Column::Id.count(), "n")
        .filter(messages::Column::RecipientId.eq(me))
        .filter(messages::Column::Read.eq(false));
    if let Some(p) = peers {
        q = q.filter(messages::Column::SenderId.is_in(p.iter().cloned()));
    }
    let rows: Vec<(UserId, i64)> = q.group_by(messages::Column::SenderId).into_tuple().all(conn).await?;
    Ok(rows.into_iter().map(|(s, n)| (s, u64::try_from(n).unwrap_or(0))).collect())
}

/// The caller's conversations, the most recent first.
pub async fn conversations(conn: &impl ConnectionTrait, auth: &Auth, offset: u64, limit: u64) -> Result<List<Conversation>, AppError> {
    let me = &auth.user_id;
    let q = conversations::Entity::find().filter(conversations::Column::UserId.eq(me));
    let total = q.clone().count(conn).await?;
    let rows = q
        .order_by_desc(conversations::Column::LastAt)
        .order_by_desc(conversations::Column::LastMessageId)
        .offset(offset)
        .limit(limit)
        .all(conn)
        .await?;
    let peers: Vec<UserId> = rows.iter().map(|c| c.peer_id.clone()).collect();
    let who = people(conn, &peers).await?;
    let aliases: HashMap<UserId, Option<String>> = friendships::Entity::find()
        .filter(friendships::Column::UserId.eq(me))
        .filter(friendships::Column::FriendId.is_in(peers.iter().cloned()))
        .all(conn)
        .await?
        .into_iter()
        .map(|f| (f.friend_id, f.alias))
        .collect();
    let mut last: HashMap<String, messages::Model> = messages::Entity::find()
        .filter(messages::Column::Id.is_in(rows.iter().map(|c| c.last_message_id.clone())))
        .all(conn)
        .await?
        .into_iter()
        .map(|m| (m.id.clone(), m))
        .collect();
    let unread = unread_by_sender(conn, me, Some(&peers)).await?;
    let items = rows
        .into_iter()
        .filter_map(|c| {
            let p = who.get(&c.peer_id)?;
            Some(Conversation {
                peer: Peer {
                    user_id: p.user_id.clone(),
                    name: p.name.clone(),
                    alias: aliases.get(&c.peer_id).cloned().flatten(),
                    avatar_url: p.avatar_url.clone(),
                },
                last_message: last.remove(&c.last_message_id).map(view),
                unread: unread.get(&c.peer_id).copied().unwrap_or(0),
            })
        })
        .collect();
    Ok(List { items, total })
}

/// The messages with `peer`, newest first, older than `page.before` when given.
pub async fn history(conn: &impl ConnectionTrait, auth: &Auth, peer: &UserId, page: &HistoryPage) -> Result<List<Message>, AppError> {
    check_conversation(conn, &auth.user_id, peer).await?;
    let all = messages::Entity::find().filter(messages::Column::PairKey.eq(pair_key(auth.user_id.as_str(), peer.as_str())));
    let total = all.clone().count(conn).await?;
    let mut q = all;
    if let Some(before) = &page.before {
        q = q.filter(messages::Column::Id.lt(before.as_str()));
    }
    let rows = q.order_by_desc(messages::Column::Id).limit(page.limit).all(conn).await?;
    Ok(List { items: rows.into_iter().map(view).collect(), total })
}

/// Marks what `peer` sent the caller read; both are told when anything changed.
pub async fn mark_read(db: &DatabaseConnection, auth: &Auth, peer: &UserId) -> Result<(), AppError> {
    let me = &auth.user_id;
    let txn = write_txn(db).await?;
    check_conversation(&txn, me, peer).await?;
    events::lock_people(&txn, &[me, peer]).await?;
    let changed = messages::Entity::update_many()
        .col_expr(messages::Column::Read, Expr::value(true))
        .filter(messages::Column::RecipientId.eq(me))
        .filter(messages::Column::SenderId.eq(peer))
        .filter(messages::Column::Read.eq(false))
        .exec(&txn)
        .await?
        .rows_affected;
    if changed > 0 {
        let receipt = ReadReceipt { reader_id: me.to_string(), peer_id: peer.to_string() };
        for reader in [me, peer] {
            events::append(&txn, reader, EventKind::Read, &receipt).await?;
        }
    }
    txn.commit().await?;
    Ok(())
}

/// The counts behind the menu badges.
pub async fn stats(conn: &impl ConnectionTrait, auth: &Auth) -> Result<SocialStats, AppError> {
    let unread_messages = unread_by_sender(conn, &auth.user_id, None).await?.values().sum();
    let pending_friend_requests = requests::pending_incoming(conn, &auth.user_id).await?;
    Ok(SocialStats { unread_messages, pending_friend_requests })
}
