//! The agent protocol, typed once and shared by the server and the agent program: the heartbeat
//! (registration, spec and metrics, commands and acknowledgements, installation reports), the
//! apps' manifests and command payloads, and the frames of the agent channel (a WebSocket the
//! agent keeps open to the market; docs/connect.md). Foundation: no domain is named here.

pub mod apps;
pub mod frames;
pub mod gpus;
pub mod heartbeat;
pub mod reasons;
pub mod snapshots;

/// This process queued a command for some device (the connect watcher looks at once rather than
/// at its next poll; its transaction may commit a moment later, so the watcher looks again).
static QUEUED: tokio::sync::Notify = tokio::sync::Notify::const_new();

pub fn command_queued() {
    QUEUED.notify_waiters();
}

/// Resolves at the next [`command_queued`].
pub async fn queued() {
    QUEUED.notified().await
}
