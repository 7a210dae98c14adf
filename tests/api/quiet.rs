//! Issue 42, items 1 and 2: what an agent channel costs the market. Quiet beats (a beat that
//! changes nothing but presence and figures) write nothing at once and the box stays online;
//! their presence and figures reach the row in the instance's batched flush; channels that beat
//! far faster than told, or never beat, are cut; a storm of channels is refused beyond the rate.
//! Every test here runs on SQLite and, with TEST_DATABASE_URL, on PostgreSQL.

use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use sea_orm::EntityTrait;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use zmarket::db::entity::devices;

use crate::boxes::{GIB, bound_device};
use crate::common::*;
use crate::connect::{Ws, box_spec, channel, device_status, next_commands};

async fn send_beat(ws: &mut Ws, spec: &Value, cpu: f64) {
    let beat = json!({"t": "beat", "spec": spec, "metrics": {"cpu_percent": cpu, "memory_used_bytes": GIB, "disk_used_bytes": GIB}, "installations": [], "acks": []});
    ws.send(Message::Text(beat.to_string().into())).await.expect("the channel is open");
}

/// Whether the market ended the socket within `wait` (frames before the end are skipped).
async fn ended(ws: &mut Ws, wait: Duration) -> bool {
    tokio::time::timeout(wait, async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            }
        }
    })
    .await
    .is_ok()
}

async fn row(app: &TestApp, id: &str) -> devices::Model {
    devices::Entity::find_by_id(id.to_string()).one(&app.state.db).await.unwrap().expect("the device's row")
}

/// Beats that change nothing leave the device's row as it was (no write at all while the flush
/// has not come), each is answered, and the box stays online; a beat with a new spec is written
/// at once. Then, on a market whose flush comes every 200 ms, the quiet beats' time and figures
/// reach the row, and `updated_at` (what a person's change moves) stays as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beats_that_change_nothing_leave_the_row_unwritten_and_the_box_online() {
    let app = TestApp::spawn_with(|c| {
        c.devices.heartbeat_secs = 60;
        c.devices.offline_after_secs = 3600;
        c.connect.presence_flush_ms = 3_600_000;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec()).await;
    let mut ws = channel(&app, &secret).await.expect("the channel opens");
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("the answer of the channel's first beat");
    // A beat with the box's figures and the spec it registered: quiet already.
    send_beat(&mut ws, &box_spec(), 10.0).await;
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("answered");
    let before = row(&app, &dev).await;
    assert_eq!(before.status, zmarket::db::enums::DeviceStatus::Online);
    let mut answers = Vec::new();
    for cpu in [20.0, 30.0, 40.0] {
        send_beat(&mut ws, &box_spec(), cpu).await;
        answers.push(next_commands(&mut ws, Duration::from_secs(5)).await.expect("a quiet beat is answered"));
    }
    assert!(answers.iter().all(|a| a["settings"]["bound"] == true && a["commands"] == json!([])), "{answers:?}");
    assert_eq!(answers[0], answers[2], "the same answer while nothing changes");
    let after = row(&app, &dev).await;
    assert_eq!(after, before, "quiet beats wrote nothing");
    assert_eq!(device_status(&app, &alice, &dev).await, "online");
    // A new spec is no quiet beat: written now.
    let bigger = json!({"cpu_cores": 16, "memory_bytes": 64 * GIB, "disk_bytes": 2048 * GIB, "gpus": []});
    send_beat(&mut ws, &bigger, 50.0).await;
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("answered");
    let changed = row(&app, &dev).await;
    assert_eq!(changed.cpu_cores, 16);
    assert_eq!(changed.cpu_percent, Some(50.0));
    assert!(changed.last_seen_at > before.last_seen_at);

    // The flush writes what the quiet beats left, and nothing else.
    let app = TestApp::spawn_with(|c| {
        c.devices.heartbeat_secs = 60;
        c.devices.offline_after_secs = 3600;
        c.connect.presence_flush_ms = 200;
    })
    .await;
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let (dev, secret) = bound_device(&app, &bob, "Z-BOX", box_spec()).await;
    let mut ws = channel(&app, &secret).await.expect("the channel opens");
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("the first answer");
    send_beat(&mut ws, &box_spec(), 10.0).await;
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("answered");
    let before = row(&app, &dev).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    send_beat(&mut ws, &box_spec(), 77.0).await;
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("answered");
    let t0 = Instant::now();
    let flushed = loop {
        let r = row(&app, &dev).await;
        if r.cpu_percent == Some(77.0) {
            break r;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "the quiet beat's figures never reached the row");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(flushed.last_seen_at > before.last_seen_at, "the quiet beat's time is written");
    assert_eq!(flushed.updated_at, before.updated_at, "a quiet beat is no change of the box");
    assert_eq!(flushed.status, zmarket::db::enums::DeviceStatus::Online);
    assert_eq!(flushed.presence, before.presence);
}

/// A box beating a hundred times faster than told (here: back to back, told every 60 s) is cut;
/// one beating every 0.9 s (an agent while an app operation moves on) is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_beating_far_faster_than_told_is_cut() {
    let app = TestApp::spawn_with(|c| {
        c.devices.heartbeat_secs = 60;
        c.devices.offline_after_secs = 3600;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (calm_dev, calm) = bound_device(&app, &alice, "Z-BOX", box_spec()).await;
    let (_, hasty) = bound_device(&app, &alice, "Z-BOX", box_spec()).await;
    let mut calm_ws = channel(&app, &calm).await.expect("the channel opens");
    next_commands(&mut calm_ws, Duration::from_secs(5)).await.expect("the first answer");
    let mut ws = channel(&app, &hasty).await.expect("the channel opens");
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("the first answer");
    let mut sent = 0;
    while sent < 200 {
        let beat = json!({"t": "beat", "spec": box_spec()});
        if ws.send(Message::Text(beat.to_string().into())).await.is_err() {
            break;
        }
        sent += 1;
    }
    assert!(ended(&mut ws, Duration::from_secs(10)).await, "the hasty box's channel is cut");
    for i in 0..4 {
        tokio::time::sleep(Duration::from_millis(900)).await;
        send_beat(&mut calm_ws, &box_spec(), i as f64).await;
        next_commands(&mut calm_ws, Duration::from_secs(5)).await.expect("the calm box's beats are answered");
    }
    assert_eq!(device_status(&app, &alice, &calm_dev).await, "online");
}

/// A channel that never beats is cut once `offline_after_secs` passed (it does not hold its box
/// online, so it holds nothing of the market's either).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_that_never_beats_is_cut() {
    let app = TestApp::spawn_with(|c| {
        c.devices.heartbeat_secs = 1;
        c.devices.offline_after_secs = 2;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (_, secret) = bound_device(&app, &alice, "Z-BOX", box_spec()).await;
    let mut ws = channel(&app, &secret).await.expect("the channel opens");
    let t0 = Instant::now();
    assert!(ended(&mut ws, Duration::from_secs(15)).await, "a silent channel is cut");
    assert!(t0.elapsed() >= Duration::from_millis(1500), "not before offline_after_secs: {:?}", t0.elapsed());
}

/// Beyond `[connect] channel_opens_per_sec` a channel is refused with 429, a localized message
/// and `Retry-After`, before the box is looked up; the open one is untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channels_beyond_the_open_rate_are_refused_with_retry_after() {
    let app = TestApp::spawn_with(|c| {
        c.connect.channel_opens_per_sec = 1;
        c.devices.heartbeat_secs = 60;
        c.devices.offline_after_secs = 3600;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (_, one) = bound_device(&app, &alice, "Z-BOX", box_spec()).await;
    let (_, two) = bound_device(&app, &alice, "Z-BOX", box_spec()).await;
    let mut ws = channel(&app, &one).await.expect("the first channel opens");
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("the first answer");
    let refused = channel(&app, &two).await.err().expect("the second, at once, is refused");
    assert_eq!(refused, (429, "2".to_string()));
    let res = app.client.get(app.url("/api/agent/v1/channel")).header("accept-language", "zh-CN").send().await.unwrap();
    let (s, b) = json_of(res).await;
    assert!(s == 429 || s == 401, "{s} {b}");
    if s == 429 {
        assert!(b["msg"].as_str().is_some_and(|m| m.chars().any(|c| c > '\u{2e80}')), "a Chinese message: {b}");
    }
    send_beat(&mut ws, &box_spec(), 1.0).await;
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("the open channel still answers");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    channel(&app, &two).await.expect("a second later, it opens");
}
