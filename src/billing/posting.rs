//! Posting a transfer: one row per idempotency key (a unique index written with
//! `ON CONFLICT DO NOTHING`, so a retry, a re-run job or a racing instance posts once), its
//! entries summing to zero, each account changed by one conditional `UPDATE … RETURNING` that
//! keeps `balance - held >= 0`, and metered usage added to its period's bill.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict, Query};
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter, QueryOrder, Set};

use crate::billing::accounts::{AMOUNT_MAX, AccountRef, Reference, Split, insufficient};
use crate::billing::holds;
use crate::billing::store::{ensure_account, returning_account, sha256_hex};
use crate::db::entity::bills;
use crate::db::entity::ledger_accounts as accounts;
use crate::db::entity::ledger_entries as entries;
use crate::db::entity::ledger_transfers as transfers;
use crate::db::enums::{BillStatus, EntryKind, TransferKind};
use crate::db::{new_id, now};
use crate::error::{AppError, Msg};
use crate::ids::HoldId;

/// Metered usage is billed by the hour: a bill's period is the clock hour of its postings.
pub const BILL_PERIOD_SECS: i64 = 3600;

/// A transfer as posted (or as first posted, when `replayed`).
#[derive(Debug, Clone)]
pub struct Posted {
    pub transfer: transfers::Model,
    pub entries: Vec<entries::Model>,
    /// The key had been posted before: this is the first posting, nothing moved now.
    pub replayed: bool,
}

impl Posted {
    /// This transfer's entry on `account`, if it has one.
    pub fn entry_of(&self, account: &AccountRef) -> Option<&entries::Model> {
        let id = account.id();
        self.entries.iter().find(|e| e.account_id == id)
    }
}

/// One leg of a transfer: a signed amount on one account.
#[derive(Debug, Clone)]
pub(crate) struct Leg {
    pub account: AccountRef,
    pub amount: i64,
    /// A debit of held coins (a capture): it lowers `held` with `balance`, so `available` stays.
    pub from_held: bool,
}

impl Leg {
    pub fn debit(account: AccountRef, amount: i64) -> Leg {
        Leg { account, amount: -amount, from_held: false }
    }
    pub fn credit(account: AccountRef, amount: i64) -> Leg {
        Leg { account, amount, from_held: false }
    }
    /// `from`'s debit of the splits' total, then each credit.
    pub fn spread(from: Leg, splits: Vec<Split>) -> Vec<Leg> {
        let mut legs = vec![from];
        legs.extend(splits.into_iter().map(|s| Leg::credit(s.account, s.amount)));
        legs
    }
}

pub(crate) struct Posting {
    pub key: String,
    pub kind: TransferKind,
    pub legs: Vec<Leg>,
    pub hold: Option<HoldId>,
    pub reference: Reference,
    pub memo: String,
    pub metered: bool,
    /// What the key stands for when the legs depend on the ledger's state (an exact-fee capture
    /// splits differently as its rental's fee meter moves); else the legs themselves.
    pub fingerprint: Option<String>,
    /// The hold's burn from now on, set as the capture takes from it (`None` leaves it).
    pub burn: Option<i64>,
}

/// The total of the credits, each between 1 cent and [`AMOUNT_MAX`].
pub(crate) fn splits_total(splits: &[Split]) -> Result<i64, AppError> {
    let invalid = || AppError::invalid("amount", Msg::AmountInvalid);
    let mut total: i64 = 0;
    for s in splits {
        if !(1..=AMOUNT_MAX).contains(&s.amount) {
            return Err(invalid());
        }
        total = total.checked_add(s.amount).filter(|t| *t <= AMOUNT_MAX).ok_or_else(invalid)?;
    }
    if total == 0 {
        return Err(invalid());
    }
    Ok(total)
}

/// What a key stands for: the same key must come back with the same money movement.
fn fingerprint(p: &Posting) -> String {
    let mut legs: Vec<String> = p.legs.iter().map(|l| format!("{}:{}:{}", l.account.id(), l.amount, l.from_held)).collect();
    legs.sort();
    sha256_hex(&format!("{:?}|{:?}|{}|{:?}|{}|{}", p.kind, p.hold, p.reference.ref_type, p.reference.ref_id, p.metered, legs.join(";")))
}

/// The bill of `account` for `reference` in the period holding `at`: its id is derived, so every
/// posting of that period adds to the same row without reading it first.
fn bill_of(account_id: &str, reference: &Reference, at: DateTime<Utc>) -> Option<(String, DateTime<Utc>, DateTime<Utc>)> {
    let ref_id = reference.ref_id.as_deref()?;
    let start_ts = at.timestamp().div_euclid(BILL_PERIOD_SECS) * BILL_PERIOD_SECS;
    let start = DateTime::from_timestamp(start_ts, 0)?;
    let end = DateTime::from_timestamp(start_ts + BILL_PERIOD_SECS, 0)?;
    let h = sha256_hex(&format!("{account_id}|{}|{ref_id}|{start_ts}", reference.ref_type));
    let id = format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32]);
    Some((id, start, end))
}

/// Applies one leg to its account: one conditional UPDATE, so `available` cannot go below zero
/// whatever runs beside it. Returns the account as it is after the leg.
async fn apply_leg(conn: &impl ConnectionTrait, leg: &Leg) -> Result<accounts::Model, AppError> {
    use accounts::Column as A;
    let id = leg.account.id();
    let mut q = Query::update();
    q.table(accounts::Entity)
        .value(A::Balance, Expr::col(A::Balance).add(leg.amount))
        .value(A::UpdatedAt, now())
        .and_where(Expr::col(A::Id).eq(id.clone()));
    if leg.amount > 0 {
        q.value(A::IncomeTotal, Expr::col(A::IncomeTotal).add(leg.amount));
    } else {
        q.value(A::ExpenseTotal, Expr::col(A::ExpenseTotal).add(-leg.amount));
    }
    if leg.from_held {
        q.value(A::Held, Expr::col(A::Held).add(leg.amount)).and_where(Expr::col(A::Held).gte(-leg.amount));
    } else if leg.amount < 0 && leg.account != AccountRef::Issuance {
        q.and_where(Expr::col(A::Balance).sub(Expr::col(A::Held)).gte(-leg.amount));
    }
    if let Some(a) = returning_account(conn, q.clone()).await? {
        return Ok(a);
    }
    match accounts::Entity::find_by_id(id.clone()).one(conn).await? {
        // A credit (or the issuance account) to an account that has never moved: create it.
        None if leg.amount > 0 || leg.account == AccountRef::Issuance => {
            ensure_account(conn, &leg.account).await?;
            returning_account(conn, q).await?.ok_or_else(|| AppError::Internal(anyhow::anyhow!("account {id} vanished")))
        }
        None => Err(insufficient(0, -leg.amount)),
        Some(a) if leg.from_held => Err(AppError::Internal(anyhow::anyhow!("account {id} holds {} < {}", a.held, -leg.amount))),
        Some(a) => Err(insufficient(std::cmp::max(a.balance - a.held, 0), -leg.amount)),
    }
}

/// Records a transfer once per key: a known key with the same fingerprint answers the first
/// posting, with another fingerprint it is refused.
pub(crate) async fn post(txn: &DatabaseTransaction, p: Posting) -> Result<Posted, AppError> {
    if p.legs.iter().map(|l| l.amount).sum::<i64>() != 0 || p.legs.iter().any(|l| l.amount == 0) {
        return Err(AppError::Internal(anyhow::anyhow!("unbalanced transfer {}", p.key)));
    }
    if p.legs.iter().any(|l| l.amount.abs() > AMOUNT_MAX) {
        return Err(AppError::invalid("amount", Msg::AmountInvalid));
    }
    let t = now();
    let fp = p.fingerprint.clone().unwrap_or_else(|| fingerprint(&p));
    let payer = p.legs.iter().find(|l| l.amount < 0).map(|l| l.account.id()).unwrap_or_default();
    let bill = if p.metered { bill_of(&payer, &p.reference, t) } else { None };
    let credited: i64 = p.legs.iter().filter(|l| l.amount > 0).map(|l| l.amount).sum();
    let transfer = transfers::Model {
        id: new_id(),
        key: p.key.clone(),
        fingerprint: fp.clone(),
        kind: p.kind,
        amount: credited,
        hold_id: p.hold.clone().map(HoldId::from),
        bill_id: bill.as_ref().map(|b| b.0.clone()),
        ref_type: p.reference.ref_type.clone(),
        ref_id: p.reference.ref_id.clone(),
        memo: p.memo.clone(),
        created_at: t,
    };
    let am: transfers::ActiveModel = transfer.clone().into();
    let inserted = transfers::Entity::insert(am).on_conflict_do_nothing_on([transfers::Column::Key]).exec_without_returning(txn).await?;
    if !matches!(inserted, sea_orm::TryInsertResult::Inserted(n) if n > 0) {
        return replay(txn, &p.key, &fp).await;
    }
    if let Some(hold_id) = &p.hold {
        holds::take(txn, hold_id, credited, t, p.burn).await?;
    }
    // Accounts in id order, so two transfers never wait on each other's rows crosswise.
    let mut legs = p.legs;
    legs.sort_by_key(|l| l.account.id());
    let mut rows = Vec::with_capacity(legs.len());
    for leg in &legs {
        let a = apply_leg(txn, leg).await?;
        rows.push(entries::ActiveModel {
            seq: sea_orm::ActiveValue::NotSet,
            id: Set(new_id()),
            transfer_id: Set(transfer.id.clone()),
            account_id: Set(a.id),
            kind: Set(if leg.amount > 0 { EntryKind::Income } else { EntryKind::Expense }),
            amount: Set(leg.amount),
            balance_after: Set(a.balance),
            held_after: Set(a.held),
            ref_type: Set(transfer.ref_type.clone()),
            ref_id: Set(transfer.ref_id.clone()),
            memo: Set(transfer.memo.clone()),
            created_at: Set(t),
        });
    }
    entries::Entity::insert_many(rows).exec_without_returning(txn).await?;
    if let Some((id, start, end)) = bill {
        add_to_bill(txn, Bill { id, account_id: payer, reference: p.reference, start, end }, credited, t).await?;
    }
    let entries = entries_of(txn, &transfer.id).await?;
    // Counted as posted (a replay is not); the rare transaction that rolls back after posting
    // is counted too.
    metrics::counter!(crate::observe::LEDGER_TRANSFERS).increment(1);
    Ok(Posted { transfer, entries, replayed: false })
}

async fn entries_of(conn: &impl ConnectionTrait, transfer_id: &str) -> Result<Vec<entries::Model>, AppError> {
    Ok(entries::Entity::find().filter(entries::Column::TransferId.eq(transfer_id)).order_by_asc(entries::Column::Seq).all(conn).await?)
}

async fn replay(conn: &impl ConnectionTrait, key: &str, fp: &str) -> Result<Posted, AppError> {
    let first = transfers::Entity::find()
        .filter(transfers::Column::Key.eq(key))
        .one(conn)
        .await?
        .ok_or_else(|| AppError::Internal(anyhow::anyhow!("transfer key {key} neither inserted nor found")))?;
    if first.fingerprint != fp {
        return Err(AppError::Refused(Msg::IdempotencyKeyReused));
    }
    let entries = entries_of(conn, &first.id).await?;
    Ok(Posted { transfer: first, entries, replayed: true })
}

/// The bill a metered posting adds to.
struct Bill {
    id: String,
    account_id: String,
    reference: Reference,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
}

async fn add_to_bill(conn: &impl ConnectionTrait, b: Bill, amount: i64, t: DateTime<Utc>) -> Result<(), AppError> {
    bills::Entity::insert(bills::ActiveModel {
        id: Set(b.id),
        account_id: Set(b.account_id),
        status: Set(BillStatus::Unbilled),
        ref_type: Set(b.reference.ref_type),
        ref_id: Set(b.reference.ref_id.unwrap_or_default()),
        period_start: Set(b.start),
        period_end: Set(b.end),
        amount: Set(amount),
        created_at: Set(t),
        billed_at: Set(None),
    })
    .on_conflict(
        OnConflict::column(bills::Column::Id).value(bills::Column::Amount, Expr::col((bills::Entity, bills::Column::Amount)).add(amount)).to_owned(),
    )
    .exec_without_returning(conn)
    .await?;
    Ok(())
}
