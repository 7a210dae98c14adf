//! The foundation: the server's connections. A kept-alive connection outlives the header-read
//! time-out between requests, an idle one is closed and a busy one is not, slow bodies are cut
//! (per connection and per client address, across reconnections), event streams have a cap of
//! their own, and the binary raises its soft open-file limit.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::*;

fn addr(app: &TestApp) -> String {
    app.base.trim_start_matches("http://").to_string()
}

fn get(addr: &str, path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\n\r\n")
}

/// A sign-in's head announcing a body of 100,000 bytes, and the first byte of it.
fn slow_sign_in(addr: &str) -> String {
    format!("POST /api/iam/v2/login/password HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{{")
}

/// One answer read off `s` (head and a `content-length` body): its status line, or what
/// ended the read (`eof`, an error), within 20 s.
async fn answer(s: &mut (impl AsyncReadExt + Unpin)) -> String {
    let read = async {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&buf).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let len = text[..end]
                    .lines()
                    .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap()))
                    .unwrap_or(0);
                if buf.len() >= end + 4 + len {
                    return text.lines().next().unwrap().to_string();
                }
            }
            match s.read(&mut chunk).await {
                Ok(0) => return "eof".to_string(),
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) => return format!("error: {e}"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), read).await.unwrap_or_else(|_| "no answer in 20 s".into())
}

/// A kept-alive connection idle for longer than the header-read time-out still takes the next
/// request (before: hyper's header timer ran between requests and closed it, so a client sending
/// then got ECONNRESET). A head that never ends is still cut.
#[tokio::test]
async fn a_kept_alive_connection_idle_past_the_header_timeout_takes_the_next_request() {
    let app = TestApp::spawn_with(|c| {
        c.server.header_read_timeout_secs = 1;
        c.server.idle_timeout_secs = 30;
    })
    .await;
    let addr = addr(&app);
    let mut s = TcpStream::connect(&addr).await.unwrap();
    s.write_all(get(&addr, "/healthz").as_bytes()).await.unwrap();
    assert_eq!(answer(&mut s).await, "HTTP/1.1 200 OK");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    s.write_all(get(&addr, "/healthz").as_bytes()).await.unwrap();
    assert_eq!(answer(&mut s).await, "HTTP/1.1 200 OK");
    // A third request begun on it and never finished: closed after the header time-out,
    // long before the idle limit (the one timer is set anew for the new head).
    s.write_all(b"GET /healthz HTTP/1.1\r\n").await.unwrap();
    let begun = std::time::Instant::now();
    assert_eq!(answer(&mut s).await, "eof");
    assert!(begun.elapsed() < Duration::from_secs(10), "closed after {:?}", begun.elapsed());
    // A request begun and never finished is closed after the header time-out.
    let mut slow = TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\n").await.unwrap();
    assert_eq!(answer(&mut slow).await, "eof");
    // So is a connection that never sends anything.
    let mut mute = TcpStream::connect(&addr).await.unwrap();
    assert_eq!(answer(&mut mute).await, "eof");
}

/// `server.idle_timeout_secs`: a connection on which nothing moves is closed once it passes;
/// one that keeps asking stays open past it (the idle clock restarts with every read and
/// write, though the timer is set only when it fires).
#[tokio::test]
async fn an_idle_connection_is_closed_and_a_busy_one_is_not() {
    let app = TestApp::spawn_with(|c| {
        c.server.header_read_timeout_secs = 10;
        c.server.idle_timeout_secs = 2;
    })
    .await;
    let addr = addr(&app);
    let mut busy = TcpStream::connect(&addr).await.unwrap();
    let mut idle = TcpStream::connect(&addr).await.unwrap();
    idle.write_all(get(&addr, "/healthz").as_bytes()).await.unwrap();
    assert_eq!(answer(&mut idle).await, "HTTP/1.1 200 OK");
    let begun = std::time::Instant::now();
    // 4.5 s of a request every 300 ms: more than twice the idle limit.
    while begun.elapsed() < Duration::from_millis(4500) {
        busy.write_all(get(&addr, "/healthz").as_bytes()).await.unwrap();
        assert_eq!(answer(&mut busy).await, "HTTP/1.1 200 OK", "after {:?}", begun.elapsed());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // The idle one was closed meanwhile (end of stream, not an answer).
    assert_eq!(answer(&mut idle).await, "eof");
}

/// A body sent a byte at a time is cut (408) once it falls below the minimum rate, and its
/// connection closed; before, it held the connection as long as it trickled.
#[tokio::test]
async fn a_trickled_body_is_cut_below_the_minimum_rate() {
    let app = TestApp::spawn_with(|c| {
        c.server.min_body_rate_bytes = 1000;
        c.server.body_grace_secs = 1;
    })
    .await;
    let addr = addr(&app);
    let s = TcpStream::connect(&addr).await.unwrap();
    let (mut r, mut w) = s.into_split();
    let head = slow_sign_in(&addr);
    w.write_all(head.as_bytes()).await.unwrap();
    let trickle = tokio::spawn(async move {
        // At most 30 s of a byte every 100 ms (10 bytes a second).
        for _ in 0..300 {
            if w.write_all(b" ").await.is_err() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    });
    assert_eq!(answer(&mut r).await, "HTTP/1.1 408 Request Timeout");
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), r.read_to_end(&mut rest)).await;
    trickle.abort();
    assert_eq!(app.get("/healthz").await.status(), 200);
}

/// Event streams are counted apart from the connections serving requests, with their own cap: two
/// open streams leave all three request places free; a third stream is refused (429). Before, the
/// streams held two of the three places.
#[tokio::test]
async fn event_streams_are_counted_apart_with_their_own_cap() {
    let app = TestApp::spawn_with(|c| {
        c.server.max_connections = 3;
        c.server.max_event_streams = 2;
    })
    .await;
    let a = token_of(&app.signed_in("streams-a@example.com").await);
    let b = token_of(&app.signed_in("streams-b@example.com").await);
    let mut open = Vec::new();
    for t in [&a, &b] {
        let res = app.client.get(app.url("/api/cim/v1/events")).bearer_auth(t).send().await.unwrap();
        assert_eq!(res.status(), 200);
        open.push(res);
    }
    let addr = addr(&app);
    let mut conns = Vec::new();
    for _ in 0..3 {
        let mut s = TcpStream::connect(&addr).await.unwrap();
        s.write_all(get(&addr, "/healthz").as_bytes()).await.unwrap();
        conns.push(s);
    }
    for s in &mut conns {
        assert_eq!(answer(s).await, "HTTP/1.1 200 OK");
    }
    drop(conns);
    let fresh = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let res = fresh.get(app.url("/api/cim/v1/events")).bearer_auth(&a).send().await.unwrap();
    assert_eq!(res.status(), 429);
    drop(open);
}

/// The binary raises its soft open-file limit to the hard one at start (systemd starts services
/// with a soft limit of 1,024).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_server_raises_its_soft_open_file_limit_to_the_hard_one() {
    use std::os::unix::process::CommandExt;
    let mut hard = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut hard) }, 0);
    if hard.rlim_max <= 1024 {
        eprintln!("hard open-file limit {} leaves nothing to raise", hard.rlim_max);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_zmarket"));
    cmd.current_dir(dir.path())
        .args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--data-dir", "data"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: only setrlimit between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
            lim.rlim_cur = 1024;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let limits = format!("/proc/{}/limits", child.id());
    let mut soft = String::new();
    for _ in 0..100 {
        let text = std::fs::read_to_string(&limits).unwrap_or_default();
        soft = text.lines().find(|l| l.starts_with("Max open files")).and_then(|l| l.split_whitespace().nth(3)).unwrap_or("").to_string();
        if reqwest::get(format!("http://127.0.0.1:{port}/healthz")).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    let expected = if hard.rlim_max == libc::RLIM_INFINITY { 1u64 << 20 } else { hard.rlim_max as u64 };
    assert_eq!(soft, expected.to_string());
}

/// A reconnecting trickler, bounded: each connection sends a sign-in head announcing 100,000 bytes
/// and one byte of it, waits 2.5 s for an answer (under the 4 s grace), gives up and reconnects.
/// Its address's slow bodies are counted together: after the first, the market cuts it (408) before
/// it gives up, every time (before: never; each connection had the whole grace, so a client
/// reconnecting just before it ends held its connections for ever).
#[tokio::test]
async fn a_slow_client_that_reconnects_before_the_grace_keeps_being_cut() {
    let app = TestApp::spawn_with(|c| {
        c.server.min_body_rate_bytes = 1000;
        c.server.body_grace_secs = 4;
    })
    .await;
    let addr = addr(&app);
    let mut cut = Vec::new();
    for _ in 0..4 {
        let mut s = TcpStream::connect(&addr).await.unwrap();
        let head = slow_sign_in(&addr);
        s.write_all(head.as_bytes()).await.unwrap();
        let mut buf = [0u8; 256];
        // The client's own patience (the attack's period), not a limit of the market's.
        let answer = match tokio::time::timeout(Duration::from_millis(2500), s.read(&mut buf)).await {
            Ok(Ok(n)) => String::from_utf8_lossy(&buf[..n]).to_string(),
            _ => String::new(),
        };
        cut.push(answer.starts_with("HTTP/1.1 408"));
    }
    eprintln!("cut before the client gave up: {cut:?}");
    assert!(!cut[0], "the first slow body has the whole grace");
    assert!(cut[2..].iter().all(|c| *c), "a reconnecting slow client keeps being cut: {cut:?}");
    assert_eq!(app.get("/healthz").await.status(), 200);
}
