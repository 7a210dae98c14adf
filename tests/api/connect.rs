//! Connect: the agent channel over a real WebSocket (commands without a heartbeat, online and
//! offline with the channel), and with a real agent and Docker: the web interface on its own
//! origin through the market (one-time link, cookie isolation, refusals), logs, a terminal, TCP
//! tunnels to an app's port and to the box's own port. Channels under load (`channels.rs`); the
//! doors to a rented app against a hostile box and a neighbour (`doors.rs`); open streams ending
//! with the right to them (`streams.rs`); a box played by the test (`played.rs`); an agent of the
//! release before the protocol was versioned, its frames pinned, and the version rule (`wire.rs`);
//! bulk bytes byte-exact through a tunnel and kept-alive connections to an app (`bulk.rs`).

use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::apps::agent::{BIN, act, docker_and_images, get, images_add, link, settle, start_agent_with};
use crate::common::*;
use crate::devices::bound_device;

mod bulk;
mod channels;
pub(crate) mod doors;
pub(crate) mod played;
mod streams;
mod wire;

const GIB: i64 = 1024 * 1024 * 1024;

pub(crate) fn box_spec() -> Value {
    json!({"cpu_cores": 8, "memory_bytes": 64 * GIB, "disk_bytes": 2048 * GIB, "gpus": []})
}

pub(crate) fn ws_url(app: &TestApp, path: &str) -> String {
    format!("{}{path}", app.base.replacen("http://", "ws://", 1))
}

pub(crate) type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// An agent channel with `secret`: the socket, or the HTTP status and `Retry-After` it was
/// refused with ((0, "") when the connection closed without an answer).
pub(crate) async fn channel(app: &TestApp, secret: &str) -> Result<Ws, (u16, String)> {
    let mut req = ws_url(app, "/api/agent/v1/channel").into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {secret}").parse().unwrap());
    match tokio_tungstenite::connect_async(req).await {
        Ok((ws, _)) => Ok(ws),
        Err(tokio_tungstenite::tungstenite::Error::Http(res)) => {
            let retry = res.headers().get("retry-after").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
            Err((res.status().as_u16(), retry))
        }
        Err(_) => Err((0, String::new())),
    }
}

/// The next `commands` frame on a channel (within `wait`).
pub(crate) async fn next_commands(ws: &mut Ws, wait: Duration) -> Option<Value> {
    let deadline = Instant::now() + wait;
    while let Ok(Some(Ok(msg))) = tokio::time::timeout(deadline.saturating_duration_since(Instant::now()), ws.next()).await {
        if let Message::Text(t) = msg {
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["t"] == "commands" {
                return Some(v);
            }
        }
    }
    None
}

pub(crate) async fn device_status(app: &TestApp, token: &str, id: &str) -> String {
    let (s, b) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), token).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["status"].as_str().unwrap().to_string()
}

async fn wait_status(app: &TestApp, token: &str, id: &str, want: &str, within: Duration) -> Duration {
    let t0 = Instant::now();
    while t0.elapsed() < within {
        if device_status(app, token, id).await == want {
            return t0.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{id} did not become {want} within {within:?}");
}

/// A WebSocket is no request: the header-read time-out (which closes a connection whose next
/// request's head is late) must not close the agent's channel while it carries frames (it did:
/// every channel dropped after `header_read_timeout_secs`, and with it the apps' doors).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_outlives_the_header_read_timeout() {
    let app = TestApp::spawn_with(|c| {
        c.server.header_read_timeout_secs = 1;
        c.devices.heartbeat_secs = 60;
        c.devices.offline_after_secs = 600;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec()).await;
    let mut ws = channel(&app, &secret).await.expect("the channel opens");
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("the answer of the first beat");
    for _ in 0..3 {
        // Frames keep coming (a beat a second), never a request's head.
        tokio::time::sleep(Duration::from_millis(900)).await;
        ws.send(Message::Text(json!({"t": "beat", "spec": box_spec()}).to_string().into())).await.expect("the channel is still open");
        next_commands(&mut ws, Duration::from_secs(5)).await.expect("a beat is answered after the header timeout");
    }
    assert_eq!(device_status(&app, &alice, &dev).await, "online");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_channel_carries_commands_at_once_and_tells_online_from_offline() {
    // Heartbeats every minute and offline only after ten: whatever happens faster is the channel.
    let app = TestApp::spawn_with(|c| {
        c.devices.heartbeat_secs = 60;
        c.devices.offline_after_secs = 600;
        c.connect.offline_grace_secs = 0;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec()).await;

    // A wrong secret gets no channel.
    assert!(channel(&app, "not-a-secret").await.is_err());
    let (s, b) = app.get_json("/api/agent/v1/channel").await;
    assert_eq!(s, 401, "{b}");

    let mut ws = channel(&app, &secret).await.expect("the channel opens");
    let first = next_commands(&mut ws, Duration::from_secs(5)).await.expect("the answer of the channel's first beat");
    assert_eq!(first["settings"]["bound"], true);
    assert_eq!(first["commands"], json!([]));
    wait_status(&app, &alice, &dev, "online", Duration::from_secs(2)).await;

    // An install queues a command: it arrives on the channel with no heartbeat.
    let t0 = Instant::now();
    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "grafana", "device_id": dev}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let frame = next_commands(&mut ws, Duration::from_secs(5)).await.expect("the command arrives on the channel");
    let took = t0.elapsed();
    let cmd = frame["commands"].as_array().unwrap().iter().find(|c| c["payload"]["installation_id"] == id.as_str()).expect("the install command").clone();
    assert_eq!(cmd["kind"], "app_install");
    assert_eq!(cmd["payload"]["manifest"]["image"].as_str().map(|s| !s.is_empty()), Some(true));
    eprintln!("queued → on the channel: {took:?}");

    // Acknowledged in a beat over the channel: the same rules as a heartbeat's.
    let beat = json!({"t": "beat", "installations": [{"id": id, "status": "running"}], "acks": [{"id": cmd["id"], "ok": true}]});
    ws.send(Message::Text(beat.to_string().into())).await.unwrap();
    let answer = next_commands(&mut ws, Duration::from_secs(5)).await.unwrap();
    assert!(answer["commands"].as_array().unwrap().iter().all(|c| c["id"] != cmd["id"]), "acknowledged: not sent again");
    assert_eq!(get(&app, &alice, &id).await["status"], "running");

    // A stop is on the channel at once too, and only once (not again at the next poll).
    let (s, _) = app.post_json(&format!("/api/rmp/v1/apps/{id}/actions"), &json!({"action": "stop"}), Some(&alice)).await;
    assert_eq!(s, 200);
    let frame = next_commands(&mut ws, Duration::from_secs(5)).await.expect("the stop arrives");
    let stop = frame["commands"].as_array().unwrap().iter().find(|c| c["kind"] == "app_stop").expect("app_stop").clone();
    assert!(next_commands(&mut ws, Duration::from_millis(600)).await.is_none(), "a command is pushed once per channel");

    // An unreadable beat is refused by closing the channel; then the device is offline at once.
    ws.send(Message::Text("{\"t\":\"nonsense\"}".into())).await.unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(5), async { while let Some(Ok(_)) = ws.next().await {} }).await;
    let off = wait_status(&app, &alice, &dev, "offline", Duration::from_secs(5)).await;
    eprintln!("channel closed → offline: {off:?}");

    // Back on a new channel: online again, and the unacknowledged stop is sent again.
    let mut ws = channel(&app, &secret).await.unwrap();
    let again = next_commands(&mut ws, Duration::from_secs(5)).await.unwrap();
    assert!(again["commands"].as_array().unwrap().iter().any(|c| c["id"] == stop["id"]), "{again}");
    wait_status(&app, &alice, &dev, "online", Duration::from_secs(2)).await;

    // Unlinking the device ends its channel.
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{dev}"), &json!({}), &alice).await;
    assert!(s == 200 || s == 409, "{s}");
    if s == 200 {
        let closed = tokio::time::timeout(Duration::from_secs(5), async {
            // The next beat finds the secret gone.
            ws.send(Message::Text(json!({"t": "beat"}).to_string().into())).await.ok();
            while let Some(Ok(m)) = ws.next().await {
                if matches!(m, Message::Close(_)) {
                    break;
                }
            }
        })
        .await;
        assert!(closed.is_ok(), "an unlinked device's channel closes");
    }
}

/// A Z-CLOUD machine's create and delete are queued through the same place as an app's commands
/// (`devices::commands::queue`): on the host's channel at once, with no heartbeat.
#[tokio::test]
async fn a_zcloud_create_and_delete_reach_the_hosts_channel_at_once() {
    let app = TestApp::spawn_with(|c| {
        c.devices.heartbeat_secs = 60;
        c.devices.offline_after_secs = 600;
        // The watcher's poll is out of the picture: only the wake-up of the queueing brings them.
        c.connect.command_poll_ms = 60_000;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (host, secret) = bound_device(&app, &alice, "server group", box_spec()).await;
    let mut ws = channel(&app, &secret).await.expect("the channel opens");
    next_commands(&mut ws, Duration::from_secs(5)).await.expect("the answer of the channel's first beat");
    wait_status(&app, &alice, &host, "online", Duration::from_secs(2)).await;

    let machine = json!({"name": "vm", "cpu_cores": 2, "memory_bytes": 8 * GIB, "disk_bytes": 100 * GIB, "gpu_count": 0});
    let (s, b) = app.post_json("/api/ebs/v2/zcloud", &machine, Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let vm = b["data"]["id"].as_str().unwrap().to_string();
    let frame = next_commands(&mut ws, Duration::from_secs(5)).await.expect("the create arrives on the channel");
    let create = frame["commands"].as_array().unwrap().iter().find(|c| c["kind"] == "zcloud_create").expect("zcloud_create").clone();
    assert_eq!(create["payload"]["machine_id"], vm.as_str());
    let beat = json!({"t": "beat", "acks": [{"id": create["id"], "ok": true}]});
    ws.send(Message::Text(beat.to_string().into())).await.unwrap();
    next_commands(&mut ws, Duration::from_secs(5)).await.unwrap();
    wait_status(&app, &alice, &vm, "online", Duration::from_secs(2)).await;

    let (s, b) = app.delete_json(&format!("/api/ebs/v2/devices/{vm}"), &json!({}), &alice).await;
    assert_eq!(s, 200, "{b}");
    let frame = next_commands(&mut ws, Duration::from_secs(5)).await.expect("the delete arrives on the channel");
    let delete = frame["commands"].as_array().unwrap().iter().find(|c| c["kind"] == "zcloud_delete").expect("zcloud_delete").clone();
    assert_eq!(delete["payload"]["machine_id"], vm.as_str());
}

/// A request to an app origin: connects to the test server, names the origin in `Host`.
async fn on_origin(app: &TestApp, origin: &str, path: &str, cookie: Option<&str>) -> reqwest::Response {
    let host = origin.trim_start_matches("http://");
    let mut req = app.client.get(format!("{}{path}", app.base)).header("host", host);
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    req.send().await.unwrap()
}

/// Follows "Open": the one-time link, swapped on the app origin for its cookie.
async fn open(app: &TestApp, token: &str, id: &str) -> (String, String) {
    let res = app.client.get(app.url(&format!("/api/rmp/v1/apps/{id}/open"))).bearer_auth(token).header("accept", "application/json").send().await.unwrap();
    assert_eq!(res.status(), 200);
    let b: Value = res.json().await.unwrap();
    let url = b["data"]["url"].as_str().unwrap().to_string();
    let u = url::Url::parse(&url).unwrap();
    assert!(u.host_str().unwrap().ends_with(".localhost"), "{url}");
    let origin = format!("http://{}:{}", u.host_str().unwrap(), u.port().unwrap());
    let res = on_origin(app, &origin, &format!("{}?{}", u.path(), u.query().unwrap()), None).await;
    assert_eq!(res.status(), 302);
    let cookie = res.headers().get("set-cookie").unwrap().to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly") && !cookie.to_ascii_lowercase().contains("domain="), "host-only, HttpOnly: {cookie}");
    // The link works once.
    let again = on_origin(app, &origin, &format!("{}?{}", u.path(), u.query().unwrap()), None).await;
    assert_eq!(again.status(), 403);
    (origin, cookie.split(';').next().unwrap().to_string())
}

async fn terminal(app: &TestApp, token: &str, id: &str) -> Ws {
    let mut req = ws_url(app, &format!("/api/rmp/v1/apps/{id}/terminal?cols=100&rows=30")).into_client_request().unwrap();
    req.headers_mut().insert("sec-websocket-protocol", format!("zmarket, zmarket.bearer.{token}").parse().unwrap());
    let (ws, res) = tokio_tungstenite::connect_async(req).await.expect("the terminal opens");
    assert_eq!(res.headers().get("sec-websocket-protocol").unwrap(), "zmarket");
    ws
}

/// Reads terminal output until it holds `want`.
async fn read_until(ws: &mut Ws, want: &str) -> String {
    let mut seen = String::new();
    let r = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(Ok(m)) = ws.next().await {
            if let Message::Binary(b) = m {
                seen.push_str(&String::from_utf8_lossy(&b));
                if seen.contains(want) {
                    return;
                }
            }
        }
    })
    .await;
    assert!(r.is_ok(), "{want:?} not in {seen:?}");
    seen
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_agent_serves_web_logs_terminal_and_tunnels_through_the_market() {
    let Some((_docker, images)) = docker_and_images().await else {
        assert!(std::env::var("ZMARKET_TEST_DOCKER").as_deref() != Ok("required"), "no Docker daemon reachable at /var/run/docker.sock");
        eprintln!("SKIPPED a_real_agent_serves_web_logs_terminal_and_tunnels_through_the_market: no Docker daemon");
        return;
    };
    let conf = tempfile::tempdir().unwrap();
    // Two web apps from the local test image.
    let manifests = conf.path().join("manifests.json");
    let web = json!({"image": "zmarket-test/httpd:1", "ports": [{"container": 80, "web": true}], "health": {"path": "/"}});
    std::fs::write(&manifests, json!({"version": 1, "manifests": {"grafana": web, "portainer": web}}).to_string()).unwrap();
    let app = TestApp::spawn_with(|c| {
        c.apps.manifests = manifests.display().to_string();
        // Slow heartbeats: actions move by the channel.
        c.devices.heartbeat_secs = 30;
    })
    .await;
    images_add(&app, &images.join("httpd.tar"));
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    // A port of the box itself that its agent allows, with something listening.
    let box_port = free_port();
    let box_service = tokio::net::TcpListener::bind(("127.0.0.1", box_port)).await.unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = box_service.accept().await {
            use tokio::io::AsyncWriteExt;
            let _ = s.write_all(b"SSH-2.0-box\r\n").await;
        }
    });
    let state = tempfile::tempdir().unwrap();
    let ports = format!("[{box_port}]");
    let agent = start_agent_with(&app, state.path(), "", &[("ZMARKET_AGENT__TCP_PORTS", &ports)]);
    link(&app, &alice, &agent).await;

    let mut ids = Vec::new();
    for app_id in ["grafana", "portainer"] {
        let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": app_id, "device_id": agent.device_id}), Some(&alice)).await;
        assert_eq!(s, 200, "{b}");
        ids.push(b["data"]["id"].as_str().unwrap().to_string());
    }
    let id = ids[0].clone();
    settle(&app, &alice, &id, "running").await;
    settle(&app, &alice, &ids[1], "running").await;

    // The doors.
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/connect"), &alice).await;
    assert_eq!(s, 200, "{b}");
    let c = &b["data"];
    assert_eq!(c["device_online"], true);
    assert_eq!(c["terminal"], true);
    assert_eq!(c["logs"], true);
    assert!(c["web"]["url"].as_str().unwrap().ends_with(&format!("/api/rmp/v1/apps/{id}/open")));
    assert_eq!(c["tcp"][0]["port"], 80);
    let (s, _) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/connect"), &bob).await;
    assert_eq!(s, 404, "another person sees no doors");

    // Web through the market, on the installation's own origin.
    let (origin, cookie) = open(&app, &alice, &id).await;
    let t0 = Instant::now();
    let page = on_origin(&app, &origin, "/", Some(&cookie)).await;
    eprintln!("first page through the market: {:?}", t0.elapsed());
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Hello from a zmarket test app"));
    // No cookie, a forged cookie, another person: refused with a page that says why.
    let res = on_origin(&app, &origin, "/", None).await;
    assert_eq!(res.status(), 401);
    assert!(res.text().await.unwrap().contains("Network authorization failed: open this app from the market"));
    let res = on_origin(&app, &origin, "/", Some(&format!("{cookie}x"))).await;
    assert_eq!(res.status(), 401);
    let (s, _) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/open"), &bob).await;
    assert_eq!(s, 404);
    // The cookie of one installation opens nothing on another's origin, which has its own.
    let (other, other_cookie) = open(&app, &alice, &ids[1]).await;
    assert_ne!(other, origin);
    let res = on_origin(&app, &other, "/", Some(&cookie)).await;
    assert_eq!(res.status(), 401);
    let res = on_origin(&app, &other, "/", Some(&other_cookie)).await;
    assert_eq!(res.status(), 200);

    // The app's HTTP API through the market, for scripts with a key (the `api` door).
    let base = c["api"]["base_url"].as_str().unwrap().to_string();
    let res = app.client.get(format!("{base}index.html")).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.text().await.unwrap().contains("Hello from a zmarket test app"));
    let res = app.client.get(format!("{base}index.html")).bearer_auth(&bob).send().await.unwrap();
    assert_eq!(res.status(), 404);

    // A terminal in the container.
    let mut term = terminal(&app, &alice, &id).await;
    term.send(Message::Text("echo hi-$((6*7))\n".into())).await.unwrap();
    read_until(&mut term, "hi-42").await;
    term.send(Message::Text(json!({"resize": [120, 40]}).to_string().into())).await.unwrap();
    term.send(Message::Text("stty size\n".into())).await.unwrap();
    read_until(&mut term, "40 120").await;
    // Lines on the container's stdout and stderr, for the log.
    term.send(Message::Text("echo out-line > /proc/1/fd/1; echo err-line > /proc/1/fd/2\n".into())).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/terminal"), &bob).await;
    assert_eq!(s, 404, "{b}");
    // A shell that exits closes its terminal normally.
    let mut short = terminal(&app, &alice, &id).await;
    short.send(Message::Text("exit\n".into())).await.unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(Ok(m)) = short.next().await {
            if let Message::Close(f) = m {
                return f;
            }
        }
        None
    })
    .await
    .expect("the terminal closes when its shell exits");
    assert_eq!(closed.map(|f| u16::from(f.code)), Some(1000));

    // Logs: the tail as JSON.
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/logs?tail=50"), &alice).await;
    assert_eq!(s, 200, "{b}");
    let lines = b["data"]["lines"].as_array().unwrap();
    let out = lines.iter().find(|l| l["text"] == "out-line").unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(out["stream"], "stdout");
    assert!(out["ts"].as_str().unwrap().starts_with("20"), "{out}");
    assert!(lines.iter().any(|l| l["text"] == "err-line" && l["stream"] == "stderr"), "{lines:?}");
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/logs?tail=99999"), &alice).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("tail")));
    // Followed: the tail, then a new line as it is written.
    let mut follow = app.client.get(app.url(&format!("/api/rmp/v1/apps/{id}/logs?tail=5&follow=1"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(follow.headers().get("content-type").unwrap(), "text/event-stream");
    term.send(Message::Text("echo live-line > /proc/1/fd/1\n".into())).await.unwrap();
    let mut got = String::new();
    let r = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(chunk)) = follow.chunk().await {
            got.push_str(&String::from_utf8_lossy(&chunk));
            if got.contains("live-line") {
                return;
            }
        }
    })
    .await;
    assert!(r.is_ok() && got.contains("event: line"), "{got}");
    drop(follow);

    // A TCP tunnel to the app's port 80, with `zmarket tunnel`.
    let local = free_port();
    let mut tunnel = std::process::Command::new(BIN)
        .args(["tunnel", "--server", &app.base, "--key", &alice, "--app", &id, "--port", "80", "--local", &format!("127.0.0.1:{local}")])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut body = String::new();
    for _ in 0..50 {
        if let Ok(r) = reqwest::get(format!("http://127.0.0.1:{local}/")).await {
            body = r.text().await.unwrap();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = tunnel.kill();
    let _ = tunnel.wait();
    assert!(body.contains("Hello from a zmarket test app"), "{body}");
    // A port the app does not declare, and a port the box does not allow.
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/tcp?port=81"), &alice).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("port")), "{b}");
    assert_eq!(b["msg"], "Network authorization failed: the app does not declare this port");

    // The box's own port, for its owner only.
    let mut req = ws_url(&app, &format!("/api/ebs/v2/devices/{}/tcp?port={box_port}", agent.device_id)).into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {alice}").parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), ws.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(first, Message::Binary(b"SSH-2.0-box\r\n".to_vec().into()));
    let mut req = ws_url(&app, &format!("/api/ebs/v2/devices/{}/tcp?port=1", agent.device_id)).into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {alice}").parse().unwrap());
    let err = tokio_tungstenite::connect_async(req).await.unwrap_err();
    assert!(matches!(err, tokio_tungstenite::tungstenite::Error::Http(ref r) if r.status() == 400), "{err:?}");
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{}/connect", agent.device_id), &bob).await;
    assert_eq!(s, 404);

    // Stop: on the channel, so the state moves well before a heartbeat (every 30 s) would.
    let t0 = Instant::now();
    act(&app, &alice, &id, "stop").await;
    settle(&app, &alice, &id, "stopped").await;
    let stopped = t0.elapsed();
    eprintln!("stop → stopped: {stopped:?}");
    assert!(stopped < Duration::from_secs(25), "the stop went by the channel ({stopped:?})");
    // The terminal ends with the app; the origin says the app is not running.
    let closed = tokio::time::timeout(Duration::from_secs(15), async {
        while let Some(Ok(m)) = term.next().await {
            if let Message::Close(f) = m {
                return f;
            }
        }
        None
    })
    .await;
    assert!(closed.is_ok(), "the terminal closes when the app stops");
    let res = on_origin(&app, &origin, "/", Some(&cookie)).await;
    assert_eq!(res.status(), 409);
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/open"), &alice).await;
    assert_eq!(s, 409, "{b}");

    for i in &ids {
        act(&app, &alice, i, "uninstall").await;
        settle(&app, &alice, i, "not_install").await;
    }
    drop(agent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_asked_for_on_another_instance_reaches_the_instance_holding_the_channel() {
    let (a, b) = crate::instances::pair(|c| c.connect.offline_grace_secs = 0).await;
    let alice = token_of(&a.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&a, &alice, "Z-BOX", box_spec()).await;
    // The box's channel is on A (played here: it opens the stream and answers each chunk).
    let mut ch = channel(&a, &secret).await.unwrap();
    next_commands(&mut ch, Duration::from_secs(5)).await.unwrap();
    let agent = tokio::spawn(async move {
        while let Some(Ok(m)) = ch.next().await {
            match m {
                Message::Text(t) => {
                    let f: Value = serde_json::from_str(&t).unwrap();
                    if f["t"] == "open" {
                        assert_eq!(f["target"], json!({"kind": "host", "port": 22}));
                        ch.send(Message::Text(json!({"t": "opened", "stream": f["stream"]}).to_string().into())).await.unwrap();
                    }
                }
                Message::Binary(b) => {
                    let (head, body) = b.split_at(4);
                    let mut reply = head.to_vec();
                    reply.extend_from_slice(b"pong:");
                    reply.extend_from_slice(body);
                    ch.send(Message::Binary(reply.into())).await.unwrap();
                }
                _ => {}
            }
        }
    });
    // The owner asks B for a TCP stream to the box's port 22.
    let mut req = ws_url(&b, &format!("/api/ebs/v2/devices/{dev}/tcp?port=22")).into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {alice}").parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.expect("B carries the upgrade to A");
    ws.send(Message::Binary(b"ping".to_vec().into())).await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), ws.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(got, Message::Binary(b"pong:ping".to_vec().into()));
    // B says the same of the doors: the box is online, whichever instance holds its channel.
    let (s, d) = b.get_auth(&format!("/api/ebs/v2/devices/{dev}/connect"), &alice).await;
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["data"]["device_online"], true);
    agent.abort();
}
