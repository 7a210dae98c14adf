//! Wallet rules around the ledger: the wallet of a context, its entries and bills, top-ups, the
//! signup bonus, operator grants, usage and runway (with its notices), the account-deletion
//! check, and the bodies of the billing jobs. No HTTP types here.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Statement,
};
use serde_json::json;

use crate::billing::ledger::{self, Conn};
use crate::billing::model::*;
use crate::config::BillingConfig;
use crate::db::entity::bills;
use crate::db::entity::ledger_accounts as accounts;
use crate::db::entity::ledger_entries as entries;
use crate::db::entity::ledger_holds as holds;
use crate::db::entity::{company_members, users};
use crate::db::new_id;
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::iam::model::Email;
use crate::iam::service::Auth;

/// `SUM(col)` as a 64-bit integer on both backends (PostgreSQL sums bigints into numeric).
fn sum_i64(col: impl sea_orm::sea_query::IntoColumnRef) -> Expr {
    Expr::col(col).sum().cast_as("BIGINT")
}

// ---- reads ----

/// The wallet of `account` (all zeros before its first movement).
pub async fn wallet(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<Wallet, AppError> {
    let a = ledger::account(conn, account).await?;
    let (balance, held, income_total, expense_total) = a.as_ref().map_or((0, 0, 0, 0), |a| (a.balance, a.held, a.income_total, a.expense_total));
    let unbilled: Option<i64> = bills::Entity::find()
        .select_only()
        .expr(sum_i64(bills::Column::Amount))
        .filter(bills::Column::AccountId.eq(account.id()))
        .filter(bills::Column::Status.eq(BillStatus::Unbilled))
        .into_tuple()
        .one(conn)
        .await?
        .flatten();
    let available = std::cmp::max(balance - held, 0);
    Ok(Wallet {
        balance,
        held,
        available,
        income_total,
        expense_total,
        unbilled: unbilled.unwrap_or(0),
        runway_secs: runway(available, burn_per_hour(conn, account).await?),
    })
}

/// Cents per hour the account's running work is spending (its metered pending holds).
pub async fn burn_per_hour(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<i64, AppError> {
    let burn: Option<i64> = holds::Entity::find()
        .select_only()
        .expr(sum_i64(holds::Column::BurnPerHour))
        .filter(holds::Column::AccountId.eq(account.id()))
        .filter(holds::Column::Status.eq(HoldStatus::Pending))
        .filter(holds::Column::BurnPerHour.gt(0))
        .into_tuple()
        .one(conn)
        .await?
        .flatten();
    Ok(burn.unwrap_or(0))
}

/// Seconds `available` lasts at `burn_per_hour`; `None` when nothing burns.
pub fn runway(available: i64, burn_per_hour: i64) -> Option<i64> {
    (burn_per_hour > 0).then(|| (i128::from(std::cmp::max(available, 0)) * 3600 / i128::from(burn_per_hour)) as i64)
}

/// Entries of `account`, newest first.
pub async fn entries(conn: &impl ConnectionTrait, account: &AccountRef, kind: Option<EntryKind>, offset: u64, limit: u64) -> Result<List<Entry>, AppError> {
    let mut q = entries::Entity::find().filter(entries::Column::AccountId.eq(account.id()));
    if let Some(k) = kind {
        q = q.filter(entries::Column::Kind.eq(k));
    }
    let total = q.clone().count(conn).await?;
    let rows = q.order_by_desc(entries::Column::Seq).offset(offset).limit(limit).all(conn).await?;
    Ok(List { items: rows.into_iter().map(entry_view).collect(), total })
}

pub fn entry_view(e: entries::Model) -> Entry {
    Entry {
        id: e.id,
        kind: e.kind,
        amount: e.amount,
        balance_after: e.balance_after,
        memo: e.memo,
        ref_type: e.ref_type,
        ref_id: e.ref_id,
        created_at: e.created_at,
    }
}

/// Income and expense per UTC day over the `days` days ending with `today`, oldest first, days
/// without movement included as zeros.
pub async fn daily(conn: &impl ConnectionTrait, account: &AccountRef, days: i64, today: DateTime<Utc>) -> Result<Vec<Day>, AppError> {
    let first = today.date_naive() - chrono::Duration::days(days - 1);
    let since = first.and_hms_opt(0, 0, 0).map(|d| d.and_utc()).unwrap_or(today);
    let day_expr = match conn.get_database_backend() {
        DbBackend::Postgres => "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
        // Stored as RFC 3339 text in UTC: the date is its first ten characters.
        _ => "substr(created_at, 1, 10)",
    };
    let sql = format!(
        "SELECT {day_expr} AS day, \
                CAST(COALESCE(SUM(CASE WHEN amount > 0 THEN amount ELSE 0 END), 0) AS BIGINT) AS income, \
                CAST(COALESCE(SUM(CASE WHEN amount < 0 THEN -amount ELSE 0 END), 0) AS BIGINT) AS expense \
         FROM ledger_entries WHERE account_id = $1 AND created_at >= $2 GROUP BY {day_expr}"
    );
    let backend = conn.get_database_backend();
    let sql = if backend == DbBackend::Postgres { sql } else { sql.replace("$1", "?").replace("$2", "?") };
    let rows = conn.query_all_raw(Statement::from_sql_and_values(backend, sql, [account.id().into(), since.into()])).await?;
    let mut sums = std::collections::HashMap::new();
    for r in rows {
        let day: String = r.try_get("", "day")?;
        sums.insert(day, (r.try_get::<i64>("", "income")?, r.try_get::<i64>("", "expense")?));
    }
    Ok((0..days)
        .map(|i| {
            let day = (first + chrono::Duration::days(i)).format("%Y-%m-%d").to_string();
            let (income, expense) = sums.get(&day).copied().unwrap_or((0, 0));
            Day { day, income, expense }
        })
        .collect())
}

/// Bills of `account`, newest period first.
pub async fn bills(conn: &impl ConnectionTrait, account: &AccountRef, status: Option<BillStatus>, offset: u64, limit: u64) -> Result<List<Bill>, AppError> {
    let mut q = bills::Entity::find().filter(bills::Column::AccountId.eq(account.id()));
    if let Some(s) = status {
        q = q.filter(bills::Column::Status.eq(s));
    }
    let total = q.clone().count(conn).await?;
    let rows = q.order_by_desc(bills::Column::PeriodStart).order_by_asc(bills::Column::Id).offset(offset).limit(limit).all(conn).await?;
    let items = rows
        .into_iter()
        .map(|b| Bill {
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

/// True when the person's wallet keeps their account from being deleted: a negative balance,
/// coins held for something still running, or usage not billed yet.
pub async fn blocks_deletion(conn: &impl ConnectionTrait, user_id: &str) -> Result<bool, AppError> {
    let account = AccountRef::User(user_id.to_string());
    if let Some(a) = ledger::account(conn, &account).await?
        && (a.balance < 0 || a.held > 0)
    {
        return Ok(true);
    }
    let unbilled = bills::Entity::find()
        .filter(bills::Column::AccountId.eq(account.id()))
        .filter(bills::Column::Status.eq(BillStatus::Unbilled))
        .count(conn)
        .await?;
    Ok(unbilled > 0)
}

// ---- coins in ----

/// The signup bonus of `billing.signup_bonus`, once per person (call it when an account becomes
/// verified, inside that transaction).
pub async fn signup_bonus(conn: &impl Conn, cfg: &BillingConfig, user_id: &str) -> Result<(), AppError> {
    ledger::signup_bonus(conn, user_id, cfg.signup_bonus.cents()).await?;
    Ok(())
}

/// The operator's grant (`zmarket coins grant`): refuses unknown emails and non-positive
/// amounts; answers the person's new balance.
pub async fn grant_by_email(db: &DatabaseConnection, email: &str, amount: Coins, memo: &str) -> Result<i64, GrantError> {
    let email = Email::parse(Some(email)).map_err(|_| GrantError::BadEmail(email.to_string()))?;
    if amount.cents() <= 0 || amount.cents() > AMOUNT_MAX {
        return Err(GrantError::BadAmount);
    }
    let user = users::Entity::find()
        .filter(users::Column::Email.eq(email.as_str()))
        .one(db)
        .await
        .map_err(|e| GrantError::Failed(e.into()))?
        .ok_or_else(|| GrantError::UnknownEmail(email.as_str().to_string()))?;
    let memo = if memo.trim().is_empty() { "Operator grant".to_string() } else { memo.trim().to_string() };
    let to = AccountRef::User(user.id);
    let posted = ledger::grant(db, to.clone(), amount.cents(), format!("grant:{}", new_id()), memo).await.map_err(GrantError::Failed)?;
    Ok(posted.entry_of(&to).map(|e| e.balance_after).unwrap_or_default())
}

#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    #[error("{0} is not an email address")]
    BadEmail(String),
    #[error("no account has the email {0}")]
    UnknownEmail(String),
    #[error("the amount must be a positive number of coins with at most two decimals, e.g. 12.50")]
    BadAmount,
    #[error("the grant failed: {0}")]
    Failed(AppError),
}

/// Moves coins from the administrator's personal wallet into the company's. With an
/// `Idempotency-Key` the transfer's key is derived from it, so a retry never moves twice even
/// when the HTTP layer's record of the first answer is lost. Answers the company's entry.
pub async fn top_up(db: &DatabaseConnection, auth: &Auth, req: TopUp, idempotency_key: Option<&str>) -> Result<Entry, AppError> {
    let company = match auth.company() {
        None => return Err(AppError::Forbidden(Msg::CompanyContextRequired)),
        Some(_) if !auth.is_admin() => return Err(AppError::Forbidden(Msg::NotAdmin)),
        Some(c) => c.to_string(),
    };
    let to = AccountRef::Company(company.clone());
    let key = match idempotency_key {
        Some(k) => format!("top_up:{}:{company}:{k}", auth.user_id),
        None => format!("top_up:{}", new_id()),
    };
    let spec = PaySpec {
        from: AccountRef::User(auth.user_id.clone()),
        splits: vec![Split { account: to.clone(), amount: req.amount }],
        key,
        reference: Reference::new("top_up", company),
        memo: req.memo,
        metered: false,
    };
    let posted = ledger::pay(db, spec).await?;
    posted.entry_of(&to).cloned().map(entry_view).ok_or_else(|| AppError::Internal(anyhow::anyhow!("top-up without the company's entry")))
}

// ---- jobs ----

/// Marks `billed` every bill whose period ended before `at` (the billing job). A posting goes to
/// the period of its own clock hour, so a period is closed a minute after its end, when no
/// transaction still writing to it can be open.
pub async fn close_bills(db: &DatabaseConnection, at: DateTime<Utc>) -> Result<u64, AppError> {
    let r = bills::Entity::update_many()
        .col_expr(bills::Column::Status, Expr::value(BillStatus::Billed))
        .col_expr(bills::Column::BilledAt, Expr::value(at))
        .filter(bills::Column::Status.eq(BillStatus::Unbilled))
        .filter(bills::Column::PeriodEnd.lte(at - chrono::Duration::seconds(CLOSE_GRACE_SECS)))
        .exec(db)
        .await?;
    Ok(r.rows_affected)
}

/// How long after its end a period is closed.
pub const CLOSE_GRACE_SECS: i64 = 60;

/// Runway levels that are notified, in hours.
const RUNWAY_NOTICES: [i64; 2] = [24, 1];

/// The runway notice due at `runway_secs`: 1 (an hour or less), 24 (a day or less) or 0.
pub fn notice_level(runway_secs: Option<i64>) -> i64 {
    match runway_secs {
        Some(s) => RUNWAY_NOTICES.iter().rev().copied().find(|h| s <= h * 3600).unwrap_or(0),
        None => 0,
    }
}

/// Tells the owners of wallets whose runway fell to 24 hours or to 1 hour (once per level until
/// the runway grows past a day again). Returns how many notices went out.
pub async fn runway_notices(db: &DatabaseConnection) -> Result<u64, AppError> {
    let burning: Vec<String> = holds::Entity::find()
        .select_only()
        .column(holds::Column::AccountId)
        .filter(holds::Column::Status.eq(HoldStatus::Pending))
        .filter(holds::Column::BurnPerHour.gt(0))
        .distinct()
        .into_tuple()
        .all(db)
        .await?;
    let noticed: Vec<String> =
        accounts::Entity::find().select_only().column(accounts::Column::Id).filter(accounts::Column::RunwayNotice.ne(0)).into_tuple().all(db).await?;
    let mut ids = burning;
    ids.extend(noticed);
    ids.sort();
    ids.dedup();
    let mut sent = 0;
    for id in ids {
        let account = ledger::account_ref_of(&id)?;
        let w = wallet(db, &account).await?;
        let burn = burn_per_hour(db, &account).await?;
        let level = notice_level(w.runway_secs);
        let txn = ledger::begin(db).await?;
        let Some(a) = ledger::account(&txn, &account).await? else { continue };
        let due = level != 0 && (a.runway_notice == 0 || level < a.runway_notice);
        if due || (level == 0 && a.runway_notice != 0) {
            // Conditional on the notice seen, so two runs never send the same notice twice.
            let changed = accounts::Entity::update_many()
                .col_expr(accounts::Column::RunwayNotice, Expr::value(level))
                .filter(accounts::Column::Id.eq(id.clone()))
                .filter(accounts::Column::RunwayNotice.eq(a.runway_notice))
                .exec(&txn)
                .await?
                .rows_affected;
            if changed == 1 && due {
                for user_id in owners(&txn, &account).await? {
                    notify_runway(&txn, &user_id, level, w.available, burn).await?;
                    sent += 1;
                }
            }
        }
        txn.commit().await?;
    }
    Ok(sent)
}

/// The people who answer for a wallet: its person, or the company's administrators.
async fn owners(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<Vec<String>, AppError> {
    Ok(match account {
        AccountRef::User(u) => vec![u.clone()],
        AccountRef::Company(c) => company_members::Entity::find()
            .select_only()
            .column(company_members::Column::UserId)
            .filter(company_members::Column::CompanyId.eq(c.as_str()))
            .filter(company_members::Column::Role.eq(crate::iam::sme::model::role::ADMIN))
            .into_tuple()
            .all(conn)
            .await?,
        _ => Vec::new(),
    })
}

async fn notify_runway(conn: &impl ConnectionTrait, user_id: &str, hours: i64, available: i64, burn: i64) -> Result<(), AppError> {
    let (available_text, burn) = (format_coins(available), format_coins(burn));
    let (title, title_zh) = if hours == 1 {
        ("Your wallet runs out within an hour", "钱包余额将在一小时内用完")
    } else {
        ("Your wallet runs out within a day", "钱包余额将在一天内用完")
    };
    let body = format!(
        "{available_text} coins are available and running rentals spend about {burn} coins an hour. Add coins so they keep running."
    );
    let body_zh = format!("可用余额 {available_text} 币，运行中的租用每小时约消耗 {burn} 币。请及时充值，以免租用被暂停。");
    let params = json!({ "hours": hours, "available": available, "title_zh": title_zh, "body_zh": body_zh });
    crate::notifications::service::notify(conn, user_id, &format!("runway_{hours}h"), title, &body, &params).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runway_and_notice_levels() {
        assert_eq!(runway(1000, 0), None);
        assert_eq!(runway(1000, 1000), Some(3600));
        assert_eq!(runway(-5, 10), Some(0));
        assert_eq!(notice_level(None), 0);
        assert_eq!(notice_level(Some(86_401)), 0);
        assert_eq!(notice_level(Some(86_400)), 24);
        assert_eq!(notice_level(Some(3601)), 24);
        assert_eq!(notice_level(Some(3600)), 1);
        assert_eq!(notice_level(Some(0)), 1);
    }
}
