//! Connect: the doors to a rented app hold against a hostile box and a neighbour. The log tail is
//! the market's (never longer than asked, at most 1 MiB); the API door strips the market's
//! credentials and sandboxes the answer; an app's origin keeps its `__Host-` cookie and refuses a
//! neighbour's writes and WebSockets; `zmarket tunnel` says a refusal in sentences.

use std::sync::Arc;

use super::played::{LogsOf, entered, log_line, on_app, played_app};
use crate::common::*;

/// A hostile box answers `?tail=10` with 100,000 lines, and `?tail=1000` with 12 MB of long
/// lines: the market answers the last 10 lines, and at most 1 MiB of text (before: every line,
/// up to 8 MiB an answer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_box_cannot_make_the_log_tail_longer_than_asked() {
    let app = TestApp::spawn().await;
    let logs: LogsOf = Arc::new(|tail, follow| match (tail, follow) {
        (10, false) => (0..100_000).map(|i| log_line("2026-01-01T00:00:00Z", &format!("line {i}"))).collect(),
        (1000, false) => (0..200).map(|i| log_line("2026-01-01T00:00:00Z", &format!("{i:05}{}", "x".repeat(60_000)))).collect(),
        (5, true) => {
            let mut v: Vec<String> = (0..10_000).map(|i| log_line("2026-01-01T00:00:00Z", &format!("old {i}"))).collect();
            v.extend((0..3).map(|i| log_line("2026-01-01T00:00:01Z", &format!("new {i}"))));
            v
        }
        _ => Vec::new(),
    });
    let (alice, id, _) = played_app(&app, logs, b"").await;
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/logs?tail=10"), &alice).await;
    assert_eq!(s, 200, "{b}");
    let lines = b["data"]["lines"].as_array().unwrap();
    let texts: Vec<&str> = lines.iter().map(|l| l["text"].as_str().unwrap()).collect();
    assert_eq!(texts, (99_990..100_000).map(|i| format!("line {i}")).collect::<Vec<_>>());

    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/logs?tail=1000"), &alice).await;
    assert_eq!(s, 200, "{b}");
    let lines = b["data"]["lines"].as_array().unwrap();
    let bytes: usize = lines.iter().map(|l| l["text"].as_str().unwrap().len()).sum();
    eprintln!("tail=1000 of 12 MB: {} lines, {bytes} bytes of text", lines.len());
    assert!(!lines.is_empty() && bytes <= 1024 * 1024, "{} lines, {bytes} bytes", lines.len());

    // Followed: the 5 lines of the past asked for, then only what is new.
    let res = app.client.get(app.url(&format!("/api/rmp/v1/apps/{id}/logs?tail=5&follow=1"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let body = res.text().await.unwrap();
    let got: Vec<String> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_string))
        .collect();
    assert_eq!(got, ["old 0", "old 1", "old 2", "old 3", "old 4", "new 0", "new 1", "new 2"], "{}", &body[..body.len().min(600)]);
}

/// Through the API door the box sees none of the market's credentials (the token as a
/// `zmarket.bearer.*` subprotocol, the market's cookies), and the app's answer sets no cookie
/// on the market's origin and is never rendered as the market's page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_door_strips_the_markets_credentials_and_sandboxes_the_answer() {
    let app = TestApp::spawn().await;
    let page = "<script>fetch('/api/iam/v1/me')</script>";
    let reply = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nSet-Cookie: stolen=1; Path=/\r\nSet-Cookie: other=2\r\nContent-Length: {}\r\n\r\n{page}",
        page.len()
    );
    let (alice, id, mut seen) = played_app(&app, Arc::new(|_, _| Vec::new()), reply.as_bytes()).await;
    // The token travels as a subprotocol only (as a browser's WebSocket sends it).
    let res = app
        .client
        .get(app.url(&format!("/api/rmp/v1/apps/{id}/api/hello?x=1")))
        .header("sec-websocket-protocol", format!("chat, zmarket.bearer.{alice}"))
        .header("cookie", "zm_lang=zh; session=abc")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let h = res.headers().clone();
    let request = seen.recv().await.expect("the app saw the request");
    eprintln!("the app saw:\n{request}");
    assert!(request.starts_with("GET /hello?x=1 "), "{request}");
    assert!(!request.contains(&alice) && !request.to_ascii_lowercase().contains("zmarket.bearer"), "{request}");
    assert!(!request.to_ascii_lowercase().contains("\ncookie:"), "{request}");
    assert!(request.to_ascii_lowercase().contains("sec-websocket-protocol: chat"), "{request}");
    assert!(h.get_all("set-cookie").iter().next().is_none(), "{h:?}");
    let csp: Vec<&str> = h.get_all("content-security-policy").iter().filter_map(|v| v.to_str().ok()).collect();
    assert!(csp.contains(&"sandbox"), "{h:?}");
    assert_eq!(header(&h, "content-disposition"), "attachment");
    assert_eq!(res.text().await.unwrap(), page);
}

/// The app's cookie is `__Host-zm_app` (Secure on the loopback, host-only, `Path=/`): no
/// neighbour can set or shadow it. The app receives only the cookies it set itself (kept as
/// `__Host-app_*` in the browser, renamed back), so a neighbour's parent-domain cookies, a
/// shadowing `zm_app` and a 600 KB cookie bomb never reach it and never make the origin answer
/// 431. A neighbour's page can neither post to the app nor open its WebSocket (403, en and zh);
/// the app's own page can. Before: `zm_app` without Secure, every cookie passed, 431.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_origin_keeps_its_cookie_and_refuses_its_neighbours() {
    let app = TestApp::spawn().await;
    let reply = "HTTP/1.1 200 OK\r\nSet-Cookie: sid=app1; Domain=localhost; Path=/x; HttpOnly\r\nSet-Cookie: __Host-zm_app=evil; Path=/; Secure\r\nContent-Length: 2\r\n\r\nok";
    let (alice, id, mut seen) = played_app(&app, Arc::new(|_, _| Vec::new()), reply.as_bytes()).await;
    let (host, set) = entered(&app, &alice, &id).await;
    let own = format!("http://{host}");
    assert!(set.starts_with("__Host-zm_app=") && set.contains("; Secure") && set.contains("Path=/;") && set.contains("HttpOnly"), "{set}");
    assert!(!set.to_ascii_lowercase().contains("domain="), "{set}");
    let cookie = set.split(';').next().unwrap().to_string();

    // With a neighbour's cookies, a shadowing zm_app and a bomb beside it: the app sees only its own.
    let bomb = (0..150).map(|i| format!("bomb{i}={}", "x".repeat(4000))).collect::<Vec<_>>().join("; ");
    let jar = format!("zm_app=shadow; theme=neighbour; {cookie}; __Host-app_sid=mine; {bomb}");
    let (status, h, text) = on_app(&app, reqwest::Method::GET, &host, "/", &[("cookie", jar)]).await;
    assert_eq!((status, text.as_str()), (200, "ok"));
    let request = seen.recv().await.expect("the app saw the request").to_ascii_lowercase();
    assert!(request.contains("\r\ncookie: sid=mine\r\n"), "{}", &request[..request.len().min(800)]);
    assert!(!request.contains("neighbour") && !request.contains("shadow") && !request.contains("bomb") && !request.contains("zm_app"), "{}", &request[..request.len().min(800)]);
    // What the app sets stays on its origin, under its own protected name; never the market's.
    let sets: Vec<&str> = h.get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).collect();
    assert_eq!(sets, ["__Host-app_sid=app1; Path=/; Secure; HttpOnly"]);

    // A neighbour's page: no post, no WebSocket, in the reader's language.
    let neighbour = format!("http://{}.localhost:{}", "ab".repeat(16), host.rsplit_once(':').unwrap().1);
    for (lang, words) in [("en", "This app does not accept changes sent from another site"), ("zh-CN", "此应用不接受来自其他网站的更改请求")] {
        let headers = [("cookie", cookie.clone()), ("origin", neighbour.clone()), ("accept-language", lang.to_string())];
        let (status, _, text) = on_app(&app, reqwest::Method::POST, &host, "/api/settings", &headers).await;
        assert_eq!(status, 403, "{text}");
        assert!(text.contains(words), "{text}");
    }
    let upgrade = [
        ("cookie", cookie.clone()),
        ("origin", neighbour.clone()),
        ("connection", "upgrade".to_string()),
        ("upgrade", "websocket".to_string()),
        ("sec-websocket-version", "13".to_string()),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==".to_string()),
    ];
    assert_eq!(on_app(&app, reqwest::Method::GET, &host, "/socket", &upgrade).await.0, 403);
    // Its own page may.
    let (status, _, text) = on_app(&app, reqwest::Method::POST, &host, "/api/settings", &[("cookie", cookie.clone()), ("origin", own)]).await;
    assert_eq!((status, text.as_str()), (200, "ok"));
}

/// The error `zmarket tunnel` prints for one local connection to `path`.
pub(crate) async fn tunnel_error(app: &TestApp, path: &str, key: &str, lang: zmarket::lang::Lang) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (client, accepted) = tokio::join!(tokio::net::TcpStream::connect(addr), listener.accept());
    let (_client, conn) = (client.unwrap(), accepted.unwrap().0);
    let target = format!("{}{path}", app.base.replacen("http://", "ws://", 1));
    let err = zmarket_agent::tunnel::carry(conn, &target, key, lang == zmarket::lang::Lang::Zh).await.expect_err("the market refuses");
    err.to_string()
}
