//! Devices: agent-registered boxes and server groups, Z-CLOUD machines, the agent protocol, the
//! agent itself (`zmarket agent`) and the public nearby list. See docs/devices.md.

pub mod agent;
pub mod model;
pub mod routes;
pub mod service;

use std::time::Duration;

use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::app::AppState;

/// The devices' background job: marks devices offline when their heartbeats stop.
pub fn jobs(state: &AppState) -> Vec<Result<Job, JobSchedulerError>> {
    let s = state.clone();
    // Often enough that a device is offline within a few seconds of `offline_after_secs`.
    let every = (state.config.devices.offline_after_secs / 3).clamp(1, 15);
    let offline = Job::new_repeated_async(Duration::from_secs(every), move |_, _| {
        let s = s.clone();
        Box::pin(async move {
            match service::mark_offline(&s).await {
                Ok(n) if n > 0 => tracing::info!(devices = n, "devices marked offline"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "offline marking failed"),
            }
        })
    });
    vec![offline]
}
