//! The public market: catalogue (seeded from assets/, served from an in-memory index), search,
//! download links (and nearby, with the devices).

pub mod index;
pub mod model;
pub mod routes;
pub mod seed;
pub mod service;
pub mod ssr;

use std::time::Duration;

use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::app::AppState;
use crate::jobs::{Runs, repeated};

/// How often the index is compared with the database (other instances' or hand-made changes).
pub const RELOAD_EVERY: Duration = Duration::from_secs(30);

/// The market's background jobs.
pub fn jobs(state: &AppState) -> Vec<Result<Job, JobSchedulerError>> {
    // Each instance keeps its own index and render cache.
    vec![repeated(state, "market.reload", RELOAD_EVERY, Runs::PerInstance, |s| async move {
        match service::refresh(&s).await {
            Ok(true) => tracing::info!("market catalogue changed in the database: index reloaded"),
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "market reload failed"),
        }
    })]
}
