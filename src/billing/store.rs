//! The ledger's row-level pieces shared by postings and holds: transactions (or savepoints),
//! creating an account on its first movement, and conditional updates that answer the row.

use sea_orm::sea_query::{Expr, ExprTrait, IntoColumnRef, UpdateStatement};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseTransaction, DbBackend, DbErr, EntityTrait, FromQueryResult, QueryFilter, Set, SqliteTransactionMode, TransactionOptions,
    TransactionTrait,
};
use sha2::{Digest, Sha256};

use crate::billing::accounts::AccountRef;
use crate::db::entity::ledger_accounts as accounts;
use crate::db::now;
use crate::error::AppError;

/// A connection or a transaction: what the ledger's functions run on.
pub trait Conn: ConnectionTrait + TransactionTrait<Transaction = DatabaseTransaction> + Sync {}
impl<C: ConnectionTrait + TransactionTrait<Transaction = DatabaseTransaction> + Sync> Conn for C {}

/// Opens a transaction on a connection (`BEGIN IMMEDIATE` on SQLite, so writers queue on the
/// busy timeout) or a savepoint inside a transaction.
pub async fn begin(conn: &impl Conn) -> Result<DatabaseTransaction, DbErr> {
    let mode = (conn.get_database_backend() == DbBackend::Sqlite).then_some(SqliteTransactionMode::Immediate);
    conn.begin_with_options(TransactionOptions { sqlite_transaction_mode: mode, ..Default::default() }).await
}

/// Commits on success, rolls back on a refusal.
pub async fn finish<T>(txn: DatabaseTransaction, result: Result<T, AppError>) -> Result<T, AppError> {
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

pub fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The account's row, when it has ever moved coins.
pub async fn account(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<Option<accounts::Model>, AppError> {
    Ok(accounts::Entity::find_by_id(account.id()).one(conn).await?)
}

/// The balances of `accounts` that have ever moved coins, by account id (`AccountRef::id`).
pub async fn balances(conn: &impl ConnectionTrait, accounts: &[AccountRef]) -> Result<std::collections::HashMap<String, i64>, AppError> {
    let rows = accounts::Entity::find().filter(accounts::Column::Id.is_in(accounts.iter().map(AccountRef::id))).all(conn).await?;
    Ok(rows.into_iter().map(|a| (a.id, a.balance)).collect())
}

/// Creates the account's row unless it exists (two creators racing: one row).
pub async fn ensure_account(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<(), AppError> {
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

/// Runs a conditional `UPDATE … RETURNING` on accounts: the row after it, or `None` when the
/// condition held for no row.
pub async fn returning_account(conn: &impl ConnectionTrait, mut q: UpdateStatement) -> Result<Option<accounts::Model>, AppError> {
    q.returning_all();
    match conn.query_one(&q).await? {
        Some(row) => Ok(Some(accounts::Model::from_query_result(&row, "")?)),
        None => Ok(None),
    }
}

/// `SUM(col)` as a 64-bit integer on both backends (PostgreSQL sums bigints into numeric).
pub fn sum_i64(col: impl IntoColumnRef) -> Expr {
    Expr::col(col).sum().cast_as("BIGINT")
}
