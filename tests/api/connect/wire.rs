//! An agent of the release before the protocol was versioned still talks to this market (issue
//! 45): its frames, pinned in src/protocol/wire-v1.txt as that release wrote them, are sent as
//! they are (no `zmarket-protocol` header), and what the market answers has only the fields that
//! release's agent reads, of the kinds it reads. And the version rule: an agent of a version the
//! market does not know is refused before anything else, in the reader's language.

use std::time::Duration;

use futures::SinkExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::boxes::link;
use crate::common::*;
use crate::connect::{channel, next_commands, ws_url};

const WIRE_V1: &str = include_str!("../../../src/protocol/wire-v1.txt");

/// The pinned frames of one kind (`agent.heartbeat`, …), parsed.
fn pinned(kind: &str) -> Vec<Value> {
    let found: Vec<Value> = WIRE_V1
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .filter(|(k, _)| *k == kind)
        .map(|(_, json)| serde_json::from_str(json).unwrap())
        .collect();
    assert!(!found.is_empty(), "no {kind} frame");
    found
}

/// `got` carries only what version 1 wrote at the same place, with values of the same kinds
/// (null aside: every optional field of version 1 reads null as absent).
fn within(got: &Value, v1: &Value, at: &str) {
    match (got, v1) {
        (Value::Object(g), Value::Object(p)) => {
            for (k, v) in g {
                let pv = p.get(k).unwrap_or_else(|| panic!("{at}.{k}: a field version 1 does not have"));
                within(v, pv, &format!("{at}.{k}"));
            }
        }
        (Value::Array(g), Value::Array(p)) => {
            if let Some(p0) = p.first() {
                for (i, v) in g.iter().enumerate() {
                    within(v, p0, &format!("{at}[{i}]"));
                }
            }
        }
        (Value::Null, _) | (_, Value::Null) => {}
        (g, p) => assert_eq!(std::mem::discriminant(g), std::mem::discriminant(p), "{at}: {g} where version 1 wrote {p}"),
    }
}

/// A heartbeat's answer (`settings` and `commands`) as version 1 wrote it: its settings field
/// for field, each command like version 1's command of the same kind, and readable by the
/// protocol's types (which read version 1's frames the same: src/protocol/pinned.rs).
fn answered_as_v1(answer: &Value, at: &str) {
    let v1 = &pinned("market.heartbeat")[0];
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&answer["settings"]), keys(&v1["settings"]), "{at}: the settings");
    within(&answer["settings"], &v1["settings"], &format!("{at}.settings"));
    for c in answer["commands"].as_array().unwrap() {
        let same_kind = v1["commands"].as_array().unwrap().iter().find(|p| p["kind"] == c["kind"]).unwrap_or_else(|| panic!("{at}: a kind version 1 does not know: {c}"));
        within(c, same_kind, &format!("{at}.commands[{}]", c["kind"]));
    }
    let typed: zmarket_protocol::heartbeat::HeartbeatResponse = serde_json::from_value(answer.clone()).unwrap();
    for c in &typed.commands {
        c.body().unwrap_or_else(|e| panic!("{at}: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_of_version_1_registers_beats_and_reads_the_answers() {
    let app = TestApp::spawn_with(|c| {
        c.devices.heartbeat_secs = 60;
        c.devices.offline_after_secs = 600;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);

    // Its registration, as its `json!` wrote it; the answer is what it reads, field for field.
    let mut registered = Vec::new();
    for frame in pinned("agent.register") {
        let (s, b) = app.post_json("/api/agent/v1/register", &frame, None).await;
        // (A token on an open market is not asked for: registered all the same.)
        assert_eq!(s, 200, "{b}");
        let v1 = &pinned("market.register")[0];
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&b["data"]), keys(v1));
        within(&b["data"], v1, "register");
        if let Some(proposed) = frame["pairing_code"].as_str() {
            assert_eq!(b["data"]["pairing_code"], proposed, "the code it proposed");
        }
        registered.push(b["data"].clone());
    }
    let field = |k: &str| registered[0][k].as_str().unwrap().to_string();
    let (id, secret) = (&field("device_id"), &field("device_secret"));
    let (s, b) = link(&app, &alice, id, &field("pairing_code")).await;
    assert_eq!(s, 200, "{b}");

    // Its heartbeats: every field it sends is read (reports and acks of what this market does
    // not know are left alone), and the answer is one it reads.
    for frame in pinned("agent.heartbeat") {
        let (s, b) = app.post_json("/api/agent/v1/heartbeat", &frame, Some(secret)).await;
        assert_eq!(s, 200, "{b}");
        answered_as_v1(&b["data"], "heartbeat");
    }
    let (s, d) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), &alice).await;
    assert_eq!(s, 200, "{d}");
    let (sent, last) = (&pinned("agent.heartbeat")[0], &pinned("agent.heartbeat")[1]);
    assert_eq!(d["data"]["status"], "online");
    assert_eq!(d["data"]["spec"]["gpus"][0]["uuid"], sent["spec"]["gpus"][0]["uuid"]);
    assert_eq!(d["data"]["metrics"]["cpu_percent"], last["metrics"]["cpu_percent"]);
    assert_eq!(d["data"]["verification"]["gpus"][0]["d2d_gbps"], sent["verification"]["gpus"][0]["d2d_gbps"]);

    // Commands of this market, in a heartbeat's answer: an app's install and a GPU check.
    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "grafana", "device_id": id}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = app.post_json(&format!("/api/ebs/v2/devices/{id}/verify"), &json!({}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = app.post_json("/api/agent/v1/heartbeat", &pinned("agent.heartbeat")[1], Some(secret)).await;
    assert_eq!(s, 200, "{b}");
    let kinds: Vec<&str> = b["data"]["commands"].as_array().unwrap().iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"app_install") && kinds.contains(&"gpu_verify"), "{kinds:?}");
    answered_as_v1(&b["data"], "heartbeat with commands");

    // Its channel, opened as it opened it: the same answers as frames it reads, and every frame
    // it sends is taken (a beat is answered; stream frames of no stream are left alone).
    let mut ws = channel(&app, secret).await.expect("the channel opens without a version");
    let first = next_commands(&mut ws, Duration::from_secs(5)).await.expect("the answer of the first beat");
    assert_eq!(first["t"], pinned("market.channel")[0]["t"]);
    let mut answer = first.clone();
    answer.as_object_mut().unwrap().remove("t");
    answered_as_v1(&answer, "channel");
    for frame in pinned("agent.channel") {
        ws.send(Message::Text(frame.to_string().into())).await.expect("the channel takes the frame");
        if frame["t"] == "beat" {
            let mut answer = next_commands(&mut ws, Duration::from_secs(5)).await.expect("a beat is answered");
            answer.as_object_mut().unwrap().remove("t");
            answered_as_v1(&answer, "channel beat");
        }
    }
    // Still open: the frames broke nothing.
    ws.send(Message::Text(pinned("agent.channel")[0].to_string().into())).await.unwrap();
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("the channel is still open");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_of_a_version_the_market_does_not_know_is_refused_first() {
    let app = TestApp::spawn().await;
    let register = &pinned("agent.register")[0];
    let now = zmarket_protocol::PROTOCOL_VERSION.to_string();
    let newer = (zmarket_protocol::PROTOCOL_VERSION + 1).to_string();
    let post = |path: &'static str, body: Value, version: String, lang: &'static str| {
        let req = app.client.post(app.url(path)).header("zmarket-protocol", version).header("accept-language", lang).json(&body);
        async move { json_of(req.send().await.unwrap()).await }
    };

    // This market's own version registers, as no version does.
    let (s, b) = post("/api/agent/v1/register", register.clone(), now.clone(), "en").await;
    assert_eq!(s, 200, "{b}");
    let secret = b["data"]["device_secret"].as_str().unwrap().to_string();

    // A newer one is refused, saying which versions each side speaks, in both languages; before
    // its body is read (a body this market could not read either).
    for body in [register.clone(), json!({"type": "Z-BOX", "spec": "a shape of version 2"})] {
        let (s, b) = post("/api/agent/v1/register", body, newer.clone(), "en").await;
        assert_eq!((s, b["error"].as_str()), (400, Some("agent_protocol_unsupported")), "{b}");
        assert_eq!(
            b["msg"],
            format!(
                "This agent speaks version {newer} of the agent protocol, which this market does not know (it speaks versions 1 to {now}): update the market, or install the agent it serves (/install.sh)"
            )
        );
    }
    let (s, b) = post("/api/agent/v1/register", register.clone(), newer.clone(), "zh").await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(b["msg"], format!("该代理使用第 {newer} 版代理协议，本市场不支持（本市场支持第 1 至 {now} 版）：请升级市场，或安装本市场提供的代理（/install.sh）"));
    // Nothing that is a version is one either (printed as sent, at most 16 characters).
    let (s, b) = post("/api/agent/v1/register", register.clone(), "v2-beta".into(), "en").await;
    assert_eq!((s, b["error"].as_str()), (400, Some("agent_protocol_unsupported")), "{b}");
    assert!(b["msg"].as_str().unwrap().contains("version v2-beta of"), "{b}");

    // Its heartbeats and its channel alike, even with a secret the market knows.
    let req = app.client.post(app.url("/api/agent/v1/heartbeat")).bearer_auth(&secret).header("zmarket-protocol", &newer).json(&pinned("agent.heartbeat")[1]);
    let (s, b) = json_of(req.send().await.unwrap()).await;
    assert_eq!((s, b["error"].as_str()), (400, Some("agent_protocol_unsupported")), "{b}");
    let mut req = ws_url(&app, "/api/agent/v1/channel").into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {secret}").parse().unwrap());
    req.headers_mut().insert("zmarket-protocol", newer.parse().unwrap());
    match tokio_tungstenite::connect_async(req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(res)) => {
            assert_eq!(res.status().as_u16(), 400);
            let body: Value = serde_json::from_slice(res.body().as_deref().unwrap_or_default()).unwrap();
            assert_eq!(body["error"], "agent_protocol_unsupported");
        }
        other => panic!("a channel of version {newer} opened: {:?}", other.map(|_| ())),
    }
    // This market's version opens it.
    let mut req = ws_url(&app, "/api/agent/v1/channel").into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {secret}").parse().unwrap());
    req.headers_mut().insert("zmarket-protocol", now.parse().unwrap());
    assert!(tokio_tungstenite::connect_async(req).await.is_ok());
}
