//! The ledger: accounts, immutable transfers whose entries sum to zero, and two-phase holds.
//! This is the API other domains move coins with (docs/billing.md).
//!
//! Every public function is atomic on its own: it runs in a transaction it opens on a connection
//! (`BEGIN IMMEDIATE` on SQLite) or in a savepoint of the caller's transaction, so a refusal leaves
//! nothing behind even when the caller goes on and commits. Concurrency holds on SQLite and
//! PostgreSQL alike: an account changes only through one conditional `UPDATE … RETURNING` (the
//! row lock orders concurrent writers and the condition keeps `balance - held >= 0`), a key is a
//! unique index written with `ON CONFLICT DO NOTHING` (no read-then-write), and a hold resolves
//! through an `UPDATE` conditioned on `status = 'pending'`, which succeeds once. Locks are taken
//! in one order: the key, the hold, then accounts sorted by id.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict, Query, UpdateStatement};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseTransaction, DbBackend, DbErr, EntityTrait, FromQueryResult, QueryFilter, QueryOrder,
    QuerySelect, Set, SqliteTransactionMode, TransactionOptions, TransactionTrait,
};
use sha2::{Digest, Sha256};

use crate::billing::model::*;
use crate::db::entity::bills;
use crate::db::entity::ledger_accounts as accounts;
use crate::db::entity::ledger_entries as entries;
use crate::db::entity::ledger_holds as holds;
use crate::db::entity::ledger_transfers::{self as transfers, TransferKind};
use crate::db::{new_id, now};
use crate::error::{AppError, Msg};

/// Metered usage is billed by the hour: a bill's period is the clock hour of its postings.
pub const BILL_PERIOD_SECS: i64 = 3600;

/// A connection or a transaction: what the ledger's functions run on.
pub trait Conn: ConnectionTrait + TransactionTrait<Transaction = DatabaseTransaction> + Sync {}
impl<C: ConnectionTrait + TransactionTrait<Transaction = DatabaseTransaction> + Sync> Conn for C {}

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

/// A hold as placed (or as placed first, when `replayed`).
#[derive(Debug, Clone)]
pub struct Held {
    pub hold: holds::Model,
    pub replayed: bool,
}

/// Opens a transaction on a connection (`BEGIN IMMEDIATE` on SQLite, so writers queue on the
/// busy timeout) or a savepoint inside a transaction.
pub async fn begin(conn: &impl Conn) -> Result<DatabaseTransaction, DbErr> {
    let mode = (conn.get_database_backend() == DbBackend::Sqlite).then_some(SqliteTransactionMode::Immediate);
    conn.begin_with_options(TransactionOptions { sqlite_transaction_mode: mode, ..Default::default() }).await
}

/// Commits on success, rolls back on a refusal.
async fn finish<T>(txn: DatabaseTransaction, result: Result<T, AppError>) -> Result<T, AppError> {
    match result {
        Ok(v) => {
            txn.commit().await?;
            Ok(v)
        }
        Err(e) => {
            txn.rollback().await?;
            Err(e)
        }
    }
}

// ---- the public API ----

/// Issues `amount` new coins to `to` (the operator's grant).
pub async fn grant(conn: &impl Conn, to: AccountRef, amount: i64, key: String, memo: String) -> Result<Posted, AppError> {
    let legs = vec![Leg::debit(AccountRef::Issuance, amount), Leg::credit(to, amount)];
    let txn = begin(conn).await?;
    let r = post_in(&txn, Posting { key, kind: TransferKind::Grant, legs, hold: None, reference: Reference::kind_only("grant"), memo, metered: false }).await;
    finish(txn, r).await
}

/// Issues `amount` to a newly verified person, once per person (the key is theirs).
pub async fn signup_bonus(conn: &impl Conn, user_id: &str, amount: i64) -> Result<Option<Posted>, AppError> {
    if amount <= 0 {
        return Ok(None);
    }
    let to = AccountRef::User(user_id.to_string());
    let legs = vec![Leg::debit(AccountRef::Issuance, amount), Leg::credit(to, amount)];
    let posting = Posting {
        key: format!("signup_bonus:{user_id}"),
        kind: TransferKind::SignupBonus,
        legs,
        hold: None,
        reference: Reference::kind_only("signup_bonus"),
        memo: "Signup bonus".into(),
        metered: false,
    };
    let txn = begin(conn).await?;
    let r = post_in(&txn, posting).await;
    finish(txn, r).await.map(Some)
}

/// Spends from `from`'s available balance to `splits`; refused (409) when it would take
/// `available` below zero.
pub async fn pay(conn: &impl Conn, spec: PaySpec) -> Result<Posted, AppError> {
    let total = splits_total(&spec.splits)?;
    let mut legs = vec![Leg::debit(spec.from, total)];
    legs.extend(spec.splits.into_iter().map(|s| Leg::credit(s.account, s.amount)));
    let posting = Posting { key: spec.key, kind: TransferKind::Payment, legs, hold: None, reference: spec.reference, memo: spec.memo, metered: spec.metered };
    let txn = begin(conn).await?;
    let r = post_in(&txn, posting).await;
    finish(txn, r).await
}

/// Reserves `amount` of the account's available coins; refused (409) when it has less.
pub async fn hold(conn: &impl Conn, spec: HoldSpec) -> Result<Held, AppError> {
    let txn = begin(conn).await?;
    let r = hold_in(&txn, spec).await;
    finish(txn, r).await
}

/// Posts `amount` of a pending hold to `splits`; the hold resolves as `captured` when nothing is
/// left of it. Refused when the hold has resolved or has less left than `amount`.
pub async fn capture(conn: &impl Conn, spec: CaptureSpec) -> Result<Posted, AppError> {
    let total = splits_total(&spec.splits)?;
    if total != spec.amount {
        return Err(AppError::Internal(anyhow::anyhow!("capture splits sum to {total}, not {}", spec.amount)));
    }
    let txn = begin(conn).await?;
    let r = async {
        let h = holds::Entity::find_by_id(spec.hold_id.clone()).one(&txn).await?.ok_or(AppError::NotFound(Msg::HoldNotFound))?;
        let payer = account_ref_of(&h.account_id)?;
        let mut legs = vec![Leg { from_held: true, ..Leg::debit(payer, total) }];
        legs.extend(spec.splits.into_iter().map(|s| Leg::credit(s.account, s.amount)));
        let reference = Reference { ref_type: h.ref_type.clone(), ref_id: h.ref_id.clone() };
        let posting = Posting { key: spec.key, kind: TransferKind::Capture, legs, hold: Some(h.id), reference, memo: spec.memo, metered: spec.metered };
        post_in(&txn, posting).await
    }
    .await;
    finish(txn, r).await
}

/// Releases what is left of a hold. Releasing a resolved hold changes nothing and answers it as
/// it is (a hold resolves exactly once, so a retried release is harmless).
pub async fn release(conn: &impl Conn, hold_id: &str) -> Result<holds::Model, AppError> {
    let txn = begin(conn).await?;
    let r = resolve_in(&txn, hold_id, HoldEvent::Release, now()).await;
    finish(txn, r).await
}

/// Releases every pending hold whose `expires_at` has passed (the expiry job). Returns how many.
pub async fn expire_due(conn: &impl Conn, at: DateTime<Utc>) -> Result<u64, AppError> {
    let due: Vec<String> = holds::Entity::find()
        .select_only()
        .column(holds::Column::Id)
        .filter(holds::Column::Status.eq(HoldStatus::Pending))
        .filter(holds::Column::ExpiresAt.lte(at))
        .order_by_asc(holds::Column::ExpiresAt)
        .limit(1000)
        .into_tuple()
        .all(conn)
        .await?;
    let mut expired = 0;
    for id in due {
        let txn = begin(conn).await?;
        let r = resolve_in(&txn, &id, HoldEvent::Expire, at).await;
        if finish(txn, r).await?.status == HoldStatus::Expired {
            expired += 1;
        }
    }
    Ok(expired)
}

/// Sets how fast a pending hold is being spent (0 while its work is stopped); the runway uses it.
pub async fn set_burn(conn: &impl ConnectionTrait, hold_id: &str, burn_per_hour: i64) -> Result<(), AppError> {
    holds::Entity::update_many()
        .col_expr(holds::Column::BurnPerHour, Expr::value(std::cmp::max(burn_per_hour, 0)))
        .filter(holds::Column::Id.eq(hold_id))
        .filter(holds::Column::Status.eq(HoldStatus::Pending))
        .exec(conn)
        .await?;
    Ok(())
}

/// The account's row, when it has ever moved coins.
pub async fn account(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<Option<accounts::Model>, AppError> {
    Ok(accounts::Entity::find_by_id(account.id()).one(conn).await?)
}

// ---- postings ----

/// One leg of a transfer: a signed amount on one account.
#[derive(Debug, Clone)]
struct Leg {
    account: AccountRef,
    amount: i64,
    /// A debit of held coins (a capture): it lowers `held` with `balance`, so `available` stays.
    from_held: bool,
}

impl Leg {
    fn debit(account: AccountRef, amount: i64) -> Leg {
        Leg { account, amount: -amount, from_held: false }
    }
    fn credit(account: AccountRef, amount: i64) -> Leg {
        Leg { account, amount, from_held: false }
    }
}

struct Posting {
    key: String,
    kind: TransferKind,
    legs: Vec<Leg>,
    hold: Option<String>,
    reference: Reference,
    memo: String,
    metered: bool,
}

fn splits_total(splits: &[Split]) -> Result<i64, AppError> {
    let mut total: i64 = 0;
    for s in splits {
        if s.amount < 1 || s.amount > AMOUNT_MAX {
            return Err(AppError::invalid("amount", Msg::AmountInvalid));
        }
        total = total.checked_add(s.amount).filter(|t| *t <= AMOUNT_MAX).ok_or(AppError::invalid("amount", Msg::AmountInvalid))?;
    }
    if total == 0 {
        return Err(AppError::invalid("amount", Msg::AmountInvalid));
    }
    Ok(total)
}

fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
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

pub(crate) fn account_ref_of(id: &str) -> Result<AccountRef, AppError> {
    match id.split_once(':') {
        Some(("user", u)) => Ok(AccountRef::User(u.to_string())),
        Some(("company", c)) => Ok(AccountRef::Company(c.to_string())),
        _ if id == AccountRef::Issuance.id() => Ok(AccountRef::Issuance),
        _ if id == AccountRef::MarketFee.id() => Ok(AccountRef::MarketFee),
        _ => Err(AppError::Internal(anyhow::anyhow!("unknown ledger account {id}"))),
    }
}

/// The refusal naming what is missing, with the figures in `data`.
pub fn insufficient(available: i64, needed: i64) -> AppError {
    AppError::Conflict {
        msg: Msg::InsufficientBalance { available, needed },
        data: Some(serde_json::json!({ "available": available, "needed": needed })),
    }
}

async fn ensure_account(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<(), AppError> {
    let t = now();
    accounts::Entity::insert(accounts::ActiveModel {
        id: Set(account.id()),
        kind: Set(account.kind()),
        owner_id: Set(account.owner().map(str::to_string)),
        balance: Set(0),
        held: Set(0),
        income_total: Set(0),
        expense_total: Set(0),
        runway_notice: Set(0),
        created_at: Set(t),
        updated_at: Set(t),
    })
    .on_conflict_do_nothing_on([accounts::Column::Id])
    .exec_without_returning(conn)
    .await?;
    Ok(())
}

async fn returning_account(conn: &impl ConnectionTrait, mut q: UpdateStatement) -> Result<Option<accounts::Model>, AppError> {
    q.returning_all();
    match conn.query_one(&q).await? {
        Some(row) => Ok(Some(accounts::Model::from_query_result(&row, "")?)),
        None => Ok(None),
    }
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
    let existing = accounts::Entity::find_by_id(id.clone()).one(conn).await?;
    match existing {
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
async fn post_in(txn: &DatabaseTransaction, p: Posting) -> Result<Posted, AppError> {
    if p.legs.iter().map(|l| l.amount).sum::<i64>() != 0 || p.legs.iter().any(|l| l.amount == 0) {
        return Err(AppError::Internal(anyhow::anyhow!("unbalanced transfer {}", p.key)));
    }
    if p.legs.iter().any(|l| l.amount.abs() > AMOUNT_MAX) {
        return Err(AppError::invalid("amount", Msg::AmountInvalid));
    }
    let t = now();
    let fp = fingerprint(&p);
    let payer = p.legs.iter().find(|l| l.amount < 0).map(|l| l.account.id()).unwrap_or_default();
    let bill = if p.metered { bill_of(&payer, &p.reference, t) } else { None };
    let credited: i64 = p.legs.iter().filter(|l| l.amount > 0).map(|l| l.amount).sum();
    let transfer = transfers::Model {
        id: new_id(),
        key: p.key.clone(),
        fingerprint: fp.clone(),
        kind: p.kind,
        amount: credited,
        hold_id: p.hold.clone(),
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
        take_from_hold(txn, hold_id, credited, t).await?;
    }
    // Accounts in id order, so two transfers never wait on each other's rows crosswise.
    let mut legs = p.legs;
    legs.sort_by_key(|l| l.account.id());
    let mut after = Vec::with_capacity(legs.len());
    for leg in &legs {
        after.push(apply_leg(txn, leg).await?);
    }
    let rows: Vec<entries::Model> = legs
        .iter()
        .zip(&after)
        .map(|(leg, a)| entries::Model {
            seq: 0,
            id: new_id(),
            transfer_id: transfer.id.clone(),
            account_id: a.id.clone(),
            kind: if leg.amount > 0 { EntryKind::Income } else { EntryKind::Expense },
            amount: leg.amount,
            balance_after: a.balance,
            held_after: a.held,
            ref_type: transfer.ref_type.clone(),
            ref_id: transfer.ref_id.clone(),
            memo: transfer.memo.clone(),
            created_at: t,
        })
        .collect();
    let active: Vec<entries::ActiveModel> = rows
        .iter()
        .map(|e| {
            let mut am: entries::ActiveModel = e.clone().into();
            am.seq = sea_orm::ActiveValue::NotSet;
            am
        })
        .collect();
    entries::Entity::insert_many(active).exec_without_returning(txn).await?;
    if let Some((id, start, end)) = bill {
        add_to_bill(txn, &id, &payer, &p.reference, start, end, credited, t).await?;
    }
    let entries = entries_of(txn, &transfer.id).await?;
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
        return Err(AppError::conflict(Msg::IdempotencyKeyReused));
    }
    let entries = entries_of(conn, &first.id).await?;
    Ok(Posted { transfer: first, entries, replayed: true })
}

#[allow(clippy::too_many_arguments)]
async fn add_to_bill(
    conn: &impl ConnectionTrait,
    id: &str,
    account_id: &str,
    reference: &Reference,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    amount: i64,
    t: DateTime<Utc>,
) -> Result<(), AppError> {
    bills::Entity::insert(bills::ActiveModel {
        id: Set(id.to_string()),
        account_id: Set(account_id.to_string()),
        status: Set(BillStatus::Unbilled),
        ref_type: Set(reference.ref_type.clone()),
        ref_id: Set(reference.ref_id.clone().unwrap_or_default()),
        period_start: Set(start),
        period_end: Set(end),
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

// ---- holds ----

fn hold_fingerprint(spec: &HoldSpec) -> String {
    sha256_hex(&format!(
        "{}|{}|{}|{:?}|{}",
        spec.account.id(),
        spec.amount,
        spec.reference.ref_type,
        spec.reference.ref_id,
        spec.burn_per_hour
    ))
}

async fn hold_in(txn: &DatabaseTransaction, spec: HoldSpec) -> Result<Held, AppError> {
    use accounts::Column as A;
    if !(1..=AMOUNT_MAX).contains(&spec.amount) {
        return Err(AppError::invalid("amount", Msg::AmountInvalid));
    }
    if !matches!(spec.account, AccountRef::User(_) | AccountRef::Company(_)) {
        return Err(AppError::Internal(anyhow::anyhow!("holds are for wallets, not {}", spec.account.id())));
    }
    let fp = hold_fingerprint(&spec);
    let account_id = spec.account.id();
    ensure_account(txn, &spec.account).await?;
    let t = now();
    let row = holds::Model {
        id: new_id(),
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
            return Err(AppError::conflict(Msg::IdempotencyKeyReused));
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

/// Takes `amount` of a pending hold for a capture; the hold resolves as captured when nothing is left.
async fn take_from_hold(txn: &DatabaseTransaction, hold_id: &str, amount: i64, t: DateTime<Utc>) -> Result<(), AppError> {
    use holds::Column as H;
    let mut q = Query::update();
    q.table(holds::Entity)
        .value(H::Captured, Expr::col(H::Captured).add(amount))
        .and_where(Expr::col(H::Id).eq(hold_id))
        .and_where(Expr::col(H::Status).eq(HoldStatus::Pending))
        .and_where(Expr::col(H::Amount).sub(Expr::col(H::Captured)).gte(amount))
        .returning_all();
    let Some(row) = txn.query_one(&q).await? else {
        let h = holds::Entity::find_by_id(hold_id).one(txn).await?.ok_or(AppError::NotFound(Msg::HoldNotFound))?;
        return Err(match h.status {
            HoldStatus::Pending => AppError::conflict(Msg::CaptureExceedsHold { left: h.amount - h.captured, asked: amount }),
            _ => AppError::conflict(Msg::HoldResolved),
        });
    };
    let h = holds::Model::from_query_result(&row, "")?;
    if h.status.next(HoldEvent::Capture { left: h.amount - h.captured }) == Some(HoldStatus::Captured) {
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

/// Resolves a pending hold by a release or an expiry: what is left goes back to available.
async fn resolve_in(txn: &DatabaseTransaction, hold_id: &str, event: HoldEvent, at: DateTime<Utc>) -> Result<holds::Model, AppError> {
    use accounts::Column as A;
    use holds::Column as H;
    let target = HoldStatus::Pending.next(event).ok_or_else(|| AppError::Internal(anyhow::anyhow!("{event:?} does not resolve a hold")))?;
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
        // Resolved already (or not due): answered as it is.
        return holds::Entity::find_by_id(hold_id).one(txn).await?.ok_or(AppError::NotFound(Msg::HoldNotFound));
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
