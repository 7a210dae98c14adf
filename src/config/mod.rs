//! Configuration: built-in defaults < config.toml < `ZMARKET_<SECTION>__<KEY>` environment
//! < command line (`--bind`, `--data-dir`). One struct, validated once at start-up.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

mod domains;
mod limits;
mod server;
pub use domains::*;
pub use limits::{LOW_OPEN_FILE_LIMIT, raise_open_file_limit};
pub use server::*;

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

/// The top-level keys of `Config`: an environment variable `ZMARKET_<KEY>…` is a setting only
/// when it starts with one (a test checks the list against the struct).
const TOP_LEVEL_KEYS: [&str; 18] = [
    "product_name", "data_dir", "server", "database", "auth", "mail", "downloads", "ssr", "map", "devices", "apps", "orders", "agent",
    "connect", "billing", "social", "backup", "log",
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

    #[test]
    fn every_section_can_be_set_from_the_environment() {
        let v = serde_json::to_value(Config::default()).unwrap();
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        let mut listed: Vec<String> = TOP_LEVEL_KEYS.iter().map(|k| k.to_string()).collect();
        keys.sort();
        listed.sort();
        assert_eq!(keys, listed);
    }

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
