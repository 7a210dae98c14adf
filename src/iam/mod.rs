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

/// Identity's background jobs.
pub fn jobs(state: &AppState) -> Vec<Result<Job, JobSchedulerError>> {
    let s = state.clone();
    let cleanup = Job::new_repeated_async(Duration::from_secs(3600), move |_, _| {
        let s = s.clone();
        Box::pin(async move {
            match service::cleanup_expired(&s.db).await {
                Ok(n) if n > 0 => tracing::info!(rows = n, "expired sessions and verification links deleted"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "session cleanup failed"),
            }
        })
    });
    let s = state.clone();
    let limiter = Job::new_repeated_async(Duration::from_secs(300), move |_, _| {
        let s = s.clone();
        Box::pin(async move { s.login_limiter.retain_recent() })
    });
    vec![cleanup, limiter]
}
