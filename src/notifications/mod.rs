//! A person's notifications (`/api/ebs/v1/notifications`): the stats the console polls every
//! 10 s, the list (all or unread) and marking one read. Other domains write them (devices: status
//! changes and Z-CLOUD results) with English text in the row and the Chinese text in `params`,
//! and add their own counts to the stats through a [`StatsSource`]. See docs/notifications.md.

pub mod model;
pub mod routes;
pub mod service;

use std::sync::Arc;
use std::time::Duration;

use sea_orm::sea_query::{Asterisk, Expr, Func};
use sea_orm::{DatabaseConnection, EntityTrait, QuerySelect, QueryTrait, Select};
use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::iam::auth::Auth;
use crate::jobs::{Runs, repeated};
use crate::versions::{VersionedCache, Versions};
use model::Stats;

/// A domain's part of the notification stats: counts the poll computes in its one statement
/// (scalar subqueries beside the counter row's), and how they set the domain's fields.
pub trait StatsSource: Send + Sync {
    /// Named counts for `auth` (each name the source's own; see [`count_of`]).
    fn counts(&self, auth: &Auth) -> Vec<(&'static str, Expr)>;
    /// Sets the source's fields; `count` answers each name given by `counts` (0 for another).
    fn fill(&self, count: &dyn Fn(&str) -> u64, stats: &mut Stats);
}

/// `(SELECT COUNT(*) FROM … WHERE …)` of a query: a value of the poll's one statement.
pub fn count_of<E: EntityTrait>(select: Select<E>) -> Expr {
    let q = select.select_only().expr(Func::count(Expr::col(Asterisk))).into_query();
    Expr::SubQuery(None, Box::new(q.into()))
}

/// Every registered source, asked in order (assembled in src/server.rs).
#[derive(Clone, Default)]
pub struct StatsSources(Arc<Vec<Arc<dyn StatsSource>>>);

impl StatsSources {
    pub fn new(sources: Vec<Arc<dyn StatsSource>>) -> Self {
        StatsSources(Arc::new(sources))
    }
    pub fn counts(&self, auth: &Auth) -> Vec<(&'static str, Expr)> {
        self.0.iter().flat_map(|s| s.counts(auth)).collect()
    }
    pub fn fill(&self, count: &dyn Fn(&str) -> u64, stats: &mut Stats) {
        for s in self.0.iter() {
            s.fill(count, stats);
        }
    }
}

/// What the notification rules use.
#[derive(Clone)]
pub struct NotificationsCtx {
    pub db: DatabaseConnection,
    pub stats: StatsSources,
    pub versions: Versions,
    /// Each person's stats (per context) under the shared `stats` version, which every write the
    /// stats count moves in its transaction (m0014): an unchanged poll costs no query of its own.
    pub cached: Arc<StatsCache>,
}

/// (user id, context) → the stats and until when their `recent` count holds (the oldest recent
/// notification leaving the window; `None`: until a write).
pub type StatsCache = VersionedCache<(String, String), (Stats, Option<chrono::DateTime<chrono::Utc>>)>;

impl NotificationsCtx {
    pub fn new(db: DatabaseConnection, stats: StatsSources, versions: Versions) -> Self {
        NotificationsCtx { db, stats, versions, cached: Arc::new(StatsCache::new(50_000)) }
    }
}

/// The counters' safety net: hourly, every counter is set to what the rows say.
pub fn jobs(cx: &NotificationsCtx) -> Vec<Result<Job, JobSchedulerError>> {
    let db = cx.db.clone();
    vec![repeated(&cx.db, "notifications.rebuild_counters", Duration::from_secs(3600), Runs::Shared, move || {
        let db = db.clone();
        async move {
            match service::rebuild_counters(&db).await {
                Ok(n) if n > 0 => tracing::warn!(counters = n, "notification counters were off and are rebuilt"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "notification counter rebuild failed");
                    crate::jobs::failed();
                }
            }
        }
    })]
}
