//! Connect: a box's agent played by the test over its channel, hostile where it may be (a log
//! stream of what the test says, an app that records what it is sent and answers what the test
//! says, a shell that echoes), and the person's side of it: the app's origin entered through its
//! one-time link, a terminal, how a terminal ended.

use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use super::{Ws, channel, next_commands, ws_url};
use crate::common::*;

/// What the played agent sends for a log stream of (`tail`, `follow`): its lines, in order.
pub(crate) type LogsOf = Arc<dyn Fn(u64, bool) -> Vec<String> + Send + Sync>;

/// Plays the agent on `ch`: a log stream gets what `logs` says (as fast as the market's window
/// allows, then `done`); an app stream records the request's head in `seen` and answers
/// `reply`, then `done`.
pub(crate) async fn play_agent(mut ch: Ws, logs: LogsOf, reply: Vec<u8>, seen: tokio::sync::mpsc::UnboundedSender<String>) {
    use std::collections::{HashMap, VecDeque};
    const WINDOW: i64 = 256 * 1024;
    const CHUNK: usize = 32 * 1024;
    struct Out {
        queue: VecDeque<Vec<u8>>,
        credit: i64,
        request: Vec<u8>,
        app: bool,
        answered: bool,
        /// A shell: what comes is sent back, and it never ends by itself.
        echo: bool,
    }
    let chunks = |bytes: Vec<u8>| bytes.chunks(CHUNK).map(<[u8]>::to_vec).collect::<VecDeque<_>>();
    let mut streams: HashMap<u64, Out> = HashMap::new();
    loop {
        // Send what the window allows; a stream whose bytes are all sent ends.
        let mut done = Vec::new();
        for (id, out) in streams.iter_mut() {
            while let Some(front) = out.queue.front() {
                if (front.len() as i64) > out.credit {
                    break;
                }
                let chunk = out.queue.pop_front().unwrap();
                out.credit -= chunk.len() as i64;
                let mut frame = (*id as u32).to_be_bytes().to_vec();
                frame.extend_from_slice(&chunk);
                if ch.send(Message::Binary(frame.into())).await.is_err() {
                    return;
                }
            }
            if out.queue.is_empty() && !out.echo && (!out.app || out.answered) {
                done.push(*id);
            }
        }
        for id in done {
            streams.remove(&id);
            let close = json!({"t": "close", "stream": id, "reason": "done"}).to_string();
            if ch.send(Message::Text(close.into())).await.is_err() {
                return;
            }
        }
        let Some(Ok(m)) = ch.next().await else { return };
        match m {
            Message::Text(t) => {
                let f: serde_json::Value = serde_json::from_str(&t).unwrap();
                let id = f["stream"].as_u64().unwrap_or(0);
                match f["t"].as_str() {
                    Some("open") => {
                        let target = &f["target"];
                        let app = target["kind"] == "app";
                        let echo = target["kind"] == "exec";
                        let queue = if app || echo {
                            VecDeque::new()
                        } else {
                            chunks(logs(target["tail"].as_u64().unwrap_or(0), target["follow"].as_bool().unwrap_or(false)).concat().into_bytes())
                        };
                        streams.insert(id, Out { queue, credit: WINDOW, request: Vec::new(), app, answered: false, echo });
                        ch.send(Message::Text(json!({"t": "opened", "stream": id}).to_string().into())).await.unwrap();
                    }
                    Some("window") => {
                        if let Some(out) = streams.get_mut(&id) {
                            out.credit += f["bytes"].as_i64().unwrap_or(0);
                        }
                    }
                    Some("close") => {
                        streams.remove(&id);
                    }
                    _ => {}
                }
            }
            Message::Binary(b) => {
                let (head, body) = b.split_at(4);
                let id = u32::from_be_bytes(head.try_into().unwrap()) as u64;
                if let Some(out) = streams.get_mut(&id) {
                    if out.echo {
                        out.queue.push_back(body.to_vec());
                        continue;
                    }
                    out.request.extend_from_slice(body);
                    if out.app && !out.answered && out.request.windows(4).any(|w| w == b"\r\n\r\n") {
                        let _ = seen.send(String::from_utf8_lossy(&out.request).into_owned());
                        out.queue = chunks(reply.clone());
                        out.answered = true;
                        // An upgraded app (a WebSocket) stays open and sends back what comes.
                        out.echo = reply.starts_with(b"HTTP/1.1 101");
                    }
                }
            }
            _ => {}
        }
    }
}

/// One JSON log line as the agent sends it.
pub(crate) fn log_line(ts: &str, text: &str) -> String {
    format!("{}\n", json!({"ts": ts, "stream": "stdout", "text": text}))
}

/// The box's channel, once the market has attached it: it takes the channel after its 101 is
/// sent, and the answer of the channel's first beat says it is attached (a request to the app
/// before it was answered 409 under CI's load).
pub(crate) async fn attached(app: &TestApp, secret: &str) -> Ws {
    let mut ch = channel(app, secret).await.expect("the box's channel opens");
    next_commands(&mut ch, Duration::from_secs(10)).await.expect("the answer of the channel's first beat");
    ch
}

/// A rented, running app on a box whose channel the test plays: (renter's token, installation,
/// what the app saw).
pub(crate) async fn played_app(app: &TestApp, logs: LogsOf, reply: &[u8]) -> (String, String, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let (alice, _bob, _dev, secret, id) = crate::boxes::rented_running(app, 2).await;
    let ch = attached(app, &secret).await;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(play_agent(ch, logs, reply.to_vec(), tx));
    (alice, id, rx)
}

/// A terminal on the installation `id` as `token` (read in Chinese), once its shell echoed a first
/// line.
pub(crate) async fn terminal(app: &TestApp, token: &str, id: &str) -> Ws {
    let mut req = ws_url(app, &format!("/api/rmp/v1/apps/{id}/terminal")).into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    req.headers_mut().insert("accept-language", "zh-CN".parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.expect("the terminal opens");
    ws.send(Message::Text("echo hi".into())).await.unwrap();
    loop {
        match ws.next().await {
            Some(Ok(Message::Binary(b))) if b.as_ref() == b"echo hi" => return ws,
            Some(Ok(_)) => {}
            other => panic!("the shell answers: {other:?}"),
        }
    }
}

/// How an open terminal ended: the close frame's code and reason (the socket must end; a guard
/// fails the test after 30 s instead of hanging).
pub(crate) async fn ended(ws: &mut Ws) -> (u16, String) {
    let end = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(Some(f)))) => return (u16::from(f.code), f.reason.to_string()),
                Some(Ok(Message::Close(None))) | None | Some(Err(_)) => return (0, String::new()),
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    end.expect("the terminal is closed once its right is gone")
}

/// A request to an app origin (`host`), from the test's client: (status, headers, body).
pub(crate) async fn on_app(app: &TestApp, method: reqwest::Method, host: &str, path: &str, headers: &[(&str, String)]) -> (u16, reqwest::header::HeaderMap, String) {
    let mut req = app.client.request(method, format!("{}{path}", app.base)).header("host", host);
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    let res = req.send().await.unwrap();
    let (status, h) = (res.status().as_u16(), res.headers().clone());
    (status, h, res.text().await.unwrap_or_default())
}

/// Opens the app's origin as `token`: "Open", then its one-time link. Returns the origin's host
/// (with the port) and the cookie it set (the whole `Set-Cookie`).
pub(crate) async fn entered(app: &TestApp, token: &str, id: &str) -> (String, String) {
    let res = app.client.get(app.url(&format!("/api/rmp/v1/apps/{id}/open"))).bearer_auth(token).header("accept", "application/json").send().await.unwrap();
    assert_eq!(res.status(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    let link = url::Url::parse(body["data"]["url"].as_str().unwrap()).unwrap();
    let host = format!("{}:{}", link.host_str().unwrap(), link.port().unwrap());
    let (status, h, _) = on_app(app, reqwest::Method::GET, &host, &format!("{}?{}", link.path(), link.query().unwrap()), &[]).await;
    assert_eq!(status, 302);
    (host, header(&h, "set-cookie").to_string())
}
