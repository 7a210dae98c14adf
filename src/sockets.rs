//! The places of upgraded WebSockets (issue 43, item 1). Once a connection becomes a WebSocket
//! hyper hands its socket over and the listener's connection task ends; before this, that gave
//! the connection's place back in `server.max_connections` and in the client address's share,
//! so 977 agent channels from one address took every descriptor. Now a WebSocket holds a
//! [`SocketPlace`]: it keeps its connection (and with it both places) until the socket closes,
//! and it counts in a cap of its own kind (`server.max_sockets`), of its client address
//! (`server.max_sockets_per_ip`) and of its owner (`server.max_sockets_per_owner`: the account
//! of a terminal or tunnel, the box of an app's socket). Beyond any of them the upgrade is
//! refused with 429 (`Msg::TooManySockets`) before it happens. The three kinds together hold at
//! most half of the connection cap, so requests (and `/healthz`) always have room.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use crate::error::{AppError, Msg};

/// What a WebSocket is for; each kind has caps of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A box's agent channel (one per box: a new one closes the older, src/connect/hub.rs).
    Channel = 0,
    /// A terminal or a TCP tunnel through the market.
    Stream = 1,
    /// An app's own WebSocket through its web door or API door.
    App = 2,
}

impl Kind {
    /// Its `/metrics` gauge: agent channels, or the streams of its kind.
    fn gauge(self) -> metrics::Gauge {
        match self {
            Kind::Channel => metrics::gauge!(crate::observe::AGENT_CHANNELS),
            Kind::Stream => metrics::gauge!(crate::observe::STREAMS, "kind" => "terminal_or_tunnel"),
            Kind::App => metrics::gauge!(crate::observe::STREAMS, "kind" => "app_socket"),
        }
    }
}

#[derive(Default)]
struct Count {
    total: usize,
    per_ip: HashMap<IpAddr, usize>,
    per_owner: HashMap<String, usize>,
}

/// The caps and what each kind holds now (one per listener).
pub struct SocketCaps {
    total: usize,
    per_ip: usize,
    per_owner: usize,
    kinds: [Mutex<Count>; 3],
}

impl SocketCaps {
    pub fn new(total: usize, per_ip: usize, per_owner: usize) -> Arc<SocketCaps> {
        Arc::new(SocketCaps { total: total.max(1), per_ip: per_ip.max(1), per_owner: per_owner.max(1), kinds: Default::default() })
    }

    /// WebSockets of `kind` open now.
    pub fn open(&self, kind: Kind) -> usize {
        self.kinds[kind as usize].lock().unwrap_or_else(|e| e.into_inner()).total
    }

    /// A place for a WebSocket of `kind` from `ip` (`None`: a trusted proxy's, not counted per
    /// address) for `owner`, holding `connection` (the connection's places) while it lives.
    pub fn take(
        self: &Arc<Self>,
        kind: Kind,
        ip: Option<IpAddr>,
        owner: Option<&str>,
        connection: Box<dyn Send + Sync>,
    ) -> Result<SocketPlace, AppError> {
        let mut c = self.kinds[kind as usize].lock().unwrap_or_else(|e| e.into_inner());
        let full = c.total >= self.total
            || ip.is_some_and(|ip| c.per_ip.get(&ip).copied().unwrap_or(0) >= self.per_ip)
            || owner.is_some_and(|o| c.per_owner.get(o).copied().unwrap_or(0) >= self.per_owner);
        if full {
            tracing::debug!(?kind, ?ip, "too many WebSockets: refused");
            return Err(AppError::Refused(Msg::TooManySockets));
        }
        c.total += 1;
        if let Some(ip) = ip {
            *c.per_ip.entry(ip).or_insert(0) += 1;
        }
        if let Some(o) = owner {
            *c.per_owner.entry(o.to_string()).or_insert(0) += 1;
        }
        kind.gauge().increment(1.0);
        Ok(SocketPlace { caps: Some(self.clone()), kind, ip, owner: owner.map(str::to_string), _connection: Some(connection) })
    }
}

/// One WebSocket's place: given back (with its connection's) when dropped. Move it into the
/// task that serves the socket.
pub struct SocketPlace {
    caps: Option<Arc<SocketCaps>>,
    kind: Kind,
    ip: Option<IpAddr>,
    owner: Option<String>,
    _connection: Option<Box<dyn Send + Sync>>,
}

impl SocketPlace {
    /// A request served without the listener (nothing counted).
    pub fn uncounted() -> SocketPlace {
        SocketPlace { caps: None, kind: Kind::App, ip: None, owner: None, _connection: None }
    }
}

impl Drop for SocketPlace {
    fn drop(&mut self) {
        let Some(caps) = &self.caps else { return };
        let mut c = caps.kinds[self.kind as usize].lock().unwrap_or_else(|e| e.into_inner());
        c.total = c.total.saturating_sub(1);
        self.kind.gauge().decrement(1.0);
        if let Some(ip) = self.ip
            && let Some(n) = c.per_ip.get_mut(&ip)
        {
            *n -= 1;
            if *n == 0 {
                c.per_ip.remove(&ip);
            }
        }
        if let Some(o) = &self.owner
            && let Some(n) = c.per_owner.get_mut(o)
        {
            *n -= 1;
            if *n == 0 {
                c.per_owner.remove(o);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_kind_address_and_owner() {
        let caps = SocketCaps::new(3, 2, 1);
        let ip = IpAddr::from([10, 0, 0, 1]);
        let a = caps.take(Kind::Stream, Some(ip), Some("u1"), Box::new(())).unwrap();
        assert!(caps.take(Kind::Stream, Some(ip), Some("u1"), Box::new(())).is_err(), "owner cap");
        let _b = caps.take(Kind::Stream, Some(ip), Some("u2"), Box::new(())).unwrap();
        assert!(caps.take(Kind::Stream, Some(ip), Some("u3"), Box::new(())).is_err(), "address cap");
        let _c = caps.take(Kind::Stream, None, Some("u3"), Box::new(())).unwrap();
        assert!(caps.take(Kind::Stream, None, Some("u4"), Box::new(())).is_err(), "kind cap");
        assert!(caps.take(Kind::Channel, Some(ip), None, Box::new(())).is_ok(), "another kind");
        drop(a);
        assert_eq!(caps.open(Kind::Stream), 2);
        assert!(caps.take(Kind::Stream, Some(ip), Some("u1"), Box::new(())).is_ok());
    }
}
