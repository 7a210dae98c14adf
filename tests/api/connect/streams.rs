//! Connect: open streams end with the right to them, trigger by trigger. An open terminal, and an
//! app's WebSocket (on the app's own origin, or through the API door with a key), end once the
//! right that opened them is gone: the rental ended, the session signed out, the password changed,
//! the key revoked, the person suspended, the member unassigned or removed. Before, an app's
//! WebSocket was never watched: it stayed open.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::played::{ended, entered, play_agent, played_app, terminal};
use crate::common::*;

/// What the played box's app answers an upgrade with; then it echoes what comes.
const UPGRADED: &[u8] = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";

/// A WebSocket to the app by hand (`path` with `headers`): the upgrade, then raw bytes both ways.
/// Returned once the box echoed a first message.
async fn app_socket(app: &TestApp, path: &str, headers: &[(&str, String)]) -> TcpStream {
    let mut s = TcpStream::connect(app.base.trim_start_matches("http://")).await.unwrap();
    let mut head = format!(
        "GET {path} HTTP/1.1\r\nconnection: upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf)).await.expect("an answer").unwrap();
        assert!(n > 0, "closed before answering: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    assert!(got.starts_with(b"HTTP/1.1 101"), "{}", String::from_utf8_lossy(&got));
    s.write_all(b"ping").await.unwrap();
    let mut echo = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(10), s.read_exact(&mut echo)).await.expect("an echo").unwrap();
    assert_eq!(&echo, b"ping");
    s
}

/// The app's WebSocket ends (the market closes it). A guard fails the test after 30 s instead of
/// hanging (the watcher looks once a second).
async fn closes(s: &mut TcpStream) {
    let mut buf = [0u8; 256];
    let end = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    end.expect("the app's WebSocket is closed once its right is gone");
}

/// On the app's origin with the cookie `token`'s session got there.
async fn on_origin(app: &TestApp, token: &str, id: &str) -> TcpStream {
    let (host, set) = entered(app, token, id).await;
    let cookie = set.split(';').next().unwrap().to_string();
    app_socket(app, "/socket", &[("host", host), ("cookie", cookie)]).await
}

/// Through the API door (`…/apps/{id}/api/…`) with `credential` (an API key or a token).
async fn through_door(app: &TestApp, credential: &str, id: &str) -> TcpStream {
    let host = app.base.trim_start_matches("http://").to_string();
    app_socket(app, &format!("/api/rmp/v1/apps/{id}/api/socket"), &[("host", host), ("authorization", format!("Bearer {credential}"))]).await
}

/// A renter's open terminal ends when the rental does (the renter uninstalls), and another one
/// when its session is signed out; the reason says so in the reader's language (before: both
/// kept working, only new requests were refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_terminal_ends_with_the_rental_and_with_the_session() {
    let app = TestApp::spawn().await;
    let (alice, id, _) = played_app(&app, Arc::new(|_, _| Vec::new()), b"").await;
    // Signed out: the terminal of that session closes.
    let other = token_of(&app.login("alice@example.com", PASSWORD).await);
    let mut ws = terminal(&app, &other, &id).await;
    let (s, b) = app.post_json("/api/iam/v1/logout", &json!({}), Some(&other)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(ended(&mut ws).await, (4403, "你对此的访问权限已结束".to_string()));
    // The rental ends: the renter's terminal closes.
    let mut ws = terminal(&app, &alice, &id).await;
    let (s, b) = crate::boxes::act(&app, &alice, &id, "uninstall").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(ended(&mut ws).await.0, 4403);
}

/// A renter's streams, trigger by trigger: signing out ends the app WebSocket of that session; a
/// revoked key ends its terminal and its WebSocket through the API door; a password change ends
/// the streams of the other sessions; a suspension ends the person's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renters_app_websocket_and_terminal_end_with_each_right() {
    let app = TestApp::spawn().await;
    let (alice, id, _) = played_app(&app, Arc::new(|_, _| Vec::new()), UPGRADED).await;

    // Signed out: that session's app WebSocket closes; another session's stays.
    let other = token_of(&app.login("alice@example.com", PASSWORD).await);
    let mut gone = on_origin(&app, &other, &id).await;
    let mut kept = on_origin(&app, &alice, &id).await;
    let (s, b) = app.post_json("/api/iam/v1/logout", &json!({}), Some(&other)).await;
    assert_eq!(s, 200, "{b}");
    closes(&mut gone).await;
    kept.write_all(b"pong").await.unwrap();
    let mut echo = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(10), kept.read_exact(&mut echo)).await.expect("still open").unwrap();
    assert_eq!(&echo, b"pong");

    // A key revoked: its terminal and its WebSocket through the API door close.
    let (s, b) = app.post_json("/api/iam/v1/api-keys", &json!({"name": "script"}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let (key, key_id) = (b["data"]["key"].as_str().unwrap().to_string(), b["data"]["id"].as_str().unwrap().to_string());
    let mut shell = terminal(&app, &key, &id).await;
    let mut door = through_door(&app, &key, &id).await;
    let (s, b) = app.delete_json(&format!("/api/iam/v1/api-keys/{key_id}"), &json!({}), &alice).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(ended(&mut shell).await, (4403, "你对此的访问权限已结束".to_string()));
    closes(&mut door).await;

    // The password changed (from `alice`'s session): the other sessions' streams close.
    let third = token_of(&app.login("alice@example.com", PASSWORD).await);
    let mut shell = terminal(&app, &third, &id).await;
    let mut socket = on_origin(&app, &third, &id).await;
    let mut door = through_door(&app, &third, &id).await;
    let change = json!({"old_password": PASSWORD, "new_password": "Another-pass-1", "confirm_password": "Another-pass-1"});
    let (s, b) = app.put_json("/api/iam/v1/account/password", &change, &alice).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(ended(&mut shell).await.0, 4403);
    closes(&mut socket).await;
    closes(&mut door).await;

    // Suspended by an operator: the person's own streams close too.
    let mut shell = terminal(&app, &alice, &id).await;
    let op = app.signed_in("op@example.com").await;
    crate::ops::make_operator(&app, "op@example.com");
    let (_, profile) = app.get_auth("/api/iam/v1/account/profile", &alice).await;
    let alice_id = profile["data"]["id"].as_str().unwrap().to_string();
    let (s, b) = app.post_json(&format!("/api/ops/v1/users/{alice_id}/suspend"), &json!({"reason": "chargeback"}), Some(&token_of(&op))).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(ended(&mut shell).await.0, 4403);
    closes(&mut kept).await;
}

/// A member's streams to an app the company assigned them: unassigned, both close; assigned again
/// and then removed from the company, both close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_streams_end_when_unassigned_and_when_removed() {
    let app = TestApp::spawn().await;
    let boss_s = app.signed_in("boss@example.com").await;
    let mia_s = app.signed_in("mia@example.com").await;
    let company = seed_company(&app, "Acme Labs", &boss_s, &[(&mia_s, "member")]).await;
    let boss = token_of(&app.switch(&boss_s, &company).await);
    let mia = token_of(&app.switch(&mia_s, &company).await);
    let mia_id = user_id_of(&app, &mia_s).await;
    let (dev, secret) = crate::boxes::bound_device(&app, &boss, "Z-BOX", crate::boxes::box_spec(8, 0)).await;
    let id = crate::apps::installed_running(&app, &boss, &secret, "grafana", &dev).await;
    let ch = super::channel(&app, &secret).await.expect("the box's channel opens");
    let (tx, _seen) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(play_agent(ch, Arc::new(|_, _| Vec::new()), UPGRADED.to_vec(), tx));
    let assignment = json!({"user_id": mia_id, "resource_type": "app", "resource_id": "grafana"});

    for removed in [false, true] {
        let (s, b) = app.post_json("/api/ebs/v1/sme/resources/assign", &assignment, Some(&boss)).await;
        assert_eq!(s, 200, "{b}");
        let mut shell = terminal(&app, &mia, &id).await;
        let mut socket = on_origin(&app, &mia, &id).await;
        let (s, b) = if removed {
            app.post_json("/api/iam/v1/sme/remove-member", &json!({"user_id": mia_id}), Some(&boss)).await
        } else {
            app.post_json("/api/ebs/v1/sme/resources/unassign", &assignment, Some(&boss)).await
        };
        assert_eq!(s, 200, "{b}");
        assert_eq!(ended(&mut shell).await.0, 4403, "removed: {removed}");
        closes(&mut socket).await;
    }
}
