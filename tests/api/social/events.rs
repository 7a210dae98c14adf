//! The live stream (`GET /api/cim/v1/events`): events as they are committed, replay after
//! `Last-Event-ID`, `resync` when the log no longer has what was missed, notifications of other
//! domains, the limits, and (on PostgreSQL) an event written on one instance reaching a client
//! of another.

use std::time::Duration;

use serde_json::{Value, json};

use super::{CIM, befriend, call, person, send};
use crate::common::*;

pub(crate) struct Event {
    pub id: Option<String>,
    pub event: String,
    pub data: Value,
}

/// A Server-Sent Events client over a real connection.
pub(crate) struct Stream {
    res: reqwest::Response,
    buf: String,
}

impl Stream {
    pub(crate) async fn open(app: &TestApp, token: &str, last_event_id: Option<&str>) -> Stream {
        let mut req = app.client.get(app.url(&format!("{CIM}/events"))).bearer_auth(token);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let res = req.send().await.expect("stream");
        assert_eq!(res.status(), 200);
        assert!(header(res.headers(), "content-type").starts_with("text/event-stream"));
        Stream { res, buf: String::new() }
    }

    /// The next event (keep-alive comments skipped); panics after 15 s without one.
    pub(crate) async fn next(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(15), self.read()).await.expect("an event within 15 s")
    }

    /// True when no event arrives within `wait`.
    pub(crate) async fn quiet(&mut self, wait: Duration) -> bool {
        tokio::time::timeout(wait, self.read()).await.is_err()
    }

    async fn read(&mut self) -> Event {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, String::from("message"), String::new());
                for line in block.lines() {
                    match line.split_once(':') {
                        Some(("id", v)) => id = Some(v.trim_start().to_string()),
                        Some(("event", v)) => event = v.trim_start().to_string(),
                        Some(("data", v)) => data.push_str(v.trim_start()),
                        _ => {}
                    }
                }
                if data.is_empty() {
                    continue; // a comment (keep-alive) or a retry hint alone
                }
                return Event { id, event, data: serde_json::from_str(&data).expect("JSON data") };
            }
            let chunk = self.res.chunk().await.expect("stream readable").expect("stream still open");
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

#[tokio::test]
async fn events_arrive_live_and_replay_after_a_reconnect() {
    let app = TestApp::spawn().await;
    let (a, b) = (person(&app, "ann@example.com").await, person(&app, "ben@example.com").await);
    let mut sa = Stream::open(&app, &a.token, None).await;
    let ready = sa.next().await;
    assert_eq!((ready.event.as_str(), ready.id.as_deref()), ("ready", Some("0")));
    assert_eq!(ready.data, json!({"last": 0, "resumed": false}));
    let mut sb = Stream::open(&app, &b.token, None).await;
    assert_eq!(sb.next().await.event, "ready");

    // A request reaches both sides, each with the next id of their own sequence.
    let (_, r) = call(&app, "POST", "/friends/requests", Some(json!({"email": b.email})), &a.token, false).await;
    let id = r["data"]["id"].as_str().unwrap().to_string();
    let e = sa.next().await;
    assert_eq!((e.event.as_str(), e.id.as_deref(), e.data["direction"].as_str()), ("friend_request", Some("1"), Some("outgoing")));
    let e = sb.next().await;
    assert_eq!((e.event.as_str(), e.id.as_deref(), e.data["direction"].as_str()), ("friend_request", Some("1"), Some("incoming")));
    assert_eq!(e.data["id"], id.as_str());

    call(&app, "POST", &format!("/friends/requests/{id}/accept"), None, &b.token, false).await;
    let e = sa.next().await;
    assert_eq!((e.event.as_str(), e.data["status"].as_str()), ("friend_request", Some("accepted")));
    let e = sa.next().await;
    assert_eq!((e.event.as_str(), e.id.as_deref()), ("friend", Some("3")));
    assert_eq!(e.data, json!({"user_id": b.id, "change": "added"}));
    for expected in ["friend_request", "friend"] {
        assert_eq!(sb.next().await.event, expected);
    }

    // Messages: to the recipient and to the sender's own tabs.
    let m = send(&app, &a, &b, "hi Ben").await;
    let e = sb.next().await;
    assert_eq!((e.event.as_str(), e.data["id"].as_str(), e.data["body"].as_str()), ("message", m["id"].as_str(), Some("hi Ben")));
    let last_seen = e.id.clone().unwrap();
    assert_eq!(sa.next().await.data["id"], m["id"]);

    // Ben's connection drops; what Ann sends meanwhile is replayed, in order, after his last id.
    drop(sb);
    let m1 = send(&app, &a, &b, "are you there?").await;
    let m2 = send(&app, &a, &b, "hello?").await;
    let mut sb = Stream::open(&app, &b.token, Some(&last_seen)).await;
    let ready = sb.next().await;
    assert_eq!((ready.event.as_str(), ready.id.as_deref()), ("ready", None));
    assert_eq!(ready.data["resumed"], true);
    let n: i64 = last_seen.parse().unwrap();
    for (k, m) in [m1, m2].iter().enumerate() {
        let e = sb.next().await;
        assert_eq!((e.event.as_str(), e.data["id"].as_str()), ("message", m["id"].as_str()));
        assert_eq!(e.id, Some((n + 1 + k as i64).to_string()));
    }
    assert!(sb.quiet(Duration::from_millis(300)).await, "nothing twice");

    // Reading tells both; the reader's other tabs clear their badge.
    call(&app, "PUT", &format!("/conversations/{}/read", a.id), None, &b.token, false).await;
    let e = sb.next().await;
    assert_eq!((e.event.as_str(), e.data.clone()), ("read", json!({"reader_id": b.id, "peer_id": a.id})));
    for expected in ["message", "message", "read"] {
        assert_eq!(sa.next().await.event, expected);
    }

    // An id the log never gave, or one whose followers were pruned: resync.
    let mut s = Stream::open(&app, &b.token, Some("999")).await;
    let e = s.next().await;
    assert_eq!(e.event, "resync");
    let last: i64 = e.data["last"].as_i64().unwrap();
    assert_eq!(e.id, Some(last.to_string()));
    let pruned = zmarket::events::prune(&app.state.db, 2, 30).await.unwrap();
    assert!(pruned > 0);
    let e = Stream::open(&app, &b.token, Some("1")).await.next().await;
    assert_eq!(e.event, "resync", "events 2.. are gone");
    let e = Stream::open(&app, &b.token, Some(&(last - 1).to_string())).await.next().await;
    assert_eq!((e.event.as_str(), e.data["resumed"].as_bool()), ("ready", Some(true)), "the newest two are kept");
}

#[tokio::test]
async fn notifications_of_other_domains_become_events() {
    let app = TestApp::spawn_with(|c| {
        c.devices.offline_after_secs = 2;
        c.devices.heartbeat_secs = 1;
        c.social.poll_ms = 50;
    })
    .await;
    let a = person(&app, "ann@example.com").await;
    let mut s = Stream::open(&app, &a.token, None).await;
    assert_eq!(s.next().await.event, "ready");
    let (device, _) = crate::devices::bound_device(&app, &a.token, "Z-BOX", crate::devices::spec(4)).await;
    let e = s.next().await;
    assert_eq!(e.event, "notification");
    assert_eq!(e.data["kind"], "device_offline", "{}", e.data);
    let (_, l) = app.get_auth("/api/ebs/v1/notifications", &a.token).await;
    assert_eq!(l["data"]["items"][0]["id"], e.data["id"]);
    assert!(l["data"]["items"][0]["body"].as_str().unwrap().contains(&device));
}

#[tokio::test]
async fn stream_limits_and_sign_in() {
    let app = TestApp::spawn_with(|c| c.social.streams_per_user = 2).await;
    let a = person(&app, "ann@example.com").await;
    let res = app.client.get(app.url(&format!("{CIM}/events"))).send().await.unwrap();
    assert_eq!(res.status(), 401);
    let _s1 = Stream::open(&app, &a.token, None).await;
    let s2 = Stream::open(&app, &a.token, None).await;
    let (status, b) = json_of(app.client.get(app.url(&format!("{CIM}/events"))).bearer_auth(&a.token).send().await.unwrap()).await;
    assert_eq!((status, b["code"].as_u64()), (429, Some(429)));
    drop(s2);
    // The dropped stream's place is given back once the server notices the closed connection.
    let mut freed = false;
    for _ in 0..100 {
        let res = app.client.get(app.url(&format!("{CIM}/events"))).bearer_auth(&a.token).send().await.unwrap();
        if res.status() == 200 {
            freed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(freed);
}

/// Two servers on one PostgreSQL database: Ben listens on the second, Ann writes on the first.
#[tokio::test]
async fn an_event_crosses_instances_on_postgres() {
    if std::env::var("TEST_DATABASE_URL").is_err() {
        eprintln!("skipped: needs TEST_DATABASE_URL (PostgreSQL)");
        return;
    }
    let secret = "s".repeat(40);
    let one = TestApp::spawn_with(|c| c.auth.jwt_secret = secret.clone()).await;
    let url = one.state.config.database.url.clone();
    let two = TestApp::spawn_with(|c| {
        c.auth.jwt_secret = secret.clone();
        c.database.url = url;
        c.social.poll_ms = 60_000; // nothing but LISTEN/NOTIFY can tell it in time
    })
    .await;
    let a = person(&one, "ann@example.com").await;
    let b = person(&one, "ben@example.com").await;
    befriend(&one, &a, &b).await;
    let mut on_two = Stream::open(&two, &b.token, None).await;
    let ready = on_two.next().await;
    let m = send(&one, &a, &b, "across").await;
    let e = on_two.next().await;
    assert_eq!((e.event.as_str(), e.data["id"].as_str(), e.data["body"].as_str()), ("message", m["id"].as_str(), Some("across")));
    assert_eq!(e.id, Some((ready.data["last"].as_i64().unwrap() + 1).to_string()));
    // And back: Ben reads on the second, Ann hears it on the first.
    let mut on_one = Stream::open(&one, &a.token, None).await;
    on_one.next().await;
    let (s, _) = call(&two, "PUT", &format!("/conversations/{}/read", a.id), None, &b.token, false).await;
    assert_eq!(s, 200);
    assert_eq!(on_one.next().await.event, "read");
}
