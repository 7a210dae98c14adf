//! Companies (sme): creation, membership by invitation or application, members, resource
//! allocation to members, deletion, and the history of all of it.

pub mod model;
pub mod resources;
pub mod routes;
pub mod service;

use std::time::Duration;

use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::app::AppState;
use crate::jobs::{Runs, repeated};

/// Companies' background jobs: invitations past their expiry become `expired`.
pub fn jobs(state: &AppState) -> Vec<Result<Job, JobSchedulerError>> {
    vec![repeated(state, "sme.expire_invitations", Duration::from_secs(600), Runs::Shared, |s| async move {
        match service::expire_invitations(&s.db).await {
            Ok(n) if n > 0 => tracing::info!(rows = n, "company invitations expired"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "invitation expiry failed"),
        }
    })]
}
