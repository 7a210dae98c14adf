//! The market's side of an agent channel (`GET /api/agent/v1/channel`): one task per open
//! channel reads the agent's frames (beats, stream bytes and their flow control) and sends
//! commands the moment they are queued; a watcher per instance tells the channels here when
//! commands wait (a short poll, and on PostgreSQL a NOTIFY from the queueing transaction).
//!
//! The device is online while its channel is open: the channel's first beat marks it so, and a
//! channel that closes without a new one within `[connect] offline_grace_secs` marks it offline.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use futures::stream::SplitSink;
use futures::{SinkExt, StreamExt};
use sea_orm::DbBackend;

use crate::connect::ConnectCtx;
use crate::connect::hub::Link;
use crate::db::entity::devices;
use crate::devices::agent_api;
use crate::ids::DeviceId;
use zmarket_protocol::frames::{self, FromAgent, MAX_CHUNK, MAX_CONTROL, ToAgent};
use zmarket_protocol::heartbeat::{HeartbeatRequest, HeartbeatResponse, Settings};

/// A channel silent for this long past its beat interval is pinged (after 60 s at most); silent
/// as long again, cut. Its beats and their answers keep it open through proxies otherwise: a box
/// beating on time costs no ping.
const PING_AFTER: Duration = Duration::from_secs(20);
/// Bytes read from the socket at a time, and what an idle channel's read buffer holds
/// (tungstenite's default is 128 KiB a socket: most of an idle channel's memory before).
const READ_BUFFER: usize = 4 * 1024;
/// Frames gathered before they are written (the writer flushes what it has when its queue is
/// empty): small frames of many streams leave in one write. The buffer is empty, and
/// unallocated, until the channel sends.
const WRITE_BUFFER: usize = 16 * 1024;
/// Beats a channel may send in a burst, and a second over time: the agent beats every
/// `heartbeat_secs`, at once after an acknowledgement, and at most every half second while an
/// app operation moves on. A box beyond it is cut (issue 42: one beating 100 times faster than
/// told, every 0.3 s at the default 30 s, is).
const BEAT_BURST: f64 = 30.0;
const BEATS_PER_SEC: f64 = 2.5;
/// Control bytes (beats with their reports) a channel may send in a burst, and a second over
/// time: a box sending maximal beats over and over is cut.
const CONTROL_BURST: f64 = 4.0 * MAX_CONTROL as f64;
const CONTROL_BYTES_PER_SEC: f64 = 64.0 * 1024.0;
/// A full beat at least this often, however quiet the box (what no quiet beat compares, such as
/// an installation whose row moved while its report stayed the same, is looked at again). The
/// first beat of each hour is full anyway (it marks the reliability ring): a full beat every 5
/// minutes was a tenth of all beats at 10,000 boxes, and a third of their CPU.
const FULL_EVERY: Duration = Duration::from_secs(3600);
/// `Retry-After` of a channel refused by `[connect] channel_opens_per_sec`.
pub const RETRY_OPEN_SECS: u64 = 2;

/// The channel's WebSocket settings: a small read buffer (it grows for a large frame), frames
/// and messages no larger than a control frame.
pub fn configured(ws: WebSocketUpgrade) -> WebSocketUpgrade {
    let max = MAX_CONTROL.max(MAX_CHUNK + 4) + 64;
    ws.read_buffer_size(READ_BUFFER).write_buffer_size(WRITE_BUFFER).max_frame_size(max).max_message_size(max)
}

/// A token bucket.
struct Budget {
    level: f64,
    burst: f64,
    rate: f64,
    at: Instant,
}

impl Budget {
    fn new(burst: f64, rate: f64) -> Budget {
        Budget { level: burst, burst, rate, at: Instant::now() }
    }

    fn take(&mut self, n: f64) -> bool {
        let now = Instant::now();
        self.level = (self.level + now.duration_since(self.at).as_secs_f64() * self.rate).min(self.burst);
        self.at = now;
        self.level -= n;
        self.level >= 0.0
    }
}

/// What the channel remembers of its box's beats (src/devices/quiet.rs).
struct Memo {
    /// The installation reports of the last full beat (their hash).
    reports: u64,
    full_at: Instant,
    /// The last answer held commands, or commands were pushed since: the next beat is full.
    commands: bool,
    /// The last answer without commands, as sent: the next one with the same settings is it.
    answer: Option<(Settings, Utf8Bytes)>,
    last_beat: Instant,
    beats: Budget,
    bytes: Budget,
}

fn reports_hash(req: &HeartbeatRequest) -> u64 {
    if req.installations.is_empty() {
        return 0;
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_vec(&req.installations).unwrap_or_default().hash(&mut h);
    h.finish() | 1
}

/// Why a channel ended, for the server's log.
#[derive(Debug, Clone, Copy)]
enum End {
    Closed,
    Broken,
    Replaced,
    Unknown,
    Unreadable,
    Silent,
    NoBeat,
    TooFast,
    TooLarge,
}

impl End {
    fn reason(self) -> &'static str {
        match self {
            End::Closed => "closed by the agent",
            End::Broken => "the socket broke",
            End::Replaced => "a newer channel of the box opened",
            End::Unknown => "the box is no longer known by its secret (unlinked)",
            End::Unreadable => "an unreadable frame",
            End::Silent => "silent past its ping",
            End::NoBeat => "no beat within devices.offline_after_secs",
            End::TooFast => "beats far faster than told",
            End::TooLarge => "control frames too large too often",
        }
    }

    /// Cut by the market for what the agent did (logged as a warning).
    fn cut(self) -> bool {
        matches!(self, End::Unreadable | End::Silent | End::NoBeat | End::TooFast | End::TooLarge)
    }
}

/// Writes the queued frames to the socket (its own task: a slow reader on the agent's side
/// holds up only what is sent to it), in batches (the socket's write buffer, [`WRITE_BUFFER`],
/// gathers a batch into few writes).
async fn write(sink: SplitSink<WebSocket, Message>, mut queue: tokio::sync::mpsc::Receiver<Message>) {
    if let Some(mut sink) = zmarket_protocol::send::write_batched(sink, futures::stream::poll_fn(move |cx| queue.poll_recv(cx))).await {
        let _ = sink.close().await;
    }
}

/// Serves one device's channel until it closes.
pub async fn serve(cx: ConnectCtx, device: devices::Model, socket: WebSocket) {
    let (link, queue) = cx.channels.attach(device.id.as_str());
    let (sink, mut incoming) = socket.split();
    let writer = tokio::spawn(write(sink, queue));
    if let Err(e) = agent_api::record_channel(&cx.devices, &device.id, Some(&link.token)).await {
        tracing::warn!(device_id = %device.id, error = %e, "cannot record the channel");
    }
    let told = Duration::from_secs(cx.devices.settings.heartbeat_secs);
    let no_beat = Duration::from_secs(cx.devices.settings.offline_after_secs).max(told * 2);
    let now = Instant::now();
    let mut memo = Memo {
        reports: 0,
        full_at: now,
        commands: true,
        answer: None,
        last_beat: now,
        beats: Budget::new(BEAT_BURST, BEATS_PER_SEC),
        bytes: Budget::new(CONTROL_BURST, CONTROL_BYTES_PER_SEC),
    };
    // Online now, and whatever waits goes out at once.
    let mut alive = Box::pin(beat(&cx, &link, &device, HeartbeatRequest::default(), &mut memo)).await;
    tracing::info!(device_id = %device.id, channel = %link.token, "agent channel open");
    // The agent drops a channel the market left silent for 90 s: an answer or a ping before.
    let quiet_for = (told + PING_AFTER).min(Duration::from_secs(60));
    // The next look at the channel's silence: a ping, or the end of a box that stopped beating.
    let next_look = |last_beat: Instant| tokio::time::Instant::from_std((Instant::now() + quiet_for).min(last_beat + no_beat));
    let silence = tokio::time::sleep_until(next_look(memo.last_beat));
    tokio::pin!(silence);
    let mut pinged = false;
    let end = loop {
        if !alive {
            break End::Unknown;
        }
        tokio::select! {
            msg = incoming.next() => {
                silence.as_mut().reset(next_look(memo.last_beat));
                pinged = false;
                match msg {
                    Some(Ok(Message::Text(text))) => {
                        if !memo.bytes.take(text.len() as f64) {
                            break End::TooLarge;
                        }
                        match serde_json::from_str::<FromAgent>(&text) {
                            Ok(FromAgent::Beat(req)) => {
                                if !memo.beats.take(1.0) {
                                    break End::TooFast;
                                }
                                memo.last_beat = Instant::now();
                                alive = Box::pin(beat(&cx, &link, &device, req, &mut memo)).await;
                            }
                            Ok(FromAgent::Opened { stream }) => link.on_opened(stream),
                            Ok(FromAgent::Window { stream, bytes }) => link.on_window(stream, bytes),
                            Ok(FromAgent::Close { stream, reason }) => link.on_close(stream, reason),
                            Err(e) => {
                                tracing::warn!(device_id = %device.id, error = %e, "unreadable channel frame");
                                break End::Unreadable;
                            }
                        }
                    }
                    Some(Ok(Message::Binary(b))) => match frames::parse_data(&b) {
                        Some((stream, _)) => Box::pin(link.on_data(stream, b.slice(4..))).await,
                        None => break End::Unreadable,
                    },
                    Some(Ok(Message::Close(_))) | None => break End::Closed,
                    Some(Ok(_)) => {}
                    Some(Err(_)) => break End::Broken,
                }
                if memo.last_beat.elapsed() >= no_beat {
                    break End::NoBeat;
                }
            }
            _ = &mut silence => {
                if memo.last_beat.elapsed() >= no_beat {
                    break End::NoBeat;
                }
                if pinged {
                    break End::Silent;
                }
                link.ping();
                pinged = true;
                silence.as_mut().reset(next_look(memo.last_beat));
            }
            _ = link.commands.notified() => {
                memo.commands = true;
                alive = Box::pin(push(&cx, &link, &device)).await;
            }
            _ = link.replaced.notified() => break End::Replaced,
        }
    };
    writer.abort();
    let current = cx.channels.detach(&link);
    if end.cut() {
        tracing::warn!(device_id = %device.id, channel = %link.token, reason = end.reason(), "agent channel cut");
    } else {
        tracing::info!(device_id = %device.id, channel = %link.token, reason = end.reason(), "agent channel closed");
    }
    if current {
        let grace = Duration::from_secs(cx.settings.offline_grace_secs);
        let token = link.token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            if let Err(e) = agent_api::channel_closed(&cx.devices, &device.id, &token).await {
                tracing::warn!(device_id = %device.id, error = %e, "cannot mark the device offline");
            }
        });
    }
}

/// A beat over the channel: a quiet one when it changes nothing (src/devices/quiet.rs), else the
/// heartbeat's rules; its answer sent back. False when the device is no longer known by its
/// secret (unlinked): the channel closes.
async fn beat(cx: &ConnectCtx, link: &Arc<Link>, device: &devices::Model, req: HeartbeatRequest, memo: &mut Memo) -> bool {
    let reports = reports_hash(&req);
    let mut req = req;
    if !memo.commands && reports == memo.reports && memo.full_at.elapsed() < FULL_EVERY {
        match crate::devices::quiet::beat(&cx.devices, &device.id, device.secret_hash.as_deref(), req).await {
            crate::devices::quiet::Judged::Quiet(settings) => return answer(link, memo, settings).await,
            crate::devices::quiet::Judged::Full(back) => req = back,
        }
    }
    match agent_api::beat(&cx.devices, device, req).await {
        Ok(answer) => {
            memo.reports = reports;
            memo.full_at = Instant::now();
            memo.commands = !answer.commands.is_empty();
            send_commands(link, answer).await
        }
        Err(e) if e.status() == axum::http::StatusCode::UNAUTHORIZED => false,
        Err(e) => {
            tracing::warn!(device_id = %device.id, error = %e, "beat over the channel failed");
            true
        }
    }
}

/// A quiet beat's answer: the settings and no command, written once while they stay the same.
async fn answer(link: &Link, memo: &mut Memo, settings: Settings) -> bool {
    let text = match &memo.answer {
        Some((s, text)) if *s == settings => text.clone(),
        _ => {
            let frame = ToAgent::Commands(HeartbeatResponse { settings: settings.clone(), commands: Vec::new() });
            let Ok(text) = serde_json::to_string(&frame) else { return false };
            let text = Utf8Bytes::from(text);
            memo.answer = Some((settings, text.clone()));
            text
        }
    };
    link.send_text(text).await
}

/// Commands were queued: sends the pending ones when some were not sent on this channel yet.
async fn push(cx: &ConnectCtx, link: &Arc<Link>, device: &devices::Model) -> bool {
    match agent_api::pending(&cx.devices, &device.id, device.secret_hash.as_deref()).await {
        Ok(Some(answer)) => {
            if answer.commands.iter().all(|c| link.was_pushed(&c.id)) {
                return true;
            }
            send_commands(link, answer).await
        }
        Ok(None) => false,
        Err(e) => {
            tracing::warn!(device_id = %device.id, error = %e, "reading queued commands failed");
            true
        }
    }
}

async fn send_commands(link: &Arc<Link>, answer: HeartbeatResponse) -> bool {
    link.unsent(answer.commands.iter().map(|c| c.id.clone()));
    link.send(&ToAgent::Commands(answer)).await
}

/// This instance's watcher of queued commands (see the module comment); abort it at shutdown.
pub fn start_watcher(cx: ConnectCtx) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if cx.db.get_database_backend() == DbBackend::Postgres {
            let listen = tokio::spawn(listen(cx.clone()));
            poll(cx).await;
            listen.abort();
        } else {
            poll(cx).await;
        }
    })
}

/// Channels looked at per poll: at 10,000 channels each is looked at every 2 s (a command queued
/// in this process, or announced by PostgreSQL, is looked for at once).
const LOOK_BATCH: usize = 500;

async fn poll(cx: ConnectCtx) {
    let every = Duration::from_millis(cx.settings.command_poll_ms.max(10));
    use tokio::sync::broadcast::error::{RecvError, TryRecvError};
    let mut from = 0;
    let mut queued = crate::devices::commands::queued();
    loop {
        if cx.channels.is_empty() {
            cx.channels.opened().await;
        }
        let nudged = tokio::select! {
            _ = tokio::time::sleep(every) => None,
            got = queued.recv() => Some(got),
        };
        if let Some(got) = nudged {
            // Queued here: its transaction commits a moment after; look as it does.
            let mut ids = Vec::new();
            let mut all = matches!(got, Err(RecvError::Lagged(_)));
            ids.extend(got.ok());
            loop {
                match queued.try_recv() {
                    Ok(id) => ids.push(id),
                    Err(TryRecvError::Lagged(_)) => all = true,
                    Err(_) => break,
                }
            }
            let links: Vec<Arc<Link>> = if all {
                cx.channels.devices(0, usize::MAX)
            } else {
                ids.iter().filter_map(|id| cx.channels.get(id)).collect()
            };
            if links.is_empty() {
                continue;
            }
            for ms in [2, 8, 25] {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                look(&cx, &links).await;
            }
        } else {
            let links = cx.channels.devices(from, LOOK_BATCH);
            from = if links.len() < LOOK_BATCH { 0 } else { from + LOOK_BATCH };
            look(&cx, &links).await;
        }
    }
}

/// Wakes the channels among `links` whose devices have commands not sent on them yet.
async fn look(cx: &ConnectCtx, links: &[Arc<Link>]) {
    if links.is_empty() {
        return;
    }
    for part in links.chunks(LOOK_BATCH) {
        let ids: Vec<DeviceId> = part.iter().map(|l| DeviceId::from(l.device_id.as_str())).collect();
        match agent_api::pending_ids(&cx.devices, &ids).await {
            Ok(rows) => {
                for (device, command) in rows {
                    if let Some(link) = part.iter().find(|l| l.device_id == device)
                        && !link.was_pushed(command.as_str())
                    {
                        link.commands.notify_one();
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "reading queued commands failed"),
        }
    }
}

/// Reads the rows of this instance's quiet beats in batches (`devices::quiet::judge_beats`) and
/// writes their presence every `[connect] presence_flush_ms` (at most a quarter of
/// `devices.offline_after_secs`); abort it at shutdown.
pub fn start_flusher(cx: ConnectCtx) -> tokio::task::JoinHandle<()> {
    let quarter = cx.devices.settings.offline_after_secs * 1000 / 4;
    let every = Duration::from_millis(cx.settings.presence_flush_ms.min(quarter).max(10));
    let judge = tokio::spawn(crate::devices::quiet::judge_beats(cx.devices.clone()));
    tokio::spawn(async move {
        // Aborting the flusher drops the reader of quiet beats with it.
        struct Stop(tokio::task::JoinHandle<()>);
        impl Drop for Stop {
            fn drop(&mut self) {
                self.0.abort();
            }
        }
        let _judge = Stop(judge);
        loop {
            tokio::time::sleep(every).await;
            if let Err(e) = crate::devices::quiet::flush(&cx.devices).await {
                tracing::warn!(error = %e, "writing the boxes' presence failed");
            }
        }
    })
}

async fn listen(cx: ConnectCtx) {
    use sea_orm::sqlx::postgres::PgListener;
    let channel = crate::db::migration::m0015_connect::COMMANDS_CHANNEL;
    loop {
        match PgListener::connect(&cx.database_url).await {
            Ok(mut listener) => match listener.listen(channel).await {
                Ok(()) => loop {
                    match listener.try_recv().await {
                        Ok(Some(n)) => {
                            if let Some(link) = cx.channels.get(n.payload()) {
                                link.commands.notify_one();
                            }
                        }
                        Ok(None) => {}
                        Err(e) => {
                            tracing::warn!(error = %e, "command listener failed, reconnecting");
                            break;
                        }
                    }
                },
                Err(e) => tracing::warn!(error = %e, "LISTEN failed"),
            },
            Err(e) => tracing::warn!(error = %e, "command listener cannot connect"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
