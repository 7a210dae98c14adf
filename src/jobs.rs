//! How a background job runs (the schedule itself is assembled in src/schedule.rs): every `Shared` job runs
//! on one instance at a time (PostgreSQL: a transaction-level advisory lock held while it runs, so
//! several instances behind a load balancer never run it twice at once; SQLite has one instance),
//! a `PerInstance` job on every instance (it keeps that instance's own memory).

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, DbErr, Statement, TransactionTrait};
use sha2::{Digest, Sha256};
use tokio_cron_scheduler::{Job, JobSchedulerError};


/// Where a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// It changes shared data: one instance at a time.
    Shared,
    /// It keeps this instance's memory (caches, in-memory limits): every instance.
    PerInstance,
}

/// A job that runs `work` every `every`, named for the logs and its lock (taken on `db`). `work`
/// captures the handles it uses.
pub fn repeated<F, Fut>(db: &DatabaseConnection, name: &'static str, every: Duration, runs: Runs, work: F) -> Result<Job, JobSchedulerError>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let db = db.clone();
    let work = Arc::new(work);
    Job::new_repeated_async(every, move |_, _| {
        let (db, work) = (db.clone(), work.clone());
        Box::pin(async move {
            let run = FAILED.scope(Cell::new(false), async {
                if runs == Runs::PerInstance {
                    work().await;
                } else {
                    match exclusive(&db, name, work()).await {
                        Ok(Some(())) => {}
                        Ok(None) => {
                            tracing::debug!(job = name, "another instance is running it");
                            return "elsewhere";
                        }
                        Err(e) => {
                            tracing::warn!(job = name, error = %e, "job lock failed");
                            return "failed";
                        }
                    }
                }
                if FAILED.with(Cell::get) { "failed" } else { "ok" }
            });
            let result = run.await;
            metrics::counter!(crate::observe::JOB_RUNS, "job" => name, "result" => result).increment(1);
        })
    })
}

tokio::task_local! {
    /// Whether the job running on this task met a failure (`zmarket_job_runs_total{result}`).
    static FAILED: Cell<bool>;
}

/// Marks the running job's run as failed, once the job has logged why (outside a job, nothing).
pub fn failed() {
    let _ = FAILED.try_with(|f| f.set(true));
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
