//! Two-phase holds: placing one (it reserves available coins), taking a capture out of it, and
//! resolving it by release or expiry. The state machine is [`next`]; a hold resolves exactly
//! once because every resolution is an `UPDATE … WHERE status = 'pending'`.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, Query};
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, FromQueryResult, QueryFilter};

use crate::billing::accounts::{AMOUNT_MAX, HoldSpec, insufficient};
use crate::billing::store::{ensure_account, returning_account, sha256_hex};
use crate::db::entity::ledger_accounts as accounts;
use crate::db::entity::ledger_hold_growths as growths;
use crate::db::entity::ledger_holds as holds;
use crate::db::enums::HoldStatus;
use crate::db::now;
use crate::error::{AppError, Msg};
use crate::ids::HoldId;

/// What happens to a hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldEvent {
    /// A capture leaving `left` cents uncaptured.
    Capture { left: i64 },
    Release,
    Expire,
}

/// The status after `event`, or `None` when the event is not allowed (a resolved hold stays as
/// it is: it resolves exactly once).
pub fn next(status: HoldStatus, event: HoldEvent) -> Option<HoldStatus> {
    use HoldStatus::*;
    match (status, event) {
        (Pending, HoldEvent::Capture { left }) if left > 0 => Some(Pending),
        (Pending, HoldEvent::Capture { left: 0 }) => Some(Captured),
        (Pending, HoldEvent::Release) => Some(Released),
        (Pending, HoldEvent::Expire) => Some(Expired),
        _ => None,
    }
}

/// A hold as placed (or as placed first, when `replayed`).
#[derive(Debug, Clone)]
pub struct Held {
    pub hold: holds::Model,
    pub replayed: bool,
}

fn fingerprint(spec: &HoldSpec) -> String {
    sha256_hex(&format!("{}|{}|{}|{:?}|{}", spec.account.id(), spec.amount, spec.reference.ref_type, spec.reference.ref_id, spec.burn_per_hour))
}

/// Places a hold once per key: the key is a unique index written with `ON CONFLICT DO NOTHING`,
/// then the account's `held` grows by one conditional UPDATE (`balance - held >= amount`).
pub(crate) async fn place(txn: &DatabaseTransaction, spec: HoldSpec) -> Result<Held, AppError> {
    use accounts::Column as A;
    if !(1..=AMOUNT_MAX).contains(&spec.amount) {
        return Err(AppError::invalid("amount", Msg::AmountInvalid));
    }
    if !spec.account.is_wallet() {
        return Err(AppError::Internal(anyhow::anyhow!("holds are for wallets, not {}", spec.account.id())));
    }
    let fp = fingerprint(&spec);
    let account_id = spec.account.id();
    ensure_account(txn, &spec.account).await?;
    let t = now();
    let row = holds::Model {
        id: HoldId::new(),
        key: spec.key.clone(),
        fingerprint: fp.clone(),
        account_id: account_id.clone(),
        amount: spec.amount,
        captured: 0,
        released: 0,
        status: HoldStatus::Pending,
        burn_per_hour: std::cmp::max(spec.burn_per_hour, 0),
        ref_type: spec.reference.ref_type,
        ref_id: spec.reference.ref_id,
        memo: spec.memo,
        expires_at: spec.expires_at,
        ends_at: None,
        created_at: t,
        resolved_at: None,
    };
    let am: holds::ActiveModel = row.clone().into();
    let inserted = holds::Entity::insert(am).on_conflict_do_nothing_on([holds::Column::Key]).exec_without_returning(txn).await?;
    if !matches!(inserted, sea_orm::TryInsertResult::Inserted(n) if n > 0) {
        let first = holds::Entity::find()
            .filter(holds::Column::Key.eq(spec.key.as_str()))
            .one(txn)
            .await?
            .ok_or_else(|| AppError::Internal(anyhow::anyhow!("hold key {} neither inserted nor found", spec.key)))?;
        if first.fingerprint != fp {
            return Err(AppError::Refused(Msg::IdempotencyKeyReused));
        }
        return Ok(Held { hold: first, replayed: true });
    }
    let mut q = Query::update();
    q.table(accounts::Entity)
        .value(A::Held, Expr::col(A::Held).add(spec.amount))
        .value(A::UpdatedAt, t)
        .and_where(Expr::col(A::Id).eq(account_id.clone()))
        .and_where(Expr::col(A::Balance).sub(Expr::col(A::Held)).gte(spec.amount));
    if returning_account(txn, q).await?.is_none() {
        let a = accounts::Entity::find_by_id(account_id).one(txn).await?;
        return Err(insufficient(a.map(|a| std::cmp::max(a.balance - a.held, 0)).unwrap_or(0), spec.amount));
    }
    Ok(Held { hold: row, replayed: false })
}

/// Grow a pending hold by `amount` (a rental extended): its work now ends at `ends_at`, and the
/// hold expires at `expires_at`.
#[derive(Debug, Clone)]
pub struct Growth {
    pub hold_id: HoldId,
    pub amount: i64,
    /// Unique per growth, e.g. `rental:{id}:extend:{request key}`: a retry grows the hold once.
    pub key: String,
    pub ends_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// Grows a pending hold once per key, in the order of every other write: the key (a row written
/// with `ON CONFLICT DO NOTHING`), the hold (`UPDATE … WHERE status = 'pending'`), then its
/// account's `held` by one conditional UPDATE (`balance - held >= amount`; 409 otherwise).
pub(crate) async fn grow(txn: &DatabaseTransaction, g: Growth) -> Result<Held, AppError> {
    use accounts::Column as A;
    use holds::Column as H;
    if !(1..=AMOUNT_MAX).contains(&g.amount) {
        return Err(AppError::invalid("amount", Msg::AmountInvalid));
    }
    let fp = sha256_hex(&format!("grow|{}|{}", g.hold_id, g.amount));
    let t = now();
    let row = growths::ActiveModel {
        key: sea_orm::Set(g.key.clone()),
        fingerprint: sea_orm::Set(fp.clone()),
        hold_id: sea_orm::Set(g.hold_id.clone()),
        amount: sea_orm::Set(g.amount),
        created_at: sea_orm::Set(t),
    };
    let inserted = growths::Entity::insert(row).on_conflict_do_nothing_on([growths::Column::Key]).exec_without_returning(txn).await?;
    if !matches!(inserted, sea_orm::TryInsertResult::Inserted(n) if n > 0) {
        let first = growths::Entity::find_by_id(g.key.clone())
            .one(txn)
            .await?
            .ok_or_else(|| AppError::Internal(anyhow::anyhow!("growth key {} neither inserted nor found", g.key)))?;
        if first.fingerprint != fp {
            return Err(AppError::Refused(Msg::IdempotencyKeyReused));
        }
        let hold = holds::Entity::find_by_id(g.hold_id).one(txn).await?.ok_or(AppError::Refused(Msg::HoldNotFound))?;
        return Ok(Held { hold, replayed: true });
    }
    let mut q = Query::update();
    q.table(holds::Entity)
        .value(H::Amount, Expr::col(H::Amount).add(g.amount))
        .value(H::EndsAt, g.ends_at)
        .value(H::ExpiresAt, g.expires_at)
        .and_where(Expr::col(H::Id).eq(g.hold_id.clone()))
        .and_where(Expr::col(H::Status).eq(HoldStatus::Pending))
        .returning_all();
    let Some(row) = txn.query_one(&q).await? else {
        holds::Entity::find_by_id(g.hold_id).one(txn).await?.ok_or(AppError::Refused(Msg::HoldNotFound))?;
        return Err(AppError::Refused(Msg::HoldResolved));
    };
    let hold = holds::Model::from_query_result(&row, "")?;
    let mut q = Query::update();
    q.table(accounts::Entity)
        .value(A::Held, Expr::col(A::Held).add(g.amount))
        .value(A::UpdatedAt, t)
        .and_where(Expr::col(A::Id).eq(hold.account_id.clone()))
        .and_where(Expr::col(A::Balance).sub(Expr::col(A::Held)).gte(g.amount));
    if returning_account(txn, q).await?.is_none() {
        let a = accounts::Entity::find_by_id(hold.account_id.clone()).one(txn).await?;
        return Err(insufficient(a.map(|a| std::cmp::max(a.balance - a.held, 0)).unwrap_or(0), g.amount));
    }
    Ok(Held { hold, replayed: false })
}

/// Takes `amount` of a pending hold for a capture, its burn set to `burn` in the same statement
/// when given; the hold resolves as captured when nothing is left.
pub(crate) async fn take(txn: &DatabaseTransaction, hold_id: &HoldId, amount: i64, t: DateTime<Utc>, burn: Option<i64>) -> Result<(), AppError> {
    use holds::Column as H;
    let mut q = Query::update();
    q.table(holds::Entity).value(H::Captured, Expr::col(H::Captured).add(amount));
    if let Some(b) = burn {
        q.value(H::BurnPerHour, std::cmp::max(b, 0));
    }
    q.and_where(Expr::col(H::Id).eq(hold_id))
        .and_where(Expr::col(H::Status).eq(HoldStatus::Pending))
        .and_where(Expr::col(H::Amount).sub(Expr::col(H::Captured)).gte(amount))
        .returning_all();
    let Some(row) = txn.query_one(&q).await? else {
        let h = holds::Entity::find_by_id(hold_id).one(txn).await?.ok_or(AppError::Refused(Msg::HoldNotFound))?;
        return Err(match h.status {
            HoldStatus::Pending => AppError::Refused(Msg::CaptureExceedsHold { left: h.amount - h.captured, asked: amount }),
            _ => AppError::Refused(Msg::HoldResolved),
        });
    };
    let h = holds::Model::from_query_result(&row, "")?;
    if next(h.status, HoldEvent::Capture { left: h.amount - h.captured }) == Some(HoldStatus::Captured) {
        holds::Entity::update_many()
            .col_expr(H::Status, Expr::value(HoldStatus::Captured))
            .col_expr(H::ResolvedAt, Expr::value(t))
            .filter(H::Id.eq(hold_id))
            .filter(H::Status.eq(HoldStatus::Pending))
            .exec(txn)
            .await?;
    }
    Ok(())
}

/// Resolves a pending hold by a release or an expiry: what is left goes back to available. A
/// hold already resolved (or not yet due, for an expiry) is answered as it is.
pub(crate) async fn resolve(txn: &DatabaseTransaction, hold_id: &HoldId, event: HoldEvent, at: DateTime<Utc>) -> Result<holds::Model, AppError> {
    use accounts::Column as A;
    use holds::Column as H;
    let target = next(HoldStatus::Pending, event).ok_or_else(|| AppError::Internal(anyhow::anyhow!("{event:?} does not resolve a hold")))?;
    let mut q = Query::update();
    q.table(holds::Entity)
        .value(H::Status, target)
        .value(H::Released, Expr::col(H::Amount).sub(Expr::col(H::Captured)))
        .value(H::ResolvedAt, at)
        .and_where(Expr::col(H::Id).eq(hold_id))
        .and_where(Expr::col(H::Status).eq(HoldStatus::Pending));
    if event == HoldEvent::Expire {
        q.and_where(Expr::col(H::ExpiresAt).lte(at));
    }
    q.returning_all();
    let Some(row) = txn.query_one(&q).await? else {
        return holds::Entity::find_by_id(hold_id).one(txn).await?.ok_or(AppError::Refused(Msg::HoldNotFound));
    };
    let h = holds::Model::from_query_result(&row, "")?;
    if h.released > 0 {
        let mut q = Query::update();
        q.table(accounts::Entity)
            .value(A::Held, Expr::col(A::Held).sub(h.released))
            .value(A::UpdatedAt, at)
            .and_where(Expr::col(A::Id).eq(h.account_id.clone()))
            .and_where(Expr::col(A::Held).gte(h.released));
        if returning_account(txn, q).await?.is_none() {
            return Err(AppError::Internal(anyhow::anyhow!("account {} holds less than hold {} releases", h.account_id, h.id)));
        }
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use HoldStatus::*;

    #[test]
    fn a_partial_capture_keeps_the_hold_pending() {
        assert_eq!(next(Pending, HoldEvent::Capture { left: 5 }), Some(Pending));
    }

    #[test]
    fn capturing_the_last_cent_captures_the_hold() {
        assert_eq!(next(Pending, HoldEvent::Capture { left: 0 }), Some(Captured));
    }

    #[test]
    fn a_capture_beyond_the_hold_is_not_a_transition() {
        assert_eq!(next(Pending, HoldEvent::Capture { left: -1 }), None);
    }

    #[test]
    fn a_pending_hold_is_released() {
        assert_eq!(next(Pending, HoldEvent::Release), Some(Released));
    }

    #[test]
    fn a_pending_hold_expires() {
        assert_eq!(next(Pending, HoldEvent::Expire), Some(Expired));
    }

    #[test]
    fn a_resolved_hold_never_moves_again() {
        for resolved in [Captured, Released, Expired] {
            for e in [HoldEvent::Capture { left: 0 }, HoldEvent::Capture { left: 3 }, HoldEvent::Release, HoldEvent::Expire] {
                assert_eq!(next(resolved, e), None, "{resolved:?} {e:?}");
            }
        }
    }
}
