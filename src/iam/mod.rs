//! Identity: sign-up, email verification, sign-in, sessions, personal API keys, the caller's
//! context, account, menus. Companies are their own domain (src/companies/); what blocks deleting
//! an account is asked of every domain through `deletion`.

pub mod account;
pub mod api_keys;
pub mod auth;
pub mod deletion;
pub mod menus;
pub mod model;
pub mod password;
pub mod people;
pub mod ratelimit;
pub mod recovery;
pub mod resets;
pub mod routes;
pub mod scopes;
pub mod sessions;
pub mod signup;
pub mod tokens;
pub mod two_factor;

use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::config::{AuthConfig, Site};
use crate::jobs::{Runs, repeated};
use crate::mail::Mailer;

/// What identity's rules use.
#[derive(Clone)]
pub struct IamCtx {
    pub db: DatabaseConnection,
    pub settings: Arc<AuthConfig>,
    pub site: Arc<Site>,
    pub mailer: Mailer,
    pub keys: Arc<tokens::Keys>,
    pub limiter: Arc<ratelimit::Limits>,
    pub hasher: password::Hasher,
    pub deletion: deletion::DeletionChecks,
    /// What other domains do when an account becomes verified.
    pub on_verified: signup::VerifiedHooks,
    /// The shared data versions: profiles are kept under `profiles` (m0024).
    pub versions: crate::versions::Versions,
    /// Profiles read since the `profiles` version last moved, by user id.
    pub profiles: Arc<account::Profiles>,
    /// The operator's settings (whether staff must use two-factor sign-in).
    pub market_settings: crate::settings::LiveSettings,
}

/// Identity's background jobs.
pub fn jobs(cx: &IamCtx) -> Vec<Result<Job, JobSchedulerError>> {
    let db = cx.db.clone();
    let cleanup = repeated(&cx.db, "iam.cleanup_expired", Duration::from_secs(3600), Runs::Shared, move || {
        let db = db.clone();
        async move {
            match api_keys::cleanup(&db).await {
                Ok(n) if n > 0 => tracing::info!(rows = n, "revoked and long-expired API keys deleted"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "API key cleanup failed");
                    crate::jobs::failed();
                }
            }
            if let Err(e) = two_factor::cleanup(&db).await {
                tracing::warn!(error = %e, "two-factor challenge cleanup failed");
                crate::jobs::failed();
            }
            match sessions::cleanup_expired(&db).await {
                Ok(n) if n > 0 => tracing::info!(rows = n, "expired sessions and verification links deleted"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "session cleanup failed");
                    crate::jobs::failed();
                }
            }
        }
    });
    // The memory layer of the sign-in and sign-up limits.
    let limiter = cx.limiter.clone();
    let retain = repeated(&cx.db, "iam.limiter_retain", Duration::from_secs(300), Runs::PerInstance, move || {
        let limiter = limiter.clone();
        async move { limiter.retain_recent() }
    });
    vec![cleanup, retain]
}
