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
/// The devices of the commands queued since the watcher last took them (`None`: too many to
/// list, look at every channel).
static QUEUED_FOR: std::sync::Mutex<Option<Vec<String>>> = std::sync::Mutex::new(Some(Vec::new()));
/// Devices listed before the watcher looks at every channel instead.
const MAX_QUEUED_FOR: usize = 1024;

pub fn command_queued(device_id: &str) {
    {
        let mut q = QUEUED_FOR.lock().unwrap_or_else(|e| e.into_inner());
        match q.as_mut() {
            Some(ids) if ids.len() < MAX_QUEUED_FOR => ids.push(device_id.to_string()),
            _ => *q = None,
        }
    }
    QUEUED.notify_waiters();
}

/// Resolves at the next [`command_queued`].
pub async fn queued() {
    QUEUED.notified().await
}

/// The devices commands were queued for since the last call (`None`: too many, every one).
pub fn take_queued() -> Option<Vec<String>> {
    let mut q = QUEUED_FOR.lock().unwrap_or_else(|e| e.into_inner());
    q.replace(Vec::new())
}
