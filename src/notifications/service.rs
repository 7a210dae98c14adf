//! Notification rules: a person sees and marks only their own; texts follow the language.

use chrono::Duration;
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set};

use crate::db::entity::notifications;
use crate::db::now;
use crate::error::{AppError, Msg};
use crate::http::{Lang, List};
use crate::iam::service::Auth;
use crate::notifications::model::{Notification, RECENT_HOURS, Stats};

fn mine(auth: &Auth) -> sea_orm::Select<notifications::Entity> {
    notifications::Entity::find().filter(notifications::Column::UserId.eq(auth.user_id.clone()))
}

pub async fn stats(db: &DatabaseConnection, auth: &Auth) -> Result<Stats, AppError> {
    let total = mine(auth).count(db).await?;
    let unread = mine(auth).filter(notifications::Column::Read.eq(false)).count(db).await?;
    let since = now() - Duration::hours(RECENT_HOURS);
    let recent = mine(auth).filter(notifications::Column::CreatedAt.gte(since)).count(db).await?;
    let member_records_unread = crate::iam::sme::service::member_records_unread(db, auth).await?;
    Ok(Stats { total, read: total - unread, unread, recent, pending_friend_requests_exists: false, member_records_unread })
}

/// Newest first.
pub async fn list(
    db: &DatabaseConnection,
    auth: &Auth,
    lang: Lang,
    unread_only: bool,
    offset: u64,
    limit: u64,
) -> Result<List<Notification>, AppError> {
    let q = if unread_only { mine(auth).filter(notifications::Column::Read.eq(false)) } else { mine(auth) };
    let total = q.clone().count(db).await?;
    let rows = q
        .order_by_desc(notifications::Column::CreatedAt)
        .order_by_desc(notifications::Column::Id)
        .offset(offset)
        .limit(limit)
        .all(db)
        .await?;
    Ok(List { items: rows.into_iter().map(|r| view(r, lang)).collect(), total })
}

/// Marks one of the caller's notifications read (again is fine); another person's is not found.
pub async fn mark_read(db: &DatabaseConnection, auth: &Auth, id: &str) -> Result<(), AppError> {
    let row = mine(auth)
        .filter(notifications::Column::Id.eq(id))
        .one(db)
        .await?
        .ok_or(AppError::NotFound(Msg::NotificationNotFound))?;
    if !row.read {
        let mut active: notifications::ActiveModel = row.into();
        active.read = Set(true);
        active.update(db).await?;
    }
    Ok(())
}

/// The row's English text, or the Chinese text its writer kept in `params` (`title_zh`, `body_zh`).
fn view(r: notifications::Model, lang: Lang) -> Notification {
    let (mut title, mut body) = (r.title, r.body);
    if lang == Lang::Zh {
        let params: serde_json::Value = serde_json::from_str(&r.params).unwrap_or_default();
        if let Some(t) = params["title_zh"].as_str() {
            title = t.to_string();
        }
        if let Some(b) = params["body_zh"].as_str() {
            body = b.to_string();
        }
    }
    Notification { id: r.id, kind: r.kind, title, body, read: r.read, created_at: r.created_at }
}
