//! The shared data versions (table `data_versions`), read together: one small query returns all
//! of them, and callers arriving together share it. A cache that must be coherent with writes
//! made by any instance keys its entries by a version read *after* the request arrived
//! ([`Versions::fresh`]): a write committed before the request was sent has moved the version by
//! then (the `sessions` and `stats` versions move in the writer's transaction, by triggers:
//! m0014), so an entry stored under an older version is never served for it.
//!
//! Under load this is what lets a cache answer without a database round trip per request: a
//! burst of requests costs one read of a few rows, not one query each.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sea_orm::{DatabaseConnection, DbBackend, DbErr, sqlx};
use tokio::sync::Mutex;

/// The versions as one read saw them (0 for a row that is missing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub public: i64,
    pub sessions: i64,
    pub stats: i64,
    /// What profiles show (users' name, email, avatar; m0024).
    pub profiles: i64,
}

#[derive(Clone, Debug)]
pub struct Versions(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    db: DatabaseConnection,
    /// Where the versions are read: a connection of their own (`db::connect_reader`), so a read
    /// never waits in the pool's queue behind the queries of the requests waiting for it.
    reader: DatabaseConnection,
    /// Reads started so far (numbered from 1).
    started: AtomicU64,
    /// The number of the last read finished and what it saw; held while a read runs, so reads
    /// run one at a time and every caller waiting meanwhile is served by the next one.
    last: Mutex<(u64, Result<Snapshot, String>)>,
}

impl Versions {
    pub fn new(db: DatabaseConnection) -> Self {
        Versions::with_reader(db.clone(), db)
    }

    /// Versions read through `reader` (the same database as `db`).
    pub fn with_reader(db: DatabaseConnection, reader: DatabaseConnection) -> Self {
        Versions(Arc::new(Inner { db, reader, started: AtomicU64::new(0), last: Mutex::new((0, Ok(Snapshot::default()))) }))
    }

    /// The database the versions live in (a writer that moves one uses it).
    pub fn db(&self) -> &DatabaseConnection {
        &self.0.db
    }

    /// The versions as of a read that started after this call did.
    pub async fn fresh(&self) -> Result<Snapshot, DbErr> {
        let arrived = self.0.started.load(Ordering::SeqCst);
        let mut last = self.0.last.lock().await;
        if last.0 <= arrived {
            // No read begun since this call arrived has finished: run one.
            let n = self.0.started.fetch_add(1, Ordering::SeqCst) + 1;
            *last = (n, read(&self.0.reader).await.map_err(|e| e.to_string()));
        }
        last.1.clone().map_err(DbErr::Custom)
    }
}

/// One read, through sqlx itself (a prepared statement of the connection): sea-orm's generic
/// query path moved futures of several kilobytes for each of these reads, one per burst of
/// requests, and cost `/market` more than its page did.
async fn read(db: &DatabaseConnection) -> Result<Snapshot, DbErr> {
    const READ: &str = "SELECT name, version FROM data_versions";
    let rows: Vec<(String, i64)> = match db.get_database_backend() {
        DbBackend::Sqlite => sqlx::query_as(READ).fetch_all(db.get_sqlite_connection_pool()).await,
        DbBackend::Postgres => sqlx::query_as(READ).fetch_all(db.get_postgres_connection_pool()).await,
        other => return Err(DbErr::Custom(format!("no versions on {other:?}"))),
    }
    .map_err(|e| DbErr::Custom(e.to_string()))?;
    let mut s = Snapshot::default();
    for (name, version) in rows {
        match name.as_str() {
            "public" => s.public = version,
            "sessions" => s.sessions = version,
            "stats" => s.stats = version,
            "profiles" => s.profiles = version,
            _ => {}
        }
    }
    Ok(s)
}

/// What this instance changed of where boxes stand (an app placed on or taken off a box, a GPU
/// held or let go, a box reserved for an order): moved by those writes, read by the Rent dialog's
/// offers cache (src/apps/rental.rs) so a person sees their own change at once. Writes made by
/// another instance are not seen here: the offers cache keeps an answer one second at most.
static STANDING: AtomicU64 = AtomicU64::new(0);

/// A write changed where a box stands.
pub fn standing_changed() {
    STANDING.fetch_add(1, Ordering::Relaxed);
}

/// How many times this instance changed where boxes stand.
pub fn standing() -> u64 {
    STANDING.load(Ordering::Relaxed)
}

/// Answers kept under one version of [`Versions`]: an entry is served only for a request that
/// read the same version after it arrived; a newer version empties the map (so does reaching
/// `capacity`: the map starts again rather than growing without bound).
pub struct VersionedCache<K, V> {
    capacity: usize,
    map: std::sync::Mutex<(i64, std::collections::HashMap<K, V>)>,
}

impl<K: std::hash::Hash + Eq, V: Clone> VersionedCache<K, V> {
    pub fn new(capacity: usize) -> Self {
        VersionedCache { capacity, map: std::sync::Mutex::new((0, std::collections::HashMap::new())) }
    }

    pub fn get<Q>(&self, version: i64, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.0 != version {
            return None;
        }
        map.1.get(key).cloned()
    }

    /// Stores what was read from the database after `version` was read.
    pub fn put(&self, version: i64, key: K, value: V) {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if version < map.0 {
            return; // read under a version already superseded here
        }
        if version > map.0 || map.1.len() >= self.capacity {
            map.1.clear();
            map.0 = version;
        }
        map.1.insert(key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::VersionedCache;

    #[test]
    fn an_entry_is_served_only_under_its_version() {
        let c: VersionedCache<String, u32> = VersionedCache::new(2);
        c.put(5, "a".into(), 1);
        assert_eq!(c.get(5, "a"), Some(1));
        assert_eq!(c.get(6, "a"), None, "a newer version never sees an older entry");
        c.put(4, "b".into(), 2);
        assert_eq!(c.get(4, "b"), None, "an answer read under a superseded version is not kept");
        c.put(6, "c".into(), 3);
        assert_eq!(c.get(6, "a"), None, "a newer version empties the map");
        assert_eq!(c.get(6, "c"), Some(3));
        c.put(6, "d".into(), 4);
        c.put(6, "e".into(), 5);
        assert_eq!(c.get(6, "c"), None, "at capacity the map starts again");
        assert_eq!(c.get(6, "e"), Some(5));
    }
}
