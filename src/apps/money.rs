//! A rental's money as its installation moves (src/apps/rental.rs rents, this charges): the
//! meter runs only while the app is `running`, each posting a capture of the rental's hold that
//! credits the provider the price less the market fee in the same transfer (the wallet's ledger,
//! docs/wallet.md); leaving the rental releases what is left of the hold.

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use crate::apps::meter::unmetered_secs;
use crate::apps::model::{AppStatus, InstallKind};
use crate::apps::notify;
use crate::billing::ledger::{self, AccountRef, HoldSpec, MeteredCapture, Reference};
use crate::billing::memo::Memo;
use crate::db::entity::{devices, installations};
use crate::db::enums::{HoldStatus, NotificationKind};
use crate::db::now;
use crate::error::{AppError, Msg};
use crate::ids::InstallationId;

/// Charges the seconds the rental was seen running from `metered_until` up to `until`, never
/// past its end nor past the device's last report (a second nobody saw running is not charged):
/// one capture of their cents with the fraction of a cent carried from before
/// (`ledger::capture_seconds`), the provider credited less the fee. The seconds are claimed first
/// with a conditional UPDATE of the meter's position, so two writers (the meter job, a
/// transition, another instance) never charge them twice; the capture's key names them. All or
/// nothing: refused (409) when the hold cannot pay, leaving the meter as it was. An order's
/// installation (no price of its own) counts its seconds the same way; the order charges them
/// (`seen::running_secs`).
pub async fn charge(conn: &impl ledger::Conn, r: &installations::Model, until: DateTime<Utc>) -> Result<(), AppError> {
    let price = r.rent_price_per_hour.unwrap_or(0);
    let seen = devices::Entity::find_by_id(r.device_id.clone()).one(conn).await?.and_then(|d| d.last_seen_at);
    let secs = unmetered_secs(r, until, seen);
    let (Some(from), true) = (r.metered_until, secs > 0) else { return Ok(()) };
    let k = r.rent_seconds;
    let txn = ledger::begin(conn).await?;
    let result = async {
        let claimed = installations::Entity::update_many()
            .col_expr(installations::Column::RentSeconds, Expr::value(k + secs))
            .col_expr(installations::Column::MeteredUntil, Expr::value(from + Duration::seconds(secs)))
            .filter(installations::Column::Id.eq(r.id.clone()))
            .filter(installations::Column::RentSeconds.eq(k))
            .exec(&txn)
            .await?;
        let Some(hold) = r.hold_id.clone().filter(|_| claimed.rows_affected == 1 && price > 0) else { return Ok(()) };
        let amount = ledger::capture_seconds(&txn, MeteredCapture {
            hold_id: hold.into(),
            per_hour: price,
            seconds: secs,
            provider: AccountRef::parse(r.rent_provider.as_deref().unwrap_or(""))?,
            fee_percent: r.rent_fee_percent.unwrap_or(0).clamp(0, 100) as u8,
            key: format!("rental:{}:seconds:{k}-{}", r.id, k + secs),
            memo: Memo::RentalSeconds(secs).encode(),
        })
        .await?;
        installations::Entity::update_many()
            .col_expr(installations::Column::Billed, sea_orm::sea_query::ExprTrait::add(Expr::col(installations::Column::Billed), amount))
            .filter(installations::Column::Id.eq(r.id.clone()))
            .exec(&txn)
            .await?;
        Ok::<(), AppError>(())
    }
    .await;
    ledger::finish(txn, result).await
}

/// Whether a rental may run again (start, resume, restart). One whose paid time is up or whose
/// hold can no longer pay (spent, expired, released) is renewed first when it is kept stopped or
/// suspended: a new hold of its price for as many hours as it was rented for (409 when the wallet
/// cannot hold it), its end moved that far from now; anything else is refused, so a rental is never
/// run for free.
pub async fn may_run(conn: &impl ledger::Conn, r: &installations::Model) -> Result<(), AppError> {
    if r.kind != InstallKind::Rent {
        return Ok(());
    }
    let t = now();
    let ended = r.rent_ends_at.is_some_and(|e| e <= t);
    let spent = match &r.hold_id {
        Some(h) => ledger::hold_of(conn, h).await?.status != HoldStatus::Pending,
        None => false,
    };
    if !(ended || spent) {
        return Ok(());
    }
    if !matches!(r.status, AppStatus::Suspended | AppStatus::Stopped) {
        return Err(AppError::Refused(Msg::RentalSpent));
    }
    renew(conn, r, t).await
}

/// A new block of the rental's hours: held from the renter's wallet (the same account as the first
/// hold), the old hold's remainder released, the end moved to `t + hours`. Its key is derived from
/// the end it replaces, so a retried resume holds once.
async fn renew(conn: &impl ledger::Conn, r: &installations::Model, t: DateTime<Utc>) -> Result<(), AppError> {
    let (Some(price), Some(old)) = (r.rent_price_per_hour, &r.hold_id) else { return Err(AppError::Refused(Msg::RentalSpent)) };
    let hours = r.rent_hours.unwrap_or(1).max(1);
    let first = ledger::hold_of(conn, old).await?;
    let ends = t + Duration::hours(hours);
    let held = ledger::hold(conn, HoldSpec {
        account: AccountRef::parse(&first.account_id)?,
        amount: price * hours,
        key: format!("rental:{}:renew:{}", r.id, r.rent_ends_at.map_or(0, |e| e.timestamp())),
        reference: Reference::new("rental", r.id.clone()),
        memo: Memo::RentalHold(hours).encode(),
        expires_at: ends + Duration::hours(1),
        burn_per_hour: 0,
    })
    .await?;
    ledger::release(conn, old).await?;
    ledger::set_end(conn, &held.hold.id, ends).await?;
    installations::Entity::update_many()
        .col_expr(installations::Column::HoldId, Expr::value(held.hold.id))
        .col_expr(installations::Column::RentEndsAt, Expr::value(ends))
        .filter(installations::Column::Id.eq(r.id.clone()))
        .filter(installations::Column::HoldId.eq(old.clone()))
        .exec(conn)
        .await?;
    Ok(())
}

/// What a transition means for a rental's money: the meter runs only while `running`; leaving
/// the rental (uninstall, its end, a failed install) releases what is left of the hold.
pub async fn on_transition(conn: &impl ledger::Conn, before: &installations::Model, after: &installations::Model) -> Result<(), AppError> {
    use AppStatus::*;
    if after.kind != InstallKind::Rent {
        return Ok(());
    }
    let t = now();
    if after.status == Running && before.status != Running {
        set_meter(conn, &after.id, Some(t)).await?;
        if let (Some(h), Some(p)) = (&after.hold_id, after.rent_price_per_hour) {
            ledger::set_burn(conn, h, p).await?;
        }
    } else if before.status == Running && after.status != Running {
        charge(conn, after, t).await?;
        set_meter(conn, &after.id, None).await?;
        if let Some(h) = &after.hold_id {
            ledger::set_burn(conn, h, 0).await?;
        }
    }
    if matches!(after.status, Uninstalling | Deleting | ShuttingDown | RentFailed | NotInstall)
        && let Some(h) = &after.hold_id
    {
        ledger::release(conn, h).await?;
    }
    if after.status == NotInstall && before.status != NotInstall {
        notify::send(conn, after, NotificationKind::RentalEnded).await?;
        notify::send_provider(conn, after, NotificationKind::RentalEnded).await?;
    }
    Ok(())
}

/// The device stopped reporting (offline or gone): the minutes up to its last heartbeat are
/// charged and the meter pauses (a minute nobody saw running is not charged).
pub async fn pause(conn: &impl ledger::Conn, r: &installations::Model, last_seen: DateTime<Utc>) -> Result<(), AppError> {
    charge(conn, r, last_seen).await?;
    halt(conn, r).await
}

/// Stops the meter without charging (the hold cannot pay what is left: the rental is suspended).
pub async fn halt(conn: &impl ledger::Conn, r: &installations::Model) -> Result<(), AppError> {
    set_meter(conn, &r.id, None).await?;
    if let Some(h) = &r.hold_id {
        ledger::set_burn(conn, h, 0).await?;
    }
    Ok(())
}

/// The device reports again and the app still runs: the meter starts again at `at`.
pub async fn resume(conn: &impl ledger::Conn, r: &installations::Model, at: DateTime<Utc>) -> Result<(), AppError> {
    set_meter(conn, &r.id, Some(at)).await?;
    if let (Some(h), Some(p)) = (&r.hold_id, r.rent_price_per_hour) {
        ledger::set_burn(conn, h, p).await?;
    }
    Ok(())
}

async fn set_meter(conn: &impl ConnectionTrait, id: &InstallationId, at: Option<DateTime<Utc>>) -> Result<(), AppError> {
    installations::Entity::update_many()
        .col_expr(installations::Column::MeteredUntil, Expr::value(at))
        .filter(installations::Column::Id.eq(id))
        .exec(conn)
        .await?;
    Ok(())
}
