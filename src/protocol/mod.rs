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

/// This process queued a command for a device: each connect watcher of the process hears the
/// device's id and looks at its channel at once rather than at its next poll (its transaction may
/// commit a moment later, so the watcher looks again). A watcher that fell behind by more than
/// [`QUEUED_BACKLOG`] ids looks at every channel it holds.
static QUEUED: std::sync::LazyLock<tokio::sync::broadcast::Sender<std::sync::Arc<str>>> =
    std::sync::LazyLock::new(|| tokio::sync::broadcast::channel(QUEUED_BACKLOG).0);
const QUEUED_BACKLOG: usize = 1024;

pub fn command_queued(device_id: &str) {
    let _ = QUEUED.send(device_id.into());
}

/// The ids of the devices [`command_queued`] names from now on.
pub fn queued() -> tokio::sync::broadcast::Receiver<std::sync::Arc<str>> {
    QUEUED.subscribe()
}
