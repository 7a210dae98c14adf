//! An order's money: the hold of price × hours when the demand is posted, the seconds its app is
//! seen running captured from it once the demander confirms (the provider credited the price less
//! the market fee in the same transfer, by the rental meter's rule). Releasing what is left is
//! part of every transition that ends an order (`orders::machine::apply`).

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::apps::seen;
use crate::billing::ledger::{self, AccountRef, HoldSpec, MeteredCapture, Reference};
use crate::billing::memo::Memo;
use crate::config::OrdersConfig;
use crate::db::entity::orders;
use crate::error::AppError;
use crate::orders::model::Demand;
use crate::ids::{OrderId, UserId};

/// Holds `price × hours` on the demander's wallet until the longest the order can last (409 when
/// the wallet cannot). `request_key` (the `Idempotency-Key`) makes the hold's key, so a retried
/// post holds once.
pub async fn hold(conn: &impl ledger::Conn, s: &OrdersConfig, demander: &UserId, order_id: &OrderId, d: &Demand, request_key: Option<&str>) -> Result<String, AppError> {
    let (hours, price) = (d.hours, d.price_per_hour);
    let longest = s.pending_timeout_secs + s.start_timeout_secs + s.confirm_timeout_secs + 3600;
    let key = match request_key {
        Some(k) => format!("order:{demander}:{k}:hold"),
        None => format!("order:{order_id}:hold"),
    };
    let held = ledger::hold(conn, HoldSpec {
        account: AccountRef::User(demander.into()),
        amount: price * hours,
        key,
        reference: Reference::new("order", order_id.to_string()),
        memo: Memo::OrderHold(hours).encode(),
        expires_at: crate::db::now() + Duration::seconds(longest as i64) + Duration::hours(hours),
        burn_per_hour: 0,
    })
    .await?;
    Ok(held.hold.id.into())
}

/// Charges the seconds its app was seen running since confirmation up to `at` not charged yet
/// (the rental meter's rule, as the installation's meter counts them: between two reports of the
/// box, never past its last one, a silence never charged; `seen::running_secs`), never more than
/// the hours ordered: one capture of their cents, the fraction of a cent carried
/// (`ledger::capture_seconds`). The seconds are claimed first with a conditional UPDATE, so two
/// writers (the sweep and the demander's finish) never charge them twice; all or nothing.
pub async fn charge(conn: &impl ledger::Conn, o: &orders::Model, at: DateTime<Utc>) -> Result<(), AppError> {
    let (Some(_), Some(provider), Some(inst)) = (o.confirmed_at, &o.provider_id, &o.installation_id) else { return Ok(()) };
    let at = o.ends_at.map_or(at, |e| e.min(at));
    let Some(seen) = seen::running_secs(conn, inst, at).await? else { return Ok(()) };
    let total = (seen - o.seen_base).clamp(0, o.hours.saturating_mul(3600));
    let (k, s) = (o.billed_seconds, total - o.billed_seconds);
    if s <= 0 {
        return Ok(());
    }
    let txn = ledger::begin(conn).await?;
    let result = async {
        let claimed = orders::Entity::update_many()
            .col_expr(orders::Column::BilledSeconds, Expr::value(k + s))
            .filter(orders::Column::Id.eq(o.id.clone()))
            .filter(orders::Column::BilledSeconds.eq(k))
            .exec(&txn)
            .await?;
        if claimed.rows_affected != 1 {
            return Ok(());
        }
        let amount = ledger::capture_seconds(&txn, MeteredCapture {
            hold_id: o.hold_id.clone().into(),
            per_hour: o.price_per_hour,
            seconds: s,
            provider: AccountRef::User(provider.clone().into()),
            fee_percent: o.fee_percent.clamp(0, 100) as u8,
            key: format!("order:{}:seconds:{k}-{}", o.id, k + s),
            memo: Memo::OrderSeconds(s).encode(),
            burn_per_hour: None,
        })
        .await?;
        orders::Entity::update_many()
            .col_expr(orders::Column::Billed, sea_orm::sea_query::ExprTrait::add(Expr::col(orders::Column::Billed), amount))
            .filter(orders::Column::Id.eq(o.id.clone()))
            .exec(&txn)
            .await?;
        Ok::<(), AppError>(())
    }
    .await;
    ledger::finish(txn, result).await
}

/// Where the order's meter starts when the demander confirms at `at`: the seconds its app had
/// been seen running by then are not charged.
pub async fn seen_base(conn: &impl ledger::Conn, o: &orders::Model, at: DateTime<Utc>) -> Result<i64, AppError> {
    let Some(inst) = &o.installation_id else { return Ok(0) };
    Ok(seen::running_secs(conn, inst, at).await?.unwrap_or(0))
}
