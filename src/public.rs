//! "Public data changed": the version every cache of public pages is keyed by, shared by every
//! instance on one database (DESIGN.md §5). A domain whose write changes what visitors see (the
//! market, the nearby list) calls [`PublicData::changed`]: the local version moves at once and
//! the row `data_versions('public')` is incremented. A reader that must be coherent with writes
//! made by other instances (the server renderer, per page) asks [`PublicData::current`], which
//! reads that row; instance-local copies of public data (the market index) follow
//! [`PublicData::subscribe`], which [`PublicData::follow`] (a job, every second) also drives.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, Statement};
use tokio::sync::{Mutex, watch};

#[derive(Clone, Debug)]
pub struct PublicData(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    /// What cache keys use: moves on every local change and every change seen in the database.
    local: AtomicU64,
    /// The database's version as last seen here.
    seen: AtomicI64,
    db: Option<DatabaseConnection>,
    tx: watch::Sender<u64>,
    /// Reads of the shared version started so far (numbered from 1).
    reads_started: AtomicU64,
    /// The number of the last read finished; held while a read runs, so reads queue one at a time.
    read_finished: Mutex<u64>,
}

impl Default for PublicData {
    /// Instance-local only (no database): for tools and unit tests.
    fn default() -> Self {
        PublicData::new(None)
    }
}

impl PublicData {
    pub fn new(db: Option<DatabaseConnection>) -> Self {
        let (tx, _) = watch::channel(1);
        PublicData(Arc::new(Inner {
            local: AtomicU64::new(1),
            seen: AtomicI64::new(0),
            db,
            tx,
            reads_started: AtomicU64::new(0),
            read_finished: Mutex::new(0),
        }))
    }

    fn bump_local(&self) {
        let v = self.0.local.fetch_add(1, Ordering::SeqCst) + 1;
        self.0.tx.send_replace(v);
    }

    /// Call after any write that changes what a public page shows (after its commit).
    pub fn changed(&self) {
        self.bump_local();
        if let Some(db) = self.0.db.clone() {
            let me = self.clone();
            tokio::spawn(async move {
                let bumped = db.execute_unprepared("UPDATE data_versions SET version = version + 1 WHERE name = 'public'").await;
                match bumped {
                    // Our own change: already counted locally.
                    Ok(_) => {
                        if let Ok(v) = read(&db).await {
                            me.0.seen.fetch_max(v, Ordering::SeqCst);
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "public data version not shared"),
                }
            });
        }
    }

    /// The version as this instance knows it (no database read).
    pub fn version(&self) -> u64 {
        self.0.local.load(Ordering::SeqCst)
    }

    /// The version, first taking in a change another instance made before this call: it waits for
    /// a read of the shared version that started after the call did. Callers arriving together
    /// share one read (a burst of page requests costs one small query, not one each).
    pub async fn current(&self) -> u64 {
        if self.0.db.is_none() {
            return self.version();
        }
        let arrived = self.0.reads_started.load(Ordering::SeqCst);
        let mut finished = self.0.read_finished.lock().await;
        if *finished <= arrived {
            // No read begun since this call arrived has finished: run one (reads are numbered in
            // the order they start; every caller waiting on the lock meanwhile is served by it).
            let n = self.0.reads_started.fetch_add(1, Ordering::SeqCst) + 1;
            if let Err(e) = self.follow().await {
                tracing::debug!(error = %e, "public data version unreadable");
            }
            *finished = n;
        }
        drop(finished);
        self.version()
    }

    /// Reads the shared version; true (and subscribers are told) when another instance moved it.
    pub async fn follow(&self) -> Result<bool, DbErr> {
        let Some(db) = &self.0.db else { return Ok(false) };
        let v = read(db).await?;
        let before = self.0.seen.fetch_max(v, Ordering::SeqCst);
        if v > before {
            self.bump_local();
            return Ok(true);
        }
        Ok(false)
    }

    /// Told the local version on every change (local or seen from another instance).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.0.tx.subscribe()
    }
}

async fn read(db: &DatabaseConnection) -> Result<i64, DbErr> {
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), "SELECT version FROM data_versions WHERE name = 'public'"))
        .await?;
    Ok(row.and_then(|r| r.try_get::<i64>("", "version").ok()).unwrap_or(0))
}
