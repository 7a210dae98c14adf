//! Connect: agent channels under load. A flood of channels from one address holds at most that
//! address's share of sockets (the rest refused 429 `too_many_sockets`, in both languages) while
//! `/healthz` and sign-in answer; a box's new channel closes its older one.

use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use super::{Ws, channel};
use crate::common::*;
use crate::devices::{register, spec};

/// Whether the server still serves `ws`: a ping is answered by a pong on an open socket, a
/// closed one ends (its frames before the end are skipped). A guard ends a socket that says
/// neither in 30 s as a failure, so a broken server fails the test instead of hanging it.
async fn still_open(ws: &mut Ws) -> bool {
    if ws.send(Message::Ping(b"alive?".to_vec().into())).await.is_err() {
        return false;
    }
    let answer = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Pong(_))) => return true,
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return false,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    answer.expect("an open socket answers a ping, a closed one ends")
}

/// A flood of channels (issue 43, item 1), bounded: 1,100 agent channels from 127.0.0.1 over 60
/// anonymous boxes, 32 at a time, every accepted one kept open by the client. The channels hold at
/// most their address's share of WebSockets (the rest are refused with 429 `too_many_sockets`, or
/// close when a newer channel of their box opens), and `/healthz` and sign-in answer throughout
/// (before: every channel stayed open and gave its connection's place back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_agent_channels_keeps_healthz_and_sign_in_answering() {
    const PER_IP: usize = 24;
    let app = Arc::new(
        TestApp::spawn_with(|c| {
            c.server.max_connections = 256;
            c.server.max_sockets = 40;
            c.server.max_sockets_per_ip = PER_IP;
        })
        .await,
    );
    app.signed_in("victim@example.com").await;
    let mut secrets = Vec::new();
    for _ in 0..60 {
        secrets.push(register(&app, "Z-BOX", spec(4)).await.1);
    }
    let secrets = Arc::new(secrets);
    let flood = {
        let (app, secrets) = (app.clone(), secrets.clone());
        tokio::spawn(async move {
            futures::stream::iter(0..1_100usize)
                .map(|i| {
                    let (app, secrets) = (app.clone(), secrets.clone());
                    async move { channel(&app, &secrets[i % secrets.len()]).await }
                })
                .buffer_unordered(32)
                .collect::<Vec<_>>()
                .await
        })
    };
    // While the flood runs, and after it: the market answers people.
    let mut health = Vec::new();
    let mut logins = Vec::new();
    for _ in 0..4 {
        health.push(app.get("/healthz").await.status().as_u16());
        logins.push(app.post_json("/api/iam/v2/login/password", &json!({"email": "victim@example.com", "password": PASSWORD}), None).await.0);
    }
    let results = flood.await.unwrap();
    health.push(app.get("/healthz").await.status().as_u16());
    logins.push(app.post_json("/api/iam/v2/login/password", &json!({"email": "victim@example.com", "password": PASSWORD}), None).await.0);
    let refused: Vec<u16> = results.iter().filter_map(|r| r.as_ref().err().map(|(status, _)| *status)).collect();
    let mut held: Vec<Ws> = results.into_iter().filter_map(Result::ok).collect();
    let accepted = held.len();
    let mut open = 0;
    for ws in held.iter_mut() {
        if still_open(ws).await {
            open += 1;
        }
    }
    eprintln!("1,100 channels: {accepted} upgraded, {} refused, {open} still open; healthz {health:?}, sign-in {logins:?}", refused.len());
    assert_eq!(health, vec![200; 5]);
    assert_eq!(logins, vec![200; 5]);
    assert!(open <= PER_IP, "{open} channels open from one address (cap {PER_IP})");
    assert!(!refused.is_empty() && refused.iter().all(|&s| s == 429), "{refused:?}");
    // The refusal is the API's, in both languages.
    drop(held);
    // The server notices each close when its side reads it: room comes back within moments, not
    // at once (a busy machine can take a while), so each place is asked for until given.
    let mut hold = Vec::new();
    for s in secrets.iter().take(PER_IP) {
        let mut tries = 0;
        let ws = loop {
            match channel(&app, s).await {
                Ok(ws) => break ws,
                Err((429, _)) if tries < 100 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err((status, _)) => panic!("room again once the flood's sockets closed: {status}"),
            }
        };
        hold.push(ws);
    }
    for (lang, text) in [("en", "Too many live connections"), ("zh-CN", "此类实时连接")] {
        let res = app
            .client
            .get(app.url("/api/agent/v1/channel"))
            .bearer_auth(&secrets[PER_IP])
            .header("accept-language", lang)
            .header("connection", "upgrade")
            .header("upgrade", "websocket")
            .header("sec-websocket-version", "13")
            .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
            .send()
            .await
            .unwrap();
        let (s, b) = json_of(res).await;
        assert_eq!(s, 429, "{b}");
        assert!(b["msg"].as_str().unwrap().contains(text), "{b}");
        assert_eq!(b["error"], "too_many_sockets", "{b}");
    }
}

/// One channel per box: a box's new channel closes its older one (before, both stayed open).
#[tokio::test]
async fn a_boxs_new_channel_closes_the_older_one() {
    let app = TestApp::spawn().await;
    let (_, secret, _) = register(&app, "Z-BOX", spec(4)).await;
    let mut first = channel(&app, &secret).await.expect("the first channel opens");
    assert!(still_open(&mut first).await);
    let mut second = channel(&app, &secret).await.expect("the second channel opens");
    assert!(!still_open(&mut first).await, "the older channel is closed");
    assert!(still_open(&mut second).await, "the newer channel serves");
}
