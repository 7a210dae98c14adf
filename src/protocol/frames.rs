//! Frames of the agent channel: the WebSocket an agent keeps open to the market
//! (`GET /api/agent/v1/channel`, Bearer device secret). docs/connect.md tells the flows.
//!
//! - Control frames are JSON text messages, [`ToAgent`] from the market and [`FromAgent`] from
//!   the agent, tagged by `t`.
//! - The bytes of a stream travel as binary messages: the stream's id (4 bytes, big-endian),
//!   then the bytes (a sender writes at most [`MAX_CHUNK`]).
//! - Flow control ([`Flow`]): each side may have at most a window of a stream unconsumed at the
//!   other, [`WINDOW`] at first, growing with throughput; the receiver grants more with a
//!   `window` frame as it hands the bytes on. A reader that stops reading (a browser tab in the
//!   background) stops its stream, never the channel.
//! - Commands are those of the heartbeat (`commands` carries the same answer); the agent
//!   acknowledges them in its next `beat`, which carries what a heartbeat carries. One code path
//!   on both sides, whichever way a beat travels.

use serde::{Deserialize, Serialize};

use crate::heartbeat::{HeartbeatRequest, HeartbeatResponse};

/// Bytes one side may send on a stream before the other grants more: the window every stream
/// starts with, and the most one `window` frame grants (a sender of version 1 caps each grant at
/// it).
pub const WINDOW: u32 = 256 * 1024;
/// The most a receiver grows a stream's window to while its reader keeps up ([`Flow`]).
pub const MAX_WINDOW: u32 = 2 * 1024 * 1024;
/// Largest payload of one binary message a sender writes: a bulk stream's frames grow to it, an
/// interactive one's stay as small as what it read. A receiver reads any data message up to its
/// frame limit (the market's is [`MAX_CONTROL`]; version 1 did the same), so a larger chunk
/// needs no negotiation.
pub const MAX_CHUNK: usize = 64 * 1024;
/// The first read of a stream: its frames double from it up to [`MAX_CHUNK`] while each read
/// fills them, and halve back while reads come small.
pub const FIRST_CHUNK: usize = 16 * 1024;
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

/// How much of a stream a window holds at its rate: a window grows while a round of it is taken
/// faster than this (at 256 KiB a window, faster than 25 MB/s), so that a stream's window covers
/// the round trip of its grants on a busy box and a slow stream's stays small.
pub const WINDOW_HOLDS: std::time::Duration = std::time::Duration::from_millis(10);

/// The receiving side of one stream's flow control. The sender may send what it was granted
/// (the first [`WINDOW`], then every `window` frame); the receiver counts what arrived against
/// that ([`Flow::arrived`]: more is a protocol error) and grants again as its reader takes the
/// bytes ([`Flow::took`]), once a quarter of the window was taken (at most a [`WINDOW`] at a
/// time).
///
/// The window grows with throughput: when the reader keeps up (less than a quarter of the window
/// unread) and took half a window in less than half of [`WINDOW_HOLDS`], the window doubles, up
/// to [`MAX_WINDOW`], the difference granted at once. When the reader falls behind (half a
/// window unread), it halves back towards [`WINDOW`], by granting less than was taken: what a
/// stalled reader leaves queued shrinks back with it. Both sides of version 1 follow any grant,
/// so a grown window needs no negotiation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    window: u32,
    /// Everything granted, the first window included.
    granted: u64,
    arrived: u64,
    taken: u64,
    /// Taken and not granted back yet.
    owed: u64,
    /// Grants still held back after a shrink.
    withheld: u64,
    /// When the current round of taking began, and what it took.
    round: Option<(std::time::Instant, u64)>,
}

impl Default for Flow {
    fn default() -> Self {
        Flow::new()
    }
}

impl Flow {
    pub fn new() -> Flow {
        Flow { window: WINDOW, granted: WINDOW as u64, arrived: 0, taken: 0, owed: 0, withheld: 0, round: None }
    }

    /// The window now.
    pub fn window(&self) -> u32 {
        self.window
    }

    /// Bytes arrived and not taken yet.
    pub fn unread(&self) -> u64 {
        self.arrived - self.taken
    }

    /// `n` bytes arrived; false when the sender had not been granted them (a protocol error).
    pub fn arrived(&mut self, n: usize) -> bool {
        self.arrived += n as u64;
        self.arrived <= self.granted
    }

    /// The reader took `n` bytes at `now`: the grants to send now (each at most [`WINDOW`];
    /// none yet most of the time).
    pub fn took(&mut self, n: usize, now: std::time::Instant) -> Vec<u32> {
        self.taken += n as u64;
        self.owed += n as u64;
        let (began, round) = self.round.get_or_insert((now, 0));
        *round += n as u64;
        let mut grow = false;
        if *round >= (self.window / 2) as u64 {
            grow = now.duration_since(*began) < WINDOW_HOLDS / 2;
            self.round = None;
        }
        let quarter = (self.window / 4) as u64;
        if self.owed < quarter.min(WINDOW as u64) {
            return Vec::new();
        }
        let mut grant = std::mem::take(&mut self.owed);
        if grow && self.unread() < quarter && self.window < MAX_WINDOW {
            let grown = (self.window * 2).min(MAX_WINDOW);
            grant += (grown - self.window) as u64;
            self.window = grown;
        } else if self.unread() >= (self.window / 2) as u64 && self.window > WINDOW {
            let shrunk = (self.window / 2).max(WINDOW);
            self.withheld += (self.window - shrunk) as u64;
            self.window = shrunk;
        }
        let held = self.withheld.min(grant);
        self.withheld -= held;
        grant -= held;
        self.granted += grant;
        let mut out = Vec::new();
        while grant > 0 {
            let g = grant.min(WINDOW as u64);
            out.push(g as u32);
            grant -= g;
        }
        out
    }
}

/// What a sender adds to its credit on a stream for a `window` frame of `bytes`, holding
/// `credit` now: the grant, never taking the credit past [`MAX_WINDOW`] (a peer that grants
/// more than it may cannot make the sender hold more in flight).
pub fn granted(credit: usize, bytes: u32) -> usize {
    (bytes as usize).min((MAX_WINDOW as usize).saturating_sub(credit))
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

    /// Sends `chunks` chunks of MAX_CHUNK (or what credit is left) through `f`, a chunk arriving
    /// and being taken every `every`: the windows it went through, and the credit the sender
    /// never lacked or exceeded.
    fn stream(f: &mut Flow, chunks: usize, every: std::time::Duration) -> Vec<u32> {
        let t0 = std::time::Instant::now();
        let mut credit = WINDOW as u64 - f.unread().min(WINDOW as u64);
        let mut windows = vec![f.window()];
        for i in 0..chunks {
            let n = credit.min(MAX_CHUNK as u64) as usize;
            assert!(n > 0, "the sender ran out of credit");
            credit -= n as u64;
            assert!(f.arrived(n));
            for g in f.took(n, t0 + every * i as u32) {
                assert!(g > 0 && g <= WINDOW);
                credit += g as u64;
            }
            assert!(credit + f.unread() <= f.window() as u64);
            if windows.last() != Some(&f.window()) {
                windows.push(f.window());
            }
        }
        windows
    }

    /// A reader that keeps up with a fast stream (64 KiB every 50 µs, 1.3 GB/s): the window
    /// doubles up to MAX_WINDOW, every grant at most a WINDOW, the sender's credit and what is
    /// unread never beyond the window.
    #[test]
    fn a_window_grows_with_throughput() {
        let mut f = Flow::new();
        let windows = stream(&mut f, 2000, std::time::Duration::from_micros(50));
        assert_eq!(windows, vec![WINDOW, 2 * WINDOW, 4 * WINDOW, MAX_WINDOW]);
    }

    /// A slow stream (64 KiB every 5 ms, 13 MB/s) keeps the first window.
    #[test]
    fn a_slow_stream_keeps_its_window() {
        let mut f = Flow::new();
        assert_eq!(stream(&mut f, 500, std::time::Duration::from_millis(5)), vec![WINDOW]);
    }

    /// A reader that falls behind after its window grew: it shrinks back to WINDOW by granting
    /// less than it took, so what the sender may have outstanding shrinks with it; a byte beyond
    /// the grants is a protocol error.
    #[test]
    fn a_window_shrinks_back_when_the_reader_falls_behind() {
        let mut f = Flow::new();
        let t0 = std::time::Instant::now();
        let mut t = t0;
        let mut credit = WINDOW as u64;
        while f.window() < MAX_WINDOW {
            let n = credit.min(MAX_CHUNK as u64) as usize;
            credit -= n as u64;
            assert!(f.arrived(n));
            t += std::time::Duration::from_micros(50);
            credit += f.took(n, t).iter().map(|g| *g as u64).sum::<u64>();
        }
        // The reader stops: the sender sends all its credit, then cannot send more.
        assert!(f.arrived(credit as usize));
        assert!(!f.clone().arrived(1), "a byte beyond the grants is a protocol error");
        credit = 0;
        // It reads again, slowly, while plenty stays queued.
        let mut outstanding = 0;
        while f.unread() > 0 {
            let n = f.unread().min(MAX_CHUNK as u64) as usize;
            t += std::time::Duration::from_millis(20);
            credit += f.took(n, t).iter().map(|g| *g as u64).sum::<u64>();
            outstanding = credit + f.unread();
        }
        assert_eq!(f.window(), WINDOW);
        assert!(outstanding <= WINDOW as u64, "{outstanding}");
        assert!(f.arrived(credit as usize));
        assert!(!f.arrived(1));
    }

    #[test]
    fn a_grant_never_takes_the_credit_past_the_largest_window() {
        assert_eq!(granted(0, WINDOW), WINDOW as usize);
        assert_eq!(granted(MAX_WINDOW as usize - 10, WINDOW), 10);
        assert_eq!(granted(MAX_WINDOW as usize, 1), 0);
        assert_eq!(granted(usize::MAX, u32::MAX), 0);
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
