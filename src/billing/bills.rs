//! Bills: metered usage of one thing (a rental, an order) in one hourly period, `unbilled` while
//! the period is open and `billed` once the job closes it. Postings add to them (posting.rs).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::billing::ledger::{AccountRef, Reference};
use crate::billing::model::{Bill, BillStatus};
use crate::billing::store::sum_i64;
use crate::billing::titles::Titles;
use crate::db::entity::bills;
use crate::error::AppError;
use crate::http::List;
use crate::lang::Lang;

/// How long after its end a period is closed: a posting goes to the period of its own clock
/// hour, so by then no transaction still writing to it can be open.
pub const CLOSE_GRACE_SECS: i64 = 60;

/// Bills of `account`, newest period first.
pub async fn list(conn: &DatabaseConnection, titles: &Titles, account: &AccountRef, status: Option<BillStatus>, offset: u64, limit: u64, lang: Lang) -> Result<List<Bill>, AppError> {
    let mut q = bills::Entity::find().filter(bills::Column::AccountId.eq(account.id()));
    if let Some(s) = status {
        q = q.filter(bills::Column::Status.eq(s));
    }
    let total = q.clone().count(conn).await?;
    let rows = q.order_by_desc(bills::Column::PeriodStart).order_by_asc(bills::Column::Id).offset(offset).limit(limit).all(conn).await?;
    let refs = || rows.iter().map(|b| (b.ref_type.as_str(), b.ref_id.as_str()));
    let names = titles.of(&conn.into(), refs(), lang).await?;
    let by = makers(conn, titles, account, refs()).await?;
    let items = rows
        .into_iter()
        .map(|b| Bill {
            by: by.get(&format!("{}:{}", b.ref_type, b.ref_id)).cloned(),
            title: names.get(&format!("{}:{}", b.ref_type, b.ref_id)).cloned(),
            id: b.id,
            status: b.status,
            ref_type: b.ref_type,
            ref_id: b.ref_id,
            period_start: b.period_start,
            period_end: b.period_end,
            amount: b.amount,
            created_at: b.created_at,
        })
        .collect();
    Ok(List { items, total })
}

/// Who made each reference of a company's bills (the person who rented), by name, keyed
/// `"<ref_type>:<ref_id>"`; nobody for a person's own wallet (it is theirs).
async fn makers<'a>(conn: &DatabaseConnection, titles: &Titles, account: &AccountRef, refs: impl Iterator<Item = (&'a str, &'a str)>) -> Result<HashMap<String, String>, AppError> {
    if !matches!(account, AccountRef::Company(_)) {
        return Ok(HashMap::new());
    }
    let users = titles.makers_of(&conn.into(), refs).await?;
    let people = crate::iam::people::by_ids(conn, users.values().cloned()).await?;
    Ok(users.into_iter().filter_map(|(r, u)| Some((r, people.get(&u)?.name.clone()))).collect())
}

/// The account's usage in periods still open.
pub async fn unbilled_total(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<i64, AppError> {
    let sum: Option<i64> = bills::Entity::find()
        .select_only()
        .expr(sum_i64(bills::Column::Amount))
        .filter(bills::Column::AccountId.eq(account.id()))
        .filter(bills::Column::Status.eq(BillStatus::Unbilled))
        .into_tuple()
        .one(conn)
        .await?
        .flatten();
    Ok(sum.unwrap_or(0))
}

/// Billed and unbilled usage of `account` for one reference (e.g. a rental's `billed`/`unbilled`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub billed: i64,
    pub unbilled: i64,
}

pub async fn usage(conn: &impl ConnectionTrait, account: &AccountRef, reference: &Reference) -> Result<Usage, AppError> {
    let rows: Vec<(BillStatus, Option<i64>)> = bills::Entity::find()
        .select_only()
        .column(bills::Column::Status)
        .expr(sum_i64(bills::Column::Amount))
        .filter(bills::Column::AccountId.eq(account.id()))
        .filter(bills::Column::RefType.eq(reference.ref_type.as_str()))
        .filter(bills::Column::RefId.eq(reference.ref_id.clone().unwrap_or_default()))
        .group_by(bills::Column::Status)
        .into_tuple()
        .all(conn)
        .await?;
    let mut u = Usage::default();
    for (status, sum) in rows {
        match status {
            BillStatus::Billed => u.billed = sum.unwrap_or(0),
            BillStatus::Unbilled => u.unbilled = sum.unwrap_or(0),
        }
    }
    Ok(u)
}

/// Marks `billed` every bill whose period ended at least [`CLOSE_GRACE_SECS`] before `at` (the
/// billing job). One conditional UPDATE: two instances running it close each bill once.
pub async fn close_due(db: &DatabaseConnection, at: DateTime<Utc>) -> Result<u64, AppError> {
    let r = bills::Entity::update_many()
        .col_expr(bills::Column::Status, Expr::value(BillStatus::Billed))
        .col_expr(bills::Column::BilledAt, Expr::value(at))
        .filter(bills::Column::Status.eq(BillStatus::Unbilled))
        .filter(bills::Column::PeriodEnd.lte(at - chrono::Duration::seconds(CLOSE_GRACE_SECS)))
        .exec(db)
        .await?;
    Ok(r.rows_affected)
}
