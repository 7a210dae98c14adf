//! The market's side of an agent channel (`GET /api/agent/v1/channel`): one task per open
//! channel reads the agent's frames (beats, stream bytes and their flow control) and sends
//! commands the moment they are queued; a watcher per instance tells the channels here when
//! commands wait (a short poll, and on PostgreSQL a NOTIFY from the queueing transaction).
//!
//! The device is online while its channel is open: the channel's first beat marks it so, and a
//! channel that closes without a new one within `[connect] offline_grace_secs` marks it offline.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket};
use futures::{SinkExt, StreamExt};
use sea_orm::DbBackend;

use crate::connect::ConnectCtx;
use crate::connect::hub::Link;
use crate::db::entity::devices;
use crate::devices::protocol;
use crate::protocol::frames::{self, FromAgent, MAX_CONTROL, ToAgent};
use crate::protocol::heartbeat::{HeartbeatRequest, HeartbeatResponse};

/// A ping keeps idle channels open through proxies and finds dead ones.
const PING_EVERY: Duration = Duration::from_secs(20);

/// Serves one device's channel until it closes.
pub async fn serve(cx: ConnectCtx, device: devices::Model, socket: WebSocket) {
    let (link, mut queue) = cx.channels.attach(&device.id);
    let (mut sink, mut incoming) = socket.split();
    let writer = tokio::spawn(async move {
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        loop {
            let msg = tokio::select! {
                m = queue.recv() => match m { Some(m) => m, None => break },
                _ = ping.tick() => Message::Ping(Default::default()),
            };
            if sink.send(msg).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    if let Err(e) = protocol::record_channel(&cx.devices, &device.id, Some(&link.token)).await {
        tracing::warn!(device_id = %device.id, error = %e, "cannot record the channel");
    }
    // Online now, and whatever waits goes out at once.
    let mut alive = beat(&cx, &link, &device, HeartbeatRequest::default()).await;
    tracing::info!(device_id = %device.id, channel = %link.token, "agent channel open");
    while alive {
        tokio::select! {
            msg = tokio::time::timeout(PING_EVERY * 3, incoming.next()) => match msg {
                Ok(Some(Ok(Message::Text(text)))) => {
                    if text.len() > MAX_CONTROL {
                        break;
                    }
                    match serde_json::from_str::<FromAgent>(&text) {
                        Ok(FromAgent::Beat(req)) => alive = beat(&cx, &link, &device, req).await,
                        Ok(FromAgent::Opened { stream }) => link.on_opened(stream),
                        Ok(FromAgent::Window { stream, bytes }) => link.on_window(stream, bytes),
                        Ok(FromAgent::Close { stream, reason }) => link.on_close(stream, reason),
                        Err(e) => {
                            tracing::warn!(device_id = %device.id, error = %e, "unreadable channel frame");
                            break;
                        }
                    }
                }
                Ok(Some(Ok(Message::Binary(b)))) => match frames::parse_data(&b) {
                    Some((stream, bytes)) => link.on_data(stream, bytes).await,
                    None => break,
                },
                Ok(Some(Ok(_))) => {}
                // Closed, broken, or silent for three pings.
                Ok(Some(Err(_))) | Ok(None) | Err(_) => break,
            },
            _ = link.commands.notified() => alive = push(&cx, &link, &device).await,
            _ = link.replaced.notified() => break,
        }
    }
    writer.abort();
    let current = cx.channels.detach(&link);
    tracing::info!(device_id = %device.id, channel = %link.token, "agent channel closed");
    if current {
        let grace = Duration::from_secs(cx.settings.offline_grace_secs);
        let token = link.token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            if let Err(e) = protocol::channel_closed(&cx.devices, &device.id, &token).await {
                tracing::warn!(device_id = %device.id, error = %e, "cannot mark the device offline");
            }
        });
    }
}

/// A beat over the channel: the heartbeat's rules, its answer sent back. False when the
/// device is no longer known by its secret (unlinked): the channel closes.
async fn beat(cx: &ConnectCtx, link: &Arc<Link>, device: &devices::Model, req: HeartbeatRequest) -> bool {
    match protocol::beat(&cx.devices, device, req).await {
        Ok(answer) => send_commands(link, answer).await,
        Err(e) if e.status() == axum::http::StatusCode::UNAUTHORIZED => false,
        Err(e) => {
            tracing::warn!(device_id = %device.id, error = %e, "beat over the channel failed");
            true
        }
    }
}

/// Commands were queued: sends the pending ones when some were not sent on this channel yet.
async fn push(cx: &ConnectCtx, link: &Arc<Link>, device: &devices::Model) -> bool {
    match protocol::pending(&cx.devices, &device.id, device.secret_hash.as_deref()).await {
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

async fn poll(cx: ConnectCtx) {
    let every = Duration::from_millis(cx.settings.command_poll_ms.max(10));
    loop {
        if cx.channels.is_empty() {
            cx.channels.opened().await;
        }
        let nudged = tokio::select! {
            _ = tokio::time::sleep(every) => false,
            _ = crate::protocol::queued() => true,
        };
        if nudged {
            // Queued here: its transaction commits a moment after; look as it does.
            for ms in [2, 8, 25] {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                look(&cx).await;
            }
        } else {
            look(&cx).await;
        }
    }
}

/// Wakes the channels here whose devices have commands not sent on them yet.
async fn look(cx: &ConnectCtx) {
    let links = cx.channels.devices();
    if links.is_empty() {
        return;
    }
    let ids: Vec<String> = links.iter().map(|l| l.device_id.clone()).collect();
    match protocol::pending_ids(&cx.devices, &ids).await {
        Ok(rows) => {
            for (device, command) in rows {
                if let Some(link) = links.iter().find(|l| l.device_id == device)
                    && !link.was_pushed(&command)
                {
                    link.commands.notify_one();
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "reading queued commands failed"),
    }
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
