//! Issue 29, hardening round two: each finding's reproduction (findings 4 and 8 are in the apps
//! tests). Every test here runs on SQLite and, with TEST_DATABASE_URL, on PostgreSQL.

use serde_json::{Value, json};

use crate::common::*;
use crate::devices::{bound_device, heartbeat, register, spec};

fn sign_up(email: &str, password: &str) -> Value {
    json!({"email": email, "password": password, "confirm_password": password, "agree": true})
}

async fn login_status(app: &TestApp, email: &str, password: &str) -> u16 {
    app.post_json("/api/iam/v2/login/password", &json!({"email": email, "password": password}), None).await.0
}

fn acks(n: usize) -> Value {
    let acks: Vec<Value> = (0..n).map(|i| json!({"id": format!("0193a2b4-0000-7000-8000-{i:012}"), "ok": false, "error": "x"})).collect();
    json!({"metrics": {"cpu_percent": 1.0, "memory_used_bytes": 1, "disk_used_bytes": 1}, "acks": acks})
}

// ---- finding 1: a device that locks sign-ins ----

/// The agent API has its own small body limit: a 300 KiB beat is refused before it is read.
#[tokio::test]
async fn a_heartbeat_over_the_agent_body_limit_is_refused() {
    let app = TestApp::spawn().await;
    let (_, secret, _) = register(&app, "Z-BOX", spec(4)).await;
    let (s, b) = heartbeat(&app, &secret, acks(5_000)).await;
    assert_eq!(s, 413, "{b}");
    assert_eq!(b["code"], 413, "{b}");
    // A beat within the limit is read as before.
    let (s, b) = heartbeat(&app, &secret, acks(10)).await;
    assert_eq!(s, 200, "{b}");
}

/// The attack: anonymous devices send 40,000 acknowledgements a beat (3.6 MiB) and bound
/// ones as many as a beat may carry, back to back, while a person signs in: every sign-in
/// answers 200 and no beat answers 500 (before: "database is locked").
#[tokio::test]
async fn hostile_heartbeats_do_not_fail_sign_ins() {
    let app = TestApp::spawn().await;
    app.signed_in("victim@example.com").await;
    let owner = app.signed_in("owner@example.com").await;
    let mut secrets = Vec::new();
    for _ in 0..4 {
        secrets.push((register(&app, "Z-BOX", spec(4)).await.1, acks(40_000)));
    }
    for _ in 0..4 {
        secrets.push((bound_device(&app, &token_of(&owner), "Z-BOX", spec(4)).await.1, acks(256)));
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut agents = Vec::new();
    for (secret, body) in secrets {
        let (client, url, stop) = (app.client.clone(), app.url("/api/agent/v1/heartbeat"), stop.clone());
        agents.push(tokio::spawn(async move {
            let mut statuses = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let res = client.post(&url).bearer_auth(&secret).json(&body).send().await;
                statuses.push(res.map(|r| r.status().as_u16()).unwrap_or(0));
            }
            statuses
        }));
    }
    let mut signed = Vec::new();
    for _ in 0..5 {
        signed.push(login_status(&app, "victim@example.com", "Secret123").await);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut beats = Vec::new();
    for a in agents {
        beats.extend(a.await.unwrap());
    }
    assert_eq!(signed, vec![200; 5]);
    assert!(!beats.contains(&500), "{beats:?}");
    // The anonymous beats were refused for their size, the bound ones read.
    assert!(beats.contains(&413) && beats.contains(&200), "{beats:?}");
}

// ---- finding 6: control characters at the edge ----

/// What an operation answered when NUL was put in `names`: a 400 naming one of them (a body's
/// own rules may name another of its fields first: `type` of an agent registration), or a
/// refusal before any input was read (no session of the right kind). Anything else is listed.
fn nul_refused(what: &str, status: u16, body: &Value, names: &[String]) -> Option<String> {
    if matches!(status, 401 | 403) {
        return None;
    }
    let field = body["data"]["field"].as_str().unwrap_or("");
    let in_body = what.ends_with("(body)") && !field.is_empty();
    let named = in_body || names.iter().any(|n| field == n || field.starts_with(&format!("{n}.")) || field.starts_with(&format!("{n}[")));
    (status != 400 || !named).then(|| format!("{what}: {status} {body}"))
}

/// Every operation of the OpenAPI document gets NUL in each of its path parameters, then in each
/// query parameter, then in every property of its JSON body: each answers 400 naming the field
/// (before: 500 on PostgreSQL for 22 of 51 inputs, and a message of just "\u0000" was stored).
#[tokio::test]
async fn nul_in_any_input_of_any_operation_is_a_400_naming_the_field() {
    let app = TestApp::spawn().await;
    let mut token = token_of(&app.signed_in("nul@example.com").await);
    let (_, doc) = app.get_json("/api/openapi.json").await;
    let schemas = doc["components"]["schemas"].clone();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let params: Vec<&Value> = op["parameters"].as_array().map(|a| a.iter().collect()).unwrap_or_default();
            let names = |place: &str| -> Vec<String> {
                params.iter().filter(|p| p["in"] == place).map(|p| p["name"].as_str().unwrap().to_string()).collect()
            };
            let (in_path, in_query) = (names("path"), names("query"));
            let schema = &op["requestBody"]["content"]["application/json"]["schema"];
            let body_schema = match schema["$ref"].as_str() {
                Some(r) => &schemas[r.rsplit('/').next().unwrap()],
                None => schema,
            };
            let in_body: Vec<String> = body_schema["properties"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
            let fill = |nul_path: bool| {
                let mut url = path.clone();
                for n in &in_path {
                    url = url.replace(&format!("{{{n}}}"), if nul_path { "a%00b" } else { "x" });
                }
                url
            };
            let mut attempts: Vec<(String, String, Option<Value>, Vec<String>)> = Vec::new();
            if !in_path.is_empty() {
                attempts.push(("path".into(), fill(true), None, in_path.clone()));
            }
            if !in_query.is_empty() {
                let q: Vec<String> = in_query.iter().map(|n| format!("{n}=a%00b")).collect();
                attempts.push(("query".into(), format!("{}?{}", fill(false), q.join("&")), None, in_query.clone()));
            }
            if !in_body.is_empty() {
                let body: serde_json::Map<String, Value> = in_body.iter().map(|n| (n.clone(), json!("a\u{0}b"))).collect();
                attempts.push(("body".into(), fill(false), Some(Value::Object(body)), in_body.clone()));
            }
            for (place, url, body, names) in attempts {
                for _ in 0..2 {
                    let mut req = app.client.request(method.to_uppercase().parse().unwrap(), app.url(&url)).bearer_auth(&token);
                    if let Some(b) = &body {
                        req = req.json(b);
                    }
                    let (s, b) = json_of(req.send().await.unwrap()).await;
                    if s == 401 && b["code"] == 401 && app.get_auth("/api/iam/v1/account/profile", &token).await.0 == 401 {
                        // An earlier operation ended this session (sign-out): sign in again.
                        token = token_of(&app.login("nul@example.com", PASSWORD).await);
                        continue;
                    }
                    checked += 1;
                    wrong.extend(nul_refused(&format!("{} {url} ({place})", method.to_uppercase()), s, &b, &names));
                    break;
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {checked}:\n{}", wrong.len(), wrong.join("\n"));
    assert!(checked > 50, "{checked}");
    // A value of just NUL, and the answer in both languages.
    let (s, b) = app.post_json("/api/ebs/v2/devices/link", &json!({"device_id": "\u{0}", "pairing_code": "ABCD"}), Some(&token)).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("device_id")), "{b}");
    assert_eq!(b["msg"], "device_id must not contain control characters");
    let res = app.client.get(app.url("/api/ebs/v2/nearby/a%00b")).header("accept-language", "zh-CN").send().await.unwrap();
    let (s, b) = json_of(res).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("id")), "{b}");
    assert_eq!(b["msg"], "参数 id 不能包含控制字符");
}

// ---- finding 10: the data directory ----

/// A data directory that already exists with 0755 is tightened to 0700 at start.
#[cfg(unix)]
#[tokio::test]
async fn an_existing_open_data_directory_is_tightened_at_start() {
    use std::os::unix::fs::PermissionsExt;
    let outer = tempfile::tempdir().unwrap();
    let data = outer.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = data.clone();
    let app = TestApp::spawn_with(move |c| c.data_dir = dir).await;
    assert_eq!(app.get_json("/api/openapi.json").await.0, 200);
    assert_eq!(std::fs::metadata(&data).unwrap().permissions().mode() & 0o777, 0o700);
}

// ---- finding 11: enums in the OpenAPI document ----

/// Every `status` and `type` query parameter of the document lists its values (before: plain
/// strings, so a fuzzer's schema-valid values were refused).
#[tokio::test]
async fn status_and_type_query_parameters_are_enums_in_the_document() {
    let app = TestApp::spawn().await;
    let (_, doc) = app.get_json("/api/openapi.json").await;
    let mut seen = Vec::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            for p in op["parameters"].as_array().into_iter().flatten() {
                let name = p["name"].as_str().unwrap();
                if p["in"] != "query" || !matches!(name, "status" | "type") {
                    continue;
                }
                let mut schema = p["schema"].clone();
                if let Some(r) = schema["$ref"].as_str() {
                    schema = doc["components"]["schemas"][r.rsplit('/').next().unwrap()].clone();
                }
                // An optional enum may come as oneOf [null, enum].
                let values: Vec<String> = std::iter::once(&schema)
                    .chain(schema["oneOf"].as_array().into_iter().flatten())
                    .flat_map(|s| s["enum"].as_array().cloned().unwrap_or_default())
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect();
                assert!(!values.is_empty(), "{method} {path} ?{name}: {schema}");
                assert!(!p["required"].as_bool().unwrap_or(false), "{method} {path} ?{name}");
                seen.push(format!("{method} {path} ?{name}"));
            }
        }
    }
    assert!(seen.len() >= 5, "{seen:?}");
    // The device list's filter lists what it accepts: not `unknown` (listed as offline).
    let token = token_of(&app.signed_in("enum@example.com").await);
    for v in ["online", "offline", "creating", "failed"] {
        assert_eq!(app.get_auth(&format!("/api/ebs/v2/devices?status={v}"), &token).await.0, 200, "{v}");
    }
    assert_eq!(app.get_auth("/api/ebs/v2/devices?type=Z-CLOUD", &token).await.0, 200);
    // A filter given is one of its values: empty is refused like unknown (Schemathesis).
    for path in ["/api/rmp/v1/apps?status=", "/api/rmp/v1/orders?status=", "/api/billing/v1/bills?status=", "/api/billing/v1/bills.csv?status="] {
        let (s, b) = app.get_auth(path, &token).await;
        assert_eq!((s, b["data"]["field"].as_str()), (400, Some("status")), "{path}: {b}");
    }
}

// ---- finding 3: the pre-account hijack ----

/// The attack: the victim signs up, the attacker signs the same address up with another
/// password, the victim opens the newest mail (the attacker's link). Neither password becomes
/// valid; the victim, who proved the mailbox, chooses the password. Each mail says when and
/// from where its sign-up came.
#[tokio::test]
async fn opening_any_link_of_a_contested_address_asks_for_a_new_password() {
    let app = TestApp::spawn().await;
    let email = "victim@example.com";
    assert_eq!(app.post_json("/api/iam/v1/register", &sign_up(email, "Victim123"), None).await.0, 200);
    let victims = app.wait_for_mail_to(email, "token=", 0).await;
    assert_eq!(app.post_json("/api/iam/v1/register", &sign_up(email, "Attacker9"), None).await.0, 200);
    let attackers = app.wait_for_mail_to(email, "token=", 1).await;
    for mail in [&victims, &attackers] {
        assert!(mail.contains("from the address 127.0.0.1") && mail.contains(" UTC"), "{mail}");
        assert!(mail.contains("从地址 127.0.0.1"), "{mail}");
    }
    let newest = link_in(&attackers).split("token=").nth(1).unwrap().to_string();
    let (s, b) = app.get_json(&format!("/api/iam/v1/verify-email?token={newest}")).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(login_status(&app, email, "Attacker9").await, 401);
    assert_eq!(login_status(&app, email, "Victim123").await, 401);
    // The victim's own link is dead too: it cannot activate its password afterwards.
    let older = link_in(&victims).split("token=").nth(1).unwrap().to_string();
    assert_eq!(app.get_json(&format!("/api/iam/v1/verify-email?token={older}")).await.0, 400);
    assert_eq!(login_status(&app, email, "Victim123").await, 401);
    let token = b["data"]["password_token"].as_str().expect("a password to choose");
    let reset = json!({"token": token, "password": "Chosen123", "confirm_password": "Chosen123"});
    let (s, b) = app.post_json("/api/iam/v1/password/reset", &reset, None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(login_status(&app, email, "Chosen123").await, 200);
    assert_eq!(login_status(&app, email, "Attacker9").await, 401);
}

// ---- findings 7 and 12: slow bodies, event streams, kept-alive connections ----

mod sockets {
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

    /// Finding 12: a kept-alive connection idle for longer than the header-read time-out still
    /// takes the next request (before: hyper's header timer ran between requests and closed it,
    /// so a client sending then got ECONNRESET). A head that never ends is still cut.
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

    /// Finding 7: a body sent a byte at a time is cut (408) once it falls below the minimum
    /// rate, and its connection closed; before, it held the connection as long as it trickled.
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
        let head = format!(
            "POST /api/iam/v2/login/password HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{{"
        );
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

    /// Finding 7: event streams are counted apart from the connections serving requests, with
    /// their own cap: two open streams leave all three request places free; a third stream is
    /// refused (429). Before, the streams held two of the three places.
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

    /// Finding 7: the binary raises its soft open-file limit to the hard one at start (systemd
    /// starts services with a soft limit of 1,024).
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
}

// ---- finding 5: company coins to an admin's wallet ----

/// Renting between a company and one of its administrators is refused, either way (before: the
/// company paid the admin's box, company −100, admin +90). Others still rent both boxes.
#[tokio::test]
async fn a_company_and_its_admin_cannot_rent_each_others_devices() {
    let app = TestApp::spawn().await;
    let admin_s = app.signed_in("admin@example.com").await;
    let admin = token_of(&admin_s);
    let company = seed_company(&app, "Acme", &admin_s, &[]).await;
    let in_company = token_of(&app.switch(&admin_s, &company).await);
    let stranger = token_of(&app.signed_in("stranger@example.com").await);
    let big = json!({"cpu_cores": 8, "memory_bytes": 64i64 << 30, "disk_bytes": 2048i64 << 30, "gpus": []});
    let rent = |token: String, device: String| {
        let app = &app;
        async move { app.post_json("/api/rmp/v1/apps/rent", &json!({"app_id": "grafana", "device_id": device, "hours": 1}), Some(&token)).await }
    };
    let mut boxes = Vec::new();
    for owner in [&admin, &in_company] {
        let (dev, _) = bound_device(&app, owner, "Z-BOX", big.clone()).await;
        let sharing = json!({"mode": "manual", "rentable": true, "price_per_hour": 100});
        let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &sharing, owner).await;
        assert_eq!(s, 200, "{b}");
        boxes.push(dev);
    }
    let within = "A company and its administrators cannot rent each other's devices";
    // The company rents the admin's personal box; the admin rents the company's box.
    for (renter, dev) in [(&in_company, &boxes[0]), (&admin, &boxes[1])] {
        let (s, b) = rent(renter.clone(), dev.clone()).await;
        assert_eq!((s, b["msg"].as_str()), (409, Some(within)), "{b}");
    }
    let res = app
        .client
        .post(app.url("/api/rmp/v1/apps/rent"))
        .bearer_auth(&admin)
        .header("accept-language", "zh-CN")
        .json(&json!({"app_id": "grafana", "device_id": boxes[1], "hours": 1}))
        .send()
        .await
        .unwrap();
    let (s, b) = json_of(res).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("企业与其管理员之间不能相互租用设备")));
    // Nothing moved, and someone else may rent either box.
    for dev in &boxes {
        let (_, b) = rent(stranger.clone(), dev.clone()).await;
        assert_ne!(b["msg"].as_str(), Some(within), "{b}");
    }
}
