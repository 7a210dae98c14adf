//! The agent protocol, typed once and shared by the server and the agent program: the heartbeat
//! (registration, spec and metrics, commands and acknowledgements, installation reports), the
//! apps' manifests and command payloads, and the frames of the agent channel (a WebSocket the
//! agent keeps open to the market; docs/connect.md). Foundation: no domain is named here.

pub mod apps;
pub mod frames;
pub mod heartbeat;
