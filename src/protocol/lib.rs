//! The agent protocol, typed once and shared by the market (the root package) and the device
//! agent (`zmarket-agent`, src/agent/): the heartbeat (registration, spec and metrics, commands
//! and acknowledgements, installation reports), the apps' manifests and command payloads, the
//! snapshots' reports and archive, the frames of the agent channel (a WebSocket the agent keeps
//! open to the market; docs/connect.md), and the protocol's version (`version.rs`).
//!
//! Serde only: no database, HTTP server or async runtime. The wire's states and kinds are this
//! crate's enums; the market maps its stored ones to and from them (`db::enums::wire`). A check
//! refuses with [`Invalid`], which the market answers as its `invalid_field` refusal.

pub mod apps;
pub mod frames;
pub mod gpus;
pub mod heartbeat;
pub mod reasons;
#[cfg(feature = "sink")]
pub mod send;
pub mod snapshots;
pub mod version;

pub use version::PROTOCOL_VERSION;

/// A value an agent sent that is malformed or out of bounds: the field's path as the market's
/// refusal names it (`spec.gpus.uuid`), and why, in English (logs and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalid {
    pub field: &'static str,
    pub reason: &'static str,
}

impl Invalid {
    pub const fn new(field: &'static str, reason: &'static str) -> Invalid {
        Invalid { field, reason }
    }
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid {}: {}", self.field, self.reason)
    }
}

impl std::error::Error for Invalid {}

#[cfg(test)]
mod pinned;
