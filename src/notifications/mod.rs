//! A person's notifications (`/api/ebs/v1/notifications`): the stats the console polls every
//! 10 s, the list (all or unread) and marking one read. Other domains write them (devices: status
//! changes and Z-CLOUD results) with English text in the row and the Chinese text in `params`,
//! and add their own counts to the stats through a [`StatsSource`]. See docs/notifications.md.

pub mod model;
pub mod routes;
pub mod service;

use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::error::AppError;
use crate::iam::auth::Auth;
use crate::jobs::{Runs, repeated};
use model::Stats;

/// A domain's part of the notification stats (e.g. companies: `member_records_unread`).
#[async_trait::async_trait]
pub trait StatsSource: Send + Sync {
    async fn fill(&self, db: &DatabaseConnection, auth: &Auth, stats: &mut Stats) -> Result<(), AppError>;
}

/// Every registered source, asked in order (assembled in src/state.rs).
#[derive(Clone, Default)]
pub struct StatsSources(Arc<Vec<Arc<dyn StatsSource>>>);

impl StatsSources {
    pub fn new(sources: Vec<Arc<dyn StatsSource>>) -> Self {
        StatsSources(Arc::new(sources))
    }
    pub async fn fill(&self, db: &DatabaseConnection, auth: &Auth, stats: &mut Stats) -> Result<(), AppError> {
        for s in self.0.iter() {
            s.fill(db, auth, stats).await?;
        }
        Ok(())
    }
}

/// What the notification rules use.
#[derive(Clone)]
pub struct NotificationsCtx {
    pub db: DatabaseConnection,
    pub stats: StatsSources,
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
                Err(e) => tracing::warn!(error = %e, "notification counter rebuild failed"),
            }
        }
    })]
}
