//! The order state machine: [`next`] says where every event leads from every state and who may
//! cause it; anything it does not list is refused. [`apply`] is the only writer of an order's
//! status: a conditional UPDATE on the status it read (two writers cannot both move an order, on
//! SQLite or PostgreSQL), the history row, and the end of the hold and of the device's
//! reservation when the order is over.
//!
//! order_pending → order_processing (taken) → order_accepted (the app runs on the device) →
//! order_confirmed (the demander confirms; the meter runs) → order_finished; order_failed from
//! pending (expired, cancelled), processing (install failed, not running in time) and accepted
//! (not confirmed in time).

use sea_orm::sea_query::{Expr, SimpleExpr};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};

use crate::billing::ledger;
use crate::db::entity::{order_events, orders};
use crate::db::enums::OrderStatus;
use crate::db::{new_id, now};
use crate::error::AppError;

use OrderStatus::*;
use crate::ids::{OrderId, UserId};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A provider takes the demand with a qualifying device.
    Take,
    /// The demander withdraws the demand before anyone takes it.
    Cancel,
    /// Nobody took it within `orders.pending_timeout_secs`.
    Expire,
    /// The agent reports the demanded app running on the provider's device.
    Running,
    /// The installation failed on the device.
    InstallFailed,
    /// Not running within `orders.start_timeout_secs`.
    StartTimeout,
    /// The demander confirms it works: billing by the minute starts.
    Confirm,
    /// Not confirmed within `orders.confirm_timeout_secs`.
    ConfirmTimeout,
    /// The demander finishes early.
    Finish,
    /// The hours ordered are used up.
    HoursUsed,
}

/// Who may cause an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    Demander,
    Provider,
    /// The server: the agent's reports and the time-outs.
    Server,
}

/// Where `event` leads from `from`, and who may cause it; `None` when the state does not allow it.
pub fn next(from: OrderStatus, event: Event) -> Option<(OrderStatus, Actor)> {
    use Event::*;
    Some(match (from, event) {
        (OrderPending, Take) => (OrderProcessing, Actor::Provider),
        (OrderPending, Cancel) => (OrderFailed, Actor::Demander),
        (OrderPending, Expire) => (OrderFailed, Actor::Server),
        (OrderProcessing, Running) => (OrderAccepted, Actor::Server),
        (OrderProcessing, InstallFailed) => (OrderFailed, Actor::Server),
        (OrderProcessing, StartTimeout) => (OrderFailed, Actor::Server),
        (OrderAccepted, Confirm) => (OrderConfirmed, Actor::Demander),
        (OrderAccepted, ConfirmTimeout) => (OrderFailed, Actor::Server),
        (OrderConfirmed, Finish) => (OrderFinished, Actor::Demander),
        (OrderConfirmed, HoursUsed) => (OrderFinished, Actor::Server),
        _ => return None,
    })
}

/// What changes with a transition besides the status.
#[derive(Default)]
pub struct Change {
    /// A reason code (`orders::view::reason_text` reads it).
    pub reason: Option<String>,
    /// Who did it (None: the server).
    pub actor_id: Option<UserId>,
    /// More columns set in the same UPDATE (the provider and device of a take, the meter's start).
    pub set: Vec<(orders::Column, SimpleExpr)>,
}

/// Moves `row` by `event` when the table allows it, `actor` may cause it, and nobody moved the
/// order meanwhile. Returns the order as it is now, or `None` (refused or lost a race). An order
/// that ends gives back what is left of its hold and frees its device, in the same transaction.
pub async fn apply(conn: &impl ledger::Conn, row: &orders::Model, event: Event, actor: Actor, change: Change) -> Result<Option<orders::Model>, AppError> {
    let Some((to, allowed)) = next(row.status, event) else { return Ok(None) };
    if allowed != actor {
        return Ok(None);
    }
    let t = now();
    let mut q = orders::Entity::update_many()
        .col_expr(orders::Column::Status, Expr::value(to))
        .col_expr(orders::Column::StateSince, Expr::value(t))
        .col_expr(orders::Column::UpdatedAt, Expr::value(t));
    if change.reason.is_some() {
        q = q.col_expr(orders::Column::StatusReason, Expr::value(change.reason.clone()));
    }
    if to.is_over() {
        q = q.col_expr(orders::Column::ReservedDeviceId, Expr::value(Option::<String>::None));
        crate::versions::standing_changed();
    }
    for (col, v) in change.set {
        q = q.col_expr(col, v);
    }
    let res = q.filter(orders::Column::Id.eq(row.id.clone())).filter(orders::Column::Status.eq(row.status)).exec(conn).await;
    match res {
        Ok(r) if r.rows_affected == 1 => {}
        Ok(_) => return Ok(None),
        // the only unique column set here: another order reserved the device first
        Err(e) if matches!(e.sql_err(), Some(sea_orm::SqlErr::UniqueConstraintViolation(_))) => {
            return Err(AppError::Refused(crate::error::Msg::DeviceReserved));
        }
        Err(e) => return Err(e.into()),
    }
    record(conn, &row.id, to, change.reason.as_deref(), change.actor_id.as_ref()).await?;
    if to.is_over() {
        // Captured minutes stay captured; the rest goes back to the demander's available coins.
        ledger::release(conn, &row.hold_id).await?;
    }
    Ok(orders::Entity::find_by_id(row.id.clone()).one(conn).await?)
}

/// One history row.
pub async fn record(conn: &impl sea_orm::ConnectionTrait, order_id: &OrderId, status: OrderStatus, reason: Option<&str>, actor: Option<&UserId>) -> Result<(), AppError> {
    order_events::ActiveModel {
        id: Set(new_id()),
        order_id: Set(order_id.clone()),
        status: Set(status),
        reason: Set(reason.map(str::to_string)),
        actor_id: Set(actor.cloned()),
        created_at: Set(now()),
    }
    .insert(conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sea_orm::Iterable;

    macro_rules! transitions {
        ($($name:ident: $from:expr, $ev:expr => $to:expr, $who:expr;)*) => {
            $(
                #[test]
                fn $name() {
                    assert_eq!(next($from, $ev), Some(($to, $who)));
                }
            )*
            fn listed() -> Vec<(OrderStatus, Event)> {
                vec![$(($from, $ev)),*]
            }
        };
    }

    use Event::*;
    transitions! {
        pending_taken: OrderPending, Take => OrderProcessing, Actor::Provider;
        pending_cancelled: OrderPending, Cancel => OrderFailed, Actor::Demander;
        pending_expired: OrderPending, Expire => OrderFailed, Actor::Server;
        processing_running: OrderProcessing, Running => OrderAccepted, Actor::Server;
        processing_install_failed: OrderProcessing, InstallFailed => OrderFailed, Actor::Server;
        processing_start_timeout: OrderProcessing, StartTimeout => OrderFailed, Actor::Server;
        accepted_confirmed: OrderAccepted, Confirm => OrderConfirmed, Actor::Demander;
        accepted_confirm_timeout: OrderAccepted, ConfirmTimeout => OrderFailed, Actor::Server;
        confirmed_finished_early: OrderConfirmed, Finish => OrderFinished, Actor::Demander;
        confirmed_hours_used: OrderConfirmed, HoursUsed => OrderFinished, Actor::Server;
    }

    const EVENTS: [Event; 10] = [Take, Cancel, Expire, Running, InstallFailed, StartTimeout, Confirm, ConfirmTimeout, Finish, HoursUsed];

    #[test]
    fn every_pair_not_listed_is_refused() {
        let listed = listed();
        for s in OrderStatus::iter() {
            for e in EVENTS {
                if !listed.contains(&(s, e)) {
                    assert_eq!(next(s, e), None, "{s:?} + {e:?} must be refused");
                }
            }
        }
    }

    #[test]
    fn nothing_leaves_an_order_that_is_over() {
        for e in EVENTS {
            assert_eq!(next(OrderFailed, e), None);
            assert_eq!(next(OrderFinished, e), None);
        }
    }

    #[test]
    fn failures_come_only_from_pending_processing_and_accepted() {
        for s in OrderStatus::iter() {
            let fails = EVENTS.iter().any(|e| next(s, *e).is_some_and(|(to, _)| to == OrderFailed));
            assert_eq!(fails, matches!(s, OrderPending | OrderProcessing | OrderAccepted), "{s:?}");
        }
    }
}
