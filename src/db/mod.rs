//! Storage: the connection (SQLite in WAL mode by default, PostgreSQL by configuration),
//! the migrations and the entities.

pub mod entity;
pub mod enums;
pub mod migration;

use std::time::Duration;

use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr,
    SqliteTransactionMode, TransactionOptions, TransactionTrait,
};
use sea_orm_migration::MigratorTrait;

use crate::config::Config;

pub async fn connect(config: &Config) -> Result<DatabaseConnection, DbErr> {
    let url = config.database_url();
    let mut opts = ConnectOptions::new(url.clone());
    let busy = Duration::from_millis(config.database.busy_timeout_ms);
    opts.max_connections(config.database.max_connections)
        .min_connections(1)
        .connect_timeout(Duration::from_secs(10))
        .acquire_timeout(Duration::from_secs(30))
        .sqlx_logging(false)
        .map_sqlx_sqlite_opts(move |o| {
            o.journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(busy)
                .foreign_keys(true)
                .create_if_missing(true)
        });
    if url.starts_with("sqlite:")
        && let Some(parent) = config.data_dir.join("zmarket.db").parent() {
            std::fs::create_dir_all(parent).map_err(|e| DbErr::Custom(format!("cannot create data dir: {e}")))?;
        }
    Database::connect(opts).await
}

pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    migration::Migrator::up(db, None).await
}

/// Begins a transaction that will write. On SQLite it takes the write lock at once
/// (`BEGIN IMMEDIATE`), so two writers queue on the busy timeout instead of one of them
/// failing with "database is locked" when it upgrades a read lock.
pub async fn write_txn(db: &DatabaseConnection) -> Result<DatabaseTransaction, DbErr> {
    let mode = match db.get_database_backend() {
        DbBackend::Sqlite => Some(SqliteTransactionMode::Immediate),
        _ => None,
    };
    db.begin_with_options(TransactionOptions { sqlite_transaction_mode: mode, ..Default::default() })
        .await
}

/// True when the database answers a trivial query.
pub async fn ping(db: &DatabaseConnection) -> bool {
    db.execute_unprepared("SELECT 1").await.is_ok()
}

pub fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
