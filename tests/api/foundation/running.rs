//! The foundation: the process itself (configuration from the file, the environment and the
//! command line, a graceful stop, a quiet start), its data files (private to its user, an open
//! data directory tightened), mail (one Message-ID a mail), the signing key, concurrent writes,
//! shared jobs, and a test app's own database.

use super::*;
use crate::common::{PASSWORD, sign_up};

#[tokio::test]
async fn mail_without_smtp_is_written_as_an_eml_file() {
    let app = TestApp::spawn().await;
    let txn = zmarket::db::write_txn(&app.state.db).await.unwrap();
    app.state
        .mailer
        .enqueue(
            &txn,
            zmarket::mail::Mail {
                to: "ada@example.com",
                subject: "Verify your email",
                body: "Open http://localhost:8080/email-verified?token=abc to verify. 验证邮箱",
                link: Some("http://localhost:8080/email-verified?token=abc"),
            },
        )
        .await
        .unwrap();
    txn.commit().await.unwrap();
    app.state.mailer.wake();
    let mails = app.wait_for_mails(1).await;
    let m = &mails[0];
    assert!(m.contains("To: ada@example.com"), "{m}");
    assert!(m.contains("Subject: Verify your email"), "{m}");
    assert!(m.contains("http://localhost:8080/email-verified?token=abc"), "{m}");
    assert!(m.contains("验证邮箱"), "{m}");
    // Delivered once: a second pass finds nothing due.
    assert_eq!(app.state.mailer.deliver_due().await.unwrap(), 0);
    assert_eq!(app.mails().await.len(), 1);
}

#[tokio::test]
async fn mail_to_an_unreachable_smtp_server_is_kept_and_retried() {
    let app = TestApp::spawn_with(|c| {
        c.mail.smtp_host = "127.0.0.1".into();
        c.mail.smtp_port = 9; // discard port: nothing listens
        c.mail.smtp_security = "none".into();
    })
    .await;
    let txn = zmarket::db::write_txn(&app.state.db).await.unwrap();
    app.state
        .mailer
        .enqueue(&txn, zmarket::mail::Mail { to: "bob@example.com", subject: "Hi", body: "Hello", link: None })
        .await
        .unwrap();
    txn.commit().await.unwrap();
    assert_eq!(app.state.mailer.deliver_due().await.unwrap(), 0);
    use sea_orm::EntityTrait;
    // The start-up delivery pass may hold the claim: wait for its attempt to end.
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows = zmarket::db::entity::mail_outbox::Entity::find().all(&app.state.db).await.unwrap();
        if rows.iter().all(|r| r.status != zmarket::db::enums::MailStatus::Sending) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, zmarket::db::enums::MailStatus::Pending);
    assert_eq!(stored(&app, "SELECT status FROM mail_outbox").await, [["pending"]]);
    assert_eq!(rows[0].attempts, 1);
    assert!(rows[0].last_error.is_some());
    assert!(rows[0].next_attempt_at > chrono::Utc::now());
    assert!(app.mails().await.is_empty());
}

#[tokio::test]
async fn the_signing_key_is_generated_once_with_mode_0600() {
    let app = TestApp::spawn().await;
    let path = app.dir.path().join("jwt.key");
    let key = std::fs::read_to_string(&path).unwrap();
    assert!(key.len() >= 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let again = zmarket::secrets::jwt_secret(&app.state.config).unwrap();
    assert_eq!(hex::encode(again), key);
}

#[tokio::test]
async fn concurrent_write_transactions_do_not_fail_with_database_locked() {
    let app = TestApp::spawn().await;
    let mut tasks = Vec::new();
    for i in 0..40 {
        let state = app.state.clone();
        tasks.push(tokio::spawn(async move {
            let txn = zmarket::db::write_txn(&state.db).await?;
            use sea_orm::{EntityTrait, PaginatorTrait};
            // read, then write in the same transaction: the pattern that deadlocks with BEGIN DEFERRED
            let _n = zmarket::db::entity::mail_outbox::Entity::find().count(&txn).await?;
            let to = format!("u{i}@example.com");
            state.mailer.enqueue(&txn, zmarket::mail::Mail { to: &to, subject: "s", body: "b", link: None }).await?;
            txn.commit().await
        }));
    }
    for t in tasks {
        t.await.unwrap().expect("no database-locked error");
    }
    use sea_orm::{EntityTrait, PaginatorTrait};
    assert_eq!(zmarket::db::entity::mail_outbox::Entity::find().count(&app.state.db).await.unwrap(), 40);
}

#[test]
fn invalid_configuration_names_the_key() {
    let err = zmarket::config::Config::from_toml("[server]\nbind = \"not-an-address\"").unwrap_err();
    assert!(err.to_string().contains("server.bind"), "{err}");
    let err = zmarket::config::Config::from_toml("[log]\nformat = \"xml\"").unwrap_err();
    assert!(err.to_string().contains("log.format"), "{err}");
    let err = zmarket::config::Config::from_toml("[server]\nbindd = \"127.0.0.1:1\"").unwrap_err();
    assert!(err.to_string().contains("bindd"), "{err}");
    let err = zmarket::config::Config::from_toml("[database]\nurl = \"mysql://x\"").unwrap_err();
    assert!(err.to_string().contains("database.url"), "{err}");
}

fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_zmarket"))
}

#[test]
fn the_binary_refuses_invalid_environment_config_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .current_dir(dir.path())
        .env("ZMARKET_SERVER__BIND", "nonsense")
        .arg("migrate")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("server.bind"), "{stderr}");
}

#[test]
fn command_line_wins_over_environment_and_migrate_works() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("cli-data");
    let out = bin()
        .current_dir(dir.path())
        .env("ZMARKET_DATA_DIR", dir.path().join("env-data"))
        .args(["migrate", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(data.join("zmarket.db").is_file());
    assert!(!dir.path().join("env-data").exists());
}

#[test]
fn the_server_stops_gracefully_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = bin()
        .current_dir(dir.path())
        .args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(dir.path().join("data"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut up = false;
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            up = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(up, "server did not start");
    let status = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let mut code = None;
    for _ in 0..200 {
        if let Some(s) = child.try_wait().unwrap() {
            code = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let code = code.unwrap_or_else(|| {
        let _ = child.kill();
        panic!("server did not stop on SIGTERM")
    });
    assert!(code.success(), "{code:?}");
}

#[tokio::test]
async fn shared_jobs_run_on_one_instance_at_a_time() {
    use sea_orm::DbBackend;
    use zmarket::jobs::exclusive;
    let app = TestApp::spawn().await;
    let db = &app.state.db;
    let (release, held) = tokio::sync::oneshot::channel::<()>();
    // The first run holds the job while a second one (another instance's turn) tries.
    let first = exclusive(db, "test.job", async move {
        let _ = held.await;
        1
    });
    let second = async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let r = exclusive(db, "test.job", async { 2 }).await.unwrap();
        release.send(()).unwrap();
        r
    };
    let (a, b) = tokio::join!(first, second);
    assert_eq!(a.unwrap(), Some(1));
    if db.get_database_backend() == DbBackend::Postgres {
        assert_eq!(b, None, "PostgreSQL: the lock is held by the first run");
    } else {
        assert_eq!(b, Some(2), "SQLite: one instance, no lock");
    }
    // Once the first run is done, the job runs again.
    assert_eq!(exclusive(db, "test.job", async { 3 }).await.unwrap(), Some(3));
}

/// A test leaves nothing behind: its data directory is removed and, on PostgreSQL, its database
/// dropped (issue 27: 1,453 test databases were found on one machine). A second instance on the
/// first one's database drops nothing of its own.
#[tokio::test]
async fn a_test_app_leaves_no_database_behind() {
    let app = TestApp::spawn().await;
    let url = app.state.config.database_url();
    let dir = app.dir.path().to_path_buf();
    let second = TestApp::spawn_with(|c| c.database.url = url.clone()).await;
    assert_eq!(second.get("/readyz").await.status(), 200);
    drop(second);
    // The first instance still has its database.
    let res = app.get("/readyz").await;
    assert_eq!(res.status(), 200);
    drop(app);
    assert!(!dir.exists(), "{} is left", dir.display());
    if let Ok(admin_url) = std::env::var("TEST_DATABASE_URL") {
        use sea_orm::{ConnectionTrait, Database, Statement};
        let name = url.rsplit('/').next().unwrap().to_string();
        let admin = Database::connect(&admin_url).await.unwrap();
        // The drop runs beside the test (common.rs, PgDatabase): it is gone within a minute.
        let mut left = Some(());
        for _ in 0..600 {
            left = admin
                .query_one_raw(Statement::from_sql_and_values(sea_orm::DbBackend::Postgres, "SELECT datname FROM pg_database WHERE datname = $1", [name.clone().into()]))
                .await
                .unwrap()
                .map(|_| ());
            if left.is_none() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(left.is_none(), "{name} is left");
    }
}

/// The database, the mails (live links) and a data directory made by the server are private to its
/// user.
#[cfg(unix)]
#[tokio::test]
async fn the_data_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let fresh = root.path().join("made-by-zmarket");
    let dir = fresh.clone();
    let app = TestApp::spawn_with(move |c| {
        if std::env::var("TEST_DATABASE_URL").is_err() {
            c.data_dir = dir;
        }
    })
    .await;
    app.post_json("/api/iam/v1/register", &sign_up("files@example.com", PASSWORD), None).await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let data_dir = app.state.config.data_dir.clone();
    if std::env::var("TEST_DATABASE_URL").is_err() {
        assert_eq!(mode(&fresh), 0o700);
        assert_eq!(mode(&fresh.join("zmarket.db")), 0o600);
    }
    for _ in 0..100 {
        if std::fs::read_dir(data_dir.join("mail")).is_ok_and(|mut d| d.next().is_some()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let mails: Vec<_> = std::fs::read_dir(data_dir.join("mail")).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(!mails.is_empty());
    for m in mails {
        assert_eq!(mode(&m), 0o600, "{}", m.display());
    }
    assert_eq!(mode(&data_dir.join("mail")), 0o700);
}

/// A data directory that already exists with 0755 is tightened to 0700 at start.
#[cfg(unix)]
#[tokio::test]
async fn an_existing_open_data_directory_is_tightened_at_start() {
    use std::os::unix::fs::PermissionsExt;
    let outer = tempfile::tempdir().unwrap();
    let data = outer.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = data.clone();
    let app = TestApp::spawn_with(move |c| c.data_dir = dir).await;
    assert_eq!(app.get_json("/api/openapi.json").await.0, 200);
    assert_eq!(std::fs::metadata(&data).unwrap().permissions().mode() & 0o777, 0o700);
}

/// A mail keeps one Message-ID however often it is delivered.
#[tokio::test]
async fn a_mail_carries_a_message_id_of_its_own() {
    let app = TestApp::spawn().await;
    app.post_json("/api/iam/v1/register", &sign_up("mid@example.com", PASSWORD), None).await;
    let mail = app.wait_for_mail_to("mid@example.com", "token=", 0).await;
    let id = mail.lines().find(|l| l.to_ascii_lowercase().starts_with("message-id:")).expect("a Message-ID header");
    assert!(id.contains("@localhost>"), "{id}");
    // Delivering the same row again writes the same message (same file, same Message-ID).
    let before = app.mails().await.len();
    use sea_orm::{ConnectionTrait, EntityTrait};
    let row = zmarket::db::entity::mail_outbox::Entity::find().one(&app.state.db).await.unwrap().unwrap();
    app.state.db.execute_unprepared(&format!("UPDATE mail_outbox SET status = 'pending', next_attempt_at = created_at WHERE id = '{}'", row.id)).await.unwrap();
    app.state.mailer.deliver_due().await.unwrap();
    let mails = app.mails().await;
    assert_eq!(mails.len(), before, "the retry wrote the same file again");
    assert!(mails.iter().any(|m| m.contains(id)));
}

/// A server started with the default log settings says it listens, without the scheduler's start-up
/// chatter.
#[tokio::test]
async fn startup_logs_are_quiet_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = dir.path().join("out.log");
    let log = std::fs::File::create(&out).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_zmarket"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env_remove("ZMARKET_LOG__LEVEL")
        .env_remove("ZMARKET_DATABASE__URL")
        .env_remove("RUST_LOG")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut up = false;
    for _ in 0..600 {
        if reqwest::get(format!("http://127.0.0.1:{port}/healthz")).await.is_ok_and(|r| r.status() == 200) {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Lines are written by a thread of their own (src/telemetry.rs): give it a moment.
    for _ in 0..100 {
        if std::fs::read_to_string(&out).unwrap_or_default().contains("listening on") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(up, "zmarket serve did not answer: {text}");
    assert!(text.contains("listening on"), "{text}");
    for chatter in ["Uninited", "Job creator created", "Job creator", "Notification creator"] {
        assert!(!text.contains(chatter), "{chatter:?} at start-up:\n{text}");
    }
}
