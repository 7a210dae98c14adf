//! A person's friend tags: made, renamed and deleted by their owner, at most `MAX_TAGS` each,
//! names unique per person (a unique index), counted by the friends under them.

use std::collections::HashMap;

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use crate::db::entity::{friend_tag_links as links, friend_tags};
use crate::db::{new_id, now, write_txn};
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::iam::auth::Auth;
use crate::social::model::{MAX_TAGS, Tag, TagName};
use crate::events;
use crate::social::shared::is_unique_violation;
use crate::ids::UserId;

fn not_found() -> AppError {
    AppError::Refused(Msg::TagNotFound)
}

pub(crate) async fn all(conn: &impl ConnectionTrait, user_id: &UserId) -> Result<Vec<friend_tags::Model>, AppError> {
    Ok(friend_tags::Entity::find().filter(friend_tags::Column::UserId.eq(user_id)).order_by_asc(friend_tags::Column::Name).all(conn).await?)
}

pub(crate) async fn find(conn: &impl ConnectionTrait, user_id: &UserId, name: &str) -> Result<Option<friend_tags::Model>, AppError> {
    Ok(friend_tags::Entity::find()
        .filter(friend_tags::Column::UserId.eq(user_id))
        .filter(friend_tags::Column::Name.eq(name.trim()))
        .one(conn)
        .await?)
}

async fn add(conn: &impl ConnectionTrait, user_id: &UserId, name: &TagName) -> Result<friend_tags::Model, AppError> {
    let count = friend_tags::Entity::find().filter(friend_tags::Column::UserId.eq(user_id)).count(conn).await?;
    if count >= MAX_TAGS {
        return Err(AppError::Refused(Msg::TooManyTags));
    }
    let row = friend_tags::Model { id: new_id(), user_id: UserId::from(user_id), name: name.as_str().to_string(), created_at: now() };
    match friend_tags::Entity::insert(friend_tags::ActiveModel::from(row.clone())).exec_without_returning(conn).await {
        Err(e) if is_unique_violation(&e) => Err(AppError::Refused(Msg::TagExists)),
        Err(e) => Err(e.into()),
        Ok(_) => Ok(row),
    }
}

/// The ids of the caller's tags named `names`, creating the missing ones. Call it with the
/// person locked.
pub(crate) async fn ensure(conn: &impl ConnectionTrait, user_id: &UserId, names: &[TagName]) -> Result<Vec<String>, AppError> {
    let mut ids = Vec::with_capacity(names.len());
    for name in names {
        let id = match find(conn, user_id, name.as_str()).await? {
            Some(t) => t.id,
            None => add(conn, user_id, name).await.map_err(|e| match e {
                AppError::Refused(Msg::TooManyTags) => AppError::invalid("tags", Msg::TooManyTags),
                e => e,
            })?.id,
        };
        ids.push(id);
    }
    Ok(ids)
}

async fn counts(conn: &impl ConnectionTrait, user_id: &UserId) -> Result<HashMap<String, u64>, AppError> {
    let rows: Vec<(String, i64)> = links::Entity::find()
        .select_only()
        .column(links::Column::TagId)
        .column_as(links::Column::FriendId.count(), "n")
        .filter(links::Column::UserId.eq(user_id))
        .group_by(links::Column::TagId)
        .into_tuple()
        .all(conn)
        .await?;
    Ok(rows.into_iter().map(|(t, n)| (t, u64::try_from(n).unwrap_or(0))).collect())
}

/// The caller's tags by name, each with the number of friends under it.
pub async fn list(conn: &impl ConnectionTrait, auth: &Auth) -> Result<List<Tag>, AppError> {
    let n = counts(conn, &auth.user_id).await?;
    let items: Vec<Tag> =
        all(conn, &auth.user_id).await?.into_iter().map(|t| Tag { count: n.get(&t.id).copied().unwrap_or(0), name: t.name }).collect();
    Ok(List { total: items.len() as u64, items })
}

pub async fn create(db: &DatabaseConnection, auth: &Auth, name: &TagName) -> Result<Tag, AppError> {
    let txn = write_txn(db).await?;
    events::lock_people(&txn, &[&auth.user_id]).await?;
    let t = add(&txn, &auth.user_id, name).await?;
    txn.commit().await?;
    Ok(Tag { name: t.name, count: 0 })
}

pub async fn rename(db: &DatabaseConnection, auth: &Auth, name: &str, to: &TagName) -> Result<Tag, AppError> {
    let txn = write_txn(db).await?;
    events::lock_people(&txn, &[&auth.user_id]).await?;
    let t = find(&txn, &auth.user_id, name).await?.ok_or_else(not_found)?;
    let id = t.id.clone();
    if t.name != to.as_str() {
        let mut a: friend_tags::ActiveModel = t.into();
        a.name = Set(to.as_str().to_string());
        match a.update(&txn).await {
            Err(e) if is_unique_violation(&e) => return Err(AppError::Refused(Msg::TagExists)),
            other => {
                other?;
            }
        }
    }
    let count = counts(&txn, &auth.user_id).await?.get(&id).copied().unwrap_or(0);
    txn.commit().await?;
    Ok(Tag { name: to.as_str().to_string(), count })
}

/// Deletes a tag; the friends under it stay friends.
pub async fn delete(db: &DatabaseConnection, auth: &Auth, name: &str) -> Result<(), AppError> {
    let txn = write_txn(db).await?;
    let t = find(&txn, &auth.user_id, name).await?.ok_or_else(not_found)?;
    links::Entity::delete_many().filter(links::Column::TagId.eq(t.id.clone())).exec(&txn).await?;
    friend_tags::Entity::delete_by_id(t.id).exec(&txn).await?;
    txn.commit().await?;
    Ok(())
}
