//! The social layer (`/api/cim/v1`): friends (requests by email, accept, decline, remove, block),
//! aliases and tags, direct messages between friends, and the live event stream that tells a
//! person's open tabs about all of it and about their new notifications. See docs/social.md.

pub mod hub;
pub mod model;
pub mod routes;
pub mod service;
pub mod stream;

use std::time::Duration;

use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::app::AppState;
use crate::jobs::{Runs, repeated};

/// Hourly, the event log keeps only what replay needs (`social.events_keep_*`).
pub fn jobs(state: &AppState) -> Vec<Result<Job, JobSchedulerError>> {
    vec![repeated(state, "social.prune_events", Duration::from_secs(3600), Runs::Shared, |s| async move {
        match service::events::prune(&s.db, &s.config.social).await {
            Ok(n) if n > 0 => tracing::info!(events = n, "old events pruned"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "event pruning failed"),
        }
    })]
}
