//! The ledger's API: how any domain moves coins (docs/wallet.md). Apps and orders call these
//! functions, never the wallet's tables.
//!
//! Every function is atomic on its own: it runs in a transaction it opens on a connection
//! (`BEGIN IMMEDIATE` on SQLite) or in a savepoint of the caller's transaction, so a refusal
//! leaves nothing behind even when the caller goes on and commits. Concurrency holds on SQLite
//! and PostgreSQL alike: an account changes only through one conditional `UPDATE … RETURNING`
//! (the row lock orders concurrent writers and the condition keeps `balance - held >= 0`), a key
//! is a unique index written with `ON CONFLICT DO NOTHING` (no read-then-write), and a hold
//! resolves through an `UPDATE` conditioned on `status = 'pending'`, which succeeds once. Locks
//! are taken in one order: the key, the hold, then accounts sorted by id.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

pub use crate::billing::accounts::*;
pub use crate::billing::holds::{Growth, Held};
use crate::billing::holds::{self, HoldEvent};
pub use crate::billing::posting::Posted;
use crate::billing::posting::{Leg, Posting, post, splits_total};
pub use crate::billing::store::{Conn, account, begin, finish};
use crate::billing::fees;
use crate::billing::store::sha256_hex;
use crate::db::entity::ledger_holds;
use crate::db::enums::{HoldStatus, TransferKind};
use crate::db::now;
use crate::error::{AppError, Msg};
use crate::ids::{HoldId, UserId};

/// Issues `amount` new coins to `to` (the operator's grant), once per `key`.
pub async fn grant(conn: &impl Conn, to: AccountRef, amount: i64, key: String, memo: String) -> Result<Posted, AppError> {
    issue(conn, to, amount, key, TransferKind::Grant, memo).await
}

/// Issues `amount` to a newly verified person, once per person (the key is theirs). Nothing
/// when `amount` is 0.
pub async fn signup_bonus(conn: &impl Conn, user_id: &UserId, amount: i64) -> Result<Option<Posted>, AppError> {
    if amount <= 0 {
        return Ok(None);
    }
    let to = AccountRef::User(user_id.into());
    issue(conn, to, amount, format!("signup_bonus:{user_id}"), TransferKind::SignupBonus, String::new()).await.map(Some)
}

async fn issue(conn: &impl Conn, to: AccountRef, amount: i64, key: String, kind: TransferKind, memo: String) -> Result<Posted, AppError> {
    if !to.is_wallet() {
        return Err(AppError::Internal(anyhow::anyhow!("coins are issued to wallets, not {}", to.id())));
    }
    let legs = vec![Leg::debit(AccountRef::Issuance, amount), Leg::credit(to, amount)];
    let reference = Reference::kind_only(if kind == TransferKind::Grant { "grant" } else { "signup_bonus" });
    let txn = begin(conn).await?;
    let r = post(&txn, Posting { key, kind, legs, hold: None, reference, memo, metered: false, fingerprint: None, burn: None }).await;
    finish(txn, r).await
}

/// Spends from `from`'s available balance to `splits` in one transfer; refused (409, naming
/// what is missing) when it would take `available` below zero.
pub async fn transfer(conn: &impl Conn, spec: TransferSpec) -> Result<Posted, AppError> {
    if !spec.from.is_wallet() {
        return Err(AppError::Internal(anyhow::anyhow!("transfers are paid from wallets, not {}", spec.from.id())));
    }
    let total = splits_total(&spec.splits)?;
    let legs = Leg::spread(Leg::debit(spec.from, total), spec.splits);
    let posting = Posting { key: spec.key, kind: TransferKind::Payment, legs, hold: None, reference: spec.reference, memo: spec.memo, metered: spec.metered, fingerprint: None, burn: None };
    let txn = begin(conn).await?;
    let r = post(&txn, posting).await;
    finish(txn, r).await
}

/// Reserves `amount` of the account's available coins until `expires_at`; refused (409) when it
/// has less. The same key again answers the same hold (`replayed`); with another spec, 409.
pub async fn hold(conn: &impl Conn, spec: HoldSpec) -> Result<Held, AppError> {
    let txn = begin(conn).await?;
    let r = holds::place(&txn, spec).await;
    finish(txn, r).await
}

/// Grows a pending hold by `amount` from the account's available coins (a rental extended), its
/// work's end and its expiry moved; refused (409) when the account has less, or the hold resolved.
/// The same key again answers the hold as it is (`replayed`) and moves nothing; with another
/// growth, 409.
pub async fn grow(conn: &impl Conn, growth: Growth) -> Result<Held, AppError> {
    let txn = begin(conn).await?;
    let r = holds::grow(&txn, growth).await;
    finish(txn, r).await
}

/// Posts `amount` of a pending hold to `splits`; the hold resolves as `captured` when nothing is
/// left of it. Refused when the hold has resolved (409) or has less left than `amount` (409).
pub async fn capture(conn: &impl Conn, spec: CaptureSpec) -> Result<Posted, AppError> {
    let total = splits_total(&spec.splits)?;
    if total != spec.amount {
        return Err(AppError::Internal(anyhow::anyhow!("capture splits sum to {total}, not {}", spec.amount)));
    }
    let txn = begin(conn).await?;
    let r = async {
        let h = ledger_holds::Entity::find_by_id(spec.hold_id.clone()).one(&txn).await?.ok_or(AppError::Refused(Msg::HoldNotFound))?;
        let payer = AccountRef::parse(&h.account_id)?;
        let legs = Leg::spread(Leg { from_held: true, ..Leg::debit(payer, total) }, spec.splits);
        let reference = Reference { ref_type: h.ref_type.clone(), ref_id: h.ref_id.clone() };
        let posting = Posting { key: spec.key, kind: TransferKind::Capture, legs, hold: Some(h.id), reference, memo: spec.memo, metered: spec.metered, fingerprint: None, burn: None };
        post(&txn, posting).await
    }
    .await;
    finish(txn, r).await
}

/// Posts `amount` of a rental's or order's pending hold to its provider, the market's fee exact
/// over the hold's reference (see [`MarketCapture`]). Refused as [`capture`] is; a replayed key
/// answers the first posting and moves neither coins nor the fee meter.
pub async fn capture_market(conn: &impl Conn, spec: MarketCapture) -> Result<Posted, AppError> {
    if !(1..=AMOUNT_MAX).contains(&spec.amount) {
        return Err(AppError::invalid("amount", Msg::AmountInvalid));
    }
    let txn = begin(conn).await?;
    let r = async {
        let h = ledger_holds::Entity::find_by_id(spec.hold_id.clone()).one(&txn).await?.ok_or(AppError::Refused(Msg::HoldNotFound))?;
        market_posting(&txn, h, spec, 0, None).await
    }
    .await;
    match r {
        // Posted before: the meter's step taken just now is undone with the savepoint.
        Ok(p) if p.replayed => {
            txn.rollback().await?;
            Ok(p)
        }
        r => finish(txn, r).await,
    }
}

/// The capture of [`capture_market`]; `carried` (in 1/3600 of a cent) leaves the reference's carry
/// with the fee meter's step, and the hold's burn is set to `burn` as the capture takes from it.
async fn market_posting(txn: &DatabaseTransaction, h: ledger_holds::Model, spec: MarketCapture, carried: i64, burn: Option<i64>) -> Result<Posted, AppError> {
    let payer = AccountRef::parse(&h.account_id)?;
    let reference = Reference { ref_type: h.ref_type.clone(), ref_id: h.ref_id.clone() };
    let fp = sha256_hex(&format!("market|{}|{}|{}|{}|{}", h.id, spec.amount, spec.provider.id(), spec.fee_percent, spec.metered));
    let splits = fees::claim(txn, &reference, spec.provider, spec.fee_percent, spec.amount, carried).await?;
    let legs = Leg::spread(Leg { from_held: true, ..Leg::debit(payer, spec.amount) }, splits);
    let posting =
        Posting { key: spec.key, kind: TransferKind::Capture, legs, hold: Some(h.id), reference, memo: spec.memo, metered: spec.metered, fingerprint: Some(fp), burn };
    post(txn, posting).await
}

/// Charges metered seconds from a rental's or order's pending hold (see [`MeteredCapture`]): the
/// whole cents they come to with what the hold's reference carried are captured as
/// [`capture_market`] captures (fee exact, metered), the fraction of a cent left carried to the
/// next seconds. Answers the cents captured: 0 when the seconds and the carry come to less than a
/// cent (then only the carry moves) or when the key was posted before (a replay moves nothing,
/// the carry included). Refused as [`capture`] is, leaving the carry as it was. The hold's burn
/// becomes `burn_per_hour` when given, in the statement that takes the capture from the hold.
pub async fn capture_seconds(conn: &impl Conn, spec: MeteredCapture) -> Result<i64, AppError> {
    let (hold_id, burn) = (spec.hold_id.clone(), spec.burn_per_hour);
    if spec.seconds <= 0 {
        if let Some(b) = burn {
            set_burn(conn, &hold_id, b).await?;
        }
        return Ok(0);
    }
    let txn = begin(conn).await?;
    let r = async {
        let h = ledger_holds::Entity::find_by_id(spec.hold_id.clone()).one(&txn).await?.ok_or(AppError::Refused(Msg::HoldNotFound))?;
        let reference = Reference { ref_type: h.ref_type.clone(), ref_id: h.ref_id.clone() };
        let cents = fees::carry(&txn, &reference, spec.fee_percent, spec.per_hour, spec.seconds).await?;
        if cents == 0 {
            if let Some(b) = burn {
                set_burn(&txn, &hold_id, b).await?;
            }
            return Ok(None);
        }
        if cents > AMOUNT_MAX {
            return Err(AppError::invalid("amount", Msg::AmountInvalid));
        }
        let capture = MarketCapture { hold_id: spec.hold_id, amount: cents, provider: spec.provider, fee_percent: spec.fee_percent, key: spec.key, memo: spec.memo, metered: true };
        Ok(Some((market_posting(&txn, h, capture, cents * 3600, burn).await?, cents)))
    }
    .await;
    match r {
        Ok(Some((p, _))) if p.replayed => {
            txn.rollback().await?;
            if let Some(b) = burn {
                set_burn(conn, &hold_id, b).await?;
            }
            Ok(0)
        }
        r => finish(txn, r).await.map(|p| p.map_or(0, |(_, cents)| cents)),
    }
}

/// Releases what is left of a hold. It needs no key: a hold resolves exactly once, so releasing
/// a resolved hold changes nothing and answers it as it is (a retried release is harmless).
pub async fn release(conn: &impl Conn, hold_id: &HoldId) -> Result<ledger_holds::Model, AppError> {
    let txn = begin(conn).await?;
    let r = holds::resolve(&txn, hold_id, HoldEvent::Release, now()).await;
    finish(txn, r).await
}

/// Releases every pending hold whose `expires_at` has passed (the expiry job). Returns how many.
pub async fn expire_due(conn: &impl Conn, at: DateTime<Utc>) -> Result<u64, AppError> {
    let due: Vec<HoldId> = ledger_holds::Entity::find()
        .select_only()
        .column(ledger_holds::Column::Id)
        .filter(ledger_holds::Column::Status.eq(HoldStatus::Pending))
        .filter(ledger_holds::Column::ExpiresAt.lte(at))
        .order_by_asc(ledger_holds::Column::ExpiresAt)
        .limit(1000)
        .into_tuple()
        .all(conn)
        .await?;
    let mut expired = 0;
    for id in due {
        let txn = begin(conn).await?;
        let r = holds::resolve(&txn, &id, HoldEvent::Expire, at).await;
        if finish(txn, r).await?.status == HoldStatus::Expired {
            expired += 1;
        }
    }
    Ok(expired)
}

/// Sets how fast a pending hold is being spent (0 while its work is stopped); the runway uses it.
pub async fn set_burn(conn: &impl ConnectionTrait, hold_id: &HoldId, burn_per_hour: i64) -> Result<(), AppError> {
    ledger_holds::Entity::update_many()
        .col_expr(ledger_holds::Column::BurnPerHour, Expr::value(std::cmp::max(burn_per_hour, 0)))
        .filter(ledger_holds::Column::Id.eq(hold_id))
        .filter(ledger_holds::Column::Status.eq(HoldStatus::Pending))
        .exec(conn)
        .await?;
    Ok(())
}

/// Records when the work a pending hold pays for is due to end (a rental's end): the runway notice
/// speaks of the hold only when its coins run out before then.
pub async fn set_end(conn: &impl ConnectionTrait, hold_id: &HoldId, ends_at: DateTime<Utc>) -> Result<(), AppError> {
    ledger_holds::Entity::update_many()
        .col_expr(ledger_holds::Column::EndsAt, Expr::value(ends_at))
        .filter(ledger_holds::Column::Id.eq(hold_id))
        .filter(ledger_holds::Column::Status.eq(HoldStatus::Pending))
        .exec(conn)
        .await?;
    Ok(())
}

/// A hold as it is now.
pub async fn hold_of(conn: &impl ConnectionTrait, hold_id: &HoldId) -> Result<ledger_holds::Model, AppError> {
    ledger_holds::Entity::find_by_id(hold_id).one(conn).await?.ok_or(AppError::Refused(Msg::HoldNotFound))
}

/// An account's figures now: `available = balance - held`, never below zero for a wallet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Balance {
    pub balance: i64,
    pub held: i64,
    pub available: i64,
}

/// The account's balance, held and available coins (all 0 before its first movement).
pub async fn balance(conn: &impl ConnectionTrait, of: &AccountRef) -> Result<Balance, AppError> {
    Ok(account(conn, of).await?.map_or(Balance::default(), |a| Balance { balance: a.balance, held: a.held, available: std::cmp::max(a.balance - a.held, 0) }))
}
