//! Notification rules: a person sees and marks only their own; texts follow the language; the
//! per-person counters change in the same transaction as the rows they count.

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::{Alias, Expr, Func, OnConflict, Query};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, QueryTrait, Set,
};

use crate::db::entity::{notification_counters as counters, notifications};
use crate::db::{new_id, now, write_txn};
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::lang::Lang;
use crate::db::enums::NotificationKind;
use crate::iam::auth::Auth;
use crate::notifications::{NotificationsCtx, StatsSources, count_of};
use crate::notifications::model::{Notification, NotificationEvent, RECENT_HOURS, Stats, path_of};
use crate::ids::UserId;

fn mine(auth: &Auth) -> sea_orm::Select<notifications::Entity> {
    notifications::Entity::find().filter(notifications::Column::UserId.eq(auth.user_id.clone()))
}

/// A new notification for `user_id`: English `title`/`body`; `params` holds the values they were
/// made from and the Chinese texts (`title_zh`, `body_zh`). Call it inside the writer's
/// transaction: the row and its counter change together.
pub async fn notify(
    conn: &impl ConnectionTrait,
    user_id: &UserId,
    kind: NotificationKind,
    title: &str,
    body: &str,
    params: &serde_json::Value,
) -> Result<(), AppError> {
    use sea_orm::sea_query::ExprTrait as _; // `add` on expressions (it also names every value's `min`/`max`)
    let id = new_id();
    notifications::ActiveModel {
        id: Set(id.clone().into()),
        user_id: Set(user_id.clone()),
        kind: Set(kind),
        title: Set(title.to_string()),
        body: Set(body.to_string()),
        params: Set(params.to_string()),
        read: Set(false),
        created_at: Set(now()),
    }
    .insert(conn)
    .await?;
    counters::Entity::insert(counters::ActiveModel { user_id: Set(user_id.clone()), total: Set(1), unread: Set(1) })
        .on_conflict(
            OnConflict::column(counters::Column::UserId)
                .value(counters::Column::Total, Expr::col((counters::Entity, counters::Column::Total)).add(1))
                .value(counters::Column::Unread, Expr::col((counters::Entity, counters::Column::Unread)).add(1))
                .to_owned(),
        )
        .exec(conn)
        .await?;
    // The person's open tabs hear of it from their event log, written in this same transaction.
    crate::events::append(conn, user_id, crate::events::EventKind::Notification, &NotificationEvent { id, kind }).await?;
    Ok(())
}

/// Sets every counter to what the rows say (a safety net run by a job: the writes keep them
/// current). Returns how many counters were wrong or missing.
pub async fn rebuild_counters(db: &DatabaseConnection) -> Result<u64, AppError> {
    let txn = write_txn(db).await?;
    let fixed = txn
        .execute_unprepared(
            "UPDATE notification_counters SET \
               total = (SELECT COUNT(*) FROM notifications n WHERE n.user_id = notification_counters.user_id), \
               unread = (SELECT COUNT(*) FROM notifications n WHERE n.user_id = notification_counters.user_id AND NOT n.read) \
             WHERE total <> (SELECT COUNT(*) FROM notifications n WHERE n.user_id = notification_counters.user_id) \
                OR unread <> (SELECT COUNT(*) FROM notifications n WHERE n.user_id = notification_counters.user_id AND NOT n.read)",
        )
        .await?
        .rows_affected();
    let added = txn
        .execute_unprepared(
            "INSERT INTO notification_counters (user_id, total, unread) \
             SELECT user_id, COUNT(*), SUM(CASE WHEN read THEN 0 ELSE 1 END) FROM notifications \
             WHERE user_id NOT IN (SELECT user_id FROM notification_counters) GROUP BY user_id",
        )
        .await?
        .rows_affected();
    txn.commit().await?;
    Ok(fixed + added)
}

/// The stats of `auth`'s person in their context: from this instance's cache when no write the
/// stats count was committed since they were read (and the recent window still holds), else
/// from the database.
pub async fn stats(cx: &NotificationsCtx, auth: &Auth) -> Result<Stats, AppError> {
    let version = cx.versions.fresh().await?.stats;
    let key = (auth.user_id.to_string(), auth.context.sme_id().to_string() + if auth.is_admin() { "#admin" } else { "" });
    if let Some((stats, until)) = cx.cached.get(version, &key)
        && until.is_none_or(|t| now() < t)
    {
        return Ok(stats);
    }
    let (stats, until) = count_stats(&cx.db, &cx.stats, auth).await?;
    cx.cached.put(version, key, (stats.clone(), until));
    Ok(stats)
}

/// One statement: the counter row, the recent ones by index (and when the oldest of them leaves
/// the window), and what the other domains add (the companies' unread news, pending friend
/// requests) through their registered sources, each a scalar subquery.
async fn count_stats(db: &DatabaseConnection, sources: &StatsSources, auth: &Auth) -> Result<(Stats, Option<DateTime<Utc>>), AppError> {
    let counter = |col: counters::Column| -> Expr {
        let row = Query::select().column(col).from(counters::Entity).and_where(counters::Column::UserId.eq(auth.user_id.clone())).to_owned();
        Func::coalesce([Expr::SubQuery(None, Box::new(row.into())), Expr::val(0i64)]).into()
    };
    let since = now() - Duration::hours(RECENT_HOURS);
    let recent = mine(auth).filter(notifications::Column::CreatedAt.gte(since));
    let oldest_recent = recent.clone().select_only().expr(Func::min(Expr::col(notifications::Column::CreatedAt))).into_query();
    let mut q = Query::select();
    q.expr_as(counter(counters::Column::Total), Alias::new("total"))
        .expr_as(counter(counters::Column::Unread), Alias::new("unread"))
        .expr_as(count_of(recent), Alias::new("recent"))
        .expr_as(Expr::SubQuery(None, Box::new(oldest_recent.into())), Alias::new("oldest_recent"));
    for (name, e) in sources.counts(auth) {
        q.expr_as(e, Alias::new(name));
    }
    let row = db.query_one_raw(db.get_database_backend().build(&q)).await?;
    let count = |col: &str| row.as_ref().and_then(|r| r.try_get::<i64>("", col).ok()).map_or(0, |n| u64::try_from(n).unwrap_or(0));
    let (total, recent) = (count("total"), count("recent"));
    let unread = count("unread").min(total);
    let mut stats = Stats { total, read: total - unread, unread, recent, pending_friend_requests_exists: false, member_records_unread: 0 };
    sources.fill(&count, &mut stats);
    // The recent count drops when its oldest notification leaves the window; an unreadable time
    // (never expected) keeps nothing.
    let until = if recent == 0 {
        None
    } else {
        let oldest = row.as_ref().and_then(|r| r.try_get::<Option<DateTime<Utc>>>("", "oldest_recent").ok().flatten());
        Some(oldest.map_or_else(now, |t| t + Duration::hours(RECENT_HOURS)))
    };
    Ok((stats, until))
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
    use sea_orm::sea_query::ExprTrait as _; // `sub` on expressions
    let txn = write_txn(db).await?;
    let changed = notifications::Entity::update_many()
        .col_expr(notifications::Column::Read, Expr::value(true))
        .filter(notifications::Column::Id.eq(id))
        .filter(notifications::Column::UserId.eq(auth.user_id.clone()))
        .filter(notifications::Column::Read.eq(false))
        .exec(&txn)
        .await?
        .rows_affected;
    if changed == 0 {
        mine(auth).filter(notifications::Column::Id.eq(id)).one(&txn).await?.ok_or(AppError::Refused(Msg::NotificationNotFound))?;
    } else {
        counters::Entity::update_many()
            .col_expr(counters::Column::Unread, Expr::col(counters::Column::Unread).sub(1))
            .filter(counters::Column::UserId.eq(auth.user_id.clone()))
            .filter(counters::Column::Unread.gt(0))
            .exec(&txn)
            .await?;
    }
    txn.commit().await?;
    Ok(())
}

/// The row's English text, or the Chinese text its writer kept in `params` (`title_zh`, `body_zh`),
/// and the page it is about (`model::path_of`).
fn view(r: notifications::Model, lang: Lang) -> Notification {
    let (mut title, mut body) = (r.title, r.body);
    let params: serde_json::Value = serde_json::from_str(&r.params).unwrap_or_default();
    if lang == Lang::Zh {
        if let Some(t) = params["title_zh"].as_str() {
            title = t.to_string();
        }
        if let Some(b) = params["body_zh"].as_str() {
            body = b.to_string();
        }
    }
    let path = path_of(r.kind, &params);
    Notification { id: r.id.into(), kind: r.kind, title, body, read: r.read, created_at: r.created_at, path }
}
