//! A wallet as its owner sees it: the figures, the entries, the daily chart, funding a company,
//! and whether the wallet keeps an account from being deleted. No HTTP types here.

use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Statement};

use crate::billing::bills::unbilled_total;
use crate::billing::ledger::{self, AccountRef, Reference, Split, TransferSpec};
use crate::billing::model::{Day, Entry, EntryKind, TopUp, TopUpInfo, Wallet};
use crate::settings::MarketSettings;
use crate::billing::memo::render;
use crate::billing::store::sum_i64;
use crate::billing::titles::Titles;
use crate::db::entity::ledger_entries as entries;
use crate::db::entity::ledger_holds as holds;
use crate::db::enums::HoldStatus;
use crate::db::new_id;
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::iam::auth::Auth;
use crate::lang::Lang;
use crate::ids::UserId;

/// The wallet of `account` (all zeros before its first movement).
pub async fn wallet(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<Wallet, AppError> {
    let a = ledger::account(conn, account).await?;
    let (balance, held, income_total, expense_total) = a.as_ref().map_or((0, 0, 0, 0), |a| (a.balance, a.held, a.income_total, a.expense_total));
    let available = std::cmp::max(balance - held, 0);
    Ok(Wallet {
        balance,
        held,
        available,
        income_total,
        expense_total,
        unbilled: unbilled_total(conn, account).await?,
        runway_secs: first_stop_secs(conn, account).await?,
    })
}

/// A running thing's pending hold: the coins it has left, the cents an hour it spends, and the end
/// of the work it pays for when that is known (a rental's `ends_at`).
#[derive(Debug, Clone, Copy)]
pub struct Burning {
    pub left: i64,
    pub burn_per_hour: i64,
    pub ends_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// The account's burning pending holds (its running rentals).
pub async fn burning(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<Vec<Burning>, AppError> {
    let rows: Vec<(i64, i64, i64, Option<chrono::DateTime<chrono::Utc>>)> = holds::Entity::find()
        .select_only()
        .column(holds::Column::Amount)
        .column(holds::Column::Captured)
        .column(holds::Column::BurnPerHour)
        .column(holds::Column::EndsAt)
        .filter(holds::Column::AccountId.eq(account.id()))
        .filter(holds::Column::Status.eq(HoldStatus::Pending))
        .filter(holds::Column::BurnPerHour.gt(0))
        .into_tuple()
        .all(conn)
        .await?;
    Ok(rows.into_iter().map(|(amount, captured, burn_per_hour, ends_at)| Burning { left: amount - captured, burn_per_hour, ends_at }).collect())
}

/// Seconds until the first running thing of the account stops: the pending hold (a running
/// rental) whose held coins, at its rate, are used up first; `None` when nothing runs. Coins held
/// are what pay for running work, so this, not the available balance, says when something stops.
pub async fn first_stop_secs(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<Option<i64>, AppError> {
    Ok(burning(conn, account).await?.into_iter().filter_map(|b| runway(b.left, b.burn_per_hour)).min())
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
pub async fn entries(conn: &DatabaseConnection, titles: &Titles, account: &AccountRef, kind: Option<EntryKind>, offset: u64, limit: u64, lang: Lang) -> Result<List<Entry>, AppError> {
    let mut q = entries::Entity::find().filter(entries::Column::AccountId.eq(account.id()));
    if let Some(k) = kind {
        q = q.filter(entries::Column::Kind.eq(k));
    }
    let total = q.clone().count(conn).await?;
    let rows = q.order_by_desc(entries::Column::Seq).offset(offset).limit(limit).all(conn).await?;
    let names = titles.of(&conn.into(), rows.iter().filter_map(|e| Some((e.ref_type.as_str(), e.ref_id.as_deref()?))), lang).await?;
    let splits = income_splits(conn, &rows).await?;
    let items = rows
        .into_iter()
        .map(|e| {
            let title = e.ref_id.as_ref().and_then(|id| names.get(&format!("{}:{id}", e.ref_type)).cloned());
            let split = splits.get(&e.transfer_id).copied();
            let mut view = entry_view(e, title, lang);
            if let Some((gross, fee)) = split.filter(|_| view.amount > 0) {
                (view.gross, view.fee) = (Some(gross), Some(fee));
            }
            view
        })
        .collect();
    Ok(List { items, total })
}

/// What is paid for work a provider is credited for: rentals, orders, Z-CLOUD machines.
const EARNED: [&str; 3] = ["rental", "order", "zcloud"];

/// The gross and the market's fee of each transfer that credited a provider among `rows` (their
/// income entries of rentals, orders and Z-CLOUD machines), by transfer id: the payer's debit and
/// the market fee's credit of the same transfer, read in one query.
async fn income_splits(conn: &impl ConnectionTrait, rows: &[entries::Model]) -> Result<std::collections::HashMap<String, (i64, i64)>, AppError> {
    let fee_account = AccountRef::MarketFee.id();
    let ids: Vec<String> =
        rows.iter().filter(|e| e.amount > 0 && e.account_id != fee_account && EARNED.contains(&e.ref_type.as_str())).map(|e| e.transfer_id.clone()).collect();
    let mut out = std::collections::HashMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    let legs = entries::Entity::find().filter(entries::Column::TransferId.is_in(ids)).all(conn).await?;
    for leg in legs {
        let (gross, fee) = out.entry(leg.transfer_id.clone()).or_insert((0, 0));
        if leg.amount < 0 {
            *gross -= leg.amount;
        } else if leg.account_id == fee_account {
            *fee += leg.amount;
        }
    }
    Ok(out)
}

/// An entry as its owner reads it: the memo in `lang`, and its `title` (`billing::titles`; none
/// for what names nothing but its memo, a grant or a top-up).
pub fn entry_view(e: entries::Model, title: Option<String>, lang: Lang) -> Entry {
    Entry {
        title,
        id: e.id,
        kind: e.kind,
        amount: e.amount,
        balance_after: e.balance_after,
        memo: render(&e.memo, lang),
        ref_type: e.ref_type,
        ref_id: e.ref_id,
        gross: None,
        fee: None,
        created_at: e.created_at,
    }
}

/// Income and expense per UTC day over the `days` days ending with `today`, oldest first, days
/// without movement included as zeros.
pub async fn daily(conn: &impl ConnectionTrait, account: &AccountRef, days: i64, today: DateTime<Utc>) -> Result<Vec<Day>, AppError> {
    let first = today.date_naive() - chrono::Duration::days(days - 1);
    let since = first.and_hms_opt(0, 0, 0).map(|d| d.and_utc()).unwrap_or(today);
    let backend = conn.get_database_backend();
    let (day_expr, params) = match backend {
        DbBackend::Postgres => ("to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')", ("$1", "$2")),
        // Stored as RFC 3339 text in UTC: the date is its first ten characters.
        _ => ("substr(created_at, 1, 10)", ("?", "?")),
    };
    let sql = format!(
        "SELECT {day_expr} AS day, \
                CAST(COALESCE(SUM(CASE WHEN amount > 0 THEN amount ELSE 0 END), 0) AS BIGINT) AS income, \
                CAST(COALESCE(SUM(CASE WHEN amount < 0 THEN -amount ELSE 0 END), 0) AS BIGINT) AS expense \
         FROM ledger_entries WHERE account_id = {} AND created_at >= {} GROUP BY {day_expr}",
        params.0, params.1
    );
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

/// The market's money as the operator's overview shows it, in cents: what people's and companies'
/// wallets hold (`in_circulation`), the part of it held for what runs (`held`), and the fee
/// income the market has kept.
pub async fn market_money(conn: &impl ConnectionTrait) -> Result<(i64, i64, i64), AppError> {
    use crate::db::entity::ledger_accounts as accounts;
    use crate::db::enums::AccountKind;
    let (balance, held): (Option<i64>, Option<i64>) = accounts::Entity::find()
        .select_only()
        .column_as(sum_i64(accounts::Column::Balance), "balance")
        .column_as(sum_i64(accounts::Column::Held), "held")
        .filter(accounts::Column::Kind.is_in([AccountKind::User, AccountKind::Company]))
        .into_tuple()
        .one(conn)
        .await?
        .unwrap_or_default();
    let fee = ledger::account(conn, &AccountRef::MarketFee).await?.map_or(0, |a| a.balance);
    Ok((balance.unwrap_or(0), held.unwrap_or(0), fee))
}

/// True when the person's wallet keeps their account from being deleted (`balance_outstanding`):
/// a negative balance, coins held for something still running, or usage not billed yet.
pub async fn blocks_deletion(conn: &impl ConnectionTrait, user_id: &UserId) -> Result<bool, AppError> {
    let account = AccountRef::User(user_id.into());
    if let Some(a) = ledger::account(conn, &account).await?
        && (a.balance < 0 || a.held > 0)
    {
        return Ok(true);
    }
    Ok(unbilled_total(conn, &account).await? > 0)
}

/// Funds a company's wallet: moves coins from the administrator's personal wallet into the
/// company's (`POST /wallet/fund`; the ledger calls it a `top_up`). With an `Idempotency-Key` the
/// transfer's key is derived from it, so a retry never moves twice even when the HTTP layer's
/// record of the first answer is lost. Answers the company's entry.
pub async fn fund(conn: &impl ledger::Conn, auth: &Auth, req: TopUp, idempotency_key: Option<&str>, lang: Lang) -> Result<Entry, AppError> {
    let company = match auth.company() {
        None => return Err(AppError::Refused(Msg::CompanyContextRequired)),
        Some(_) if !auth.is_admin() => return Err(AppError::Refused(Msg::NotAdmin)),
        Some(c) => c.clone(),
    };
    let to = AccountRef::Company(company.clone());
    let key = match idempotency_key {
        Some(k) => format!("top_up:{}:{company}:{k}", auth.user_id),
        None => format!("top_up:{}", new_id()),
    };
    let spec = TransferSpec {
        from: AccountRef::User(auth.user_id.clone()),
        splits: vec![Split { account: to.clone(), amount: req.amount }],
        key,
        reference: Reference::new("top_up", company),
        memo: req.memo,
        metered: false,
    };
    let posted = ledger::transfer(conn, spec).await?;
    let entry = posted.entry_of(&to).cloned().ok_or_else(|| AppError::Internal(anyhow::anyhow!("top-up without the company's entry")))?;
    Ok(entry_view(entry, None, lang))
}

/// The top-up page's words: the operator's (the market's settings), or by default that coins
/// come as top-up codes from the people who run this market.
pub fn top_up_info(settings: &MarketSettings, lang: Lang) -> TopUpInfo {
    let (typed, default) = match lang {
        Lang::Zh => (&settings.how_to_get_coins_zh, "本市场的币由运营方发放：向运营方索取充值码，在下方兑换即可到账。"),
        Lang::En => (&settings.how_to_get_coins, "Coins on this market come from the people who run it: ask them for a top-up code and redeem it below."),
    };
    let typed = if typed.trim().is_empty() && lang == Lang::Zh { &settings.how_to_get_coins } else { typed };
    TopUpInfo { text: if typed.trim().is_empty() { default.to_string() } else { typed.trim().to_string() } }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runway_divides_available_by_the_burn() {
        assert_eq!(runway(1000, 0), None);
        assert_eq!(runway(1000, 1000), Some(3600));
        assert_eq!(runway(-5, 10), Some(0));
        assert_eq!(runway(7000, 1200), Some(21_000));
    }
}
