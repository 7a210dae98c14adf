//! `zmarket tunnel`: a local port that carries TCP through the market to a port an app declares
//! (`--app`) or a port of one's own box (`--device`), e.g. SSH. Each local connection becomes one
//! WebSocket to the market (`…/tcp?port=N`, authenticated by an API key or an access token)
//! whose binary frames carry its bytes; the market relays them over the box's agent channel.

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::agent::channel::channel_url;

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
    let listener = TcpListener::bind(&opts.local).await.map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", opts.local))?;
    println!("tunnel listening on {} → port {}", listener.local_addr()?, opts.port);
    loop {
        let (conn, _) = listener.accept().await?;
        let target = target.clone();
        let key = opts.key.clone();
        tokio::spawn(async move {
            if let Err(e) = carry(conn, &target, &key).await {
                eprintln!("tunnel: {e}");
            }
        });
    }
}

/// Carries one local connection until either side closes.
pub async fn carry(conn: TcpStream, target: &str, key: &str) -> anyhow::Result<()> {
    let mut req = target.into_client_request()?;
    req.headers_mut().insert("authorization", format!("Bearer {key}").parse()?);
    let (ws, _) = tokio_tungstenite::connect_async_with_config(req, None, true).await.map_err(|e| match e {
        tokio_tungstenite::tungstenite::Error::Http(res) => {
            let body = res.body().as_ref().map(|b| String::from_utf8_lossy(b).to_string()).unwrap_or_default();
            anyhow::anyhow!("the market refused the tunnel ({}): {body}", res.status())
        }
        other => anyhow::anyhow!("cannot reach the market: {other}"),
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
                        eprintln!("tunnel closed: {}", f.reason);
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
