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
    ];
    for job in std::iter::once(mail).chain(domains.into_iter().flatten()) {
        sched.add(job?).await?;
    }
    sched.start().await?;
    Ok(sched)
}
