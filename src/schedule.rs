//! The background schedule, assembled in one place from every domain's jobs (how a job runs:
//! src/jobs.rs).

use std::time::Duration;

use tokio_cron_scheduler::JobScheduler;

use crate::jobs::{Runs, repeated};
use crate::state::AppState;

/// Starts every background job; the scheduler stops when the returned handle is shut down.
pub async fn start(state: &AppState) -> anyhow::Result<JobScheduler> {
    let sched = JobScheduler::new().await?;
    // Outgoing mail: retries anything still due (new mail is also delivered right away).
    let mailer = state.mailer.clone();
    let mail = repeated(&state.db, "mail.deliver_due", Duration::from_secs(15), Runs::Shared, move || {
        let mailer = mailer.clone();
        async move {
            if let Err(e) = mailer.deliver_due().await {
                tracing::warn!(error = %e, "mail job failed");
                crate::jobs::failed();
            }
        }
    });
    // Changes of public data made by other instances on the same database: this instance's
    // caches and indexes follow within a second.
    let public = state.public.clone();
    let follow = repeated(&state.db, "public.follow", Duration::from_secs(1), Runs::PerInstance, move || {
        let public = public.clone();
        async move {
            if let Err(e) = public.follow().await {
                tracing::debug!(error = %e, "public data version unreadable");
            }
        }
    });
    // The market's settings changed on another instance apply here within this interval.
    let (db, market_settings) = (state.db.clone(), state.market_settings.clone());
    let settings = repeated(&state.db, "settings.follow", crate::settings::FOLLOW_EVERY, Runs::PerInstance, move || {
        let (db, market_settings) = (db.clone(), market_settings.clone());
        async move {
            if let Err(e) = market_settings.reload(&db).await {
                tracing::debug!(error = %e, "market settings unreadable");
            }
        }
    });
    // Shared limits whose allowance is back in full hold nothing: their rows go.
    let db = state.db.clone();
    let limits = repeated(&state.db, "ratelimit.forget_idle", Duration::from_secs(300), Runs::Shared, move || {
        let db = db.clone();
        async move {
            if let Err(e) = crate::ratelimit::forget_idle(&db).await {
                tracing::warn!(error = %e, "rate limit clean-up failed");
                crate::jobs::failed();
            }
        }
    });
    let domains = [
        crate::devices::jobs(&state.devices),
        crate::apps::jobs(&state.apps),
        crate::orders::jobs(&state.orders),
        crate::iam::jobs(&state.iam),
        crate::companies::jobs(&state.companies),
        crate::market::jobs(&state.market),
        crate::notifications::jobs(&state.notifications),
        crate::billing::jobs(&state.billing),
        crate::social::jobs(&state.social),
        crate::ops::backup::jobs(&state.db, &state.config),
    ];
    for job in [mail, follow, settings, limits].into_iter().chain(domains.into_iter().flatten()) {
        sched.add(job?).await?;
    }
    sched.start().await?;
    crate::market::follow_public(&state.market);
    // At start-up, deliver what is due now: mail left unsent (or claimed by a process that was
    // killed, once its short claim has lapsed) goes out without waiting for the job.
    state.mailer.wake();
    Ok(sched)
}
