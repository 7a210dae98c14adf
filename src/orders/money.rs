//! An order's money: the hold of price × hours when the demand is posted, the minutes captured
//! from it once the demander confirms (the provider credited the price less the market fee in the
//! same transfer, the minute arithmetic of the rental meter, `apps::meter::cost`). Releasing what
//! is left is part of every transition that ends an order (`orders::machine::apply`).

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::apps::meter::cost;
use crate::billing::ledger::{self, AccountRef, HoldSpec, MarketCapture, Reference};
use crate::billing::memo::Memo;
use crate::config::OrdersConfig;
use crate::db::entity::orders;
use crate::error::AppError;
use crate::orders::model::Demand;

/// Holds `price × hours` on the demander's wallet until the longest the order can last (409 when
/// the wallet cannot). `request_key` (the `Idempotency-Key`) makes the hold's key, so a retried
/// post holds once.
pub async fn hold(conn: &impl ledger::Conn, s: &OrdersConfig, demander: &str, order_id: &str, d: &Demand, request_key: Option<&str>) -> Result<String, AppError> {
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
    Ok(held.hold.id)
}

/// Charges the whole minutes since confirmation up to `until` (never past the hours ordered) not
/// charged yet: one capture of the hold. The minutes are claimed first with a conditional UPDATE,
/// so two writers (the sweep and the demander's finish) never charge them twice.
pub async fn charge(conn: &impl ledger::Conn, o: &orders::Model, until: DateTime<Utc>) -> Result<(), AppError> {
    let (Some(from), Some(ends), Some(provider)) = (o.confirmed_at, o.ends_at, &o.provider_id) else { return Ok(()) };
    let total = ((until.min(ends) - from).num_seconds() / 60).max(0);
    let (k, m) = (o.billed_minutes, total - o.billed_minutes);
    if m <= 0 {
        return Ok(());
    }
    let amount = cost(o.price_per_hour, k, m);
    let claimed = orders::Entity::update_many()
        .col_expr(orders::Column::BilledMinutes, Expr::value(k + m))
        .col_expr(orders::Column::Billed, Expr::value(o.billed + amount))
        .filter(orders::Column::Id.eq(o.id.clone()))
        .filter(orders::Column::BilledMinutes.eq(k))
        .exec(conn)
        .await?;
    if claimed.rows_affected != 1 || amount == 0 {
        return Ok(());
    }
    ledger::capture_market(conn, MarketCapture {
        hold_id: o.hold_id.clone(),
        amount,
        provider: AccountRef::User(provider.clone().into()),
        fee_percent: o.fee_percent.clamp(0, 100) as u8,
        key: format!("order:{}:minutes:{k}-{}", o.id, k + m),
        memo: Memo::OrderMinutes(m).encode(),
        metered: true,
    })
    .await?;
    Ok(())
}
