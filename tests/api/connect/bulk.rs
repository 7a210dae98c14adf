//! Connect: bulk bytes and kept-alive connections through the market (issue 42, item 3). A
//! large download and upload through `zmarket tunnel`'s own code, a real agent and its channel
//! arrive byte for byte (the frames grow, the windows grow and shrink, the market passes the
//! agent's bytes on without copying them); the app proxy keeps its connection to an app alive
//! between requests (one stream for many requests), and drops one the app closed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

use super::played::attached;
use super::{Ws, free_port};
use crate::apps::agent::{link, start_agent_with};
use crate::common::*;

/// `n` bytes that repeat nowhere a frame boundary could hide a loss or a swap.
fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_download_and_upload_arrive_byte_exact_through_a_tunnel() {
    const DOWN: usize = 48 * 1024 * 1024 + 12_345;
    const UP: usize = 8 * 1024 * 1024 + 777;
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    // A service on the box: reads UP bytes and keeps their digest, then sends DOWN bytes and
    // ends (`zmarket tunnel` carries no half-closed connection: each side ends the whole).
    let box_port = free_port();
    let service = tokio::net::TcpListener::bind(("127.0.0.1", box_port)).await.unwrap();
    let received: Arc<Mutex<Option<(usize, Vec<u8>)>>> = Arc::default();
    let r = received.clone();
    tokio::spawn(async move {
        let (mut s, _) = service.accept().await.unwrap();
        let mut up = vec![0u8; UP];
        s.read_exact(&mut up).await.unwrap();
        *r.lock().unwrap() = Some((up.len(), Sha256::digest(&up).to_vec()));
        s.write_all(&pattern(DOWN, 7)).await.unwrap();
        s.shutdown().await.unwrap();
    });
    let state = tempfile::tempdir().unwrap();
    let ports = format!("[{box_port}]");
    let agent = start_agent_with(&app, state.path(), "", &[("ZMARKET_AGENT__TCP_PORTS", &ports)]);
    link(&app, &alice, &agent).await;
    let mut online = false;
    for _ in 0..200 {
        let (s, b) = app.get_auth(&format!("/api/ebs/v2/devices/{}/connect", agent.device_id), &alice).await;
        if s == 200 && b["data"]["device_online"] == true {
            online = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(online, "the agent's channel opens");

    // `zmarket tunnel`'s carrying of one local connection.
    let local = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = local.local_addr().unwrap();
    let (client, accepted) = tokio::join!(tokio::net::TcpStream::connect(addr), local.accept());
    let (client, conn) = (client.unwrap(), accepted.unwrap().0);
    let target = format!("{}/api/ebs/v2/devices/{}/tcp?port={box_port}", app.base.replacen("http://", "ws://", 1), agent.device_id);
    let key = alice.clone();
    let carried = tokio::spawn(async move { zmarket_agent::tunnel::carry(conn, &target, &key, false).await });
    let (mut rd, mut wr) = client.into_split();
    wr.write_all(&pattern(UP, 11)).await.unwrap();
    let mut got = Vec::with_capacity(DOWN);
    tokio::time::timeout(Duration::from_secs(120), rd.read_to_end(&mut got)).await.expect("the download ends").unwrap();
    assert_eq!(got.len(), DOWN);
    assert!(got == pattern(DOWN, 7), "the download arrived byte for byte");
    let (n, digest) = received.lock().unwrap().clone().expect("the service read the upload");
    assert_eq!(n, UP);
    assert_eq!(digest, Sha256::digest(pattern(UP, 11)).to_vec(), "the upload arrived byte for byte");
    drop(rd);
    let _ = tokio::time::timeout(Duration::from_secs(10), carried).await;
    drop(agent);
}

/// Plays a box whose app keeps its connections alive: each stream answers every request that
/// comes on it (`/bye` answered, then the stream closed, as an app closing its connection does).
/// Counts the streams opened.
async fn keep_alive_app(mut ch: Ws, opened: Arc<Mutex<usize>>) {
    use std::collections::HashMap;
    let mut pending: HashMap<u32, Vec<u8>> = HashMap::new();
    while let Some(Ok(m)) = ch.next().await {
        let mut out = Vec::new();
        match m {
            Message::Text(t) => {
                let f: serde_json::Value = serde_json::from_str(&t).unwrap();
                let id = f["stream"].as_u64().unwrap_or(0) as u32;
                match f["t"].as_str() {
                    Some("open") => {
                        *opened.lock().unwrap() += 1;
                        pending.insert(id, Vec::new());
                        out.push(Message::Text(json!({"t": "opened", "stream": id}).to_string().into()));
                    }
                    Some("close") => {
                        pending.remove(&id);
                    }
                    _ => {}
                }
            }
            Message::Binary(b) => {
                let id = u32::from_be_bytes(b[..4].try_into().unwrap());
                let Some(buf) = pending.get_mut(&id) else { continue };
                buf.extend_from_slice(&b[4..]);
                while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head: Vec<u8> = buf.drain(..end + 4).collect();
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let path = head.split(' ').nth(1).unwrap_or("").to_string();
                    let body = format!("stream {id} {path}");
                    let reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
                    let mut frame = id.to_be_bytes().to_vec();
                    frame.extend_from_slice(reply.as_bytes());
                    out.push(Message::Binary(frame.into()));
                    if path == "/bye" {
                        out.push(Message::Text(json!({"t": "close", "stream": id, "reason": "done"}).to_string().into()));
                    }
                }
            }
            _ => {}
        }
        for m in out {
            if ch.send(m).await.is_err() {
                return;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_proxy_keeps_its_connection_to_an_app_and_drops_one_the_app_closed() {
    let app = TestApp::spawn().await;
    let (alice, _bob, dev, secret, id) = crate::boxes::rented_running(&app, 2).await;
    let ch = attached(&app, &secret).await;
    let opened = Arc::new(Mutex::new(0usize));
    tokio::spawn(keep_alive_app(ch, opened.clone()));
    let link = app.state.connect.channels.get(&dev).expect("the box's channel is on this instance");
    // The connection waits for the next request once its answer was read (a moment after the
    // reader has it).
    let waiting = |n: usize| {
        let link = link.clone();
        async move {
            for _ in 0..500 {
                if link.kept.waiting() == n {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            panic!("{} connections wait, not {n}", link.kept.waiting());
        }
    };
    let get = |path: &str| {
        let url = app.url(&format!("/api/rmp/v1/apps/{id}/api/{path}"));
        let alice = alice.clone();
        let client = app.client.clone();
        async move {
            let res = client.get(url).bearer_auth(&alice).send().await.unwrap();
            assert_eq!(res.status(), 200);
            res.text().await.unwrap()
        }
    };
    // Three requests one after the other: one stream (and so one connection to the container).
    let first = get("a").await;
    assert!(first.ends_with(" /a"), "{first}");
    let stream = first.split(' ').nth(1).unwrap().to_string();
    for path in ["b", "c"] {
        waiting(1).await;
        assert_eq!(get(path).await, format!("stream {stream} /{path}"));
    }
    assert_eq!(*opened.lock().unwrap(), 1, "one stream carried the requests");
    // The app closes the connection after `/bye`: it is dropped, and the next request opens a
    // new stream.
    waiting(1).await;
    assert_eq!(get("bye").await, format!("stream {stream} /bye"));
    waiting(0).await;
    let next = get("d").await;
    assert!(next.ends_with(" /d") && !next.starts_with(&format!("stream {stream} ")), "{next}");
    assert_eq!(*opened.lock().unwrap(), 2);
}
