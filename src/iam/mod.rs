//! Identity: sign-up, email verification, sign-in, sessions, account, menus (and, with the
//! companies issue, companies).

pub mod auth;
pub mod menus;
pub mod model;
pub mod password;
pub mod ratelimit;
pub mod routes;
pub mod service;
pub mod sme;
pub mod tokens;

use std::time::Duration;

use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::app::AppState;
use crate::jobs::{Runs, repeated};

/// Identity's background jobs.
pub fn jobs(state: &AppState) -> Vec<Result<Job, JobSchedulerError>> {
    let cleanup = repeated(state, "iam.cleanup_expired", Duration::from_secs(3600), Runs::Shared, |s| async move {
        match service::cleanup_expired(&s.db).await {
            Ok(n) if n > 0 => tracing::info!(rows = n, "expired sessions and verification links deleted"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "session cleanup failed"),
        }
    });
    // The sign-in limiter lives in this instance's memory.
    let limiter = repeated(state, "iam.limiter_retain", Duration::from_secs(300), Runs::PerInstance, |s| async move {
        s.login_limiter.retain_recent()
    });
    vec![cleanup, limiter]
}
