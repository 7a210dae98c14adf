//! Validation of the limits of issue 16 (trusted proxies, connections, hashing, sign-up and agent
//! registration), and the connection cap derived from the open-file limit.

use super::{Config, ConfigError};
use crate::client_ip::TrustedProxies;

impl Config {
    pub(super) fn validate_limits(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, why: &str| Err(ConfigError(format!("key `{key}`: {why}")));
        if let Err(e) = TrustedProxies::new(&self.server.trusted_proxies) {
            return bad("server.trusted_proxies", &e);
        }
        if let Err(e) = TrustedProxies::new(&self.server.metrics_allow) {
            return bad("server.metrics_allow", &e);
        }
        if self.server.header_read_timeout_secs == 0 || self.server.idle_timeout_secs == 0 {
            return bad("server.header_read_timeout_secs", "timeouts must be at least 1 second");
        }
        if self.server.min_body_rate_bytes == 0 || self.server.body_grace_secs == 0 {
            return bad("server.min_body_rate_bytes", "the body rate and its grace must be at least 1");
        }
        if self.server.max_connections_per_ip == 0 {
            return bad("server.max_connections_per_ip", "must be at least 1");
        }
        if self.server.max_sockets_per_owner == 0 {
            return bad("server.max_sockets_per_owner", "must be at least 1");
        }
        if self.auth.hash_wait_ms == 0 {
            return bad("auth.hash_wait_ms", "must be at least 1");
        }
        if self.auth.register_ip_burst == 0 || self.auth.register_email_burst == 0 || self.devices.register_ip_burst == 0 {
            return bad("auth.register_ip_burst", "bursts must be at least 1");
        }
        if self.auth.register_ip_refill_secs == 0 || self.auth.register_email_refill_secs == 0 || self.devices.register_ip_refill_secs == 0 {
            return bad("auth.register_ip_refill_secs", "refill periods must be at least 1 second");
        }
        if self.devices.unbound_ttl_secs < 60 {
            return bad("devices.unbound_ttl_secs", "must be at least 60");
        }
        Ok(())
    }

    /// `server.max_connections`, or three quarters of the open-file limit (the rest is left to
    /// the database, the data files and the render threads), at least 16.
    pub fn connection_cap(&self) -> usize {
        if self.server.max_connections > 0 {
            return self.server.max_connections;
        }
        (open_file_limit().unwrap_or(1024) * 3 / 4).max(16)
    }

    /// `server.max_event_streams`, or a quarter of the connection cap, at least 1.
    pub fn event_stream_cap(&self) -> usize {
        if self.server.max_event_streams > 0 {
            return self.server.max_event_streams;
        }
        (self.connection_cap() / 4).max(1)
    }
}

impl Config {
    /// `server.max_sockets`, or a sixth of the connection cap, at least 1: the three kinds
    /// together hold at most half of the connections, the rest serves requests.
    pub fn socket_cap(&self) -> usize {
        if self.server.max_sockets > 0 {
            return self.server.max_sockets.min(self.connection_cap());
        }
        (self.connection_cap() / 6).max(1)
    }

    /// `server.max_sockets_per_ip`, or a quarter of `max_connections_per_ip`, at least 1.
    pub fn socket_cap_per_ip(&self) -> usize {
        if self.server.max_sockets_per_ip > 0 {
            return self.server.max_sockets_per_ip;
        }
        (self.server.max_connections_per_ip / 4).max(1)
    }
}

/// Below this soft open-file limit a warning says the connection cap is small.
pub const LOW_OPEN_FILE_LIMIT: u64 = 4096;

/// Raises this process's soft open-file limit to the hard one (systemd's default soft limit is
/// 1,024 while the hard one is far higher): the limit (before, after), `None` when it cannot be
/// read. Call before the connection cap is computed.
pub fn raise_open_file_limit() -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit/setrlimit write and read the one struct given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
            return None;
        }
        let before = lim.rlim_cur as u64;
        // An unlimited hard limit is not a soft one the kernel takes: Linux's usual nr_open.
        let target = if lim.rlim_max == libc::RLIM_INFINITY { 1 << 20 } else { lim.rlim_max };
        if lim.rlim_cur < target {
            let raised = libc::rlimit { rlim_cur: target, rlim_max: lim.rlim_max };
            // SAFETY: as above.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
                return Some((before, target as u64));
            }
        }
        Some((before, before))
    }
    #[cfg(not(unix))]
    None
}

/// The soft open-file limit of this process (Linux: /proc/self/limits).
fn open_file_limit() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}
