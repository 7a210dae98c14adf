//! Configuration: built-in defaults < config.toml < `ZMARKET_<SECTION>__<KEY>` environment
//! < command line (`--bind`, `--data-dir`). One struct, validated once at start-up.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

mod limits;
pub use limits::{LOW_OPEN_FILE_LIMIT, raise_open_file_limit};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Shown after every page title and in mails.
    pub product_name: String,
    /// Where the SQLite database, the generated secret and the mail folder live.
    pub data_dir: PathBuf,
    pub server: ServerConfig,
    pub database: DatabaseConfig,
    pub auth: AuthConfig,
    pub mail: MailConfig,
    pub downloads: DownloadsConfig,
    pub ssr: SsrConfig,
    pub map: MapConfig,
    pub devices: DevicesConfig,
    pub apps: AppsConfig,
    pub orders: OrdersConfig,
    pub agent: AgentConfig,
    pub connect: ConnectConfig,
    pub billing: BillingConfig,
    pub social: SocialConfig,
    pub backup: BackupConfig,
    pub log: LogConfig,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    pub bind: SocketAddr,
    /// The address people reach the server at; used to build links in mails.
    pub public_url: String,
    /// Origins allowed to embed the app in a frame (the desktop client's PC mode). Empty: nobody.
    pub frame_ancestors: Vec<String>,
    /// Largest request body accepted, in bytes (uploads have their own limits below this).
    pub body_limit_bytes: usize,
    /// Reverse proxies (addresses or CIDR blocks) whose `X-Forwarded-For` names the client.
    pub trusted_proxies: Vec<String>,
    /// A client must send a request's headers within this many seconds.
    pub header_read_timeout_secs: u64,
    /// A connection with no request in flight is closed after this many seconds.
    pub idle_timeout_secs: u64,
    /// Open connections at most; 0 = three quarters of the process's open-file limit.
    pub max_connections: usize,
    /// Open connections one client address may hold.
    pub max_connections_per_ip: usize,
    /// A request body must arrive at this many bytes a second at least (averaged from its first
    /// read, after `body_grace_secs`); a slower one is cut and its connection closed.
    pub min_body_rate_bytes: u64,
    /// Seconds a request body may take before `min_body_rate_bytes` applies.
    pub body_grace_secs: u64,
    /// Event streams (Server-Sent Events) open at once, counted apart from the connections
    /// serving requests; 0 = a quarter of the connection cap.
    pub max_event_streams: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatabaseConfig {
    /// Empty: `sqlite://<data_dir>/zmarket.db`. `postgres://user:pass@host/db` runs on PostgreSQL.
    pub url: String,
    pub max_connections: u32,
    /// SQLite: how long a writer waits for the lock before giving up.
    pub busy_timeout_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    /// JWT signing key. Empty: generated on first start into `<data_dir>/jwt.key` (mode 0600).
    /// Several instances sharing one database must share this value.
    pub jwt_secret: String,
    pub access_token_ttl_secs: u64,
    /// Absolute lifetime of a sign-in session (its refresh-token family).
    pub session_ttl_secs: u64,
    /// Two tabs that refresh with the same token within this window both continue.
    pub refresh_grace_secs: u64,
    /// Require a verified email before sign-in. A private deployment may turn this off.
    pub email_verification: bool,
    pub verification_ttl_secs: u64,
    /// Company invitations expire after this.
    pub invitation_ttl_secs: u64,
    /// Sign-in attempts one IP may make in a burst, then one more every `login_ip_refill_secs`.
    pub login_ip_burst: u32,
    pub login_ip_refill_secs: u64,
    /// Failed sign-ins one account may take in a burst, then one more every `login_account_refill_secs`.
    pub login_account_burst: u32,
    pub login_account_refill_secs: u64,
    /// Password hashes computed at once (19 MiB each); 0 = one per CPU core.
    pub hash_concurrency: usize,
    /// How long a sign-in or sign-up waits for a hashing turn before it is answered 429.
    pub hash_wait_ms: u64,
    /// Sign-ups one IP may make in a burst, then one more every `register_ip_refill_secs`.
    pub register_ip_burst: u32,
    pub register_ip_refill_secs: u64,
    /// Sign-ups (each mails a link) of one address in a burst, then one every `register_email_refill_secs`.
    pub register_email_burst: u32,
    pub register_email_refill_secs: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MailConfig {
    pub from: String,
    /// Empty: every message is written to `<data_dir>/mail/` as an .eml file instead.
    pub smtp_host: String,
    pub smtp_port: u16,
    pub smtp_username: String,
    pub smtp_password: String,
    /// `starttls`, `tls` (implicit TLS) or `none` (only for a relay on localhost).
    pub smtp_security: String,
    /// Attempts before a message is marked failed.
    pub max_attempts: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DownloadsConfig {
    pub windows: String,
    pub mac: String,
    pub android: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SsrConfig {
    /// Render threads; 0 = one per CPU core, at most [`DEFAULT_MAX_SSR_THREADS`].
    pub threads: usize,
    /// Renders waiting for a thread; beyond it pages fall back to client rendering.
    pub queue: usize,
    /// A single render is interrupted after this long.
    pub deadline_ms: u64,
    /// Memory limit of each render runtime.
    pub memory_limit_mb: usize,
    /// Rendered pages kept in the cache.
    pub cache_entries: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MapConfig {
    /// Raster tile URL template (`https://tiles.example/{z}/{x}/{y}.png`). Empty: the offline
    /// world outline shipped in assets/map/ is drawn instead.
    pub tile_url: String,
    pub tile_attribution: String,
    /// The visitor's position when the browser does not give one.
    pub default_lat: f64,
    pub default_lng: f64,
    pub default_zoom: u8,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DevicesConfig {
    /// A device with no heartbeat for this long is offline.
    pub offline_after_secs: u64,
    /// Heartbeat interval the agent is told to use.
    pub heartbeat_secs: u64,
    /// Agent registrations one IP may make in a burst, then one more every `register_ip_refill_secs`.
    pub register_ip_burst: u32,
    pub register_ip_refill_secs: u64,
    /// A registered device never bound and not heard from for this long is forgotten.
    pub unbound_ttl_secs: u64,
    /// Non-empty: agents must present it (`registration_token` in the register body) to register.
    pub registration_token: String,
    /// A Z-CLOUD machine rented on another owner's host that the host's owner ends (or whose host
    /// is withdrawn from rent) is stopped this long after its renter is told.
    pub zcloud_notice_minutes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppsConfig {
    /// A JSON file of install manifests replacing the built-in ones by app id (same format as
    /// assets/catalogue/manifests.json), e.g. images in a private registry. Empty: none.
    pub manifests: String,
    /// The watchdog fails an install (preparing, downloading, installing) after this long.
    pub install_timeout_secs: u64,
    /// … and any other transitional state (starting, stopping, uninstalling, …) after this long.
    pub action_timeout_secs: u64,
    /// A rental whose paid time is used up is suspended (its container stopped and kept, the box
    /// still reserved) for this long, for its renter to add coins and resume it; then it is ended.
    pub suspended_grace_hours: u32,
    /// The largest image archive (`docker save` tar) an operator may upload from the console
    /// (`POST /api/ops/v1/apps/{id}/image`); a larger one is refused with 413 and nothing stored.
    pub max_image_bytes: u64,
}

impl Default for AppsConfig {
    fn default() -> Self {
        AppsConfig {
            manifests: String::new(),
            install_timeout_secs: 3600,
            action_timeout_secs: 600,
            suspended_grace_hours: 24,
            max_image_bytes: 8 * 1024 * 1024 * 1024,
        }
    }
}

/// Demands and orders (src/orders/, docs/orders.md): how long each waiting state may last.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OrdersConfig {
    /// A demand nobody takes within this long fails (`order_failed`, its hold released).
    pub pending_timeout_secs: u64,
    /// A taken order whose app is not running on the provider's device within this long fails.
    pub start_timeout_secs: u64,
    /// An order whose app runs but the demander does not confirm within this long fails.
    pub confirm_timeout_secs: u64,
    /// How often the order job looks at time-outs, running apps and the meter.
    pub sweep_secs: u64,
}

impl Default for OrdersConfig {
    fn default() -> Self {
        OrdersConfig { pending_timeout_secs: 7 * 86400, start_timeout_secs: 3600, confirm_timeout_secs: 3600, sweep_secs: 5 }
    }
}

/// Settings of `zmarket agent` (the device side).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Program run as `<provisioner> create|delete <machine id>` (payload JSON on stdin) to carry
    /// out Z-CLOUD commands on a server-group host. Empty: such commands fail with that reason.
    pub provisioner: String,
    /// The market's registration token, when the market sets `devices.registration_token`.
    pub registration_token: String,
    /// Registry mirror for images the market server holds no archive of, e.g.
    /// `docker.m.daocloud.io` (an image `grafana/grafana:11.5.0` is then pulled as
    /// `docker.m.daocloud.io/grafana/grafana:11.5.0`). Empty: the image's own registry.
    pub registry_mirror: String,
    /// The Docker Engine socket. Empty: the platform default (/var/run/docker.sock, DOCKER_HOST).
    pub docker_socket: String,
    /// The host name or address people reach this box's apps at. Empty: the address this box
    /// uses to reach the market server.
    pub public_host: String,
    /// Ports of the box itself its owner may reach through the market (`zmarket tunnel
    /// --device`, the device page's SSH block). Default: 22.
    pub tcp_ports: Vec<u16>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            provisioner: String::new(),
            registration_token: String::new(),
            registry_mirror: String::new(),
            docker_socket: String::new(),
            public_host: String::new(),
            tcp_ports: vec![22],
        }
    }
}

/// Reaching what runs on a box through the market (src/connect/, docs/connect.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConnectConfig {
    /// Each installation's web interface is served on its own origin `<label>.<apps_domain>`.
    /// Empty: the host of `public_url` (`localhost` on a local run: browsers resolve
    /// `*.localhost` to the loopback with no DNS). Behind a proxy, point a wildcard DNS name
    /// and certificate at the market.
    pub apps_domain: String,
    /// How long the one-time link behind "Open" stays valid.
    pub open_token_ttl_secs: u64,
    /// How long an app origin's sign-in cookie lasts.
    pub cookie_ttl_secs: u64,
    /// After an agent's channel closes, how long before its device shows offline (a
    /// reconnect within it is not an outage).
    pub offline_grace_secs: u64,
    /// How often an instance looks for queued commands of the channels it holds (on
    /// PostgreSQL a NOTIFY also announces them at once).
    pub command_poll_ms: u64,
    /// Where the other instances reach this one (a stream asked for on one instance is carried
    /// to the instance holding the device's channel). Empty: the address it listens on.
    pub internal_url: String,
}

impl Default for ConnectConfig {
    fn default() -> Self {
        ConnectConfig {
            apps_domain: String::new(),
            open_token_ttl_secs: 60,
            cookie_ttl_secs: 12 * 3600,
            offline_grace_secs: 3,
            command_poll_ms: 100,
            internal_url: String::new(),
        }
    }
}

/// The wallet (src/billing/, docs/wallet.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BillingConfig {
    /// Coins credited once to every newly verified account; 0 disables it.
    pub signup_bonus: crate::coins::Coins,
    /// Percent of every rental or order payment kept by the market.
    pub market_fee_percent: u8,
    /// How long the answer to an `Idempotency-Key` is kept.
    pub idempotency_ttl_secs: u64,
    /// What the wallet's top-up page says about getting coins on this market (English and
    /// Chinese; the operator's words, e.g. whom to ask for a top-up code). Empty: a default text.
    pub how_to_get_coins: String,
    pub how_to_get_coins_zh: String,
    /// A person is told (notification and mail) when what runs on their coins has less than this
    /// many hours left; 0 disables the notice.
    pub low_balance_hours: u32,
}

/// Friends, messages and the live event stream (docs/social.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SocialConfig {
    /// Friend requests one person may send per minute.
    pub friend_requests_per_minute: u32,
    /// Messages one person may send per minute.
    pub messages_per_minute: u32,
    /// Events kept per person for replay after `Last-Event-ID` (the newest ones)…
    pub events_keep_per_user: u32,
    /// …and for at most this many days.
    pub events_keep_days: u32,
    /// Seconds between keep-alive comments on an idle stream (proxies cut idle connections at 60 s).
    pub keep_alive_secs: u64,
    /// A stream ends after this long; the client reconnects with `Last-Event-ID` and a fresh token.
    pub stream_max_secs: u64,
    /// Open streams one person may hold on one instance (tabs, devices).
    pub streams_per_user: u32,
    /// SQLite only: how often the instance looks for events written outside the social calls
    /// (notifications of other domains). PostgreSQL is told at once by LISTEN/NOTIFY.
    pub poll_ms: u64,
}

/// Scheduled copies of the SQLite database into `<data_dir>/backups` (src/ops/backup.rs,
/// docs/operations.md). PostgreSQL is backed up with pg_dump instead.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BackupConfig {
    /// A backup is taken when the newest one is this many hours old; 0 turns the job off.
    pub every_hours: u32,
    /// Backups kept; the oldest beyond it are deleted after each new one.
    pub keep: u32,
}

impl Default for BackupConfig {
    fn default() -> Self {
        BackupConfig { every_hours: 24, keep: 7 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogConfig {
    /// A tracing filter, e.g. `info` or `zmarket=debug,info`.
    pub level: String,
    /// `text` or `json`.
    pub format: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            product_name: "ZMarket".into(),
            data_dir: PathBuf::from("./data"),
            server: ServerConfig::default(),
            database: DatabaseConfig::default(),
            auth: AuthConfig::default(),
            mail: MailConfig::default(),
            downloads: DownloadsConfig::default(),
            ssr: SsrConfig::default(),
            map: MapConfig::default(),
            devices: DevicesConfig::default(),
            apps: AppsConfig::default(),
            orders: OrdersConfig::default(),
            agent: AgentConfig::default(),
            connect: ConnectConfig::default(),
            billing: BillingConfig::default(),
            social: SocialConfig::default(),
            backup: BackupConfig::default(),
            log: LogConfig::default(),
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: "127.0.0.1:8080".parse().expect("static address"),
            public_url: String::new(),
            frame_ancestors: Vec::new(),
            body_limit_bytes: 4 * 1024 * 1024,
            trusted_proxies: Vec::new(),
            header_read_timeout_secs: 10,
            idle_timeout_secs: 60,
            max_connections: 0,
            max_connections_per_ip: 128,
            min_body_rate_bytes: 1024,
            body_grace_secs: 10,
            max_event_streams: 0,
        }
    }
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig { url: String::new(), max_connections: 16, busy_timeout_ms: 5000 }
    }
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            jwt_secret: String::new(),
            access_token_ttl_secs: 2 * 3600,
            session_ttl_secs: 30 * 24 * 3600,
            refresh_grace_secs: 10,
            email_verification: true,
            verification_ttl_secs: 24 * 3600,
            invitation_ttl_secs: 7 * 24 * 3600,
            login_ip_burst: 20,
            login_ip_refill_secs: 3,
            login_account_burst: 10,
            login_account_refill_secs: 30,
            hash_concurrency: 0,
            hash_wait_ms: 2000,
            register_ip_burst: 30,
            register_ip_refill_secs: 10,
            register_email_burst: 3,
            register_email_refill_secs: 600,
        }
    }
}

impl Default for MailConfig {
    fn default() -> Self {
        MailConfig {
            from: "ZMarket <no-reply@localhost>".into(),
            smtp_host: String::new(),
            smtp_port: 587,
            smtp_username: String::new(),
            smtp_password: String::new(),
            smtp_security: "starttls".into(),
            max_attempts: 8,
        }
    }
}

/// Render threads when `ssr.threads` is 0 and the machine has more cores: each runtime holds a few
/// MB, a cold render of the market takes a few ms, and most pages come from the render cache
/// (docs/performance.md).
pub const DEFAULT_MAX_SSR_THREADS: usize = 4;

impl Default for SsrConfig {
    fn default() -> Self {
        SsrConfig { threads: 0, queue: 64, deadline_ms: 1000, memory_limit_mb: 64, cache_entries: 512 }
    }
}

impl Default for MapConfig {
    fn default() -> Self {
        MapConfig {
            tile_url: String::new(),
            tile_attribution: String::new(),
            default_lat: 22.5431,
            default_lng: 114.0579,
            default_zoom: 3,
        }
    }
}

impl Default for DevicesConfig {
    fn default() -> Self {
        DevicesConfig {
            offline_after_secs: 90,
            heartbeat_secs: 30,
            register_ip_burst: 10,
            register_ip_refill_secs: 60,
            unbound_ttl_secs: 6 * 3600,
            registration_token: String::new(),
            zcloud_notice_minutes: 15,
        }
    }
}

impl Default for BillingConfig {
    fn default() -> Self {
        BillingConfig {
            signup_bonus: crate::coins::Coins::from_cents(100 * 100),
            market_fee_percent: 10,
            idempotency_ttl_secs: 24 * 3600,
            how_to_get_coins: String::new(),
            how_to_get_coins_zh: String::new(),
            low_balance_hours: 24,
        }
    }
}

impl Default for SocialConfig {
    fn default() -> Self {
        SocialConfig {
            friend_requests_per_minute: 10,
            messages_per_minute: 60,
            events_keep_per_user: 1000,
            events_keep_days: 30,
            keep_alive_secs: 25,
            stream_max_secs: 1800,
            streams_per_user: 16,
            poll_ms: 500,
        }
    }
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig { level: "info".into(), format: "text".into() }
    }
}

const TOP_LEVEL_KEYS: [&str; 16] = [
    "product_name", "data_dir", "server", "database", "auth", "mail", "downloads", "ssr", "map", "devices", "apps", "agent", "billing",
    "social", "backup", "log",
];

fn is_setting_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let first = key.split("__").next().unwrap_or("");
    TOP_LEVEL_KEYS.contains(&first)
}

/// Values given on the command line; they win over the file and the environment.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub bind: Option<SocketAddr>,
    pub data_dir: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {0}")]
pub struct ConfigError(pub String);

/// How the server names itself in mail: its public address and the product's name.
#[derive(Debug, Clone)]
pub struct Site {
    pub public_url: String,
    pub product_name: String,
}

impl Site {
    /// An absolute link to `path` (which starts with `/`).
    pub fn link(&self, path: &str) -> String {
        format!("{}{path}", self.public_url.trim_end_matches('/'))
    }
}

impl Config {
    pub fn site(&self) -> Site {
        Site { public_url: self.public_url(), product_name: self.product_name.clone() }
    }

    /// Where people reach this server: `server.public_url` when set, else derived from the bind
    /// address (`http://localhost:PORT` for a loopback bind, `http://<host name>:PORT` for an
    /// all-interfaces bind, `http://<address>:PORT` otherwise).
    pub fn public_url(&self) -> String {
        let set = self.server.public_url.trim();
        if !set.is_empty() {
            return set.trim_end_matches('/').to_string();
        }
        let bind = self.server.bind;
        let port = bind.port();
        let ip = bind.ip();
        if ip.is_loopback() {
            format!("http://localhost:{port}")
        } else if ip.is_unspecified() {
            let host = hostname::get().ok().and_then(|h| h.into_string().ok()).filter(|h| !h.is_empty());
            format!("http://{}:{port}", host.unwrap_or_else(|| "localhost".into()))
        } else if ip.is_ipv6() {
            format!("http://[{ip}]:{port}")
        } else {
            format!("http://{ip}:{port}")
        }
    }

    /// A warning for the start-up log when mailed links would point to loopback while the server
    /// listens on a network: people elsewhere could not open them.
    pub fn public_url_warning(&self) -> Option<String> {
        let url = url::Url::parse(&self.public_url()).ok()?;
        let loopback_link = match url.host()? {
            url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
            url::Host::Ipv4(ip) => ip.is_loopback(),
            url::Host::Ipv6(ip) => ip.is_loopback(),
        };
        (loopback_link && !self.server.bind.ip().is_loopback()).then(|| {
            format!(
                "server.public_url is {} but the server listens on {}: links in mails will not open from other machines; set server.public_url",
                url.as_str().trim_end_matches('/'),
                self.server.bind
            )
        })
    }

    /// Loads `path` (or `./config.toml` when present and no path is given), the environment and
    /// the overrides, then validates. Every error names the offending key.
    pub fn load(path: Option<&Path>, overrides: &Overrides) -> Result<Config, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        match path {
            Some(p) => {
                if !p.is_file() {
                    return Err(ConfigError(format!("config file {} not found", p.display())));
                }
                figment = figment.merge(Toml::file_exact(p));
            }
            None => {
                let default = Path::new("config.toml");
                if default.is_file() {
                    figment = figment.merge(Toml::file_exact(default));
                }
            }
        }
        // Only variables that name a setting of ours (ZMARKET_DATA_DIR, ZMARKET_SERVER__BIND…);
        // a mistyped key inside a section is still refused, but unrelated ZMARKET_* variables
        // of the environment are not configuration.
        figment = figment.merge(Env::prefixed("ZMARKET_").filter(|k| is_setting_key(k.as_str())).split("__"));
        let mut config = Self::extract(figment)?;
        if let Some(bind) = overrides.bind {
            config.server.bind = bind;
        }
        if let Some(dir) = &overrides.data_dir {
            config.data_dir = dir.clone();
        }
        config.validate()?;
        Ok(config)
    }

    /// Builds a configuration from defaults plus a TOML fragment (tests and tools).
    pub fn from_toml(toml: &str) -> Result<Config, ConfigError> {
        let config = Self::extract(Figment::from(Serialized::defaults(Config::default())).merge(Toml::string(toml)))?;
        config.validate()?;
        Ok(config)
    }

    fn extract(figment: Figment) -> Result<Config, ConfigError> {
        figment.extract::<Config>().map_err(|e| {
            let key = e.path.join(".");
            let msg = e.to_string();
            if key.is_empty() { ConfigError(msg) } else { ConfigError(format!("key `{key}`: {msg}")) }
        })
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, why: &str| Err(ConfigError(format!("key `{key}`: {why}")));
        if self.product_name.trim().is_empty() {
            return bad("product_name", "must not be empty");
        }
        if self.data_dir.as_os_str().is_empty() {
            return bad("data_dir", "must not be empty");
        }
        if !self.database.url.is_empty()
            && !["sqlite:", "postgres://", "postgresql://"].iter().any(|p| self.database.url.starts_with(p))
        {
            return bad("database.url", "must start with sqlite: or postgres://");
        }
        if self.database.max_connections == 0 {
            return bad("database.max_connections", "must be at least 1");
        }
        if !self.server.public_url.trim().is_empty() && url::Url::parse(self.server.public_url.trim()).is_err() {
            return bad("server.public_url", "must be empty (derived from bind) or an absolute URL such as https://market.example");
        }
        if self.server.body_limit_bytes < 1024 {
            return bad("server.body_limit_bytes", "must be at least 1024");
        }
        for origin in &self.server.frame_ancestors {
            if origin.contains(';') || origin.contains(char::is_whitespace) || origin.is_empty() {
                return bad("server.frame_ancestors", "each entry must be one origin such as https://app.example");
            }
        }
        if self.auth.access_token_ttl_secs < 60 {
            return bad("auth.access_token_ttl_secs", "must be at least 60");
        }
        if self.auth.session_ttl_secs < self.auth.access_token_ttl_secs {
            return bad("auth.session_ttl_secs", "must be at least auth.access_token_ttl_secs");
        }
        if self.auth.login_ip_burst == 0 || self.auth.login_account_burst == 0 {
            return bad("auth.login_ip_burst", "bursts must be at least 1");
        }
        if self.auth.login_ip_refill_secs == 0 || self.auth.login_account_refill_secs == 0 {
            return bad("auth.login_ip_refill_secs", "refill periods must be at least 1 second");
        }
        if !self.auth.jwt_secret.is_empty() && self.auth.jwt_secret.len() < 32 {
            return bad("auth.jwt_secret", "must be at least 32 characters");
        }
        if !["starttls", "tls", "none"].contains(&self.mail.smtp_security.as_str()) {
            return bad("mail.smtp_security", "must be starttls, tls or none");
        }
        if self.mail.from.parse::<lettre::message::Mailbox>().is_err() {
            return bad("mail.from", "must be a mailbox such as ZMarket <no-reply@example.com>");
        }
        if self.mail.max_attempts == 0 {
            return bad("mail.max_attempts", "must be at least 1");
        }
        if self.ssr.queue == 0 {
            return bad("ssr.queue", "must be at least 1");
        }
        if self.ssr.threads > 64 {
            return bad("ssr.threads", "must be at most 64");
        }
        if self.ssr.deadline_ms < 10 {
            return bad("ssr.deadline_ms", "must be at least 10");
        }
        if self.ssr.memory_limit_mb < 8 {
            return bad("ssr.memory_limit_mb", "must be at least 8");
        }
        if !(-90.0..=90.0).contains(&self.map.default_lat) {
            return bad("map.default_lat", "must be between -90 and 90");
        }
        if !(-180.0..=180.0).contains(&self.map.default_lng) {
            return bad("map.default_lng", "must be between -180 and 180");
        }
        if !self.map.tile_url.is_empty() && url::Url::parse(&tile_template_probe(&self.map.tile_url)).is_err() {
            return bad("map.tile_url", "must be an absolute URL template");
        }
        if self.devices.offline_after_secs == 0 || self.devices.heartbeat_secs == 0 {
            return bad("devices", "intervals must be at least 1 second");
        }
        if self.apps.install_timeout_secs == 0 || self.apps.action_timeout_secs == 0 {
            return bad("apps", "time-outs must be at least 1 second");
        }
        let o = &self.orders;
        if o.pending_timeout_secs == 0 || o.start_timeout_secs == 0 || o.confirm_timeout_secs == 0 || o.sweep_secs == 0 {
            return bad("orders", "time-outs and the sweep interval must be at least 1 second");
        }
        if self.devices.heartbeat_secs >= self.devices.offline_after_secs {
            return bad("devices.heartbeat_secs", "must be shorter than devices.offline_after_secs");
        }
        if self.billing.signup_bonus.cents() < 0 {
            return bad("billing.signup_bonus", "must be 0 or more coins");
        }
        if self.billing.market_fee_percent > 100 {
            return bad("billing.market_fee_percent", "must be between 0 and 100");
        }
        if self.billing.idempotency_ttl_secs < 60 {
            return bad("billing.idempotency_ttl_secs", "must be at least 60");
        }
        let so = &self.social;
        if so.friend_requests_per_minute == 0 || so.messages_per_minute == 0 {
            return bad("social", "per-minute limits must be at least 1");
        }
        if so.events_keep_per_user < 10 || so.events_keep_days == 0 {
            return bad("social.events_keep_per_user", "keep at least 10 events and 1 day");
        }
        if !(1..60).contains(&so.keep_alive_secs) {
            return bad("social.keep_alive_secs", "must be between 1 and 59");
        }
        if so.stream_max_secs < 10 || so.streams_per_user == 0 {
            return bad("social.stream_max_secs", "streams must last at least 10 s and one must be allowed");
        }
        if !(10..=60_000).contains(&so.poll_ms) {
            return bad("social.poll_ms", "must be between 10 and 60000");
        }
        if self.backup.every_hours > 24 * 366 {
            return bad("backup.every_hours", "must be between 0 (no scheduled backups) and 8784 (a year)");
        }
        if self.backup.every_hours > 0 && !(1..=1000).contains(&self.backup.keep) {
            return bad("backup.keep", "must be between 1 and 1000");
        }
        self.validate_limits()?;
        if !["text", "json"].contains(&self.log.format.as_str()) {
            return bad("log.format", "must be text or json");
        }
        if tracing_subscriber::EnvFilter::try_new(&self.log.level).is_err() {
            return bad("log.level", "is not a valid filter");
        }
        Ok(())
    }

    pub fn database_url(&self) -> String {
        if self.database.url.is_empty() {
            format!("sqlite://{}?mode=rwc", self.data_dir.join("zmarket.db").display())
        } else {
            self.database.url.clone()
        }
    }

    pub fn mail_dir(&self) -> PathBuf {
        self.data_dir.join("mail")
    }

    pub fn ssr_threads(&self) -> usize {
        if self.ssr.threads == 0 {
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(DEFAULT_MAX_SSR_THREADS)
        } else {
            self.ssr.threads
        }
    }

    /// The source expression of the tile server for the Content-Security-Policy
    /// (`https://*.tile.example` when the template rotates subdomains with `{s}`).
    pub fn tile_origin(&self) -> Option<String> {
        if self.map.tile_url.is_empty() {
            return None;
        }
        let u = url::Url::parse(&tile_template_probe(&self.map.tile_url)).ok()?;
        let origin = u.origin().ascii_serialization();
        if self.map.tile_url.contains("{s}.") {
            Some(origin.replacen("://a.", "://*.", 1))
        } else {
            Some(origin)
        }
    }
}

/// A concrete URL standing for a tile template, so it can be parsed and checked.
fn tile_template_probe(template: &str) -> String {
    template.replace("{s}", "a").replace("{z}", "1").replace("{x}", "1").replace("{y}", "1").replace("{r}", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(bind: &str, public_url: &str) -> Config {
        let mut c = Config::default();
        c.server.bind = bind.parse().unwrap();
        c.server.public_url = public_url.into();
        c
    }

    #[test]
    fn public_url_is_derived_from_the_bind_address() {
        assert_eq!(with("127.0.0.1:8080", "").public_url(), "http://localhost:8080");
        assert_eq!(with("127.0.0.1:18080", "").public_url(), "http://localhost:18080");
        assert_eq!(with("192.168.1.20:9000", "").public_url(), "http://192.168.1.20:9000");
        assert_eq!(with("[fd00::1]:9000", "").public_url(), "http://[fd00::1]:9000");
        let all = with("0.0.0.0:18080", "").public_url();
        assert!(all.starts_with("http://") && all.ends_with(":18080"), "{all}");
        assert_eq!(with("0.0.0.0:80", "https://market.example/").public_url(), "https://market.example");
    }

    #[test]
    fn a_loopback_link_for_a_network_bind_is_warned_about() {
        assert!(with("0.0.0.0:8080", "http://localhost:8080").public_url_warning().is_some());
        assert!(with("192.168.1.20:8080", "http://127.0.0.1:8080").public_url_warning().is_some());
        assert!(with("127.0.0.1:8080", "").public_url_warning().is_none());
        assert!(with("0.0.0.0:8080", "https://market.example").public_url_warning().is_none());
        assert!(with("127.0.0.1:8080", "not a url").validate().is_err());
        assert!(with("127.0.0.1:8080", "").validate().is_ok());
    }
}
