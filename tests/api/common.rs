//! `TestApp::spawn()`: the real server on 127.0.0.1:0 over a fresh database (a temp-dir SQLite,
//! or a new PostgreSQL database when TEST_DATABASE_URL is set), with a real HTTP client.

use std::path::PathBuf;
use std::sync::Once;

use reqwest::header::HeaderMap;
use serde_json::Value;
use tempfile::TempDir;
use tokio::sync::oneshot;
use zmarket::state::AppState;
use zmarket::config::Config;

static INIT: Once = Once::new();

pub fn init() {
    INIT.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        // TEST_LOG=1 logs at info; any other value is the filter (e.g. `zmarket::db::statement=trace`).
        if let Ok(filter) = std::env::var("TEST_LOG") {
            let filter = if filter.is_empty() || filter == "1" { "info,sqlx=warn".to_string() } else { filter };
            let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
        }
    });
}

async fn prepare(addr: std::net::SocketAddr, adjust: impl FnOnce(&mut Config)) -> (AppState, TempDir, Option<PgDatabase>) {
    init();
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = Config::default();
    config.data_dir = dir.path().to_path_buf();
    config.server.bind = addr;
    config.ssr.threads = 1;
    config.database.max_connections = 8;
    // Tests sign many people up and in and register many boxes from 127.0.0.1; the tests of the
    // limits themselves set them low.
    config.auth.register_ip_burst = 1000;
    config.auth.login_ip_burst = 1000;
    config.devices.register_ip_burst = 1000;
    let mut fresh = None;
    if let Ok(url) = std::env::var("TEST_DATABASE_URL") {
        let db = fresh_postgres_database(&url).await;
        config.database.url = db.url.clone();
        fresh = Some(db);
    }
    adjust(&mut config);
    // A second instance of another test's database: the fresh one is dropped at once (here).
    let owned = fresh.filter(|db| db.url == config.database.url);
    config.validate().expect("test config is valid");
    let state = zmarket::server::prepare(config).await.expect("server prepares");
    (state, dir, owned)
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub state: AppState,
    pub dir: TempDir,
    shutdown: Option<oneshot::Sender<()>>,
    /// Last: dropped after the server was told to stop.
    _database: Option<PgDatabase>,
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        Self::spawn_with(|_| {}).await
    }

    pub async fn spawn_with(adjust: impl FnOnce(&mut Config)) -> TestApp {
        // Bound first, so the configuration (and the links it derives) names the real address.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().unwrap();
        let (state, dir, database) = prepare(addr, adjust).await;
        let (tx, rx) = oneshot::channel::<()>();
        let served = state.clone();
        tokio::spawn(async move {
            let _ = zmarket::server::serve(listener, served, async move {
                let _ = rx.await;
            })
            .await;
        });
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        TestApp { base: format!("http://{addr}"), client, state, dir, shutdown: Some(tx), _database: database }
    }

    /// The prepared state over a fresh database, with no server and no background jobs: for
    /// tests that drive services directly and must not race a scheduled job.
    /// Where mailed links point: derived from the address the server listens on.
    /// The services without a server; the database is dropped with the third value.
    pub async fn services_only(adjust: impl FnOnce(&mut Config)) -> (AppState, TempDir, Option<PgDatabase>) {
        prepare("127.0.0.1:0".parse().unwrap(), adjust).await
    }

    /// Hands this app's PostgreSQL database to the caller, to outlive the app (a restart on it).
    pub fn take_database(&mut self) -> Option<PgDatabase> {
        self._database.take()
    }

    pub fn public_url(&self) -> String {
        self.state.config.public_url()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub fn mail_dir(&self) -> PathBuf {
        self.dir.path().join("mail")
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client.get(self.url(path)).send().await.expect("request")
    }

    /// GET an API path and return (status, body envelope).
    pub async fn get_json(&self, path: &str) -> (u16, Value) {
        json_of(self.get(path).await).await
    }

    pub async fn post_json(&self, path: &str, body: &Value, token: Option<&str>) -> (u16, Value) {
        let mut req = self.client.post(self.url(path)).json(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        json_of(req.send().await.expect("request")).await
    }

    /// Mail files written so far, oldest first, as text.
    pub async fn mails(&self) -> Vec<String> {
        let mut files: Vec<_> = match std::fs::read_dir(self.mail_dir()) {
            Ok(rd) => rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "eml")).collect(),
            Err(_) => Vec::new(),
        };
        files.sort();
        files.iter().map(|p| std::fs::read_to_string(p).unwrap_or_default()).collect()
    }

    /// Waits (up to 10 s) until more than `before` mails to `to` that contain `needle` are
    /// written and returns the newest (safe when other mails are being written meanwhile).
    pub async fn wait_for_mail_to(&self, to: &str, needle: &str, before: usize) -> String {
        let to = format!("To: {to}");
        for _ in 0..200 {
            let mine: Vec<String> = self.mails().await.into_iter().filter(|m| m.contains(&to) && m.contains(needle)).collect();
            if mine.len() > before {
                return mine.last().cloned().unwrap_or_default();
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("expected a new mail ({to}, {needle}) in {}", self.mail_dir().display());
    }

    /// How many mails to `to` containing `needle` are written so far.
    pub async fn mail_count_to(&self, to: &str, needle: &str) -> usize {
        let to = format!("To: {to}");
        self.mails().await.iter().filter(|m| m.contains(&to) && m.contains(needle)).count()
    }

    /// Waits (up to 10 s) until at least `n` mails are written and returns them.
    pub async fn wait_for_mails(&self, n: usize) -> Vec<String> {
        for _ in 0..200 {
            let m = self.mails().await;
            if m.len() >= n {
                return m;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("expected {n} mail files in {}", self.mail_dir().display());
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

pub async fn json_of(res: reqwest::Response) -> (u16, Value) {
    let status = res.status().as_u16();
    let text = res.text().await.expect("body");
    let v = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}"));
    (status, v)
}

pub fn header<'a>(h: &'a HeaderMap, name: &str) -> &'a str {
    h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// A test's own PostgreSQL database, dropped with its TestApp (issue 27: the harness never dropped
/// them, and 1,453 were found on one machine).
pub struct PgDatabase {
    pub url: String,
    admin_url: String,
    name: String,
}

/// The drops under way: joined when the test process exits (`atexit`), so none is cut short.
static PENDING_DROPS: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>> = std::sync::Mutex::new(Vec::new());

extern "C" fn finish_drops() {
    let pending = std::mem::take(&mut *PENDING_DROPS.lock().unwrap_or_else(|e| e.into_inner()));
    for handle in pending {
        let _ = handle.join();
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        static AT_EXIT: std::sync::Once = std::sync::Once::new();
        AT_EXIT.call_once(|| {
            // SAFETY: registers a plain function with no arguments, once.
            unsafe { libc::atexit(finish_drops) };
        });
        let (admin_url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop runs inside the test's runtime, which must keep running meanwhile: a connection
        // the app's pool was opening (its backend still authenticating, which DROP DATABASE's
        // FORCE cannot see) holds up every DROP DATABASE on the server until it finishes, and it
        // finishes only if this runtime answers it or ends. So the drop runs on a thread of its
        // own and is not waited for here. FORCE ends the connections the stopping server holds.
        let handle = std::thread::spawn(move || {
            use sea_orm::{ConnectionTrait, Database};
            let dropped = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string()).and_then(|rt| {
                rt.block_on(async {
                    let admin = Database::connect(&admin_url).await.map_err(|e| e.to_string())?;
                    admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await.map_err(|e| e.to_string())?;
                    admin.close().await.map_err(|e| e.to_string())
                })
            });
            if let Err(e) = dropped {
                eprintln!("test database {name} not dropped: {e}");
            }
        });
        PENDING_DROPS.lock().unwrap_or_else(|e| e.into_inner()).push(handle);
    }
}

/// Creates an empty database on the PostgreSQL server of `url`.
async fn fresh_postgres_database(url: &str) -> PgDatabase {
    use sea_orm::{ConnectionTrait, Database};
    let admin = Database::connect(url).await.expect("TEST_DATABASE_URL reachable");
    let name = format!("zmt_{}", uuid::Uuid::now_v7().simple());
    admin.execute_unprepared(&format!("CREATE DATABASE {name}")).await.expect("create test database");
    let _ = admin.close().await;
    let mut u = url::Url::parse(url).expect("TEST_DATABASE_URL is a URL");
    u.set_path(&format!("/{name}"));
    PgDatabase { url: u.to_string(), admin_url: url.to_string(), name }
}

/// Runs the real binary (a `zmarket` command) against the app's data directory and database:
/// (succeeded, stdout, stderr).
pub fn cli(app: &TestApp, args: &[&str]) -> (bool, String, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_zmarket"));
    cmd.arg("--data-dir").arg(app.dir.path()).args(args).env("ZMARKET_LOG__LEVEL", "warn");
    if !app.state.config.database.url.is_empty() {
        cmd.env("ZMARKET_DATABASE__URL", &app.state.config.database.url);
    }
    let out = cmd.output().expect("zmarket runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

pub const PASSWORD: &str = "Secret123";

/// The verification link in a mail.
pub fn link_in(mail: &str) -> String {
    let start = mail.find("http").unwrap_or_else(|| panic!("no link in the mail:\n{mail}"));
    mail[start..].split_whitespace().next().unwrap().to_string()
}

/// The token of the link in a mail (`…?token=…`).
pub fn token_in(mail: &str) -> String {
    link_in(mail).split("token=").nth(1).unwrap().to_string()
}

/// A sign-up's body: `email` with `password`, confirmed, and the terms agreed.
pub fn sign_up(email: &str, password: &str) -> Value {
    serde_json::json!({"email": email, "password": password, "confirm_password": password, "agree": true})
}

impl TestApp {
    /// Signs up, opens the mailed link and signs in, all through the API. Returns the session.
    pub async fn signed_in(&self, email: &str) -> Value {
        let before = self.mail_count_to(email, "token=").await;
        let (status, body) = self.post_json("/api/iam/v1/register", &sign_up(email, PASSWORD), None).await;
        assert_eq!(status, 200, "{body}");
        let mail = self.wait_for_mail_to(email, "token=", before).await;
        let (status, body) = self.get_json(&format!("/api/iam/v1/verify-email?token={}", token_in(&mail))).await;
        assert_eq!(status, 200, "{body}");
        self.login(email, PASSWORD).await
    }

    pub async fn login(&self, email: &str, password: &str) -> Value {
        let (status, body) =
            self.post_json("/api/iam/v2/login/password", &serde_json::json!({"email": email, "password": password}), None).await;
        assert_eq!(status, 200, "{body}");
        body["data"].clone()
    }

    /// The status a sign-in of `email` with `password` answers.
    pub async fn login_status(&self, email: &str, password: &str) -> u16 {
        self.post_json("/api/iam/v2/login/password", &serde_json::json!({"email": email, "password": password}), None).await.0
    }

    pub async fn get_auth(&self, path: &str, token: &str) -> (u16, Value) {
        json_of(self.client.get(self.url(path)).bearer_auth(token).send().await.expect("request")).await
    }

    pub async fn put_json(&self, path: &str, body: &Value, token: &str) -> (u16, Value) {
        json_of(self.client.put(self.url(path)).bearer_auth(token).json(body).send().await.expect("request")).await
    }

    pub async fn delete_json(&self, path: &str, body: &Value, token: &str) -> (u16, Value) {
        json_of(self.client.delete(self.url(path)).bearer_auth(token).json(body).send().await.expect("request")).await
    }
}

pub fn token_of(session: &Value) -> String {
    session["token"].as_str().expect("token").to_string()
}

/// Creates a company owned by `owner` through the API, with the given members (each invited by
/// email with its role and joined through the mailed link). Returns the company id.
pub async fn seed_company(app: &TestApp, name: &str, owner: &Value, members: &[(&Value, &str)]) -> String {
    let (status, body) = app.post_json("/api/iam/v1/sme", &serde_json::json!({"name": name}), Some(&token_of(owner))).await;
    assert_eq!(status, 200, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_string();
    let admin = app.switch(owner, &id).await;
    for (m, role) in members {
        let email = m["userInfo"]["email"].as_str().unwrap();
        let code = app.invite(&token_of(&admin), email, role).await;
        let (status, body) = app.post_json("/api/iam/v1/sme/join", &serde_json::json!({"code": code, "accept": true}), Some(&token_of(m))).await;
        assert_eq!(status, 200, "{body}");
    }
    id
}

impl TestApp {
    /// Switches `session` into `sme` (a company id or "user") and returns the new session.
    pub async fn switch(&self, session: &Value, sme: &str) -> Value {
        let (status, body) = self.post_json("/api/iam/v1/switch", &serde_json::json!({"smeId": sme}), Some(&token_of(session))).await;
        assert_eq!(status, 200, "{body}");
        body["data"].clone()
    }

    /// Invites `email` with `role` as the admin of `admin_token`'s company and returns the code of
    /// the mailed link.
    pub async fn invite(&self, admin_token: &str, email: &str, role: &str) -> String {
        let before = self.mail_count_to(email, "sme/join?code=").await;
        let (status, body) =
            self.post_json("/api/iam/v1/sme/invite", &serde_json::json!({"email": email, "role": role}), Some(admin_token)).await;
        assert_eq!(status, 200, "{body}");
        let mail = self.wait_for_mail_to(email, "sme/join?code=", before).await;
        let link = link_in(&mail);
        assert!(link.contains("/iam/v1/sme/join?code="), "{link}");
        link.split("code=").nth(1).unwrap().to_string()
    }
}

pub async fn user_id_of(app: &TestApp, session: &Value) -> String {
    let (_, p) = app.get_auth("/api/iam/v1/account/profile", &token_of(session)).await;
    p["data"]["id"].as_str().unwrap().to_string()
}

/// The text columns of the rows `sql` selects, as stored (not through an entity): what a column
/// read through an enum holds in the database.
pub async fn stored(app: &TestApp, sql: &str) -> Vec<Vec<String>> {
    use sea_orm::{ConnectionTrait, Statement};
    let db = &app.state.db;
    let rows = db.query_all_raw(Statement::from_string(db.get_database_backend(), sql)).await.expect(sql);
    rows.iter()
        .map(|r| (0..).map_while(|i| r.try_get_by_index::<String>(i).ok()).collect())
        .collect()
}

/// `zmarket serve` (the real binary) on a free loopback port with data in `dir`, and its address
/// once /healthz answers, waiting at most `within`.
pub async fn serve_binary(dir: &std::path::Path, within: std::time::Duration) -> (std::process::Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_zmarket"))
        .arg("--data-dir")
        .arg(dir)
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env("ZMARKET_LOG__LEVEL", "warn")
        .env("ZMARKET_AUTH__EMAIL_VERIFICATION", "false")
        .env_remove("ZMARKET_DATABASE__URL")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let until = std::time::Instant::now() + within;
    while std::time::Instant::now() < until {
        if reqwest::get(format!("{base}/healthz")).await.is_ok_and(|r| r.status() == 200) {
            return (child, base);
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("zmarket serve did not answer");
}
