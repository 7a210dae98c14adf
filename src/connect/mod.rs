//! Connect: reaching what runs on a box through the market (docs/connect.md).
//! The agent keeps one WebSocket open to the market (`channel.rs`); commands travel it at once,
//! and streams are multiplexed over it (`hub.rs`): an app's web interface on its own origin
//! (`web.rs`, over `proxy.rs`), its logs (`logs.rs`), a terminal (`terminal.rs`) and raw TCP
//! (`routes.rs` bridges the socket); `forward.rs` carries a stream to the instance holding the
//! box's channel.

pub mod access;
pub mod channel;
pub mod cookies;
pub mod doors;
pub mod forward;
pub mod hub;
pub mod kept;
pub mod logs;
pub mod model;
pub mod proxy;
pub mod rights;
pub mod routes;
pub mod terminal;
pub mod web;

use std::sync::Arc;

use sea_orm::DatabaseConnection;

use crate::apps::AppsCtx;
use crate::config::ConnectConfig;
use crate::devices::DevicesCtx;
use crate::iam::auth::Sessions;

/// What the connect rules use.
#[derive(Clone)]
pub struct ConnectCtx {
    pub db: DatabaseConnection,
    pub devices: DevicesCtx,
    pub apps: AppsCtx,
    pub sessions: Sessions,
    /// The channels open on this instance.
    pub channels: hub::Channels,
    /// The streams open on this instance and the right to them (`rights`).
    pub rights: rights::Rights,
    pub settings: Arc<ConnectConfig>,
    /// Where people reach the market, e.g. `http://localhost:8080`.
    pub public_url: Arc<str>,
    /// The apps domain (`[connect] apps_domain`, or the host of `public_url`).
    pub apps_domain: Arc<str>,
    /// Signs the app origins' cookies.
    pub cookie_key: Arc<[u8; 32]>,
    /// The database URL, for this instance's LISTEN on PostgreSQL.
    pub database_url: Arc<str>,
    /// Agent channels opened a second (`[connect] channel_opens_per_sec`; `None`: no limit).
    pub channel_opens: Option<Arc<governor::DefaultDirectRateLimiter>>,
}

/// Where the other instances reach this one (streams carried to the holder of a channel):
/// `[connect] internal_url`, else the address it listens on (a wildcard bind: the loopback).
pub fn internal_url(settings: &ConnectConfig, bind: std::net::SocketAddr) -> String {
    let set = settings.internal_url.trim().trim_end_matches('/');
    if !set.is_empty() {
        return set.to_string();
    }
    let ip = if bind.ip().is_unspecified() { std::net::IpAddr::from([127, 0, 0, 1]) } else { bind.ip() };
    format!("http://{}", std::net::SocketAddr::new(ip, bind.port()))
}

impl ConnectCtx {
    pub fn new(
        db: DatabaseConnection,
        devices: DevicesCtx,
        apps: AppsCtx,
        sessions: Sessions,
        settings: &ConnectConfig,
        public_url: &str,
        secret: &[u8],
        database_url: &str,
        internal_url: &str,
    ) -> ConnectCtx {
        use sha2::Digest;
        let domain = Some(settings.apps_domain.trim().trim_start_matches('.').to_ascii_lowercase()).filter(|d| !d.is_empty()).unwrap_or_else(|| default_apps_domain(public_url));
        // Apps on the market's own site can reach its pages with their cookies (issue 43, item 3).
        if let Some(warning) = cookies::same_site_warning(public_url, &domain) {
            tracing::warn!("{warning}");
        }
        if !cookies::secure(public_url, &domain) {
            tracing::warn!("public_url is plain HTTP away from the loopback: app origins keep a zm_app cookie that their neighbours can shadow; serve the market over HTTPS");
        }
        let mut h = sha2::Sha256::new();
        h.update(b"zmarket app cookies\0");
        h.update(secret);
        ConnectCtx {
            db,
            devices,
            apps,
            sessions,
            channels: hub::Channels::new(internal_url),
            rights: rights::Rights::default(),
            settings: Arc::new(settings.clone()),
            public_url: public_url.trim_end_matches('/').into(),
            apps_domain: domain.into(),
            cookie_key: Arc::new(h.finalize().into()),
            database_url: database_url.into(),
            channel_opens: std::num::NonZeroU32::new(settings.channel_opens_per_sec)
                .map(|n| Arc::new(governor::RateLimiter::direct(governor::Quota::per_second(n).allow_burst(n)))),
        }
    }
}

/// The apps domain when none is set: the host of `public_url`; for a loopback address,
/// `localhost` (browsers resolve `*.localhost` to the loopback; an address has no subdomains).
pub fn default_apps_domain(public_url: &str) -> String {
    let host = url::Url::parse(public_url).ok().and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase()));
    match host {
        Some(h) if h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()) => "localhost".into(),
        Some(h) if h.parse::<std::net::IpAddr>().is_ok() => {
            tracing::warn!("public_url is an address ({h}): apps need a name with subdomains; set [connect] apps_domain");
            h
        }
        Some(h) => h,
        None => "localhost".into(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn apps_domain_defaults() {
        assert_eq!(super::default_apps_domain("http://localhost:8080"), "localhost");
        assert_eq!(super::default_apps_domain("http://127.0.0.1:8080"), "localhost");
        assert_eq!(super::default_apps_domain("https://Market.Example.com"), "market.example.com");
    }
}
