//! A person's notifications (`/api/ebs/v1/notifications`): the stats the console polls every
//! 10 s, the list (all or unread) and marking one read. Other domains write them (devices: status
//! changes and Z-CLOUD results) with English text in the row and the Chinese text in `params`.
//! See docs/notifications.md.

pub mod model;
pub mod routes;
pub mod service;

use std::time::Duration;

use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::app::AppState;
use crate::jobs::{Runs, repeated};

/// The counters' safety net: hourly, every counter is set to what the rows say.
pub fn jobs(state: &AppState) -> Vec<Result<Job, JobSchedulerError>> {
    vec![repeated(state, "notifications.rebuild_counters", Duration::from_secs(3600), Runs::Shared, |s| async move {
        match service::rebuild_counters(&s.db).await {
            Ok(n) if n > 0 => tracing::warn!(counters = n, "notification counters were off and are rebuilt"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "notification counter rebuild failed"),
        }
    })]
}
