//! A rental's money as its installation moves (src/apps/rental.rs rents, this charges): the
//! meter runs only while the app is `running`, each posting a capture of the rental's hold that
//! credits the provider the price less the market fee in the same transfer (the wallet's ledger,
//! docs/wallet.md); leaving the rental releases what is left of the hold.
//!
//! One call per change: [`plan`] says what a change of the installation means for its money
//! (pure, a table: `tests` below), and [`settle`] carries that plan out in as few statements as
//! it can. Every writer (a transition, a box's silence, the meter job) calls
//! `settle(conn, &row, plan(&row, what happened))`.

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use crate::apps::meter::{cents, unmetered_secs};
use crate::apps::model::{AppStatus, InstallKind};
use crate::apps::notify;
use crate::billing::ledger::{self, AccountRef, HoldSpec, MeteredCapture, Reference};
use crate::billing::memo::Memo;
use crate::db::entity::{devices, installations};
use crate::db::enums::{HoldStatus, NotificationKind};
use crate::db::now;
use crate::error::{AppError, Msg};

/// What happened to an installation, as its money sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Happened {
    /// It moved from `from` to the state its row has now, at `at` (`state::apply`).
    Moved { from: AppStatus, at: DateTime<Utc> },
    /// Its box was silent since `since` and beats again (its last report now `seen`), still
    /// reporting it running or not: the seconds up to the silence are charged and the meter
    /// pauses, or starts again from `seen` (a silence is never charged, issue 29).
    Silent { since: DateTime<Utc>, seen: Option<DateTime<Utc>>, running: bool },
    /// The meter job at `at`: charged up to then while the box reports (`online`), only up to
    /// its last report (`seen`) once it stopped, and the meter then pauses; a paused meter of a
    /// running rental starts again while its box reports.
    Tick { at: DateTime<Utc>, online: bool, seen: Option<DateTime<Utc>> },
}

/// Where the meter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meter {
    /// It stays where it is (after what is charged).
    Keep,
    /// It runs from this moment.
    Run(DateTime<Utc>),
    /// It stops (nothing more is counted until it runs again).
    Stop,
}

/// How fast the rental's hold burns from now on (the runway, docs/wallet.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Burn {
    Keep,
    /// Cents an hour: the price while it runs, 0 while it does not.
    Set(i64),
}

/// When the hold cannot pay the seconds charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The change is refused (409): the caller's transaction carries the refusal.
    Fail,
    /// The seconds stay unpaid and the meter stops (burning nothing): [`Settled::Halted`], and the
    /// caller suspends the rental.
    Halt,
}

/// What a change means for a rental's money. `settle` carries it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Charge the seconds seen running up to this moment (never past the rental's end nor its
    /// box's last report).
    pub charge_to: Option<DateTime<Utc>>,
    /// The box's last report, when the change knows it (else `settle` reads it to charge).
    pub seen: Option<DateTime<Utc>>,
    pub meter: Meter,
    pub burn: Burn,
    /// What is left of the hold goes back to the renter (the rental is over, or never began).
    pub release: bool,
    /// The renter and the provider are told that the rental ended.
    pub notify_end: bool,
    pub refused: Refused,
}

impl Plan {
    /// Nothing to do: no statement at all.
    pub const NOTHING: Plan =
        Plan { charge_to: None, seen: None, meter: Meter::Keep, burn: Burn::Keep, release: false, notify_end: false, refused: Refused::Fail };
}

/// How `settle` went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// As planned.
    Done,
    /// The hold could not pay (with [`Refused::Halt`]): nothing was charged, the meter stopped.
    Halted,
}

/// What `happened` means for the money of `r` (its row as it is now). Pure.
pub fn plan(r: &installations::Model, happened: Happened) -> Plan {
    use AppStatus::*;
    let mut p = Plan::NOTHING;
    if r.kind != InstallKind::Rent {
        return p;
    }
    let price = Burn::Set(r.rent_price_per_hour.unwrap_or(0));
    let metered = r.metered_until.is_some();
    match happened {
        Happened::Moved { from, at } => {
            if r.status == Running && from != Running {
                (p.meter, p.burn) = (Meter::Run(at), price);
            } else if from == Running && r.status != Running {
                (p.charge_to, p.meter, p.burn) = (Some(at), Meter::Stop, Burn::Set(0));
            }
            // Leaving the rental (uninstalled, ended, a failed install) releases the hold.
            p.release = r.hold_id.is_some() && matches!(r.status, Uninstalling | Deleting | ShuttingDown | RentFailed | NotInstall);
            p.notify_end = r.status == NotInstall && from != NotInstall;
        }
        Happened::Silent { since, seen, running } if r.status == Running => {
            p.refused = Refused::Halt;
            p.seen = seen;
            if metered {
                (p.charge_to, p.meter, p.burn) = (Some(since), Meter::Stop, Burn::Set(0));
            }
            if let (true, Some(seen)) = (running, seen) {
                (p.meter, p.burn) = (Meter::Run(seen), price);
            }
        }
        Happened::Tick { at, online, seen } if r.status == Running => {
            p.refused = Refused::Halt;
            p.seen = seen;
            match (metered, online) {
                (true, true) => p.charge_to = Some(at),
                // The box stopped reporting: charged up to its last report, and the meter pauses.
                (true, false) => (p.charge_to, p.meter, p.burn) = (Some(seen.unwrap_or(at).min(at)), Meter::Stop, Burn::Set(0)),
                (false, true) => (p.meter, p.burn) = (Meter::Run(at), price),
                (false, false) => {}
            }
        }
        Happened::Silent { .. } | Happened::Tick { .. } => {}
    }
    p
}

/// Carries out `plan` for `r` (its row as it is now, read in the caller's transaction): the
/// seconds charged, the meter moved and the hold's burn set, then the release and the ending
/// notices. The seconds are charged as [`charge`] says; the meter's new position goes in the same
/// conditional UPDATE that claims them, and the burn in the same ledger call that captures them.
/// A plan that changes nothing costs no statement.
pub async fn settle(conn: &impl ledger::Conn, r: &installations::Model, plan: Plan) -> Result<Settled, AppError> {
    let meter = match plan.meter {
        Meter::Keep => None,
        Meter::Run(at) => Some(Some(at)),
        // Already stopped: nothing to write.
        Meter::Stop => r.metered_until.map(|_| None),
    };
    let burn = match (plan.burn, &r.hold_id) {
        (Burn::Set(b), Some(_)) => Some(b),
        _ => None,
    };
    let secs = match plan.charge_to {
        Some(until) => unmetered(conn, r, until, plan.seen).await?,
        None => 0,
    };
    let mut settled = Settled::Done;
    if secs > 0 {
        match charge(conn, r, secs, meter, burn).await {
            Ok(()) => {}
            Err(e) if plan.refused == Refused::Halt => {
                // The hold cannot pay: these seconds stay unpaid, and the meter stops so that no
                // later change charges them again.
                tracing::info!(installation = %r.id, error = %e, "the rental's hold cannot pay: its meter stops");
                move_meter(conn, r, Some(None), Some(0)).await?;
                settled = Settled::Halted;
            }
            Err(e) => return Err(e),
        }
    } else {
        move_meter(conn, r, meter, burn).await?;
    }
    if plan.release
        && let Some(h) = &r.hold_id
    {
        ledger::release(conn, h).await?;
    }
    if plan.notify_end {
        notify::send(conn, r, NotificationKind::RentalEnded).await?;
        notify::send_provider(conn, r, NotificationKind::RentalEnded).await?;
    }
    Ok(settled)
}

/// The seconds the rental was seen running from its meter's position up to `until`, never past
/// its end nor past its box's last report (`seen`, read from the box when not given).
async fn unmetered(conn: &impl ConnectionTrait, r: &installations::Model, until: DateTime<Utc>, seen: Option<DateTime<Utc>>) -> Result<i64, AppError> {
    let Some(from) = r.metered_until else { return Ok(0) };
    if r.rent_ends_at.map_or(until, |e| e.min(until)) <= from {
        return Ok(0);
    }
    let seen = match seen {
        Some(s) => Some(s),
        None => devices::Entity::find_by_id(r.device_id.clone()).one(conn).await?.and_then(|d| d.last_seen_at),
    };
    Ok(unmetered_secs(r, until, seen))
}

/// Sets the meter's position (`Some(None)`: stopped) and the hold's burn, where asked.
async fn move_meter(conn: &impl ConnectionTrait, r: &installations::Model, meter: Option<Option<DateTime<Utc>>>, burn: Option<i64>) -> Result<(), AppError> {
    if let Some(at) = meter {
        installations::Entity::update_many()
            .col_expr(installations::Column::MeteredUntil, Expr::value(at))
            .filter(installations::Column::Id.eq(r.id.clone()))
            .exec(conn)
            .await?;
    }
    if let (Some(b), Some(h)) = (burn, &r.hold_id) {
        ledger::set_burn(conn, h, b).await?;
    }
    Ok(())
}

/// Charges `secs` seconds from the meter's position: one capture of their cents with the fraction
/// of a cent carried from before (`ledger::capture_seconds`), the provider credited less the fee.
/// The seconds are claimed first with a conditional UPDATE of the meter's position (the meter's
/// new place and the cents billed in the same statement), so two writers (the meter job, a
/// transition, another instance) never charge them twice; the capture's key names them
/// (`rental:{id}:seconds:{k}-{k+secs}`), and it sets the hold's burn as it captures. All or
/// nothing: refused (409) when the hold cannot pay, leaving the meter as it was. An order's
/// installation (no price of its own) counts its seconds the same way; the order charges them
/// (`seen::running_secs`).
async fn charge(
    conn: &impl ledger::Conn,
    r: &installations::Model,
    secs: i64,
    meter: Option<Option<DateTime<Utc>>>,
    burn: Option<i64>,
) -> Result<(), AppError> {
    let Some(from) = r.metered_until else { return Ok(()) };
    let price = r.rent_price_per_hour.unwrap_or(0);
    let k = r.rent_seconds;
    let position = meter.unwrap_or(Some(from + Duration::seconds(secs)));
    let Some(hold) = r.hold_id.clone().filter(|_| price > 0) else {
        // Nothing to capture (an order's installation, a free rental): the claim alone.
        if claim(conn, r, secs, position, 0).await? {
            return move_meter(conn, r, None, burn).await;
        }
        return move_meter(conn, r, meter, burn).await;
    };
    // What the ledger's carry makes of these seconds when those before them were charged at this
    // price (always, for a rental): billed with the claim, corrected below if the ledger says else.
    let expected = cents(price, k, secs);
    let txn = ledger::begin(conn).await?;
    let result = async {
        if !claim(&txn, r, secs, position, expected).await? {
            // Another writer charged these seconds: the meter and the burn move as planned.
            return move_meter(&txn, r, meter, burn).await;
        }
        let amount = ledger::capture_seconds(&txn, MeteredCapture {
            hold_id: hold,
            per_hour: price,
            seconds: secs,
            provider: AccountRef::parse(r.rent_provider.as_deref().unwrap_or(""))?,
            fee_percent: r.rent_fee_percent.unwrap_or(0).clamp(0, 100) as u8,
            key: format!("rental:{}:seconds:{k}-{}", r.id, k + secs),
            memo: Memo::RentalSeconds(secs).encode(),
            burn_per_hour: burn,
        })
        .await?;
        if amount != expected {
            installations::Entity::update_many()
                .col_expr(installations::Column::Billed, sea_orm::sea_query::ExprTrait::add(Expr::col(installations::Column::Billed), amount - expected))
                .filter(installations::Column::Id.eq(r.id.clone()))
                .exec(&txn)
                .await?;
        }
        Ok::<(), AppError>(())
    }
    .await;
    ledger::finish(txn, result).await
}

/// Claims seconds `k .. k + secs` of the meter (`k` its position as read): one conditional
/// UPDATE that moves the count, puts the meter at `position` and adds `billed`; false when
/// another writer moved the count first.
async fn claim(conn: &impl ConnectionTrait, r: &installations::Model, secs: i64, position: Option<DateTime<Utc>>, billed: i64) -> Result<bool, AppError> {
    use installations::Column as I;
    let mut q = installations::Entity::update_many()
        .col_expr(I::RentSeconds, Expr::value(r.rent_seconds + secs))
        .col_expr(I::MeteredUntil, Expr::value(position));
    if billed != 0 {
        q = q.col_expr(I::Billed, sea_orm::sea_query::ExprTrait::add(Expr::col(I::Billed), billed));
    }
    let claimed = q.filter(I::Id.eq(r.id.clone())).filter(I::RentSeconds.eq(r.rent_seconds)).exec(conn).await?;
    Ok(claimed.rows_affected == 1)
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

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration, TimeZone, Utc};

    use super::{Burn, Happened, Meter, Plan, Refused, plan};
    use crate::apps::model::{AppStatus, InstallKind};
    use crate::db::entity::installations;
    use crate::db::enums::Desired;
    use AppStatus::*;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 12, 0, 0).unwrap()
    }

    /// A rental at 600 cents an hour in `status`, with a hold or not (an order's installation has
    /// neither price nor hold), its meter running since `t0` or stopped.
    fn rental(status: AppStatus, hold: bool, metered: bool) -> installations::Model {
        installations::Model {
            id: "i1".into(),
            app_id: "grafana".into(),
            device_id: "d1".into(),
            owner_user_id: Some("u1".into()),
            owner_company_id: None,
            created_by: "u1".into(),
            kind: InstallKind::Rent,
            status,
            desired: Desired::Running,
            progress: None,
            status_reason: None,
            version: "1".into(),
            open_url: None,
            command_id: None,
            state_since: t0(),
            active_key: Some("d1:grafana".into()),
            cpu_cores: 1,
            memory_bytes: 1,
            disk_bytes: 1,
            gpu_count: 0,
            rent_price_per_hour: hold.then_some(600),
            rent_hours: Some(2),
            rent_started_at: Some(t0()),
            rent_ends_at: Some(t0() + Duration::hours(2)),
            rent_end_noticed: None,
            hold_id: hold.then(|| "h1".into()),
            rent_provider: Some("user:u2".into()),
            rent_fee_percent: Some(10),
            rent_seconds: 0,
            billed: 0,
            metered_until: metered.then(t0),
            created_at: t0(),
            updated_at: t0(),
        }
    }

    fn own(status: AppStatus) -> installations::Model {
        installations::Model { kind: InstallKind::Own, rent_price_per_hour: None, hold_id: None, ..rental(status, false, status == Running) }
    }

    const N: Plan = Plan::NOTHING;

    #[test]
    fn what_each_change_means_for_a_rentals_money() {
        let at = t0() + Duration::minutes(10);
        let seen = t0() + Duration::minutes(8);
        let moved = |from| Happened::Moved { from, at };
        let starts = Plan { meter: Meter::Run(at), burn: Burn::Set(600), ..N };
        let stops = Plan { charge_to: Some(at), meter: Meter::Stop, burn: Burn::Set(0), ..N };
        let halt = Plan { refused: Refused::Halt, seen: Some(seen), ..N };
        #[rustfmt::skip]
        let table: Vec<(&str, installations::Model, Happened, Plan)> = vec![
            // Transitions: the meter runs only while `running`.
            ("starts", rental(Running, true, false), moved(Starting), starts),
            ("installed and running", rental(Running, true, false), moved(Installed), starts),
            ("resumed", rental(Running, true, false), moved(Resuming), starts),
            ("reported running again", rental(Running, true, false), moved(Failed), starts),
            ("an update carried out", rental(Running, true, false), moved(Updating), starts),
            ("stops", rental(Stopping, true, true), moved(Running), stops),
            ("reported stopped", rental(Stopped, true, true), moved(Running), stops),
            ("crashes", rental(Failed, true, true), moved(Running), stops),
            ("suspends", rental(Suspending, true, true), moved(Running), stops),
            ("restarts", rental(Restarting, true, true), moved(Running), stops),
            ("updates", rental(Updating, true, true), moved(Running), stops),
            ("snapshots", rental(Snapshotting, true, true), moved(Running), stops),
            // Leaving the rental releases the hold; its end is told once.
            ("uninstalled while running", rental(Uninstalling, true, true), moved(Running), Plan { release: true, ..stops }),
            ("ended while running", rental(ShuttingDown, true, true), moved(Running), Plan { release: true, ..stops }),
            ("ended while stopped", rental(ShuttingDown, true, false), moved(Stopped), Plan { release: true, ..N }),
            ("ended while suspended", rental(ShuttingDown, true, false), moved(Suspended), Plan { release: true, ..N }),
            ("a failed one removed", rental(Deleting, true, false), moved(Failed), Plan { release: true, ..N }),
            ("its install failed", rental(RentFailed, true, false), moved(Installing), Plan { release: true, ..N }),
            ("removed from the box", rental(NotInstall, true, false), moved(ShuttingDown), Plan { release: true, notify_end: true, ..N }),
            ("cancelled while offline", rental(NotInstall, true, false), moved(Preparing), Plan { release: true, notify_end: true, ..N }),
            ("a free rental ends", rental(NotInstall, false, false), moved(Uninstalling), Plan { notify_end: true, ..N }),
            // Nothing for the money.
            ("asked to start", rental(Starting, true, false), moved(Stopped), N),
            ("asked to stop again", rental(Stopping, true, false), moved(Stopped), N),
            ("stopped on the box", rental(Stopped, true, false), moved(Stopping), N),
            ("suspended on the box", rental(Suspended, true, false), moved(Suspending), N),
            ("installing", rental(Installing, true, false), moved(Downloading), N),
            ("a removal that failed", rental(UninstallFailed, true, false), moved(ShuttingDown), Plan { ..N }),
            // An order's installation (no price, no hold): its seconds are counted all the same.
            ("an order's app stops", rental(Stopped, false, true), moved(Running), stops),
            ("an order's app runs", rental(Running, false, false), moved(Starting), Plan { burn: Burn::Set(0), ..starts }),
            // An own app has no money.
            ("own app starts", own(Running), moved(Starting), N),
            ("own app stops", own(Stopped), moved(Running), N),
            ("own app removed", own(NotInstall), moved(Uninstalling), N),
            // A box silent since `t0 + 5 min` beats again at `seen`.
            ("silent, still running", rental(Running, true, true), Happened::Silent { since: t0() + Duration::minutes(5), seen: Some(seen), running: true },
                Plan { charge_to: Some(t0() + Duration::minutes(5)), meter: Meter::Run(seen), burn: Burn::Set(600), ..halt }),
            ("silent, no longer running", rental(Running, true, true), Happened::Silent { since: t0() + Duration::minutes(5), seen: Some(seen), running: false },
                Plan { charge_to: Some(t0() + Duration::minutes(5)), meter: Meter::Stop, burn: Burn::Set(0), ..halt }),
            ("silent, its meter paused before", rental(Running, true, false), Happened::Silent { since: t0(), seen: Some(seen), running: true },
                Plan { meter: Meter::Run(seen), burn: Burn::Set(600), ..halt }),
            ("silent, paused and not running", rental(Running, true, false), Happened::Silent { since: t0(), seen: Some(seen), running: false }, halt),
            ("silent, not running here", rental(Stopped, true, false), Happened::Silent { since: t0(), seen: Some(seen), running: true }, N),
            // The meter job.
            ("tick, the box reports", rental(Running, true, true), Happened::Tick { at, online: true, seen: Some(seen) }, Plan { charge_to: Some(at), ..halt }),
            ("tick, the box went silent", rental(Running, true, true), Happened::Tick { at, online: false, seen: Some(seen) },
                Plan { charge_to: Some(seen), meter: Meter::Stop, burn: Burn::Set(0), ..halt }),
            ("tick, a box never heard", rental(Running, true, true), Happened::Tick { at, online: false, seen: None },
                Plan { charge_to: Some(at), seen: None, meter: Meter::Stop, burn: Burn::Set(0), ..halt }),
            ("tick, the box is back", rental(Running, true, false), Happened::Tick { at, online: true, seen: Some(seen) },
                Plan { meter: Meter::Run(at), burn: Burn::Set(600), ..halt }),
            ("tick, paused and silent", rental(Running, true, false), Happened::Tick { at, online: false, seen: Some(seen) }, halt),
            ("tick, not running", rental(Stopped, true, false), Happened::Tick { at, online: true, seen: Some(seen) }, N),
            ("tick, an own app", own(Running), Happened::Tick { at, online: true, seen: Some(seen) }, N),
        ];
        for (name, row, happened, want) in table {
            assert_eq!(plan(&row, happened), want, "{name}");
        }
    }

    #[test]
    fn a_plan_that_changes_nothing_is_nothing() {
        // settle writes nothing for it (no charge, the meter and the burn kept, no release).
        let p = plan(&rental(Starting, true, false), Happened::Moved { from: Stopped, at: t0() });
        assert_eq!((p.charge_to, p.meter, p.burn, p.release, p.notify_end), (None, Meter::Keep, Burn::Keep, false, false));
    }
}
