//! Frames of the agent channel: the WebSocket an agent keeps open to the market
//! (`GET /api/agent/v1/channel`, Bearer device secret). docs/connect.md tells the flows.
//!
//! - Control frames are JSON text messages, [`ToAgent`] from the market and [`FromAgent`] from
//!   the agent, tagged by `t`.
//! - The bytes of a stream travel as binary messages: the stream's id (4 bytes, big-endian),
//!   then at most [`MAX_CHUNK`] bytes.
//! - Flow control: each side may have at most [`WINDOW`] bytes of a stream unconsumed at the
//!   other; the receiver grants more with a `window` frame as it hands the bytes on. A reader
//!   that stops reading (a browser tab in the background) stops its stream, never the channel.
//! - Commands are those of the heartbeat (`commands` carries the same answer); the agent
//!   acknowledges them in its next `beat`, which carries what a heartbeat carries. One code path
//!   on both sides, whichever way a beat travels.

use serde::{Deserialize, Serialize};

use crate::heartbeat::{HeartbeatRequest, HeartbeatResponse};

/// Bytes one side may send on a stream before the other grants more.
pub const WINDOW: u32 = 256 * 1024;
/// Largest payload of one binary message.
pub const MAX_CHUNK: usize = 32 * 1024;
/// Streams open at once on one device's channel.
pub const MAX_STREAMS: usize = 64;
/// Largest control frame (a beat with its reports and acknowledgements).
pub const MAX_CONTROL: usize = 1024 * 1024;

/// From the market to the agent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum ToAgent {
    /// The device's settings and every pending command, as a heartbeat's answer.
    Commands(HeartbeatResponse),
    /// Open a stream to `target`.
    Open { stream: u32, target: Target },
    /// The market consumed `bytes` more of the stream.
    Window { stream: u32, bytes: u32 },
    /// A terminal's new size.
    Resize { stream: u32, cols: u16, rows: u16 },
    /// The market's side of the stream is done.
    Close { stream: u32 },
}

/// From the agent to the market.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum FromAgent {
    /// What a heartbeat carries: spec, metrics, installation reports, acknowledgements.
    Beat(HeartbeatRequest),
    /// The stream is open; bytes may flow.
    Opened { stream: u32 },
    /// The agent consumed `bytes` more of the stream.
    Window { stream: u32, bytes: u32 },
    /// The stream ended, or could not be opened.
    Close { stream: u32, reason: CloseReason },
}

/// What a stream reaches on the box.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// A TCP port the installation's manifest declares, in its container.
    App { installation: String, port: u16 },
    /// A TCP port of the box itself; the agent allows only its `[agent] tcp_ports`.
    Host { port: u16 },
    /// A shell in the installation's container, with a terminal of this size.
    Exec { installation: String, cols: u16, rows: u16 },
    /// The container's log: the last `tail` lines, then new ones while `follow`; each line
    /// travels as one JSON [`LogLine`] followed by a newline.
    Logs { installation: String, tail: u32, follow: bool },
}

/// Why a stream ended: a stable name, shown in the reader's language by the market.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CloseReason {
    /// It ended normally (the connection closed, the shell exited, the log ended).
    Done,
    /// The agent knows no such installation, or its container is gone.
    NotFound,
    /// The container is not running.
    NotRunning,
    /// The port is not one the manifest declares, or not in the box's `tcp_ports`.
    PortNotAllowed,
    /// Nothing answered on the port.
    Refused,
    /// Docker is not available on the box.
    DockerUnavailable,
    /// Too many streams are open on this device.
    TooMany,
    /// The other side broke the protocol (more bytes than granted).
    Protocol,
    /// The channel to the device closed (set by the market, never sent).
    ChannelLost,
    /// Something else failed on the box.
    Failed,
}

/// One line of a container's log.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LogLine {
    /// RFC 3339, as Docker stamped it.
    pub ts: String,
    pub stream: LogStream,
    pub text: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LogStream {
    Stdout,
    Stderr,
}

/// A binary message carrying `bytes` of `stream`.
pub fn data(stream: u32, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + bytes.len());
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(bytes);
    out
}

/// The stream and bytes of a binary message; `None` when it is shorter than its header.
pub fn parse_data(msg: &[u8]) -> Option<(u32, &[u8])> {
    let (head, rest) = msg.split_first_chunk::<4>()?;
    Some((u32::from_be_bytes(*head), rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heartbeat::{Ack, Command, Settings, SharingMode};

    #[test]
    fn data_frames_round_trip() {
        let m = data(7, b"hello");
        assert_eq!(parse_data(&m), Some((7, &b"hello"[..])));
        assert_eq!(parse_data(&[0, 0, 1]), None);
        assert_eq!(parse_data(&data(u32::MAX, b"")), Some((u32::MAX, &b""[..])));
    }

    #[test]
    fn control_frames_are_tagged() {
        let f = ToAgent::Open { stream: 3, target: Target::Exec { installation: "i".into(), cols: 80, rows: 24 } };
        let text = serde_json::to_string(&f).unwrap();
        assert_eq!(text, r#"{"t":"open","stream":3,"target":{"kind":"exec","installation":"i","cols":80,"rows":24}}"#);
        assert_eq!(serde_json::from_str::<ToAgent>(&text).unwrap(), f);
        let c = ToAgent::Commands(HeartbeatResponse {
            settings: Settings {
                name: "n".into(),
                sharing_mode: SharingMode::Manual,
                rentable: false,
                price_per_hour: 0,
                bound: true,
                heartbeat_secs: 5,
            },
            commands: vec![Command { id: "c".into(), kind: "app_stop".into(), payload: serde_json::json!({"installation_id": "i"}) }],
        });
        let text = serde_json::to_string(&c).unwrap();
        assert!(text.starts_with(r#"{"t":"commands","settings":"#), "{text}");
        assert_eq!(serde_json::from_str::<ToAgent>(&text).unwrap(), c);
        let b = FromAgent::Beat(HeartbeatRequest { acks: vec![Ack { id: "c".into(), ok: true, error: None, reason: None }], ..Default::default() });
        let text = serde_json::to_string(&b).unwrap();
        assert_eq!(serde_json::from_str::<FromAgent>(&text).unwrap(), b);
        let close = FromAgent::Close { stream: 1, reason: CloseReason::PortNotAllowed };
        assert_eq!(serde_json::to_string(&close).unwrap(), r#"{"t":"close","stream":1,"reason":"port_not_allowed"}"#);
    }
}
