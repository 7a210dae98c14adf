//! An order after it is posted: the demander's confirm, finish and cancel; the sweep (the order
//! job) that follows the app on the provider's device, applies the time-outs, runs the meter,
//! ends orders whose hours are used up, and removes the app once an order is over. Every move
//! goes through `orders::machine::apply`. No HTTP types here.

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use crate::ids::OrderId;
use crate::apps::model::AppStatus;
use crate::billing::ledger;
use crate::config::OrdersConfig;
use crate::apps::seen::{self, Seen};
use crate::db::entity::orders;
use crate::db::enums::OrderStatus;
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::lang::{Lang, Words};
use crate::orders::machine::{self, Actor, Change, Event};
use crate::orders::model::Order;
use crate::orders::{OrdersCtx, money, notify, personal, view};

/// The demander's actions: confirm (the app works: billing starts), finish (early: minutes so far
/// are charged, the rest released), cancel (before anyone takes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemanderAction {
    Confirm,
    Finish,
    Cancel,
}

impl DemanderAction {
    /// The action's verb in both languages (the refusal that names it).
    fn words(self) -> Words {
        match self {
            DemanderAction::Confirm => Words::new("confirm", "确认"),
            DemanderAction::Finish => Words::new("finish", "结束"),
            DemanderAction::Cancel => Words::new("cancel", "取消"),
        }
    }
}

pub async fn act(cx: &OrdersCtx, auth: &Auth, id: &OrderId, action: DemanderAction, lang: Lang) -> Result<Order, AppError> {
    let me = personal(auth)?;
    let txn = write_txn(&cx.db).await?;
    let o = view::mine(&txn, &me, id).await?;
    if o.demander_id != me {
        return Err(AppError::Refused(Msg::NotDemander));
    }
    let refused = || AppError::Refused(Msg::OrderActionNotAllowed(action.words(), o.status.words()));
    let t = now();
    let change = |reason: Option<&str>, set| Change { reason: reason.map(str::to_string), actor_id: Some(me.clone()), set };
    let moved = match action {
        DemanderAction::Confirm => {
            let set = vec![
                (orders::Column::ConfirmedAt, Expr::value(t)),
                (orders::Column::EndsAt, Expr::value(t + Duration::hours(o.hours))),
                (orders::Column::SeenBase, Expr::value(money::seen_base(&txn, &o, t).await?)),
            ];
            let moved = machine::apply(&txn, &o, Event::Confirm, Actor::Demander, change(None, set)).await?.ok_or_else(refused)?;
            ledger::set_burn(&txn, &o.hold_id, o.price_per_hour).await?;
            moved
        }
        DemanderAction::Finish => {
            if o.status != OrderStatus::OrderConfirmed {
                return Err(refused());
            }
            money::charge(&txn, &o, t).await?;
            let o = orders::Entity::find_by_id(o.id.clone()).one(&txn).await?.ok_or(AppError::Refused(Msg::OrderNotFound))?;
            machine::apply(&txn, &o, Event::Finish, Actor::Demander, change(Some("finished_early"), vec![])).await?.ok_or_else(refused)?
        }
        DemanderAction::Cancel => machine::apply(&txn, &o, Event::Cancel, Actor::Demander, change(Some(crate::orders::view::CANCELLED), vec![])).await?.ok_or_else(refused)?,
    };
    notify::moved(&txn, &moved).await?;
    let out = view::one(&txn, &moved, &cx.settings, lang).await?;
    txn.commit().await?;
    // A cancelled demand leaves the board.
    cx.public.changed();
    Ok(out)
}

/// A server-side move of one order (re-read in its own transaction): the transition, and the
/// notifications when it happened. Returns whether it moved.
async fn server_move(db: &DatabaseConnection, id: &OrderId, decide: impl Fn(&orders::Model, Option<&Seen>) -> Option<(Event, Option<String>)>, at: DateTime<Utc>) -> Result<bool, AppError> {
    let txn = write_txn(db).await?;
    let Some(o) = orders::Entity::find_by_id(id.to_string()).one(&txn).await? else { return Ok(false) };
    let inst = match &o.installation_id {
        Some(i) => seen::one(&txn, i).await?,
        None => None,
    };
    let Some((event, reason)) = decide(&o, inst.as_ref()) else { return Ok(false) };
    if matches!(event, Event::HoursUsed) {
        money::charge(&txn, &o, at).await?;
    }
    let o = orders::Entity::find_by_id(id.to_string()).one(&txn).await?.ok_or(AppError::Refused(Msg::OrderNotFound))?;
    let Some(moved) = machine::apply(&txn, &o, event, Actor::Server, Change { reason, ..Default::default() }).await? else { return Ok(false) };
    notify::moved(&txn, &moved).await?;
    txn.commit().await?;
    Ok(true)
}

/// What the server does with an order at `at`, if anything.
fn decide(s: &OrdersConfig, o: &orders::Model, inst: Option<&Seen>, at: DateTime<Utc>) -> Option<(Event, Option<String>)> {
    let older = |secs: u64| o.state_since + Duration::seconds(secs as i64) <= at;
    match o.status {
        OrderStatus::OrderPending if o.expires_at <= at => Some((Event::Expire, Some("expired".into()))),
        OrderStatus::OrderProcessing => match inst {
            Some(i) if i.status == AppStatus::Running => Some((Event::Running, None)),
            Some(i) if !matches!(i.status, AppStatus::RentFailed | AppStatus::InstallFailed | AppStatus::NotInstall) => {
                older(s.start_timeout_secs).then(|| (Event::StartTimeout, Some(format!("start_timeout:{}", s.start_timeout_secs))))
            }
            Some(i) => Some((Event::InstallFailed, Some(format!("install_failed:{}", i.status_reason.clone().unwrap_or_default())))),
            None => Some((Event::InstallFailed, Some("install_failed:".into()))),
        },
        OrderStatus::OrderAccepted if older(s.confirm_timeout_secs) => {
            Some((Event::ConfirmTimeout, Some(format!("confirm_timeout:{}", s.confirm_timeout_secs))))
        }
        OrderStatus::OrderConfirmed if o.ends_at.is_some_and(|e| e <= at) => Some((Event::HoursUsed, Some("hours_used".into()))),
        _ => None,
    }
}

/// The order job's body: every order that may move now is looked at in its own transaction.
/// Returns how many orders moved. Safe to run twice (every move is conditional).
pub async fn sweep(db: &DatabaseConnection, s: &OrdersConfig, at: DateTime<Utc>) -> Result<usize, AppError> {
    use OrderStatus::*;
    let live = orders::Entity::find().filter(orders::Column::Status.is_in([OrderPending, OrderProcessing, OrderAccepted, OrderConfirmed])).all(db).await?;
    let mut n = 0;
    for o in live {
        if o.status == OrderPending && o.expires_at > at {
            continue;
        }
        if server_move(db, &o.id, |o, i| decide(s, o, i, at), at).await? {
            n += 1;
        } else if o.status == OrderConfirmed {
            let txn = write_txn(db).await?;
            if let Some(fresh) = orders::Entity::find_by_id(o.id.clone()).one(&txn).await? {
                money::charge(&txn, &fresh, at).await?;
            }
            txn.commit().await?;
        }
    }
    release_apps(db).await?;
    Ok(n)
}

/// Removes the app from the provider's device once an order is over (retried each sweep while
/// the installation is in a state that cannot be ended yet, e.g. still downloading).
async fn release_apps(db: &DatabaseConnection) -> Result<(), AppError> {
    let over = orders::Entity::find()
        .filter(orders::Column::Status.is_in([OrderStatus::OrderFailed, OrderStatus::OrderFinished]))
        .filter(orders::Column::InstallationReleased.eq(false))
        .filter(orders::Column::InstallationId.is_not_null())
        .all(db)
        .await?;
    for o in over {
        let txn = write_txn(db).await?;
        let Some(inst) = &o.installation_id else { continue };
        if seen::release(&txn, inst).await? {
            orders::Entity::update_many()
                .col_expr(orders::Column::InstallationReleased, Expr::value(true))
                .filter(orders::Column::Id.eq(o.id.clone()))
                .exec(&txn)
                .await?;
        }
        txn.commit().await?;
    }
    Ok(())
}
