//! The sections of config.toml that tune a domain: devices, apps, orders, the agent, connect,
//! the wallet, social and backups (each with its documented default). They live in the
//! configuration, not in their domains, because the configuration is read before any domain
//! exists and the domains sit above it (docs/architecture.md).

use serde::{Deserialize, Serialize};

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
    /// A box's figures are kept at most once per this many seconds at beat resolution (the last
    /// hour; a day at one point a minute): a box that beats faster writes no more (docs/gpus.md).
    pub sample_every_secs: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppsConfig {
    /// A JSON file of install manifests replacing the built-in ones by app id (same format as
    /// assets/catalogue/manifests.json), e.g. images in a private registry. Empty: none.
    pub manifests: String,
    /// The watchdog fails an install (preparing, downloading, installing), an update or a snapshot
    /// being made (snapshotting, shutting_down) after this long.
    pub install_timeout_secs: u64,
    /// … and any other transitional state (starting, stopping, uninstalling, …) after this long.
    pub action_timeout_secs: u64,
    /// A rental whose paid time is used up is suspended (its container stopped and kept, the box
    /// still reserved) for this long, for its renter to add coins and resume it; then it is ended.
    pub suspended_grace_hours: u32,
    /// The largest image archive (`docker save` tar) an operator may upload from the console
    /// (`POST /api/ops/v1/apps/{id}/image`); a larger one is refused with 413 and nothing stored.
    pub max_image_bytes: u64,
    /// Where snapshots kept on the market are stored (docs/data.md). Empty: `<data_dir>/snapshots`.
    pub snapshot_store: String,
    /// The most bytes of snapshots one person (or company) keeps on the market (413 over it).
    pub snapshot_market_limit_bytes: u64,
    /// The most bytes of one installation's snapshots kept on its box (413 over it).
    pub snapshot_box_quota_bytes: u64,
    /// An ended rental's data is kept on the box as a snapshot this many days, for its renter.
    pub keep_ended_days: u32,
}

impl Default for AppsConfig {
    fn default() -> Self {
        AppsConfig {
            manifests: String::new(),
            install_timeout_secs: 3600,
            action_timeout_secs: 600,
            suspended_grace_hours: 24,
            max_image_bytes: 8 * 1024 * 1024 * 1024,
            snapshot_store: String::new(),
            snapshot_market_limit_bytes: 20 * 1024 * 1024 * 1024,
            snapshot_box_quota_bytes: 50 * 1024 * 1024 * 1024,
            keep_ended_days: 7,
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
    /// How often an instance writes the presence and figures of its boxes' quiet beats (beats
    /// over a channel that change nothing else), all in one batch; at most a quarter of
    /// `devices.offline_after_secs` is used (src/devices/quiet.rs).
    pub presence_flush_ms: u64,
    /// Agent channels an instance opens a second at most (a burst of as many again); beyond it
    /// an agent is answered 429 with `Retry-After` and comes back later (a market restarting
    /// with thousands of boxes reconnecting at once). 0: no limit.
    pub channel_opens_per_sec: u32,
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
            presence_flush_ms: 5000,
            channel_opens_per_sec: 200,
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
            sample_every_secs: 5,
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
