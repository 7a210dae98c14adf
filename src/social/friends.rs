//! Friendships: the list (by tag), each side's alias and tags, and ending one. A person who is
//! not the caller's friend is not found, whoever's friend they are.

use std::collections::HashMap;

use sea_orm::sea_query::Query;
use sea_orm::ExprTrait as _;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use crate::db::enums::EventKind;
use crate::db::entity::{friend_tag_links as links, friendships};
use crate::db::write_txn;
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::iam::auth::Auth;
use crate::social::model::{Friend, FriendChange, FriendChangeKind, FriendUpdate};
use crate::events;
use crate::social::shared::{friendship, people};
use crate::social::tags;
use crate::ids::UserId;

fn not_found() -> AppError {
    AppError::Refused(Msg::FriendNotFound)
}

/// The tag names of each of `user_id`'s friends among `friend_ids`.
async fn tags_of(conn: &impl ConnectionTrait, user_id: &UserId, friend_ids: &[UserId]) -> Result<HashMap<UserId, Vec<String>>, AppError> {
    let names: HashMap<String, String> = tags::all(conn, user_id).await?.into_iter().map(|t| (t.id, t.name)).collect();
    let rows: Vec<(UserId, String)> = links::Entity::find()
        .select_only()
        .columns([links::Column::FriendId, links::Column::TagId])
        .filter(links::Column::UserId.eq(user_id))
        .filter(links::Column::FriendId.is_in(friend_ids.iter().cloned()))
        .into_tuple()
        .all(conn)
        .await?;
    let mut out: HashMap<UserId, Vec<String>> = HashMap::new();
    for (friend, tag) in rows {
        if let Some(name) = names.get(&tag) {
            out.entry(friend).or_default().push(name.clone());
        }
    }
    for v in out.values_mut() {
        v.sort();
    }
    Ok(out)
}

async fn views(conn: &impl ConnectionTrait, user_id: &UserId, rows: Vec<friendships::Model>) -> Result<Vec<Friend>, AppError> {
    let ids: Vec<UserId> = rows.iter().map(|f| f.friend_id.clone()).collect();
    let who = people(conn, &ids).await?;
    let mut tags = tags_of(conn, user_id, &ids).await?;
    Ok(rows
        .into_iter()
        .filter_map(|f| {
            let p = who.get(&f.friend_id)?.clone();
            Some(Friend {
                tags: tags.remove(&f.friend_id).unwrap_or_default(),
                user_id: p.user_id,
                name: p.name,
                email: p.email,
                avatar_url: p.avatar_url,
                alias: f.alias,
                since: f.since,
            })
        })
        .collect())
}

/// The caller's friends, newest friendship first; with `tag`, only those under it (an unknown
/// tag lists nobody).
pub async fn list(conn: &impl ConnectionTrait, auth: &Auth, tag: Option<&str>, offset: u64, limit: u64) -> Result<List<Friend>, AppError> {
    let mut q = friendships::Entity::find().filter(friendships::Column::UserId.eq(auth.user_id.clone()));
    if let Some(name) = tag.map(str::trim).filter(|t| !t.is_empty()) {
        let tag_id = tags::find(conn, &auth.user_id, name).await?.map(|t| t.id).unwrap_or_default();
        let under = Query::select()
            .column(links::Column::FriendId)
            .from(links::Entity)
            .and_where(links::Column::UserId.eq(auth.user_id.clone()))
            .and_where(links::Column::TagId.eq(tag_id))
            .to_owned();
        q = q.filter(friendships::Column::FriendId.in_subquery(under));
    }
    let total = q.clone().count(conn).await?;
    let rows = q
        .order_by_desc(friendships::Column::Since)
        .order_by_asc(friendships::Column::FriendId)
        .offset(offset)
        .limit(limit)
        .all(conn)
        .await?;
    Ok(List { items: views(conn, &auth.user_id, rows).await?, total })
}

/// One of the caller's friends.
pub async fn get(conn: &impl ConnectionTrait, auth: &Auth, friend_id: &UserId) -> Result<Friend, AppError> {
    let f = friendship(conn, &auth.user_id, friend_id).await?.ok_or_else(not_found)?;
    views(conn, &auth.user_id, vec![f]).await?.pop().ok_or_else(not_found)
}

/// Sets the caller's alias for a friend and/or the tags the friend is under (missing tags are
/// created, within the caller's tag limit).
pub async fn update(db: &DatabaseConnection, auth: &Auth, friend_id: &UserId, change: FriendUpdate) -> Result<Friend, AppError> {
    let txn = write_txn(db).await?;
    events::lock_people(&txn, &[&auth.user_id]).await?;
    let f = friendship(&txn, &auth.user_id, friend_id).await?.ok_or_else(not_found)?;
    if let Some(alias) = change.alias {
        let mut a: friendships::ActiveModel = f.into();
        a.alias = Set(alias.map(|a| a.into_string()));
        a.update(&txn).await?;
    }
    if let Some(names) = change.tags {
        let ids = tags::ensure(&txn, &auth.user_id, &names).await?;
        links::Entity::delete_many()
            .filter(links::Column::UserId.eq(auth.user_id.clone()))
            .filter(links::Column::FriendId.eq(friend_id))
            .exec(&txn)
            .await?;
        for tag_id in ids {
            let link = links::ActiveModel { user_id: Set(UserId::from(&auth.user_id)), friend_id: Set(UserId::from(friend_id)), tag_id: Set(tag_id) };
            links::Entity::insert(link).exec_without_returning(&txn).await?;
        }
    }
    let change = FriendChange { user_id: friend_id.to_string(), change: FriendChangeKind::Updated };
    events::append(&txn, &auth.user_id, EventKind::Friend, &change).await?;
    let friend = get(&txn, auth, friend_id).await?;
    txn.commit().await?;
    Ok(friend)
}

/// Ends a friendship on both sides (aliases and tag places go with it; the messages stay).
pub async fn remove(db: &DatabaseConnection, auth: &Auth, friend_id: &UserId) -> Result<(), AppError> {
    let txn = write_txn(db).await?;
    friendship(&txn, &auth.user_id, friend_id).await?.ok_or_else(not_found)?;
    events::lock_people(&txn, &[&auth.user_id, friend_id]).await?;
    if !end(&txn, &auth.user_id, friend_id).await? {
        return Err(not_found());
    }
    txn.commit().await?;
    Ok(())
}

/// Deletes both sides of a friendship and tells both people; false when there was none.
/// Call it with both people locked.
pub(crate) async fn end(conn: &impl ConnectionTrait, a: &UserId, b: &UserId) -> Result<bool, AppError> {
    // Tag places first: SQLite's cascade would do it, but this way it does not depend on it.
    links::Entity::delete_many()
        .filter(
            sea_orm::Condition::any()
                .add(links::Column::UserId.eq(a).and(links::Column::FriendId.eq(b)))
                .add(links::Column::UserId.eq(b).and(links::Column::FriendId.eq(a))),
        )
        .exec(conn)
        .await?;
    let gone = friendships::Entity::delete_many()
        .filter(
            sea_orm::Condition::any()
                .add(friendships::Column::UserId.eq(a).and(friendships::Column::FriendId.eq(b)))
                .add(friendships::Column::UserId.eq(b).and(friendships::Column::FriendId.eq(a))),
        )
        .exec(conn)
        .await?
        .rows_affected;
    if gone == 0 {
        return Ok(false);
    }
    for (reader, other) in [(a, b), (b, a)] {
        let change = FriendChange { user_id: other.to_string(), change: FriendChangeKind::Removed };
        events::append(conn, reader, EventKind::Friend, &change).await?;
    }
    Ok(true)
}

/// True when the two are friends (checked from `a`'s side; both sides are written together).
pub async fn are_friends(conn: &impl ConnectionTrait, a: &UserId, b: &UserId) -> Result<bool, AppError> {
    Ok(friendship(conn, a, b).await?.is_some())
}
