//! Devices: agent-registered boxes and server groups, Z-CLOUD machines, the agent protocol, the
//! agent itself (`zmarket agent`) and the public nearby list. See docs/devices.md.

pub mod agent;
pub mod model;
pub mod routes;
pub mod service;

use std::time::Duration;

use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::app::AppState;
use crate::jobs::{Runs, repeated};

/// The devices' background job: marks devices offline when their heartbeats stop.
pub fn jobs(state: &AppState) -> Vec<Result<Job, JobSchedulerError>> {
    // Often enough that a device is offline within a few seconds of `offline_after_secs`.
    let every = Duration::from_secs((state.config.devices.offline_after_secs / 3).clamp(1, 15));
    vec![repeated(state, "devices.mark_offline", every, Runs::Shared, |s| async move {
        match service::mark_offline(&s).await {
            Ok(n) if n > 0 => tracing::info!(devices = n, "devices marked offline"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "offline marking failed"),
        }
    })]
}
