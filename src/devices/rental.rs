//! A Z-CLOUD machine on another owner's server-group host is a rental (issue 29, finding 2),
//! held and charged through the wallet's ledger like an app rental (docs/wallet.md):
//!
//! - its price is the host's `price_per_hour` scaled by the largest share of the host it takes
//!   (cores, memory, GPUs), rounded up; a hold of `price × hours` on the creator's wallet (the
//!   company's in a company context) when it is created, 409 when the wallet cannot;
//! - the meter charges by the second the time the machine is seen running (between two reports
//!   of its host, never past the last one; a silence is not charged), the fraction of a cent
//!   carried, each capture crediting the host's owner the price less the market fee
//!   (`ledger::capture_seconds`, reference `zcloud:<machine id>`);
//! - the host's owner may end it: the renter is told (`zcloud_ending`), the machine stops after
//!   `devices.zcloud_notice_minutes`, is removed from the host and the rental is settled (final
//!   charge, the hold's rest released, `zcloud_ended`). Withdrawing the host from rent does the
//!   same for every machine rented on it; unlinking the host ends them at once;
//! - when its paid hours are up or its hold cannot pay, it is stopped and settled the same way.
//!
//! No HTTP types here.

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set};

use crate::billing::ledger::{self, AccountRef, HoldSpec, MeteredCapture, Reference};
use crate::billing::memo::Memo;
use crate::db::entity::{devices, zcloud_rentals as rentals};
use crate::db::enums::NotificationKind;
use crate::db::{for_update, now, write_txn};
use crate::devices::DevicesCtx;
use crate::devices::access::{Owner, managed};
use crate::devices::gpus::gpus_of;
use crate::devices::machines;
use crate::devices::model::*;
use crate::devices::notify::notify;
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::ids::{DeviceId, UserId};

/// The ledger's reference type of a Z-CLOUD rental (`ledger verify` checks its fees).
pub const REF_TYPE: &str = "zcloud";

pub(crate) fn account_of(o: &Owner) -> AccountRef {
    match o {
        Owner::User(u) => AccountRef::User(u.clone()),
        Owner::Company(c) => AccountRef::Company(c.clone().into()),
    }
}

/// The hourly price of a machine of `ask`'s size on `host`: the host's price times the largest
/// share of the host the machine takes (cores, memory, GPUs), rounded up to a whole cent.
pub fn price_of(host: &devices::Model, ask: &ZcloudAsk) -> i64 {
    let p = i128::from(host.price_per_hour.max(0));
    let share = |taken: i64, total: i64| -> i128 {
        if total <= 0 || taken <= 0 {
            return 0;
        }
        let (t, n) = (i128::from(taken.min(total)), i128::from(total));
        (p * t + n - 1) / n
    };
    let gpus = gpus_of(host).len() as i64;
    [share(ask.cpu_cores, host.cpu_cores), share(ask.memory_bytes, host.memory_bytes), share(ask.gpu_count, gpus)]
        .into_iter()
        .max()
        .unwrap_or(0) as i64
}

/// Starts the rental of a machine just made on another owner's host: holds `price × hours` from
/// the renter's wallet (409 when it cannot; the caller's transaction then rolls back).
pub(crate) async fn start(
    cx: &DevicesCtx,
    conn: &impl ledger::Conn,
    host: &devices::Model,
    machine: &devices::Model,
    renter: &Owner,
    provider: &Owner,
    created_by: &UserId,
    ask: &ZcloudAsk,
) -> Result<(), AppError> {
    let price = price_of(host, ask);
    let t = now();
    let ends = t + Duration::hours(ask.hours);
    let hold_id = if price > 0 {
        let held = ledger::hold(conn, HoldSpec {
            account: account_of(renter),
            amount: price * ask.hours,
            key: format!("{REF_TYPE}:{}:hold", machine.id),
            reference: Reference::new(REF_TYPE, machine.id.clone()),
            memo: Memo::RentalHold(ask.hours).encode(),
            expires_at: ends + Duration::hours(1),
            burn_per_hour: price,
        })
        .await?;
        ledger::set_end(conn, &held.hold.id, ends).await?;
        Some(held.hold.id)
    } else {
        None
    };
    rentals::ActiveModel {
        id: Set(machine.id.clone()),
        name: Set(machine.name.clone()),
        host_id: Set(host.id.clone()),
        renter: Set(account_of(renter).id()),
        provider: Set(account_of(provider).id()),
        created_by: Set(UserId::from(created_by)),
        price_per_hour: Set(price),
        hours: Set(ask.hours),
        fee_percent: Set(i32::from(cx.market_settings.current().market_fee_percent)),
        hold_id: Set(hold_id),
        status: Set(ZcloudRentalStatus::Running),
        started_at: Set(t),
        ends_at: Set(ends),
        metered_until: Set(t),
        seconds: Set(0),
        billed: Set(0),
        stop_at: Set(None),
        end_reason: Set(None),
        ended_at: Set(None),
    }
    .insert(conn)
    .await?;
    Ok(())
}

/// Charges the seconds from `metered_until` up to `until`, never past the paid time nor past the
/// machine's last report (its host's heartbeat speaks for it): one market capture of their cents,
/// the fraction of a cent carried (`ledger::capture_seconds`). The seconds are claimed first with
/// a conditional UPDATE; all or nothing: refused (409) when the hold cannot pay.
async fn charge(conn: &impl ledger::Conn, r: &rentals::Model, until: DateTime<Utc>) -> Result<(), AppError> {
    let seen = devices::Entity::find_by_id(r.id.clone()).one(conn).await?.and_then(|m| m.last_seen_at);
    let Some(seen) = seen else { return Ok(()) };
    let secs = (until.min(r.ends_at).min(seen) - r.metered_until).num_seconds();
    if secs <= 0 {
        return Ok(());
    }
    let k = r.seconds;
    let txn = ledger::begin(conn).await?;
    let result = async {
        let claimed = rentals::Entity::update_many()
            .col_expr(rentals::Column::Seconds, Expr::value(k + secs))
            .col_expr(rentals::Column::MeteredUntil, Expr::value(r.metered_until + Duration::seconds(secs)))
            .filter(rentals::Column::Id.eq(r.id.clone()))
            .filter(rentals::Column::Seconds.eq(k))
            .exec(&txn)
            .await?;
        let Some(hold) = r.hold_id.clone().filter(|_| claimed.rows_affected == 1) else { return Ok(()) };
        let amount = ledger::capture_seconds(&txn, MeteredCapture {
            hold_id: hold.into(),
            per_hour: r.price_per_hour,
            seconds: secs,
            provider: AccountRef::parse(&r.provider)?,
            fee_percent: r.fee_percent.clamp(0, 100) as u8,
            key: format!("{REF_TYPE}:{}:seconds:{k}-{}", r.id, k + secs),
            memo: Memo::RentalSeconds(secs).encode(),
            burn_per_hour: None,
        })
        .await?;
        rentals::Entity::update_many()
            .col_expr(rentals::Column::Billed, sea_orm::sea_query::ExprTrait::add(Expr::col(rentals::Column::Billed), amount))
            .filter(rentals::Column::Id.eq(r.id.clone()))
            .exec(&txn)
            .await?;
        Ok::<(), AppError>(())
    }
    .await;
    ledger::finish(txn, result).await
}

/// Skips the meter to `at` without charging (seconds nobody saw the machine running).
async fn skip(conn: &impl ConnectionTrait, r: &rentals::Model, at: DateTime<Utc>) -> Result<(), AppError> {
    let to = at.min(r.ends_at);
    if to > r.metered_until {
        rentals::Entity::update_many()
            .col_expr(rentals::Column::MeteredUntil, Expr::value(to))
            .filter(rentals::Column::Id.eq(r.id.clone()))
            .filter(rentals::Column::Seconds.eq(r.seconds))
            .exec(conn)
            .await?;
    }
    Ok(())
}

/// The rented machine `id` was made at `at`: its meter starts there (the time it was being made
/// is not charged).
pub(crate) async fn made(conn: &impl ConnectionTrait, id: &DeviceId, at: DateTime<Utc>) -> Result<(), AppError> {
    if let Some(r) = rentals::Entity::find_by_id(id.to_string()).one(conn).await? {
        skip(conn, &r, at).await?;
    }
    Ok(())
}

/// The host `host_id` reports again at `back` after a silence since `since` (longer than
/// `offline_after_secs`, or marked offline): the machines rented on it are charged up to `since`
/// and their meters skip the silence, whether or not the meter ran meanwhile.
pub(crate) async fn silence(conn: &impl ledger::Conn, host_id: &DeviceId, since: DateTime<Utc>, back: DateTime<Utc>) -> Result<(), AppError> {
    for r in active_on(conn, host_id).await? {
        if let Err(e) = charge(conn, &r, since).await {
            tracing::info!(rental = %r.id, error = %e, "zcloud rental: the hold cannot pay the seconds before a silence");
        }
        if let Some(r) = rentals::Entity::find_by_id(r.id.clone()).one(conn).await? {
            skip(conn, &r, back).await?;
        }
    }
    Ok(())
}

/// Whether the machine is running where the market can see it: online on an online host.
async fn seen_running(conn: &impl ConnectionTrait, r: &rentals::Model) -> Result<bool, AppError> {
    let machine = devices::Entity::find_by_id(r.id.clone()).one(conn).await?;
    let host = devices::Entity::find_by_id(r.host_id.clone()).one(conn).await?;
    Ok(machine.is_some_and(|m| m.status == DeviceStatus::Online) && host.is_some_and(|h| h.status == DeviceStatus::Online))
}

async fn locked(conn: &impl ConnectionTrait, id: &DeviceId) -> Result<Option<rentals::Model>, AppError> {
    Ok(for_update(conn, rentals::Entity::find_by_id(id.to_string())).one(conn).await?)
}

/// Ends a rental now: the seconds up to `until` the machine was seen running are charged (what
/// the hold cannot pay stays unpaid), the rest of the hold is released, the machine is removed
/// from its host and the renter told (`zcloud_ended`). The row must be locked.
async fn settle(conn: &impl ledger::Conn, r: &rentals::Model, reason: ZcloudEndReason, until: DateTime<Utc>) -> Result<(), AppError> {
    if r.status == ZcloudRentalStatus::Ended {
        return Ok(());
    }
    let machine = devices::Entity::find_by_id(r.id.clone()).one(conn).await?;
    if let Err(e) = charge(conn, r, until).await {
        tracing::info!(rental = %r.id, error = %e, "zcloud rental: the hold cannot pay its last seconds");
    }
    if let Some(h) = &r.hold_id {
        ledger::release(conn, h).await?;
    }
    rentals::Entity::update_many()
        .col_expr(rentals::Column::Status, Expr::value(ZcloudRentalStatus::Ended))
        .col_expr(rentals::Column::EndReason, Expr::value(r.end_reason.unwrap_or(reason)))
        .col_expr(rentals::Column::EndedAt, Expr::value(now()))
        .filter(rentals::Column::Id.eq(r.id.clone()))
        .exec(conn)
        .await?;
    if let Some(m) = machine {
        notify(conn, &m, NotificationKind::ZcloudEnded, None).await?;
        machines::remove(conn, &m).await?;
    }
    Ok(())
}

/// The renter deletes a rented machine: settled up to now and removed. False when `d` is not a
/// rented machine (the caller deletes it as usual).
pub(crate) async fn settle_machine(conn: &impl ledger::Conn, d: &devices::Model, reason: ZcloudEndReason) -> Result<bool, AppError> {
    if d.device_type != DeviceType::ZCloud {
        return Ok(false);
    }
    match locked(conn, &d.id).await? {
        Some(r) if r.status != ZcloudRentalStatus::Ended => {
            settle(conn, &r, reason, now()).await?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

async fn active_on(conn: &impl ConnectionTrait, host_id: &DeviceId) -> Result<Vec<rentals::Model>, AppError> {
    Ok(for_update(
        conn,
        rentals::Entity::find()
            .filter(rentals::Column::HostId.eq(host_id))
            .filter(rentals::Column::Status.ne(ZcloudRentalStatus::Ended))
            .order_by_asc(rentals::Column::StartedAt)
            .order_by_asc(rentals::Column::Id),
    )
    .all(conn)
    .await?)
}

/// The host is unlinked (it leaves the market, or its owner's account goes): every machine rented
/// on it ends at once, settled up to now.
pub(crate) async fn end_on_host_now(conn: &impl ledger::Conn, host: &devices::Model) -> Result<(), AppError> {
    for r in active_on(conn, &host.id).await? {
        settle(conn, &r, ZcloudEndReason::HostGone, now()).await?;
    }
    Ok(())
}

/// Notice to one running rental: it stops at `stop_at`; the renter is told (`zcloud_ending`).
async fn give_notice(conn: &impl ConnectionTrait, r: &rentals::Model, reason: ZcloudEndReason, stop_at: DateTime<Utc>) -> Result<(), AppError> {
    rentals::Entity::update_many()
        .col_expr(rentals::Column::Status, Expr::value(ZcloudRentalStatus::Ending))
        .col_expr(rentals::Column::StopAt, Expr::value(Some(stop_at)))
        .col_expr(rentals::Column::EndReason, Expr::value(Some(reason)))
        .filter(rentals::Column::Id.eq(r.id.clone()))
        .filter(rentals::Column::Status.eq(ZcloudRentalStatus::Running))
        .exec(conn)
        .await?;
    if let Some(m) = devices::Entity::find_by_id(r.id.clone()).one(conn).await? {
        notify(conn, &m, NotificationKind::ZcloudEnding, Some(&stop_at.format("%Y-%m-%d %H:%M").to_string())).await?;
    }
    Ok(())
}

fn notice(cx: &DevicesCtx) -> Duration {
    Duration::minutes(cx.settings.zcloud_notice_minutes as i64)
}

/// The host was withdrawn from rent: no new machines are placed on it (placement asks for a shared,
/// rentable host), and the running rentals get the notice.
pub(crate) async fn withdrawn(cx: &DevicesCtx, conn: &impl ConnectionTrait, host: &devices::Model) -> Result<(), AppError> {
    let stop_at = now() + notice(cx);
    for r in active_on(conn, &host.id).await?.into_iter().filter(|r| r.status == ZcloudRentalStatus::Running) {
        give_notice(conn, &r, ZcloudEndReason::Withdrawn, stop_at).await?;
    }
    Ok(())
}

fn shown(r: &rentals::Model, m: Option<&devices::Model>) -> ZcloudRental {
    ZcloudRental {
        machine_id: r.id.clone().into(),
        name: r.name.clone(),
        renter_kind: if r.renter.starts_with("company:") { "company" } else { "user" }.to_string(),
        status: r.status,
        price_per_hour: r.price_per_hour,
        hours: r.hours,
        billed: r.billed,
        cpu_cores: m.map_or(0, |m| m.cpu_cores),
        memory_bytes: m.map_or(0, |m| m.memory_bytes),
        gpu_count: m.map_or(0, |m| m.gpu_count),
        gpu_model: m.map_or(String::new(), |m| m.gpu_model.clone()),
        started_at: r.started_at,
        ends_at: r.ends_at,
        stop_at: r.stop_at,
    }
}

/// Z-CLOUD machines rented and running now (the operator's overview).
pub async fn running_count(conn: &impl ConnectionTrait) -> Result<u64, AppError> {
    use sea_orm::PaginatorTrait;
    Ok(rentals::Entity::find().filter(rentals::Column::Status.eq(ZcloudRentalStatus::Running)).count(conn).await?)
}

/// The machines other owners run on the caller's host (running or ending), oldest first.
pub async fn on_host(cx: &DevicesCtx, auth: &Auth, host_id: &DeviceId) -> Result<Vec<ZcloudRental>, AppError> {
    let owner = crate::devices::access::manager(auth)?;
    let host = devices::Entity::find_by_id(host_id.to_string())
        .filter(crate::devices::access::owned_by(&owner))
        .one(&cx.db)
        .await?
        .ok_or(AppError::Refused(Msg::DeviceNotFound))?;
    let rows = rentals::Entity::find()
        .filter(rentals::Column::HostId.eq(host.id.clone()))
        .filter(rentals::Column::Status.ne(ZcloudRentalStatus::Ended))
        .order_by_asc(rentals::Column::StartedAt)
        .order_by_asc(rentals::Column::Id)
        .all(&cx.db)
        .await?;
    let ids: Vec<DeviceId> = rows.iter().map(|r| r.id.clone()).collect();
    let machines = devices::Entity::find().filter(devices::Column::Id.is_in(ids)).all(&cx.db).await?;
    Ok(rows.iter().map(|r| shown(r, machines.iter().find(|m| m.id == r.id))).collect())
}

/// The host's owner ends a machine rented on their host: the renter is told, and the machine is
/// stopped after the notice period by the meter (404 when no such rental runs on this host; 409
/// when it is already ending).
pub async fn end_by_host(cx: &DevicesCtx, auth: &Auth, host_id: &DeviceId, machine_id: &DeviceId) -> Result<ZcloudRental, AppError> {
    let txn = write_txn(&cx.db).await?;
    let (host, _) = managed(&txn, auth, host_id).await?;
    let r = locked(&txn, machine_id)
        .await?
        .filter(|r| r.host_id == host.id && r.status != ZcloudRentalStatus::Ended)
        .ok_or(AppError::Refused(Msg::ZcloudRentalNotFound))?;
    if r.status == ZcloudRentalStatus::Ending {
        return Err(AppError::Refused(Msg::ZcloudRentalEnding));
    }
    give_notice(&txn, &r, ZcloudEndReason::HostOwner, now() + notice(cx)).await?;
    let r = rentals::Entity::find_by_id(r.id.clone()).one(&txn).await?.ok_or(AppError::Refused(Msg::ZcloudRentalNotFound))?;
    let m = devices::Entity::find_by_id(r.id.clone()).one(&txn).await?;
    txn.commit().await?;
    Ok(shown(&r, m.as_ref()))
}

/// The Z-CLOUD rental meter (a shared job, and tests call it as if at `at`): charges the running
/// rentals' seconds up to `at` (up to their last report), and stops and settles those whose notice ran out, whose paid time
/// is up, whose hold cannot pay or whose machine failed to be made. Returns how many it ended.
pub async fn meter(db: &DatabaseConnection, at: DateTime<Utc>) -> Result<usize, AppError> {
    let active = rentals::Entity::find().filter(rentals::Column::Status.ne(ZcloudRentalStatus::Ended)).all(db).await?;
    let mut ended = 0;
    for r in active {
        let txn = write_txn(db).await?;
        let Some(r) = locked(&txn, &r.id).await?.filter(|r| r.status != ZcloudRentalStatus::Ended) else { continue };
        let machine = devices::Entity::find_by_id(r.id.clone()).one(&txn).await?;
        if machine.as_ref().is_none_or(|m| m.status == DeviceStatus::Failed) {
            settle(&txn, &r, ZcloudEndReason::Failed, at).await?;
            ended += 1;
        } else if let Some(stop) = r.stop_at.filter(|s| *s <= at) {
            settle(&txn, &r, ZcloudEndReason::HostOwner, stop).await?;
            ended += 1;
        } else if r.ends_at <= at {
            settle(&txn, &r, ZcloudEndReason::PaidUp, r.ends_at).await?;
            ended += 1;
        } else if let Err(e) = charge(&txn, &r, at).await {
            tracing::info!(rental = %r.id, error = %e, "zcloud rental ended: its hold cannot pay");
            settle(&txn, &r, ZcloudEndReason::PaidUp, r.metered_until).await?;
            ended += 1;
        } else if !seen_running(&txn, &r).await? {
            // Charged up to its last report; the time it is not seen running is not.
            let r = rentals::Entity::find_by_id(r.id.clone()).one(&txn).await?.unwrap_or(r);
            skip(&txn, &r, at).await?;
        }
        txn.commit().await?;
    }
    Ok(ended)
}

/// A Z-CLOUD rental's ledger title: "Z-CLOUD machine: <its name>" (`billing::titles`).
pub struct ZcloudTitles;

#[async_trait::async_trait]
impl crate::billing::titles::Titler for ZcloudTitles {
    fn ref_type(&self) -> &'static str {
        "zcloud"
    }

    async fn titles(&self, conn: &sea_orm::DatabaseExecutor<'_>, ids: &[String], lang: crate::lang::Lang) -> Result<Vec<(String, String)>, AppError> {
        let rows = rentals::Entity::find().filter(rentals::Column::Id.is_in(ids.iter().cloned())).all(conn).await?;
        Ok(rows
            .into_iter()
            .map(|z| {
                let title = if lang == crate::lang::Lang::Zh { format!("Z-CLOUD 云主机：{}", z.name) } else { format!("Z-CLOUD machine: {}", z.name) };
                (z.id.into_string(), title)
            })
            .collect())
    }

    /// The person who created the machine: a company's bill names them.
    async fn makers(&self, conn: &sea_orm::DatabaseExecutor<'_>, ids: &[String]) -> Result<Vec<(String, UserId)>, AppError> {
        use sea_orm::QuerySelect;
        Ok(rentals::Entity::find()
            .select_only()
            .columns([rentals::Column::Id, rentals::Column::CreatedBy])
            .filter(rentals::Column::Id.is_in(ids.iter().cloned()))
            .into_tuple()
            .all(conn)
            .await?)
    }
}
