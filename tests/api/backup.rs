//! Backups: `zmarket backup --to FILE` while the server writes, `zmarket restore FILE` with its
//! checks (a copy with a foreign trigger or view is refused) and its refusal while a server runs,
//! the `[backup]` job, every backup counted for the operator's overview and the console's "Back up
//! now". The commands run as the real binary; the copies are opened as SQLite files.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sea_orm::{ConnectionTrait, DbBackend, Statement};
use sea_orm_migration::MigratorTrait;
use serde_json::json;

use crate::common::*;
use crate::ops::make_operator;

/// Runs the binary with `--data-dir dir` and `args`: (succeeded, stdout, stderr).
fn zmarket(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_zmarket"));
    cmd.arg("--data-dir").arg(dir).args(args).env("ZMARKET_LOG__LEVEL", "warn").env_remove("ZMARKET_DATABASE__URL");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("zmarket runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn on_postgres(app: &TestApp) -> bool {
    !app.state.config.database.url.is_empty()
}

/// One column of every row of `sql` in the SQLite file `file`.
async fn column(file: &Path, sql: &str) -> HashSet<String> {
    let db = zmarket::db::backup::open(file).await.expect("opens");
    let rows = db.query_all_raw(Statement::from_string(DbBackend::Sqlite, sql)).await.expect("query");
    let out = rows.iter().map(|r| r.try_get_by_index::<String>(0).unwrap()).collect();
    db.close().await.unwrap();
    out
}

async fn exec(file: &Path, sql: &str) {
    let db = zmarket::db::backup::open(file).await.expect("opens");
    db.execute_unprepared(sql).await.expect("statement");
    db.close().await.unwrap();
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn set_aside(dir: &Path) -> Vec<String> {
    files_in(dir).into_iter().filter(|n| n.contains(".before-restore-")).collect()
}

/// Acknowledged writes: what was written, when it was sent and when its answer arrived.
type Acks = Arc<Mutex<Vec<(String, Instant, Instant)>>>;

/// The copy is taken while four clients keep writing through the API (grants through the
/// ledger, sign-ups); restored into another data directory it passes `ledger verify` and holds
/// every write acknowledged before the backup started.
#[tokio::test]
async fn a_backup_under_a_write_load_restores_every_acknowledged_write() {
    let app = TestApp::spawn().await;
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("market.sqlite3");
    if on_postgres(&app) {
        let (ok, _, err) = cli(&app, &["backup", "--to", file.to_str().unwrap()]);
        assert!(!ok && err.contains("pg_dump"), "{err}");
        assert!(!file.exists());
        return;
    }
    let op = app.signed_in("op@example.com").await;
    make_operator(&app, "op@example.com");
    let op_token = token_of(&op);
    let mut people = Vec::new();
    for i in 0..3 {
        let p = app.signed_in(&format!("p{i}@example.com")).await;
        people.push(user_id_of(&app, &p).await);
    }

    let stop = Arc::new(AtomicBool::new(false));
    let (grants, signups): (Acks, Acks) = Default::default();
    let mut writers = Vec::new();
    for (w, person) in people.iter().enumerate() {
        let (client, url, token) = (app.client.clone(), app.url(&format!("/api/ops/v1/users/{person}/grant")), op_token.clone());
        let (stop, grants) = (stop.clone(), grants.clone());
        writers.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let sent = Instant::now();
                let res = client
                    .post(&url)
                    .bearer_auth(&token)
                    .header("Idempotency-Key", format!("load-{w}-{n}"))
                    .json(&json!({"amount": 100 + n, "memo": format!("load {w}.{n}")}))
                    .send()
                    .await
                    .unwrap();
                let (status, body) = json_of(res).await;
                assert_eq!(status, 200, "{body}");
                grants.lock().unwrap().push((body["data"]["id"].as_str().unwrap().to_string(), sent, Instant::now()));
            }
        }));
    }
    {
        let (client, url) = (app.client.clone(), app.url("/api/iam/v1/register"));
        let (stop, signups) = (stop.clone(), signups.clone());
        writers.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let email = format!("load{n}@example.com");
                let body = json!({"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": true});
                let sent = Instant::now();
                let (status, answer) = json_of(client.post(&url).json(&body).send().await.unwrap()).await;
                assert_eq!(status, 200, "{answer}");
                signups.lock().unwrap().push((email, sent, Instant::now()));
            }
        }));
    }
    let acked = |a: &Acks| a.lock().unwrap().len();
    let deadline = Instant::now() + Duration::from_secs(120);
    while acked(&grants) < 60 || acked(&signups) < 2 {
        assert!(Instant::now() < deadline, "the writers made no progress");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The backup, while the writers keep going.
    let started = Instant::now();
    let to = file.clone();
    let data = app.dir.path().to_path_buf();
    let (ok, stdout, stderr) = tokio::task::spawn_blocking(move || zmarket(&data, &["backup", "--to", to.to_str().unwrap()], &[])).await.unwrap();
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("backed up") && stdout.contains("market.sqlite3"), "{stdout}");
    let finished = Instant::now();
    // Writes go on after it (the database was never closed to them).
    let after = acked(&grants);
    while acked(&grants) < after + 20 {
        assert!(Instant::now() < deadline, "the writers stopped after the backup");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    // No temporary file is left beside the copy.
    assert_eq!(files_in(out.path()), ["market.sqlite3"]);

    // Restored into another data directory: the ledger holds, and so does every write
    // acknowledged before the backup started.
    let restored = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr) = zmarket(restored.path(), &["restore", file.to_str().unwrap()], &[]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("restored") && stdout.contains("there was no database before"), "{stdout}");
    let db_file = restored.path().join("zmarket.db");
    let entries = column(&db_file, "SELECT id FROM ledger_entries").await;
    let emails = column(&db_file, "SELECT email FROM users").await;
    let grants = grants.lock().unwrap().clone();
    let before: Vec<_> = grants.iter().filter(|(_, _, acked)| *acked < started).collect();
    let meanwhile = grants.iter().filter(|(_, _, acked)| (started..=finished).contains(acked)).count();
    eprintln!("the backup took {:?}; {meanwhile} grants were acknowledged meanwhile", finished - started);
    assert!(before.len() >= 60, "{}", before.len());
    for (id, _, _) in &before {
        assert!(entries.contains(id), "grant entry {id}, acknowledged before the backup started, is missing");
    }
    let signed_up: Vec<_> = signups.lock().unwrap().iter().filter(|(_, _, acked)| *acked < started).map(|(e, _, _)| e.clone()).collect();
    assert!(signed_up.len() >= 2);
    for email in &signed_up {
        assert!(emails.contains(email), "{email}, acknowledged before the backup started, is missing");
    }
    // What was sent after the backup finished is not in it (a snapshot, not a later state).
    let late: Vec<_> = grants.iter().filter(|(_, sent, _)| *sent > finished).collect();
    assert!(!late.is_empty());
    assert!(late.iter().all(|(id, _, _)| !entries.contains(id)));
    let (ok, stdout, stderr) = zmarket(restored.path(), &["ledger", "verify"], &[]);
    assert!(ok, "ledger verify on the restored copy: {stdout}{stderr}");

    // The server on the restored data answers with the restored balances.
    let restored_dir = restored.path().to_path_buf();
    let again = TestApp::spawn_with(move |c| c.data_dir = restored_dir).await;
    let p0 = again.login("p0@example.com", PASSWORD).await;
    let (_, wallet) = again.get_auth("/api/billing/v1/wallet", &token_of(&p0)).await;
    assert!(wallet["data"]["balance"].as_i64().unwrap() > 10_000, "the bonus and the grants before the backup: {wallet}");
}

/// `--to` is replaced only by a complete copy; the database itself and a directory are refused.
#[tokio::test]
async fn backup_refuses_what_it_cannot_write_and_replaces_a_file_whole() {
    let app = TestApp::spawn().await;
    if on_postgres(&app) {
        return;
    }
    app.signed_in("a@example.com").await;
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("b.sqlite3");
    std::fs::write(&file, "an older copy").unwrap();
    let (ok, stdout, stderr) = cli(&app, &["backup", "--to", file.to_str().unwrap()]);
    assert!(ok, "{stdout}{stderr}");
    assert!(column(&file, "SELECT email FROM users").await.contains("a@example.com"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600, "it holds password hashes");
    }

    let db = app.dir.path().join("zmarket.db");
    let (ok, _, stderr) = cli(&app, &["backup", "--to", db.to_str().unwrap()]);
    assert!(!ok && stderr.contains("is the database itself"), "{stderr}");
    let (ok, _, stderr) = cli(&app, &["backup", "--to", out.path().to_str().unwrap()]);
    assert!(!ok && stderr.contains("is a directory"), "{stderr}");
    let empty = tempfile::tempdir().unwrap();
    let (ok, _, stderr) = zmarket(empty.path(), &["backup", "--to", file.to_str().unwrap()], &[]);
    assert!(!ok && stderr.contains("there is no database at"), "{stderr}");
    assert!(!empty.path().join("zmarket.db").exists(), "a backup creates no database");
    assert_eq!(files_in(out.path()), ["b.sqlite3"]);
}

/// On PostgreSQL both commands point to pg_dump and pg_restore, and change nothing.
#[tokio::test]
async fn on_postgresql_backup_and_restore_point_to_pg_dump() {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("x.sqlite3");
    let pg = [("ZMARKET_DATABASE__URL", "postgres://zmarket@127.0.0.1:1/zmarket")];
    let (ok, stdout, stderr) = zmarket(dir.path(), &["backup", "--to", to.to_str().unwrap()], &pg);
    assert!(!ok, "{stdout}");
    assert!(stderr.contains("PostgreSQL") && stderr.contains("pg_dump"), "{stderr}");
    std::fs::write(&to, "x").unwrap();
    let (ok, _, stderr) = zmarket(dir.path(), &["restore", to.to_str().unwrap()], &pg);
    assert!(!ok && stderr.contains("pg_restore"), "{stderr}");
    assert_eq!(files_in(dir.path()), ["x.sqlite3"]);
}

async fn sign_up(base: &str, email: &str) {
    let body = json!({"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": true});
    let res = reqwest::Client::new().post(format!("{base}/api/iam/v1/register")).json(&body).send().await.unwrap();
    assert_eq!(res.status(), 200);
}

/// A restore is refused while a server runs on the database (in this process or another), and
/// goes ahead once it has stopped, even killed: the database it replaces (its WAL folded in) is
/// kept aside.
#[tokio::test]
async fn restore_is_refused_while_a_server_runs_and_keeps_the_previous_database() {
    let out = tempfile::tempdir().unwrap();
    let copy = out.path().join("c.sqlite3");
    let app = TestApp::spawn().await;
    if !on_postgres(&app) {
        // A server in this process (as the tests run hundreds).
        let (ok, stdout, stderr) = cli(&app, &["backup", "--to", copy.to_str().unwrap()]);
        assert!(ok, "{stdout}{stderr}");
        let (ok, _, stderr) = cli(&app, &["restore", copy.to_str().unwrap()]);
        assert!(!ok && stderr.contains("a zmarket server is running on"), "{stderr}");
        assert!(set_aside(app.dir.path()).is_empty());
        assert_eq!(app.get("/healthz").await.status(), 200);
    }

    // The binary, in its own process (SQLite whatever the suite runs on).
    let data = tempfile::tempdir().unwrap();
    let (mut server, base) = crate::common::serve_binary(data.path(), Duration::from_secs(15)).await;
    sign_up(&base, "early@example.com").await;
    let (ok, stdout, stderr) = zmarket(data.path(), &["backup", "--to", copy.to_str().unwrap()], &[]);
    assert!(ok, "{stdout}{stderr}");
    sign_up(&base, "late@example.com").await;
    let (ok, _, stderr) = zmarket(data.path(), &["restore", copy.to_str().unwrap()], &[]);
    assert!(!ok && stderr.contains("a zmarket server is running on"), "{stderr}");
    assert!(set_aside(data.path()).is_empty());

    // Killed: what it wrote last may be only in its WAL.
    server.kill().unwrap();
    server.wait().unwrap();
    let (ok, stdout, stderr) = zmarket(data.path(), &["restore", copy.to_str().unwrap()], &[]);
    assert!(ok, "{stdout}{stderr}");
    let aside = set_aside(data.path());
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(aside[0].starts_with("zmarket.db.before-restore-"), "{aside:?}");
    assert!(stdout.contains(&aside[0]), "{stdout}");
    assert!(!data.path().join("zmarket.db-wal").exists() || std::fs::metadata(data.path().join("zmarket.db-wal")).unwrap().len() == 0);
    let users = column(&data.path().join("zmarket.db"), "SELECT email FROM users").await;
    assert!(users.contains("early@example.com") && !users.contains("late@example.com"), "{users:?}");
    let kept = column(&data.path().join(&aside[0]), "SELECT email FROM users").await;
    assert!(kept.contains("late@example.com"), "the set-aside database has everything the server wrote: {kept:?}");

    // The server starts on the restored database.
    let (mut server, base) = crate::common::serve_binary(data.path(), Duration::from_secs(15)).await;
    let (status, body) = json_of(
        reqwest::Client::new()
            .post(format!("{base}/api/iam/v2/login/password"))
            .json(&json!({"email": "early@example.com", "password": PASSWORD}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(status, 200, "{body}");
}

/// A server does not open a database that is being restored.
#[tokio::test]
async fn a_server_does_not_start_during_a_restore() {
    if std::env::var("TEST_DATABASE_URL").is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let lock = std::fs::File::create(dir.path().join("zmarket.db.lock")).unwrap();
    lock.try_lock().unwrap();
    let mut config = zmarket::config::Config::default();
    config.data_dir = dir.path().to_path_buf();
    let err = zmarket::server::prepare(config).await.err().expect("refused");
    assert!(err.to_string().contains("is being restored"), "{err:#}");
    assert!(!dir.path().join("zmarket.db").exists());
}

/// A copy of the market in `source` (made by `zmarket backup`), with `sql` run on it.
async fn altered_copy(source: &Path, name: &str, sql: &str) -> PathBuf {
    let file = source.join(name);
    let (ok, stdout, stderr) = zmarket(source, &["backup", "--to", file.to_str().unwrap()], &[]);
    assert!(ok, "{stdout}{stderr}");
    if !sql.is_empty() {
        exec(&file, sql).await;
    }
    file
}

/// A restore checks the file first: not SQLite, damaged, not zmarket's, a newer schema: refused,
/// and the database in place is untouched. An older schema is restored (its migrations run at
/// the next start).
#[tokio::test]
async fn restore_checks_the_file_first() {
    let (source, target) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for dir in [source.path(), target.path()] {
        let (ok, _, stderr) = zmarket(dir, &["migrate"], &[]);
        assert!(ok, "{stderr}");
    }
    let source = source.path();
    let db = target.path().join("zmarket.db");
    let before = std::fs::read(&db).unwrap();
    let refused = |file: &Path, needle: &str| {
        let (ok, stdout, stderr) = zmarket(target.path(), &["restore", file.to_str().unwrap()], &[]);
        assert!(!ok, "{stdout}");
        assert!(stderr.contains(needle), "{needle} in {stderr}");
        assert!(set_aside(target.path()).is_empty());
        assert_eq!(std::fs::read(&db).unwrap(), before, "the database in place is untouched");
        assert!(!files_in(target.path()).iter().any(|n| n.contains(".restore-")), "{:?}", files_in(target.path()));
    };

    let text = source.join("notes.txt");
    std::fs::write(&text, "not a database").unwrap();
    refused(&text, "is not a SQLite database");
    refused(&source.join("missing.sqlite3"), "cannot read");

    let newer = altered_copy(source, "newer.sqlite3", "INSERT INTO seaql_migrations (version, applied_at) VALUES ('m9999_from_the_future', 0)").await;
    refused(&newer, "was written by a newer zmarket");
    refused(&newer, "m9999_from_the_future");

    let foreign = altered_copy(source, "foreign.sqlite3", "DROP TABLE seaql_migrations").await;
    refused(&foreign, "not a zmarket one");

    // Damaged: a page in the middle overwritten.
    let damaged = altered_copy(source, "damaged.sqlite3", "").await;
    let mut bytes = std::fs::read(&damaged).unwrap();
    let page = 4096;
    let mid = (bytes.len() / page / 2) * page;
    bytes[mid..mid + page].fill(0x5a);
    std::fs::write(&damaged, &bytes).unwrap();
    let (ok, _, stderr) = zmarket(target.path(), &["restore", damaged.to_str().unwrap()], &[]);
    assert!(!ok && (stderr.contains("is damaged") || stderr.contains("cannot be read")), "{stderr}");
    assert_eq!(std::fs::read(&db).unwrap(), before);

    // A copy beside its write-ahead log (a live database copied by hand) is refused.
    let live = altered_copy(source, "live.sqlite3", "").await;
    std::fs::write(source.join("live.sqlite3-wal"), "frames the file lacks").unwrap();
    refused(&live, "write-ahead log");

    // Older: the first five migrations only. Restored, then the server brings it up to date.
    let old_dir = tempfile::tempdir().unwrap();
    let old = old_dir.path().join("old.sqlite3");
    {
        let mut opts = sea_orm::ConnectOptions::new(format!("sqlite://{}?mode=rwc", old.display()));
        opts.max_connections(1);
        let conn = sea_orm::Database::connect(opts).await.unwrap();
        zmarket::db::migration::Migrator::up(&conn, Some(5)).await.unwrap();
        conn.close().await.unwrap();
    }
    let (ok, stdout, stderr) = zmarket(target.path(), &["restore", old.to_str().unwrap()], &[]);
    assert!(ok, "{stdout}{stderr}");
    let total = zmarket::db::migration::Migrator::migrations().len();
    assert!(stdout.contains(&format!("{} newer migrations run when the server starts", total - 5)), "{stdout}");
    assert_eq!(set_aside(target.path()).len(), 1);
    let (ok, stdout, stderr) = zmarket(target.path(), &["ledger", "verify"], &[]);
    assert!(ok, "{stdout}{stderr}");
    assert_eq!(column(&db, "SELECT version FROM seaql_migrations").await.len(), total);
    // Restores in quick succession (the same second, likely) each keep what they replaced.
    for _ in 0..2 {
        let (ok, stdout, stderr) = zmarket(target.path(), &["restore", old.to_str().unwrap()], &[]);
        assert!(ok, "{stdout}{stderr}");
    }
    assert_eq!(set_aside(target.path()).len(), 3, "{:?}", files_in(target.path()));
    assert!(!files_in(target.path()).iter().any(|n| n.starts_with('.')), "{:?}", files_in(target.path()));
}

/// The `[backup]` job: a backup when the newest is `every_hours` old, the oldest beyond `keep`
/// deleted, other files left alone; the overview's last backup is the newest.
#[tokio::test]
async fn the_backup_job_keeps_the_newest_keep_files() {
    let app = TestApp::spawn().await;
    if on_postgres(&app) {
        assert!(zmarket::ops::backup::jobs(&app.state.db, &app.state.config).is_empty());
        return;
    }
    app.signed_in("a@example.com").await;
    let data = app.dir.path();
    assert_eq!(zmarket::ops::backup::last_backup(data), None);
    let settings = zmarket::config::BackupConfig { every_hours: 24, keep: 2 };
    let t0 = zmarket::db::now();
    let h = chrono::Duration::hours;
    let run = |at| zmarket::ops::backup::run_due(&app.state.db, data, &settings, at);

    let first = run(t0).await.unwrap().expect("none yet: due");
    std::fs::write(data.join("backups").join("notes.txt"), "mine").unwrap();
    assert_eq!(run(t0 + h(23)).await.unwrap(), None, "not a day old yet");
    let second = run(t0 + h(24)).await.unwrap().expect("a day old: due");
    let third = run(t0 + h(49)).await.unwrap().expect("due");
    let names = files_in(&data.join("backups"));
    assert_eq!(names, ["notes.txt".to_string(), second.file.clone(), third.file.clone()], "{first:?}");
    assert_eq!(zmarket::ops::backup::last_backup(data), Some(third.clone()));
    assert!(third.file.starts_with("zmarket-") && third.file.ends_with(".sqlite3"));
    assert_eq!(third.size, std::fs::metadata(data.join("backups").join(&third.file)).unwrap().len());
    assert!(column(&data.join("backups").join(&third.file), "SELECT email FROM users").await.contains("a@example.com"));

    let off = zmarket::config::BackupConfig { every_hours: 0, keep: 2 };
    assert_eq!(zmarket::ops::backup::run_due(&app.state.db, data, &off, t0 + h(500)).await.unwrap(), None);
    assert_eq!(files_in(&data.join("backups")).len(), 3);

    // The settings are checked like the others.
    use zmarket::config::Config;
    assert!(Config::from_toml("[backup]\nevery_hours = 6\nkeep = 0").unwrap_err().to_string().contains("backup.keep"));
    assert!(Config::from_toml("[backup]\nevery_hours = 100000").unwrap_err().to_string().contains("backup.every_hours"));
    assert!(Config::from_toml("[backup]\nevery = 6").is_err());
    let c = Config::from_toml("[backup]\nevery_hours = 0\nkeep = 0").unwrap();
    assert!(zmarket::ops::backup::jobs(&app.state.db, &c).is_empty());
    assert_eq!(zmarket::ops::backup::jobs(&app.state.db, &Config::default()).len(), 1);
}

/// A copy with an extra trigger (one that makes everyone an operator at every new session) is
/// refused, naming it, with exit non-zero, and nothing is restored; the clean copy restores.
#[tokio::test]
async fn a_copy_with_a_foreign_trigger_is_not_restored() {
    let app = TestApp::spawn_with(|c| c.database.url = String::new()).await;
    app.signed_in("alice@example.com").await;
    let out = tempfile::tempdir().unwrap();
    let clean = out.path().join("clean.db");
    let (ok, o, e) = cli(&app, &["backup", "--to", clean.to_str().unwrap()]);
    assert!(ok, "{o}{e}");
    let evil = out.path().join("evil.db");
    std::fs::copy(&clean, &evil).unwrap();
    {
        let db = zmarket::db::backup::open(&evil).await.unwrap();
        db.execute_unprepared("CREATE TRIGGER zm_make_operators AFTER INSERT ON sessions BEGIN UPDATE users SET operator = 1; END").await.unwrap();
        db.execute_unprepared("CREATE VIEW people_emails AS SELECT email FROM users").await.unwrap();
        db.close().await.unwrap();
    }
    let target = tempfile::tempdir().unwrap();
    let run = |file: &Path| zmarket(target.path(), &["restore", file.to_str().unwrap()], &[]);
    let (ok, o, e) = run(&evil);
    assert!(!ok, "{o}{e}");
    assert!(e.contains("trigger zm_make_operators") && e.contains("view people_emails"), "{e}");
    assert!(!target.path().join("zmarket.db").exists(), "nothing restored");
    let (ok, o, e) = run(&clean);
    assert!(ok && o.contains("restored"), "{o}{e}");
}

/// Every backup counts for the overview (`zmarket backup --to FILE` too), with its kind; the
/// console's "Back up now" writes into the backups folder.
#[tokio::test]
async fn every_backup_counts_and_the_console_backs_up_now() {
    let app = TestApp::spawn().await;
    if !app.state.config.database.url.is_empty() {
        return; // PostgreSQL: pg_dump's job (the refusal is below).
    }
    let op = token_of(&app.signed_in("op@example.com").await);
    make_operator(&app, "op@example.com");
    let person = token_of(&app.signed_in("p@example.com").await);
    let (_, b) = app.get_auth("/api/ops/v1/overview", &op).await;
    assert!(b["data"]["last_backup"].is_null(), "{b}");

    // A backup on the command line, to a file of the operator's choosing.
    let out = tempfile::tempdir().unwrap();
    let to = out.path().join("by-hand.sqlite3");
    let (ok, stdout, stderr) = cli(&app, &["backup", "--to", to.to_str().unwrap()]);
    assert!(ok, "{stdout}{stderr}");
    let (_, b) = app.get_auth("/api/ops/v1/overview", &op).await;
    let last = &b["data"]["last_backup"];
    assert_eq!((last["kind"].as_str(), last["file"].as_str()), (Some("manual"), to.to_str()), "{b}");
    assert_eq!(last["size"].as_u64(), Some(std::fs::metadata(&to).unwrap().len()));

    // Back up now: only for operators; a copy in the backups folder, the last backup, audited.
    let (s, b) = app.post_json("/api/ops/v1/backup", &json!({}), Some(&person)).await;
    assert_eq!(s, 403, "{b}");
    let (s, b) = app.post_json("/api/ops/v1/backup", &json!({}), Some(&op)).await;
    assert_eq!(s, 200, "{b}");
    let file = b["data"]["file"].as_str().unwrap().to_string();
    assert_eq!(b["data"]["kind"], "manual");
    let copy = app.state.config.data_dir.join("backups").join(&file);
    assert_eq!(b["data"]["size"].as_u64(), Some(std::fs::metadata(&copy).unwrap().len()));
    let (_, o) = app.get_auth("/api/ops/v1/overview", &op).await;
    assert_eq!((o["data"]["last_backup"]["file"].as_str(), o["data"]["last_backup"]["kind"].as_str()), (Some(file.as_str()), Some("manual")), "{o}");
    let (_, audit) = app.get_auth("/api/ops/v1/audit?action=backup.run", &op).await;
    assert_eq!(audit["data"]["items"][0]["detail"]["file"], file.as_str(), "{audit}");
    // The scheduled job does not take another at once (the folder's newest is fresh).
    let took = zmarket::ops::backup::run_due(&app.state.db, &app.state.config.data_dir, &app.state.config.backup, zmarket::db::now()).await.unwrap();
    assert_eq!(took, None);
}
