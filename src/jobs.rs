//! The background schedule, registered in one place.

use std::time::Duration;

use tokio_cron_scheduler::{Job, JobScheduler};

use crate::app::AppState;

/// Starts every background job; the scheduler stops when the returned handle is shut down.
pub async fn start(state: AppState) -> anyhow::Result<JobScheduler> {
    let sched = JobScheduler::new().await?;

    // Outgoing mail: retries anything still due (new mail is also delivered right away).
    let s = state.clone();
    sched
        .add(Job::new_repeated_async(Duration::from_secs(15), move |_, _| {
            let s = s.clone();
            Box::pin(async move {
                if let Err(e) = s.mailer.deliver_due().await {
                    tracing::warn!(error = %e, "mail job failed");
                }
            })
        })?)
        .await?;

    for job in crate::devices::jobs(&state) {
        sched.add(job?).await?;
    }
    for job in crate::iam::jobs(&state).into_iter().chain(crate::iam::sme::jobs(&state)) {
        sched.add(job?).await?;
    }
    for job in crate::market::jobs(&state) {
        sched.add(job?).await?;
    }

    sched.start().await?;
    Ok(sched)
}
