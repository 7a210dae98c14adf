//! Check-then-write under concurrency: run on SQLite and, with TEST_DATABASE_URL, on PostgreSQL
//! (where only the unique keys and the row locks keep the rules).

use futures::future::join_all;
use serde_json::json;

use super::{befriend, call, person, send};
use crate::common::*;

#[tokio::test]
async fn crossing_and_repeated_requests_leave_one_pending() {
    let app = TestApp::spawn().await;
    for round in 0..3 {
        let a = person(&app, &format!("a{round}@example.com")).await;
        let b = person(&app, &format!("b{round}@example.com")).await;
        // Both ask each other, several times, at the same moment.
        let calls = (0..6).map(|i| {
            let (from, to) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
            call(&app, "POST", "/friends/requests", Some(json!({"email": to.email})), &from.token, false)
        });
        let results = join_all(calls).await;
        let ok = results.iter().filter(|(s, _)| *s == 200).count();
        assert_eq!(ok, 1, "exactly one request stands: {results:?}");
        assert!(results.iter().all(|(s, _)| *s == 200 || *s == 409), "{results:?}");
        let (_, l) = call(&app, "GET", "/friends/requests", None, &a.token, false).await;
        assert_eq!(l["data"]["total"], 1);
    }
}

#[tokio::test]
async fn accept_racing_decline_has_one_winner() {
    let app = TestApp::spawn().await;
    for round in 0..3 {
        let a = person(&app, &format!("a{round}@example.com")).await;
        let b = person(&app, &format!("b{round}@example.com")).await;
        let (_, r) = call(&app, "POST", "/friends/requests", Some(json!({"email": b.email})), &a.token, false).await;
        let id = r["data"]["id"].as_str().unwrap().to_string();
        let cancel = format!("/friends/requests/{id}");
        let paths = [format!("/friends/requests/{id}/accept"), format!("/friends/requests/{id}/decline"), format!("/friends/requests/{id}/accept")];
        let mut calls: Vec<_> = paths.iter().map(|p| call(&app, "POST", p, None, &b.token, false)).collect();
        calls.push(call(&app, "DELETE", &cancel, None, &a.token, false));
        let results = join_all(calls).await;
        let winners: Vec<_> = results.iter().filter(|(s, _)| *s == 200).collect();
        assert_eq!(winners.len(), 1, "{results:?}");
        assert!(results.iter().all(|(s, _)| *s == 200 || *s == 409), "{results:?}");
        let status = winners[0].1["data"]["status"].as_str().unwrap();
        let (_, f) = call(&app, "GET", "/friends", None, &a.token, false).await;
        let (_, g) = call(&app, "GET", "/friends", None, &b.token, false).await;
        let friends = if status == "accepted" { 1 } else { 0 };
        assert_eq!((f["data"]["total"].as_u64(), g["data"]["total"].as_u64()), (Some(friends), Some(friends)), "{status}");
    }
}

#[tokio::test]
async fn concurrent_messages_keep_every_event_once_and_in_order() {
    let app = TestApp::spawn().await;
    let (a, b) = (person(&app, "ann@example.com").await, person(&app, "ben@example.com").await);
    befriend(&app, &a, &b).await;
    let mut stream = super::events::Stream::open(&app, &b.token, None).await;
    let start: i64 = stream.next().await.data["last"].as_i64().unwrap();
    // Both write at once, both ways.
    let bodies: Vec<String> = (0..8).map(|i| format!("message {i}")).collect();
    let mut calls = Vec::new();
    for body in &bodies {
        calls.push(send(&app, &a, &b, body));
        calls.push(send(&app, &b, &a, body));
    }
    join_all(calls).await;
    let mut ids = Vec::new();
    for _ in 0..16 {
        let e = stream.next().await;
        assert_eq!(e.event, "message");
        ids.push(e.id.unwrap().parse::<i64>().unwrap());
    }
    assert_eq!(ids, ((start + 1)..=(start + 16)).collect::<Vec<_>>(), "one sequence, no gap, no repeat");
    let (_, h) = call(&app, "GET", &format!("/conversations/{}/messages?limit=100", a.id), None, &b.token, false).await;
    assert_eq!(h["data"]["total"], 16);
    let (_, c) = call(&app, "GET", "/conversations", None, &b.token, false).await;
    assert_eq!(c["data"]["items"][0]["unread"], 8);
    assert_eq!(c["data"]["items"][0]["last_message"]["id"], h["data"]["items"][0]["id"], "the conversation shows the newest message");
}

#[tokio::test]
async fn tags_made_at_once_stay_unique() {
    let app = TestApp::spawn().await;
    let a = person(&app, "ann@example.com").await;
    let results = join_all((0..6).map(|_| call(&app, "POST", "/tags", Some(json!({"name": "same"})), &a.token, false))).await;
    assert_eq!(results.iter().filter(|(s, _)| *s == 200).count(), 1, "{results:?}");
    let (_, t) = call(&app, "GET", "/tags", None, &a.token, false).await;
    assert_eq!(t["data"]["total"], 1);
}
