//! The background schedule, registered in one place, and how a job runs: every `Shared` job runs
//! on one instance at a time (PostgreSQL: a transaction-level advisory lock held while it runs, so
//! several instances behind a load balancer never run it twice at once; SQLite has one instance),
//! a `PerInstance` job on every instance (it keeps that instance's own memory).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, DbErr, Statement, TransactionTrait};
use sha2::{Digest, Sha256};
use tokio_cron_scheduler::{Job, JobScheduler, JobSchedulerError};

use crate::app::AppState;

/// Starts every background job; the scheduler stops when the returned handle is shut down.
pub async fn start(state: AppState) -> anyhow::Result<JobScheduler> {
    let sched = JobScheduler::new().await?;

    // Outgoing mail: retries anything still due (new mail is also delivered right away).
    let mail = repeated(&state, "mail.deliver_due", Duration::from_secs(15), Runs::Shared, |s| async move {
        if let Err(e) = s.mailer.deliver_due().await {
            tracing::warn!(error = %e, "mail job failed");
        }
    });
    let domains = [
        crate::devices::jobs(&state),
        crate::iam::jobs(&state),
        crate::iam::sme::jobs(&state),
        crate::market::jobs(&state),
        crate::notifications::jobs(&state),
        crate::social::jobs(&state),
    ];
    for job in std::iter::once(mail).chain(domains.into_iter().flatten()) {
        sched.add(job?).await?;
    }

    sched.start().await?;
    Ok(sched)
}

/// Where a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// It changes shared data: one instance at a time.
    Shared,
    /// It keeps this instance's memory (caches, in-memory limits): every instance.
    PerInstance,
}

/// A job that runs `work` every `every`, named for the logs and its lock.
pub fn repeated<F, Fut>(state: &AppState, name: &'static str, every: Duration, runs: Runs, work: F) -> Result<Job, JobSchedulerError>
where
    F: Fn(AppState) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let s = state.clone();
    let work = Arc::new(work);
    Job::new_repeated_async(every, move |_, _| {
        let (s, work) = (s.clone(), work.clone());
        Box::pin(async move {
            if runs == Runs::PerInstance {
                return work(s).await;
            }
            let db = s.db.clone();
            match exclusive(&db, name, work(s)).await {
                Ok(Some(())) => {}
                Ok(None) => tracing::debug!(job = name, "another instance is running it"),
                Err(e) => tracing::warn!(job = name, error = %e, "job lock failed"),
            }
        })
    })
}

/// Runs `work` unless another instance holds the lock named `name`: `Ok(None)` when it does.
/// On PostgreSQL the lock is `pg_try_advisory_xact_lock` in a transaction kept open while `work`
/// runs (on its own connections); SQLite runs it directly.
pub async fn exclusive<T>(db: &DatabaseConnection, name: &str, work: impl Future<Output = T>) -> Result<Option<T>, DbErr> {
    if db.get_database_backend() != DbBackend::Postgres {
        return Ok(Some(work.await));
    }
    let txn = db.begin().await?;
    let sql = "SELECT pg_try_advisory_xact_lock($1) AS locked";
    let row = txn.query_one_raw(Statement::from_sql_and_values(DbBackend::Postgres, sql, [lock_key(name).into()])).await?;
    let locked: bool = match row {
        Some(r) => r.try_get("", "locked")?,
        None => false,
    };
    if !locked {
        txn.rollback().await?;
        return Ok(None);
    }
    let out = work.await;
    txn.commit().await?;
    Ok(Some(out))
}

/// A stable 64-bit advisory lock key for a job name.
fn lock_key(name: &str) -> i64 {
    let h = Sha256::digest(format!("zmarket.job.{name}").as_bytes());
    i64::from_be_bytes(h[..8].try_into().expect("8 bytes"))
}
