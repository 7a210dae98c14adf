//! The SQLite database copied while it is in use, checked, and put back (issue 25, item 8;
//! docs/operations.md). The commands and the scheduled job around these are in `ops::backup`.
//!
//! A copy is one `VACUUM INTO`: a single read transaction, so the copy is the committed state at
//! the moment it began, complete and consistent, while the server's connections keep writing (WAL
//! mode: a reader never blocks a writer). It is written under a temporary name beside its
//! destination and renamed once it is complete and on disk, so the destination never holds half a
//! copy. A restore checks a file before anything is touched and swaps it in with one rename, while
//! no server holds the database: every server holds a shared lock on `<database>.lock` for its
//! lifetime ([`InUse`]); a restore takes it exclusively.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use sea_orm::sqlx::sqlite::SqliteConnectOptions;
use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, Statement};
use sea_orm_migration::MigratorTrait;

use crate::config::Config;

/// Where the configured SQLite database lives: `None` when the market runs on PostgreSQL.
pub fn sqlite_file(config: &Config) -> anyhow::Result<Option<PathBuf>> {
    let url = config.database.url.trim();
    if url.is_empty() {
        return Ok(Some(config.data_dir.join("zmarket.db")));
    }
    if !url.starts_with("sqlite:") {
        return Ok(None);
    }
    let opts: SqliteConnectOptions = url.parse().context("reading database.url")?;
    let file = opts.get_filename().to_path_buf();
    if url.contains("mode=memory") || file.to_string_lossy().starts_with("file:sqlx-in-memory") {
        bail!("database.url names an in-memory database: there is no file to copy or replace");
    }
    Ok(Some(file))
}

/// A server's hold on its SQLite database, kept for the server's lifetime (dropped with its
/// state): a shared advisory lock on `<database>.lock`. Many servers and tests may hold it at
/// once; `zmarket restore` takes it exclusively, so it refuses while any holds it, and a server
/// does not start in the middle of a restore. The lock belongs to the open file, which child
/// processes do not inherit (std opens files close-on-exec), and the system drops it when the
/// process ends, however it ends.
#[derive(Clone, Debug)]
pub struct InUse(#[allow(dead_code)] Arc<File>);

fn lock_file(database: &Path) -> PathBuf {
    let mut name = database.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".lock");
    database.with_file_name(name)
}

fn open_lock(database: &Path) -> anyhow::Result<File> {
    let path = lock_file(database);
    crate::secrets::private_file(&path).with_context(|| format!("creating {}", path.display()))?;
    OpenOptions::new().read(true).write(true).open(&path).with_context(|| format!("opening {}", path.display()))
}

impl InUse {
    /// Taken by a server before it opens its SQLite database (`server::prepare`).
    pub fn shared(database: &Path) -> anyhow::Result<InUse> {
        let file = open_lock(database)?;
        match file.try_lock_shared() {
            Ok(()) => Ok(InUse(Arc::new(file))),
            Err(TryLockError::WouldBlock) => {
                bail!("{} is being restored (`zmarket restore`): start the server once it has finished", database.display())
            }
            Err(TryLockError::Error(e)) => Err(e).with_context(|| format!("locking {}", lock_file(database).display())),
        }
    }

    /// Taken by a restore: refused while a server holds the database.
    fn exclusive(database: &Path) -> anyhow::Result<InUse> {
        let file = open_lock(database)?;
        match file.try_lock() {
            Ok(()) => Ok(InUse(Arc::new(file))),
            Err(TryLockError::WouldBlock) => bail!(
                "a zmarket server is running on {} ({} is held; or another restore is under way): stop it, then restore",
                database.display(),
                lock_file(database).display()
            ),
            Err(TryLockError::Error(e)) => Err(e).with_context(|| format!("locking {}", lock_file(database).display())),
        }
    }
}

/// One connection to an existing SQLite file (never creates one, runs no migration).
pub async fn open(file: &Path) -> anyhow::Result<DatabaseConnection> {
    let path = file.to_path_buf();
    let mut opts = ConnectOptions::new("sqlite://zmarket.db");
    opts.max_connections(1).min_connections(1).sqlx_logging(false).map_sqlx_sqlite_opts(move |o| {
        o.filename(&path).create_if_missing(false).busy_timeout(std::time::Duration::from_secs(30))
    });
    Database::connect(opts).await.with_context(|| format!("opening {}", file.display()))
}

/// The path with `suffix` added to its file name (`zmarket.db` + `-wal`).
fn suffixed(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(suffix);
    file.with_file_name(name)
}

fn sync_dir(dir: &Path) {
    // Makes the rename durable; not every platform can open a directory.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

fn dir_of(file: &Path) -> &Path {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes a consistent copy of the database of `conn` (SQLite) to `to` and answers its size in
/// bytes. `to` is replaced only once the copy is complete and on disk; a failed copy leaves it as
/// it was and removes its temporary file. The copy is mode 0600 (it holds password hashes).
pub async fn copy_into(conn: &impl ConnectionTrait, to: &Path) -> anyhow::Result<u64> {
    let name = to.file_name().with_context(|| format!("{} names no file", to.display()))?.to_string_lossy().into_owned();
    let dir = dir_of(to);
    let partial = dir.join(format!(".{name}.partial-{}", std::process::id()));
    let _ = std::fs::remove_file(&partial);
    let written = async {
        // VACUUM INTO accepts an empty file: created first so that it has the owner's mode only.
        crate::secrets::private_file(&partial).with_context(|| format!("creating {}", partial.display()))?;
        let target = partial.to_str().with_context(|| format!("{} is not UTF-8", partial.display()))?;
        conn.execute_raw(Statement::from_sql_and_values(DbBackend::Sqlite, "VACUUM INTO ?", [target.into()]))
            .await
            .with_context(|| format!("copying the database into {}", partial.display()))?;
        // SQLite does not sync what VACUUM INTO writes.
        let file = File::open(&partial)?;
        file.sync_all()?;
        let bytes = file.metadata()?.len();
        std::fs::rename(&partial, to).with_context(|| format!("renaming the copy to {}", to.display()))?;
        sync_dir(dir);
        anyhow::Ok(bytes)
    }
    .await;
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

/// What a checked file holds: the migrations applied to it and how many of this binary's are
/// still to run (at the next start).
#[derive(Debug, Clone)]
pub struct Schema {
    pub latest: String,
    pub pending: usize,
}

/// The migrations this binary knows, in order.
fn known_migrations() -> Vec<String> {
    crate::db::migration::Migrator::migrations().iter().map(|m| m.name().to_string()).collect()
}

/// Checks that `file` is a sound zmarket database this binary can run: a SQLite file that passes
/// `PRAGMA integrity_check`, has zmarket's migrations table with its first migration, and no
/// migration this binary does not know (a newer zmarket wrote it). An older schema is fine: the
/// missing migrations run when the server starts. Opening the file may write to it (a WAL it
/// carries is folded in), so callers check a copy.
pub async fn check(file: &Path) -> anyhow::Result<Schema> {
    let mut head = [0u8; 16];
    let read = File::open(file).and_then(|mut f| f.read_exact(&mut head));
    if read.is_err() || &head != b"SQLite format 3\0" {
        bail!("{} is not a SQLite database", file.display());
    }
    let db = open(file).await?;
    let checked = check_open(&db, file).await;
    let _ = db.close().await;
    checked
}

async fn check_open(db: &DatabaseConnection, file: &Path) -> anyhow::Result<Schema> {
    let sql = |s: &str| Statement::from_string(DbBackend::Sqlite, s);
    let problems = db
        .query_all_raw(sql("PRAGMA integrity_check(20)"))
        .await
        .with_context(|| format!("{} cannot be read as a database", file.display()))?;
    let problems: Vec<String> = problems.iter().filter_map(|r| r.try_get_by_index::<String>(0).ok()).collect();
    if problems != ["ok"] {
        bail!("{} is damaged (integrity check: {})", file.display(), problems.join("; "));
    }
    let table = db.query_one_raw(sql("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'seaql_migrations'")).await?;
    let known = known_migrations();
    let applied: Vec<String> = match table {
        Some(_) => db
            .query_all_raw(sql("SELECT version FROM seaql_migrations ORDER BY version"))
            .await?
            .iter()
            .filter_map(|r| r.try_get_by_index::<String>(0).ok())
            .collect(),
        None => Vec::new(),
    };
    if !applied.iter().any(|v| Some(v) == known.first()) {
        bail!("{} is a SQLite database but not a zmarket one (no migrations table with {})", file.display(), known[0]);
    }
    let newer: Vec<&str> = applied.iter().filter(|v| !known.contains(v)).map(String::as_str).collect();
    if !newer.is_empty() {
        bail!(
            "{} was written by a newer zmarket: its schema has migrations this binary does not know ({}); restore it with that version or a later one",
            file.display(),
            newer.join(", ")
        );
    }
    let foreign = foreign_objects(db, applied.len()).await?;
    if !foreign.is_empty() {
        bail!(
            "{} holds schema objects this zmarket does not create ({}): a restore accepts only what its migrations make; nothing was restored",
            file.display(),
            foreign.join(", ")
        );
    }
    let latest = applied.last().cloned().unwrap_or_default();
    Ok(Schema { latest, pending: known.len() - applied.len() })
}

/// The schema objects (`sqlite_master`) of `db` that this binary's first `applied` migrations do
/// not make, as `<type> <name>` (issue 43, item 10: a copy with an extra `CREATE TRIGGER … SET
/// operator=1` restored with exit 0). The expected set is what those migrations make in an empty
/// database; a trigger or a view must also be written as they write it (its SQL), a table or an
/// index must bear an expected name. SQLite's own objects (`sqlite_sequence`, `sqlite_stat*`, an
/// automatic index, which has no SQL) are its.
async fn foreign_objects(db: &DatabaseConnection, applied: usize) -> anyhow::Result<Vec<String>> {
    let mut opts = ConnectOptions::new("sqlite::memory:");
    opts.max_connections(1).min_connections(1).sqlx_logging(false);
    let fresh = Database::connect(opts).await.context("opening an empty database to compare with")?;
    crate::db::migration::Migrator::up(&fresh, Some(applied as u32)).await.context("making the expected schema")?;
    let expected = objects(&fresh).await?;
    let _ = fresh.close().await;
    let found = objects(db).await?;
    let foreign = found
        .into_iter()
        .filter(|(kind, name, sql)| {
            let sqlite_own = match kind.as_str() {
                "table" => matches!(name.as_str(), "sqlite_sequence" | "sqlite_stat1" | "sqlite_stat2" | "sqlite_stat3" | "sqlite_stat4"),
                "index" => name.starts_with("sqlite_autoindex_") && sql.is_none(),
                _ => false,
            };
            let made = expected.iter().any(|(k, n, s)| k == kind && n == name && (!matches!(kind.as_str(), "trigger" | "view") || s == sql));
            !sqlite_own && !made
        })
        .map(|(kind, name, _)| format!("{kind} {name}"))
        .collect();
    Ok(foreign)
}

/// Every object of `sqlite_master`: (type, name, SQL).
async fn objects(db: &DatabaseConnection) -> anyhow::Result<Vec<(String, String, Option<String>)>> {
    let rows = db.query_all_raw(Statement::from_string(DbBackend::Sqlite, "SELECT type, name, sql FROM sqlite_master ORDER BY type, name")).await?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                r.try_get_by_index::<String>(0).unwrap_or_default(),
                r.try_get_by_index::<String>(1).unwrap_or_default(),
                r.try_get_by_index::<Option<String>>(2).ok().flatten(),
            )
        })
        .collect())
}

/// What a restore did.
#[derive(Debug, Clone)]
pub struct Restored {
    pub schema: Schema,
    /// Where the database that was there is kept (none when there was none).
    pub aside: Option<PathBuf>,
}

/// Puts the copy `file` in place of the SQLite database at `database`: refused while a server
/// holds it (`InUse`); `file` is copied beside the database, the copy checked ([`check`]), the
/// current database folded into one file (its WAL checkpointed) and kept as
/// `<name>.before-restore-<UTC time>` (a hard link, so the original name never goes missing), and
/// the copy renamed over the database in one step. A refusal changes nothing.
pub async fn restore(database: &Path, file: &Path) -> anyhow::Result<Restored> {
    let meta = std::fs::metadata(file).with_context(|| format!("cannot read {}", file.display()))?;
    if !meta.is_file() {
        bail!("{} is not a file", file.display());
    }
    if std::fs::canonicalize(file).ok() == std::fs::canonicalize(database).ok() {
        bail!("{} is the database itself: restore a copy made with `zmarket backup`", file.display());
    }
    if std::fs::metadata(suffixed(file, "-wal")).is_ok_and(|m| m.len() > 0) {
        bail!(
            "{} has a write-ahead log beside it ({}): it is in use or was not closed, and a copy of the file alone would miss what the log holds; make the copy with `zmarket backup`",
            file.display(),
            suffixed(file, "-wal").display()
        );
    }
    let dir = dir_of(database);
    crate::secrets::private_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
    let _lock = InUse::exclusive(database)?;
    let name = database.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "zmarket.db".into());
    let incoming = dir.join(format!(".{name}.restore-{}", std::process::id()));
    let cleanup = |p: &Path| {
        for f in [p.to_path_buf(), suffixed(p, "-wal"), suffixed(p, "-shm"), suffixed(p, "-journal")] {
            let _ = std::fs::remove_file(f);
        }
    };
    cleanup(&incoming);
    let prepared = async {
        crate::secrets::private_file(&incoming).with_context(|| format!("creating {}", incoming.display()))?;
        std::fs::copy(file, &incoming).with_context(|| format!("copying {} to {}", file.display(), incoming.display()))?;
        File::open(&incoming)?.sync_all()?;
        let schema = check(&incoming).await.map_err(|e| anyhow::anyhow!(e.to_string().replace(&incoming.display().to_string(), &file.display().to_string())))?;
        // Closed, the copy stands alone: a log SQLite left behind would not follow it.
        if std::fs::metadata(suffixed(&incoming, "-wal")).is_ok_and(|m| m.len() > 0) {
            bail!("{} could not be folded into one file", file.display());
        }
        anyhow::Ok(schema)
    }
    .await;
    let schema = match prepared {
        Ok(s) => s,
        Err(e) => {
            cleanup(&incoming);
            return Err(e);
        }
    };
    let aside = match set_aside(database).await {
        Ok(a) => a,
        Err(e) => {
            cleanup(&incoming);
            return Err(e);
        }
    };
    std::fs::rename(&incoming, database).with_context(|| format!("renaming the restored copy to {}", database.display()))?;
    sync_dir(dir);
    cleanup(&incoming);
    Ok(Restored { schema, aside })
}

/// Keeps the database at `database` (if any) as `<name>.before-restore-<UTC time>`, its WAL
/// folded in first so the kept file stands alone; a WAL that could not be folded in (a damaged
/// database) goes along under the kept name.
async fn set_aside(database: &Path) -> anyhow::Result<Option<PathBuf>> {
    if !database.exists() {
        return Ok(None);
    }
    if let Ok(db) = open(database).await {
        let _ = db.execute_unprepared("PRAGMA wal_checkpoint(TRUNCATE)").await;
        let _ = db.close().await;
    }
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    // A second restore within the same second keeps the first one's set-aside file too.
    let aside = (1..)
        .map(|n| suffixed(database, &if n == 1 { format!(".before-restore-{stamp}") } else { format!(".before-restore-{stamp}-{n}") }))
        .find(|p| !p.exists())
        .expect("a free name");
    if std::fs::hard_link(database, &aside).is_err() {
        std::fs::copy(database, &aside).with_context(|| format!("keeping the current database as {}", aside.display()))?;
    }
    for s in ["-wal", "-shm"] {
        let from = suffixed(database, s);
        if from.exists() {
            std::fs::rename(&from, suffixed(&aside, s)).with_context(|| format!("moving {} aside", from.display()))?;
        }
    }
    Ok(Some(aside))
}
