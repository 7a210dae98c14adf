//! Storage: the connection (SQLite in WAL mode by default, PostgreSQL by configuration),
//! the migrations and the entities.

pub mod backup;
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
    if url.starts_with("sqlite:") && config.database.url.is_empty() {
        let file = config.data_dir.join("zmarket.db");
        crate::secrets::private_dir(&config.data_dir).map_err(|e| DbErr::Custom(format!("cannot create data dir: {e}")))?;
        crate::secrets::private_file(&file).map_err(|e| DbErr::Custom(format!("cannot create {}: {e}", file.display())))?;
    }
    let mut db = Database::connect(opts).await?;
    log_slow_statements(&mut db, config.database.slow_statement_ms);
    Ok(db)
}

/// Statements slower than `ms` are logged at `warn`: their time and SQL (the first 400
/// characters; the values bound to it are never logged, they may be secrets). Every statement
/// is also an event at `trace` of the target `zmarket::db::statement`, in the span of the request
/// or job that ran it (`RUST_LOG=zmarket::db::statement=trace` counts what a request costs).
fn log_slow_statements(db: &mut DatabaseConnection, ms: u64) {
    if ms == 0 {
        return;
    }
    let slow = Duration::from_millis(ms);
    db.set_metric_callback(move |info| {
        tracing::trace!(target: "zmarket::db::statement", sql = %info.statement.sql.chars().take(120).collect::<String>());
        if info.elapsed >= slow {
            let sql: String = info.statement.sql.chars().take(400).collect();
            tracing::warn!(elapsed_ms = info.elapsed.as_secs_f64() * 1000.0, failed = info.failed, sql = %sql, "slow statement");
        }
    });
}

/// A pool of one connection of its own for the reads of the shared versions (src/versions.rs).
/// Every authenticated request waits for such a read: in the main pool it queued behind the
/// requests' own queries (a burst of profile reads held it for milliseconds, for everyone).
/// It connects on its first read and keeps no minimum: a pool that keeps one reconnects by
/// itself, and on PostgreSQL a reconnection caught half-way (its backend still authenticating)
/// holds up every `DROP DATABASE` on the server until `authentication_timeout`.
pub async fn connect_reader(config: &Config) -> Result<DatabaseConnection, DbErr> {
    let mut opts = ConnectOptions::new(config.database_url());
    let busy = Duration::from_millis(config.database.busy_timeout_ms);
    opts.max_connections(1)
        .min_connections(0)
        .connect_timeout(Duration::from_secs(10))
        .acquire_timeout(Duration::from_secs(30))
        .sqlx_logging(false)
        .map_sqlx_sqlite_opts(move |o| o.journal_mode(SqliteJournalMode::Wal).busy_timeout(busy).foreign_keys(true));
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

/// A select that locks the rows it reads until the transaction ends, for a check-then-write.
/// PostgreSQL: `FOR NO KEY UPDATE` (serializes the writers of those rows; a foreign-key check
/// from another table still passes, so it adds no deadlock with inserts that reference the row).
/// SQLite: unchanged, because `write_txn`'s `BEGIN IMMEDIATE` already holds the one write lock.
/// Lock the parent row a rule is about (the company, the host, the device) before reading
/// what the rule checks. See docs/security.md, "Check-then-write".
pub fn for_update<E: sea_orm::EntityTrait>(conn: &impl ConnectionTrait, select: sea_orm::Select<E>) -> sea_orm::Select<E> {
    use sea_orm::QuerySelect;
    match conn.get_database_backend() {
        DbBackend::Postgres => select.lock(sea_orm::sea_query::LockType::NoKeyUpdate),
        _ => select,
    }
}

/// The pool's open connections, idle and in use, as `/metrics` text (read when it is asked).
pub fn pool_gauges(db: &DatabaseConnection) -> String {
    let (open, idle) = match db.get_database_backend() {
        DbBackend::Sqlite => {
            let p = db.get_sqlite_connection_pool();
            (p.size() as usize, p.num_idle())
        }
        DbBackend::Postgres => {
            let p = db.get_postgres_connection_pool();
            (p.size() as usize, p.num_idle())
        }
        _ => return String::new(),
    };
    let values = [(vec![("state", "idle")], idle as f64), (vec![("state", "in_use")], open.saturating_sub(idle) as f64)];
    crate::observe::gauge_lines(crate::observe::DB_POOL, "Connections of the database pool, idle and in use.", values)
}

/// True when the database answers a trivial query.
pub async fn ping(db: &DatabaseConnection) -> bool {
    db.execute_unprepared("SELECT 1").await.is_ok()
}

/// How far the market's clock runs ahead of the machine's, in milliseconds. Always 0 in a
/// market; tests that play hours of a rental in seconds move it (`move_clock_ahead`), and only in
/// a test binary of their own (tests/clock/), since it is one clock for the whole process.
static CLOCK_AHEAD_MS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

/// The market's time: every rule that compares times reads it (never `Utc::now()` directly).
pub fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now() + chrono::Duration::milliseconds(CLOCK_AHEAD_MS.load(std::sync::atomic::Ordering::Relaxed))
}

/// Moves the market's clock ahead by `by` for this whole process (tests/clock/ only).
#[doc(hidden)]
pub fn move_clock_ahead(by: chrono::Duration) {
    CLOCK_AHEAD_MS.fetch_add(by.num_milliseconds(), std::sync::atomic::Ordering::Relaxed);
}

pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
