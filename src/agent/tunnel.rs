//! `zmarket tunnel`: a local port that carries TCP through the market to a port an app declares
//! (`--app`) or a port of one's own box (`--device`), e.g. SSH. Each local connection becomes one
//! WebSocket to the market (`…/tcp?port=N`, authenticated by an API key or an access token)
//! whose binary frames carry its bytes; the market relays them over the box's agent channel.
//! What goes wrong is printed as a sentence in the user's language (`LC_ALL`, `LC_MESSAGES` or
//! `LANG` naming zh: Chinese), the market's own message when it refused (issue 44 item 4).

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::channel::channel_url;

/// Whether the user reads Chinese, from the locale the shell sets (`zh_CN.UTF-8`); else English.
pub fn user_reads_zh() -> bool {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.is_empty())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("zh"))
}

fn say(zh: bool, en: String, zh_text: String) -> String {
    if zh { zh_text } else { en }
}

/// A refusal of the market as a sentence: its message (already in the user's language, asked
/// with `Accept-Language`), else the HTTP status in words.
pub fn refusal(zh: bool, status: u16, reason: &str, body: &[u8]) -> String {
    let msg = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("msg").and_then(|m| m.as_str()).map(|m| m.trim_end_matches(['.', '。']).to_string()))
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| say(zh, format!("the answer was {status} {reason}"), format!("服务器返回 {status} {reason}")));
    say(zh, format!("The market refused the tunnel: {msg}."), format!("市场拒绝了隧道：{msg}。"))
}

pub struct TunnelOptions {
    pub server: String,
    /// An API key (`zk_…`) or an access token.
    pub key: String,
    pub app: Option<String>,
    pub device: Option<String>,
    pub port: u16,
    /// Where to listen, e.g. `127.0.0.1:2222`.
    pub local: String,
}

/// The WebSocket address of the tunnel's far end.
pub fn url(opts: &TunnelOptions) -> anyhow::Result<String> {
    let base = channel_url(opts.server.trim_end_matches('/'));
    let base = base.trim_end_matches("/api/agent/v1/channel");
    match (&opts.app, &opts.device) {
        (Some(app), None) => Ok(format!("{base}/api/rmp/v1/apps/{app}/tcp?port={}", opts.port)),
        (None, Some(device)) => Ok(format!("{base}/api/ebs/v2/devices/{device}/tcp?port={}", opts.port)),
        _ => anyhow::bail!("name exactly one of --app ID or --device ID"),
    }
}

pub async fn run(opts: TunnelOptions) -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let target = url(&opts)?;
    let zh = user_reads_zh();
    let listener = TcpListener::bind(&opts.local)
        .await
        .map_err(|e| anyhow::anyhow!(say(zh, format!("Cannot listen on {}: {e}", opts.local), format!("无法在 {} 上监听：{e}", opts.local))))?;
    let at = listener.local_addr()?;
    println!("{}", say(zh, format!("Tunnel listening on {at} → port {}", opts.port), format!("隧道正在监听 {at} → 端口 {}", opts.port)));
    loop {
        let (conn, _) = listener.accept().await?;
        let target = target.clone();
        let key = opts.key.clone();
        tokio::spawn(async move {
            if let Err(e) = carry(conn, &target, &key, zh).await {
                eprintln!("{e}");
            }
        });
    }
}

/// Carries one local connection until either side closes; an error is a sentence, in Chinese
/// when `zh`.
pub async fn carry(conn: TcpStream, target: &str, key: &str, zh: bool) -> anyhow::Result<()> {
    let mut req = target.into_client_request()?;
    req.headers_mut().insert("authorization", format!("Bearer {key}").parse()?);
    req.headers_mut().insert("accept-language", (if zh { "zh" } else { "en" }).parse()?);
    let (ws, _) = tokio_tungstenite::connect_async_with_config(req, None, true).await.map_err(|e| match e {
        tokio_tungstenite::tungstenite::Error::Http(res) => {
            let status = res.status();
            anyhow::anyhow!(refusal(zh, status.as_u16(), status.canonical_reason().unwrap_or(""), res.body().as_deref().unwrap_or_default()))
        }
        other => anyhow::anyhow!(say(zh, format!("Cannot reach the market: {other}."), format!("无法连接市场：{other}。"))),
    })?;
    let _ = conn.set_nodelay(true);
    let (mut sink, mut incoming) = ws.split();
    let (mut rd, mut wr) = conn.into_split();
    let up = async {
        let mut buf = vec![0u8; 32 * 1024];
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if sink.send(Message::Binary(buf[..n].to_vec().into())).await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = sink.close().await;
    };
    let down = async {
        while let Some(Ok(msg)) = incoming.next().await {
            match msg {
                Message::Binary(b) => {
                    if wr.write_all(&b).await.is_err() {
                        break;
                    }
                }
                Message::Close(frame) => {
                    if let Some(f) = frame.filter(|f| f.code != tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode::Normal) {
                        eprintln!("{}", say(zh, format!("The tunnel closed: {}", f.reason), format!("隧道已关闭：{}", f.reason)));
                    }
                    break;
                }
                _ => {}
            }
        }
        let _ = wr.shutdown().await;
    };
    tokio::select! {
        _ = up => {}
        _ = down => {}
    }
    Ok(())
}
