//! "Public data changed": the version every cache of public pages is keyed by, shared by every
//! instance on one database (docs/security.md "Several instances"). A domain whose write changes what visitors see (the
//! market, the nearby list) calls [`PublicData::changed`]: the local version moves at once and
//! the row `data_versions('public')` is incremented. A reader that must be coherent with writes
//! made by other instances (the server renderer, per page) asks [`PublicData::current`], which
//! reads that row; instance-local copies of public data (the market index) follow
//! [`PublicData::subscribe`], which [`PublicData::follow`] (a job, every second) also drives.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use sea_orm::{ConnectionTrait, DbErr};
use tokio::sync::watch;

use crate::versions::Versions;

#[derive(Clone, Debug)]
pub struct PublicData(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    /// What cache keys use: moves on every local change and every change seen in the database.
    local: AtomicU64,
    /// The database's version as last seen here.
    seen: AtomicI64,
    /// The shared versions (None: instance-local only).
    shared: Option<Versions>,
    tx: watch::Sender<u64>,
}

impl Default for PublicData {
    /// Instance-local only (no database): for tools and unit tests.
    fn default() -> Self {
        PublicData::new(None)
    }
}

impl PublicData {
    pub fn new(shared: Option<Versions>) -> Self {
        let (tx, _) = watch::channel(1);
        PublicData(Arc::new(Inner { local: AtomicU64::new(1), seen: AtomicI64::new(0), shared, tx }))
    }

    fn bump_local(&self) {
        let v = self.0.local.fetch_add(1, Ordering::SeqCst) + 1;
        self.0.tx.send_replace(v);
    }

    /// Call after any write that changes what a public page shows (after its commit).
    pub fn changed(&self) {
        self.bump_local();
        if let Some(versions) = self.0.shared.clone() {
            let me = self.clone();
            tokio::spawn(async move {
                let bumped = versions.db().execute_unprepared("UPDATE data_versions SET version = version + 1 WHERE name = 'public'").await;
                match bumped {
                    // Our own change: already counted locally.
                    Ok(_) => {
                        if let Ok(v) = versions.fresh().await {
                            me.0.seen.fetch_max(v.public, Ordering::SeqCst);
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "public data version not shared"),
                }
            });
        }
    }

    /// This instance's copies of public data changed without a new write (the market index took in
    /// what the database says now): the local version moves, so pages rendered before are rendered
    /// again; the shared version stays (each instance follows the database itself).
    pub fn changed_here(&self) {
        self.bump_local();
    }

    /// The version as this instance knows it (no database read).
    pub fn version(&self) -> u64 {
        self.0.local.load(Ordering::SeqCst)
    }

    /// The version, first taking in a change another instance made before this call: it waits for
    /// a read of the shared versions that started after the call did (callers arriving together
    /// share one read: src/versions.rs).
    pub async fn current(&self) -> u64 {
        if let Err(e) = self.follow().await {
            tracing::debug!(error = %e, "public data version unreadable");
        }
        self.version()
    }

    /// Reads the shared version; true (and subscribers are told) when another instance moved it.
    pub async fn follow(&self) -> Result<bool, DbErr> {
        let Some(versions) = &self.0.shared else { return Ok(false) };
        let v = versions.fresh().await?.public;
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
