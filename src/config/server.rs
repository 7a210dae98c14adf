//! The sections of config.toml that set up the server itself: listener, database, sessions,
//! mail, downloads, rendering, the map and logs (each with its documented default).

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

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
    /// Upgraded WebSockets open at once, for each kind (agent channels; terminals and tunnels;
    /// apps' own sockets): they keep their connection's place among `max_connections`, so
    /// together they stay below it; 0 = a sixth of the connection cap each (issue 43, item 1).
    pub max_sockets: usize,
    /// WebSockets of one kind one client address may hold; 0 = a quarter of
    /// `max_connections_per_ip`, so the address keeps room for its requests.
    pub max_sockets_per_ip: usize,
    /// WebSockets of one kind one account (terminals, tunnels) or one box (apps' sockets) may
    /// hold. A box's agent channel is one: a new one closes the older.
    pub max_sockets_per_owner: usize,
    /// Addresses or CIDR blocks that may read `GET /metrics` (the client as the trusted proxies
    /// name it); others get 403.
    pub metrics_allow: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatabaseConfig {
    /// Empty: `sqlite://<data_dir>/zmarket.db`. `postgres://user:pass@host/db` runs on PostgreSQL.
    pub url: String,
    pub max_connections: u32,
    /// SQLite: how long a writer waits for the lock before giving up.
    pub busy_timeout_ms: u64,
    /// A statement that took longer (from its call to its answer, a wait for the pool's
    /// connection included) is logged at `warn` with its SQL, never its values; 0: none is.
    pub slow_statement_ms: u64,
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
    /// The default of the operator's setting of that name (`settings::MarketSettings`):
    /// operators and company administrators must turn two-factor sign-in on first.
    pub two_factor_required_for_staff: bool,
    /// A money move above this asks a person with two-factor sign-in on for a current code.
    pub two_factor_step_up: crate::coins::Coins,
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
pub struct LogConfig {
    /// A tracing filter, e.g. `info` or `zmarket=debug,info`.
    pub level: String,
    /// `text` or `json`.
    pub format: String,
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
            max_sockets: 0,
            max_sockets_per_ip: 0,
            max_sockets_per_owner: 32,
            metrics_allow: vec!["127.0.0.0/8".into(), "::1".into()],
        }
    }
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig { url: String::new(), max_connections: 16, busy_timeout_ms: 5000, slow_statement_ms: 1000 }
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
            two_factor_required_for_staff: false,
            two_factor_step_up: crate::coins::Coins::from_cents(1000 * 100),
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

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig { level: "info".into(), format: "text".into() }
    }
}
