//! The wallet: a double-entry ledger in the product's coin (integer cents), two-phase holds,
//! bills of metered usage, runway, the signup bonus and the operator's grants, the
//! `Idempotency-Key` mechanism of coin-moving routes, and `zmarket ledger verify`.
//! Other domains move coins only through [`ledger`]; see docs/billing.md.

pub mod cli;
pub mod idempotency;
pub mod ledger;
pub mod model;
pub mod routes;
pub mod service;
pub mod verify;

use std::time::Duration;

use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::app::AppState;
use crate::jobs::{Runs, repeated};

/// The wallet's background jobs: hold expiry, closing billing periods, runway notices, and
/// forgetting old idempotency keys.
pub fn jobs(state: &AppState) -> Vec<Result<Job, JobSchedulerError>> {
    let expire = repeated(state, "billing.expire_holds", Duration::from_secs(30), Runs::Shared, |s| async move {
        match ledger::expire_due(&s.db, crate::db::now()).await {
            Ok(n) if n > 0 => tracing::info!(holds = n, "expired holds released"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "hold expiry failed"),
        }
    });
    let close = repeated(state, "billing.close_bills", Duration::from_secs(60), Runs::Shared, |s| async move {
        match service::close_bills(&s.db, crate::db::now()).await {
            Ok(n) if n > 0 => tracing::info!(bills = n, "billing periods closed"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "closing billing periods failed"),
        }
    });
    let runway = repeated(state, "billing.runway_notices", Duration::from_secs(60), Runs::Shared, |s| async move {
        match service::runway_notices(&s.db).await {
            Ok(n) if n > 0 => tracing::info!(notices = n, "runway notices sent"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "runway notices failed"),
        }
    });
    let keys = repeated(state, "billing.idempotency_cleanup", Duration::from_secs(3600), Runs::Shared, |s| async move {
        if let Err(e) = idempotency::cleanup(&s.db, s.config.billing.idempotency_ttl_secs).await {
            tracing::warn!(error = %e, "idempotency key cleanup failed");
        }
    });
    vec![expire, close, runway, keys]
}
