//! The agent's channel to the market (`GET /api/agent/v1/channel`, a WebSocket it opens
//! outward, so a box behind NAT is reachable): beats travel it instead of HTTP while it is up,
//! commands arrive on it the moment they are queued, and the market's streams are served on it
//! (streams.rs). It reconnects with jittered exponential back-off; while it is down the
//! heartbeat over HTTP carries everything, as before.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use rand::Rng;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::commands::Dispatcher;
use crate::streams::{Reach, Streams};
use zmarket_protocol::frames::{self, FromAgent, ToAgent};
use zmarket_protocol::heartbeat::HeartbeatRequest;

const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Whether the channel is up, and the way to send on it.
#[derive(Default)]
pub struct Channel {
    out: Mutex<Option<mpsc::Sender<Message>>>,
}

impl Channel {
    /// Sends a beat over the channel; false when it is down (send it over HTTP).
    pub async fn beat(&self, req: &HeartbeatRequest) -> bool {
        let Some(out) = self.out.lock().unwrap().clone() else { return false };
        let Ok(text) = serde_json::to_string(&FromAgent::Beat(req.clone())) else { return false };
        out.send(Message::Text(text.into())).await.is_ok()
    }
}

/// `http(s)://host` → `ws(s)://host/api/agent/v1/channel`.
pub fn channel_url(server: &str) -> String {
    let ws = if let Some(rest) = server.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = server.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        server.to_string()
    };
    format!("{}/api/agent/v1/channel", ws.trim_end_matches('/'))
}

/// A back-off of `base` with ±50 % jitter, so boxes that lost the market together do not come
/// back in one wave.
fn jittered(base: Duration) -> Duration {
    let f: f64 = rand::rng().random_range(0.5..1.5);
    base.mul_f64(f)
}

/// Keeps the channel open for as long as the agent runs.
pub async fn run(channel: Arc<Channel>, server: String, secret: Arc<Mutex<String>>, dispatch: Arc<Dispatcher>, reach: Arc<Reach>) {
    let mut backoff = Duration::from_secs(1);
    loop {
        let token = secret.lock().unwrap().clone();
        let mut req = match channel_url(&server).into_client_request() {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "the market's address cannot carry a channel");
                return;
            }
        };
        if let Ok(v) = format!("Bearer {token}").parse() {
            req.headers_mut().insert("authorization", v);
        }
        req.headers_mut().insert(zmarket_protocol::version::HEADER, zmarket_protocol::PROTOCOL_VERSION.into());
        let mut wait = backoff;
        match tokio_tungstenite::connect_async_with_config(req, None, true).await {
            Ok((ws, _)) => {
                backoff = Duration::from_secs(1);
                wait = backoff;
                tracing::info!("channel to the market open");
                serve(&channel, ws, &dispatch, &reach).await;
                tracing::info!("channel to the market closed");
            }
            Err(e) => {
                // A market opening too many channels at once (a restart) says when to come back.
                wait = wait.max(retry_after(&e));
                tracing::debug!(error = %e, "channel to the market not open");
            }
        }
        tokio::time::sleep(jittered(wait)).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// The `Retry-After` of a refused upgrade (zero when there is none).
fn retry_after(e: &tokio_tungstenite::tungstenite::Error) -> Duration {
    let tokio_tungstenite::tungstenite::Error::Http(res) = e else { return Duration::ZERO };
    let secs = res.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
    Duration::from_secs(secs.unwrap_or(0).min(MAX_BACKOFF.as_secs()))
}

async fn serve<S>(channel: &Channel, ws: S, dispatch: &Arc<Dispatcher>, reach: &Arc<Reach>)
where
    S: futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + futures::Sink<Message> + Send + Unpin + 'static,
{
    let (sink, mut incoming) = ws.split();
    let (tx, mut rx) = mpsc::channel::<Message>(256);
    let writer = tokio::spawn(zmarket_protocol::send::write_batched(sink, futures::stream::poll_fn(move |cx| rx.poll_recv(cx))));
    let streams = Streams::new(tx.clone(), reach.clone());
    *channel.out.lock().unwrap() = Some(tx.clone());
    // A beat at once: what the market waits for (acknowledgements, reports) goes now.
    dispatch.wake.notify_one();
    while let Ok(Some(Ok(msg))) = tokio::time::timeout(Duration::from_secs(90), incoming.next()).await {
        match msg {
            Message::Text(text) => match serde_json::from_str::<ToAgent>(&text) {
                Ok(ToAgent::Commands(answer)) => dispatch.on_answer(answer),
                Ok(ToAgent::Open { stream, target }) => streams.open(stream, target),
                Ok(ToAgent::Window { stream, bytes }) => streams.window(stream, bytes),
                Ok(ToAgent::Resize { stream, cols, rows }) => streams.resize(stream, cols, rows),
                Ok(ToAgent::Close { stream }) => streams.close(stream),
                Err(e) => tracing::warn!(error = %e, "unreadable frame from the market"),
            },
            Message::Binary(b) => {
                if let Some((stream, _)) = frames::parse_data(&b) {
                    streams.data(stream, b.slice(4..));
                }
            }
            Message::Ping(p) => {
                let _ = tx.send(Message::Pong(p)).await;
            }
            Message::Close(_) => break,
            _ => {}
        }
    }
    *channel.out.lock().unwrap() = None;
    streams.stop_all();
    writer.abort();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_backoff() {
        assert_eq!(channel_url("http://m.example:8080"), "ws://m.example:8080/api/agent/v1/channel");
        assert_eq!(channel_url("https://m.example/"), "wss://m.example/api/agent/v1/channel");
        for _ in 0..100 {
            let d = jittered(Duration::from_secs(4));
            assert!(d >= Duration::from_secs(2) && d <= Duration::from_secs(6));
        }
    }
}
