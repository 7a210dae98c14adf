//! Backups of the market's SQLite database (issue 25, item 8; docs/operations.md): `zmarket backup
//! --to FILE`, `zmarket restore FILE`, the `[backup]` job writing into `<data_dir>/backups`, and
//! the last backup for the operator's overview. How a copy is made and put back: `db::backup`.
//! Every backup this market takes counts for the overview (issue 44 item 10): the scheduled ones
//! are the files of `<data_dir>/backups`; a manual one (`zmarket backup --to FILE`, the console's
//! "Back up now") is also recorded in `<data_dir>/backups/manual.json`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use chrono::{DateTime, NaiveDateTime, Utc};
use sea_orm::DatabaseConnection;
use serde::Serialize;
use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::config::{BackupConfig, Config};
use crate::db::backup as copy;
use crate::jobs::{Runs, repeated};

/// The folder of the scheduled backups, in the data directory.
pub const DIR: &str = "backups";
const PREFIX: &str = "zmarket-";
const SUFFIX: &str = ".sqlite3";
const STAMP: &str = "%Y%m%dT%H%M%SZ";
/// How often the job looks whether a backup is due: a backup comes at most this late, and a
/// restart does not put the next one off (it is due from the newest file's time, not the start).
const TICK: Duration = Duration::from_secs(600);

/// The record of the last manual backup, in the backups folder.
const MANUAL: &str = "manual.json";

/// How a backup was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum BackupKind {
    /// By the `[backup]` job.
    Scheduled,
    /// `zmarket backup --to FILE` or the console's "Back up now".
    Manual,
}

/// One backup this market took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct BackupInfo {
    /// When it was taken (UTC).
    pub at: DateTime<Utc>,
    /// Its file name in `<data_dir>/backups`, or the path a manual backup was written to.
    pub file: String,
    /// Its size in bytes.
    pub size: u64,
    pub kind: BackupKind,
}

/// The name of a backup taken at `at`: `zmarket-20261125T043358Z.sqlite3`.
pub fn file_name(at: DateTime<Utc>) -> String {
    format!("{PREFIX}{}{SUFFIX}", at.format(STAMP))
}

fn taken_at(name: &str) -> Option<DateTime<Utc>> {
    let stamp = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    Some(NaiveDateTime::parse_from_str(stamp, STAMP).ok()?.and_utc())
}

/// The backups in `<data_dir>/backups`, oldest first (files named as [`file_name`] makes them;
/// anything else there is left alone).
pub fn backups(data_dir: &Path) -> Vec<BackupInfo> {
    let Ok(entries) = std::fs::read_dir(data_dir.join(DIR)) else { return Vec::new() };
    let mut found: Vec<BackupInfo> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let file = e.file_name().to_str()?.to_string();
            let at = taken_at(&file)?;
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some(BackupInfo { at, file, size: meta.len(), kind: BackupKind::Scheduled })
        })
        .collect();
    found.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.file.cmp(&b.file)));
    found
}

/// The newest backup in `<data_dir>/backups`, by its file's name, if any.
fn newest_file(data_dir: &Path) -> Option<BackupInfo> {
    backups(data_dir).pop()
}

/// The last manual backup recorded, if any.
fn last_manual(data_dir: &Path) -> Option<BackupInfo> {
    serde_json::from_slice(&std::fs::read(data_dir.join(DIR).join(MANUAL)).ok()?).ok()
}

/// Records a manual backup (written next to the scheduled ones; a failure only logs).
fn record_manual(data_dir: &Path, b: &BackupInfo) {
    let dir = data_dir.join(DIR);
    let written = crate::secrets::private_dir(&dir)
        .map_err(anyhow::Error::from)
        .and_then(|_| Ok(std::fs::write(dir.join(MANUAL), serde_json::to_vec(b)?)?));
    if let Err(e) = written {
        tracing::warn!(error = %e, "a manual backup could not be recorded for the overview");
        crate::jobs::failed();
    }
}

/// The newest backup this market took (the operator's overview shows it), scheduled or manual.
pub fn last_backup(data_dir: &Path) -> Option<BackupInfo> {
    let manual = last_manual(data_dir);
    match (newest_file(data_dir), manual) {
        // "Back up now" writes into the folder: that file is the manual one.
        (Some(f), Some(m)) if f.file == m.file => Some(m),
        (Some(f), Some(m)) => Some(if m.at > f.at { m } else { f }),
        (f, m) => f.or(m),
    }
}

/// The console's "Back up now": a copy into `<data_dir>/backups` under the scheduled ones' name
/// (counted by their retention), recorded as manual. SQLite only.
pub async fn back_up_now(db: &DatabaseConnection, data_dir: &Path) -> anyhow::Result<BackupInfo> {
    let dir = data_dir.join(DIR);
    crate::secrets::private_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
    forget_partial(&dir);
    let now = crate::db::now();
    let mut file = file_name(now);
    // Two in one second: the second waits for a name of its own.
    if dir.join(&file).exists() {
        tokio::time::sleep(Duration::from_millis(1100)).await;
        file = file_name(crate::db::now());
    }
    let size = copy::copy_into(db, &dir.join(&file)).await?;
    let b = BackupInfo { at: taken_at(&file).unwrap_or(now), file, size, kind: BackupKind::Manual };
    record_manual(data_dir, &b);
    Ok(b)
}

fn postgres_advice(what: &str) -> String {
    format!(
        "this market's database is PostgreSQL (database.url): `zmarket {what}` works on the SQLite database only; \
         back PostgreSQL up with pg_dump (e.g. `pg_dump --format=custom --file=zmarket.dump <database.url>`) \
         and put a dump back with pg_restore"
    )
}

/// `zmarket backup --to FILE`: a consistent copy of the SQLite database, made while the server
/// runs. The line to print.
pub async fn backup(config: &Config, to: &Path) -> anyhow::Result<String> {
    let Some(database) = copy::sqlite_file(config)? else { bail!(postgres_advice("backup")) };
    if !database.is_file() {
        bail!("there is no database at {} (is --data-dir or database.url right?)", database.display());
    }
    if std::fs::canonicalize(to).ok() == std::fs::canonicalize(&database).ok() {
        bail!("--to {} is the database itself: name another file", to.display());
    }
    if to.is_dir() {
        bail!("--to {} is a directory: name a file, e.g. {}", to.display(), to.join(file_name(crate::db::now())).display());
    }
    let started = std::time::Instant::now();
    // Opened as it is: no file created, no migration run (a backup leaves the database alone).
    let db = copy::open(&database).await?;
    let copied = copy::copy_into(&db, to).await;
    let _ = db.close().await;
    let bytes = copied?;
    let at = crate::db::now();
    let file = std::path::absolute(to).unwrap_or_else(|_| to.to_path_buf()).display().to_string();
    record_manual(&config.data_dir, &BackupInfo { at, file, size: bytes, kind: BackupKind::Manual });
    Ok(format!("backed up {} to {} ({bytes} bytes in {:.1} s)", database.display(), to.display(), started.elapsed().as_secs_f64()))
}

/// `zmarket restore FILE` (the server stopped): the line to print.
pub async fn restore(config: &Config, file: &Path) -> anyhow::Result<String> {
    let Some(database) = copy::sqlite_file(config)? else { bail!(postgres_advice("restore")) };
    let done = copy::restore(&database, file).await?;
    let mut out = format!("restored {} into {} (schema {})", file.display(), database.display(), done.schema.latest);
    if done.schema.pending > 0 {
        out.push_str(&format!("; {} newer migrations run when the server starts", done.schema.pending));
    }
    match done.aside {
        Some(a) => out.push_str(&format!("; the previous database is kept as {}", a.display())),
        None => out.push_str("; there was no database before"),
    }
    Ok(out)
}

/// One round of the `[backup]` job at `now`: when the newest backup in `<data_dir>/backups` is
/// `every_hours` old or more (or there is none), a new one; then the oldest beyond `keep` are
/// deleted. Answers the new backup, if one was taken.
pub async fn run_due(db: &DatabaseConnection, data_dir: &Path, settings: &BackupConfig, now: DateTime<Utc>) -> anyhow::Result<Option<BackupInfo>> {
    if settings.every_hours == 0 {
        return Ok(None);
    }
    let dir = data_dir.join(DIR);
    let due = match newest_file(data_dir) {
        Some(last) => now - last.at >= chrono::Duration::hours(i64::from(settings.every_hours)),
        None => true,
    };
    if !due {
        return Ok(None);
    }
    crate::secrets::private_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
    forget_partial(&dir);
    let file = file_name(now);
    let size = copy::copy_into(db, &dir.join(&file)).await?;
    let all = backups(data_dir);
    let extra = all.len().saturating_sub(settings.keep as usize);
    for old in &all[..extra] {
        if let Err(e) = std::fs::remove_file(dir.join(&old.file)) {
            tracing::warn!(file = %old.file, error = %e, "an old backup could not be deleted");
            crate::jobs::failed();
        }
    }
    Ok(Some(BackupInfo { at: taken_at(&file).unwrap_or(now), file, size, kind: BackupKind::Scheduled }))
}

/// Removes what an interrupted copy left in the backups folder (`.<name>.partial-<pid>` files
/// older than an hour: a copy in progress is younger, its file written to all along).
fn forget_partial(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let stale = e.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.elapsed().ok()).is_some_and(|age| age > Duration::from_secs(3600));
        if name.starts_with(&format!(".{PREFIX}")) && name.contains(".partial-") && stale {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The `[backup]` job (one instance: `Runs::Shared`): none when `every_hours` is 0 or the
/// database is PostgreSQL (pg_dump's job, said once in the log).
pub fn jobs(db: &DatabaseConnection, config: &Config) -> Vec<Result<Job, JobSchedulerError>> {
    let settings = config.backup.clone();
    if settings.every_hours == 0 {
        return Vec::new();
    }
    match copy::sqlite_file(config) {
        Ok(Some(_)) => {}
        Ok(None) => {
            tracing::info!("[backup] every_hours is set but the database is PostgreSQL: back it up with pg_dump (no backup job)");
            return Vec::new();
        }
        Err(e) => {
            tracing::warn!(error = %e, "no backup job");
            return Vec::new();
        }
    }
    let data_dir: PathBuf = config.data_dir.clone();
    let conn = db.clone();
    vec![repeated(db, "backup.scheduled", TICK, Runs::Shared, move || {
        let (db, data_dir, settings) = (conn.clone(), data_dir.clone(), settings.clone());
        async move {
            match run_due(&db, &data_dir, &settings, crate::db::now()).await {
                Ok(Some(b)) => tracing::info!(file = %b.file, bytes = b.size, "backup written"),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "scheduled backup failed");
                    crate::jobs::failed();
                }
            }
        }
    })]
}
