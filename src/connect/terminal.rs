//! A shell in an app's container, in the browser: a WebSocket bridged to an `exec` stream of
//! the agent channel. Text frames carry keystrokes, a text frame `{"resize":[cols,rows]}`
//! resizes the terminal, binary frames carry what the shell prints. The socket closes with the
//! reason when the shell exits, the app stops or the channel drops.

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures::{SinkExt, StreamExt};
use serde::Deserialize;

use crate::connect::hub::AgentStream;
use crate::connect::rights::Watched;
use crate::connect::access::reason_name;
use crate::error::Msg;
use crate::lang::Lang;
use zmarket_protocol::frames::CloseReason;

#[derive(Deserialize)]
struct Resize {
    resize: (u16, u16),
}

/// The close frame that says why a stream ended.
pub fn close_frame(reason: CloseReason, lang: Lang) -> Message {
    let code = match reason {
        CloseReason::Done => 1000,
        CloseReason::NotFound | CloseReason::NotRunning => 4404,
        CloseReason::ChannelLost => 4409,
        CloseReason::TooMany => 4429,
        CloseReason::PortNotAllowed => 4403,
        _ => 4500,
    };
    let text = if reason == CloseReason::Done { "exited".to_string() } else { Msg::StreamEnded(reason_name(reason)).text(lang) };
    Message::Close(Some(CloseFrame { code, reason: text.into() }))
}

/// Bridges the socket and the stream until either ends. `terminal`: text frames are
/// keystrokes or resizes; otherwise (a TCP stream) only binary frames carry bytes.
pub async fn bridge(socket: WebSocket, mut stream: AgentStream, terminal: bool, lang: Lang, watched: Watched) {
    let (mut tx, mut rx) = socket.split();
    // A ping now and then: the socket stays open through proxies and the idle limit while
    // nobody types.
    let mut ping = tokio::time::interval(std::time::Duration::from_secs(20));
    ping.tick().await;
    loop {
        tokio::select! {
            // The caller lost the right to it (src/connect/rights.rs): closed, saying so.
            _ = watched.lost() => {
                let text = Msg::AccessEnded.text(lang);
                let _ = tx.send(Message::Close(Some(CloseFrame { code: 4403, reason: text.into() }))).await;
                return;
            },
            _ = ping.tick() => {
                if tx.send(Message::Ping(Default::default())).await.is_err() {
                    return;
                }
            },
            msg = rx.next() => match msg {
                Some(Ok(Message::Text(t))) if terminal => {
                    if t.starts_with("{\"resize\"") && let Ok(r) = serde_json::from_str::<Resize>(&t) {
                        stream.resize(r.resize.0.clamp(10, 500), r.resize.1.clamp(4, 200)).await;
                    } else if stream.send(t.as_bytes()).await.is_err() {
                        break;
                    }
                }
                Some(Ok(Message::Binary(b))) => {
                    if stream.send(&b).await.is_err() {
                        break;
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
            got = stream.recv() => match got {
                Ok(b) => {
                    if tx.send(Message::Binary(b)).await.is_err() {
                        return;
                    }
                }
                Err(reason) => {
                    let _ = tx.send(close_frame(reason, lang)).await;
                    return;
                }
            },
        }
    }
    let _ = tx.send(close_frame(CloseReason::Failed, lang)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resize_frames_parse() {
        let r: Resize = serde_json::from_str(r#"{"resize":[120,40]}"#).unwrap();
        assert_eq!(r.resize, (120, 40));
        match close_frame(CloseReason::ChannelLost, Lang::Zh) {
            Message::Close(Some(f)) => {
                assert_eq!(f.code, 4409);
                assert_eq!(f.reason.as_str(), "与设备的连接已断开");
            }
            _ => panic!(),
        }
    }
}
