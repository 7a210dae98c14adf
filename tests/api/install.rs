//! A box in one line: `/install.sh` with the market's address baked in (a warning when that address
//! is unset or loopback), the agent's download (the running binary's bytes, its sha256, ranges),
//! the web manifest, `zmarket agent doctor`'s exit codes, and install.sh itself run in a scratch
//! root against a real `zmarket serve`, with a fake `systemctl` that starts the unit's command and
//! a fake `docker` (nothing is installed on this machine).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::common::*;
use crate::scenario::{get, says};

const BIN: &str = env!("CARGO_BIN_EXE_zmarket");
const FILE: &str = "zmarket-linux-x86_64";

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

async fn script(app: &TestApp) -> String {
    let res = app.get("/install.sh").await;
    assert_eq!(res.status(), 200);
    assert!(header(res.headers(), "content-type").starts_with("text/x-shellscript"));
    res.text().await.unwrap()
}

fn assignment(script: &str, name: &str) -> String {
    script.lines().find_map(|l| l.strip_prefix(&format!("{name}="))).unwrap_or_else(|| panic!("{name}= in the script")).to_string()
}

#[tokio::test]
async fn the_script_names_this_market_and_warns_when_boxes_cannot_reach_it() {
    // public_url unset: the derived loopback address, with the warning that says so.
    let app = TestApp::spawn().await;
    let s = script(&app).await;
    assert!(s.starts_with("#!/bin/sh\n"), "{s}");
    assert_eq!(assignment(&s, "MARKET"), format!("'{}'", app.public_url()));
    assert!(assignment(&s, "WARNING").contains("server.public_url is not set"), "{s}");
    assert_eq!(assignment(&s, "TOKEN_REQUIRED"), "'0'");
    // The sum baked in is the served binary's (this test process is that binary here).
    let me = std::fs::read("/proc/self/exe").unwrap();
    assert_eq!(assignment(&s, "SHA256"), format!("'{}'", sha256(&me)));
    let syntax = Command::new("sh").arg("-n").stdin(Stdio::piped()).spawn().and_then(|mut c| {
        use std::io::Write;
        c.stdin.take().unwrap().write_all(s.as_bytes())?;
        c.wait()
    });
    assert!(syntax.unwrap().success(), "sh -n accepts the script");
    drop(app);

    // Set, but loopback.
    let app = TestApp::spawn_with(|c| c.server.public_url = "http://127.0.0.1:9".into()).await;
    let s = script(&app).await;
    assert_eq!(assignment(&s, "MARKET"), "'http://127.0.0.1:9'");
    assert!(assignment(&s, "WARNING").contains("is a loopback address"), "{s}");
    drop(app);

    // A real address: no warning; a closed market says its token is needed.
    let app = TestApp::spawn_with(|c| {
        c.server.public_url = "https://market.example/".into();
        c.devices.registration_token = "s3cret-token".into();
    })
    .await;
    let s = script(&app).await;
    assert_eq!(assignment(&s, "MARKET"), "'https://market.example'");
    assert_eq!(assignment(&s, "WARNING"), "''");
    assert_eq!(assignment(&s, "TOKEN_REQUIRED"), "'1'");
    assert!(!s.contains("s3cret-token"), "the token itself is never in the script");
}

#[tokio::test]
async fn the_download_is_the_running_binary_with_its_sum_and_ranges() {
    let app = TestApp::spawn().await;
    let me = std::fs::read("/proc/self/exe").unwrap();
    let sum = sha256(&me);

    let res = app.get(&format!("/downloads/{FILE}")).await;
    assert_eq!(res.status(), 200);
    assert_eq!(header(res.headers(), "x-checksum-sha256"), sum);
    assert_eq!(header(res.headers(), "accept-ranges"), "bytes");
    assert_eq!(header(res.headers(), "content-length"), me.len().to_string());
    let body = res.bytes().await.unwrap();
    assert!(body.as_ref() == me.as_slice(), "the bytes are the running binary's ({} of {})", body.len(), me.len());

    let res = app.get(&format!("/downloads/{FILE}.sha256")).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.unwrap(), format!("{sum}  {FILE}\n"));

    // A broken download resumes: the rest from a byte on, a middle piece, the last bytes.
    let n = me.len() as u64;
    for (range, first, last) in [(format!("bytes={}-", n - 1000), n - 1000, n - 1), ("bytes=100-199".to_string(), 100, 199), ("bytes=-10".to_string(), n - 10, n - 1)] {
        let res = app.client.get(app.url(&format!("/downloads/{FILE}"))).header("range", &range).send().await.unwrap();
        assert_eq!(res.status(), 206, "{range}");
        assert_eq!(header(res.headers(), "content-range"), format!("bytes {first}-{last}/{n}"));
        let body = res.bytes().await.unwrap();
        assert!(body.as_ref() == &me[first as usize..=last as usize], "{range}");
    }
    let res = app.client.get(app.url(&format!("/downloads/{FILE}"))).header("range", format!("bytes={n}-")).send().await.unwrap();
    assert_eq!(res.status(), 416);
    assert_eq!(header(res.headers(), "content-range"), format!("bytes */{n}"));

    // Other platforms are not served, said in the asker's language.
    for file in ["zmarket-windows-x86_64.exe", "zmarket-darwin-arm64", "zmarket-linux-aarch64.sha256"] {
        let (s, b) = json_of(app.get(&format!("/downloads/{file}")).await).await;
        assert_eq!((s, b["error"].as_str()), (404, Some("download_not_served")), "{file}: {b}");
        assert_eq!(b["msg"], "This market serves the agent for Linux x86-64 only: this platform is not served here");
        let res = app.client.get(app.url(&format!("/downloads/{file}"))).header("accept-language", "zh-CN").send().await.unwrap();
        let (s, b) = json_of(res).await;
        assert_eq!(s, 404);
        assert_eq!(b["msg"], "本市场只提供 Linux x86-64 版代理程序，此平台不在这里提供");
    }
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    (u32::from_be_bytes(bytes[16..20].try_into().unwrap()), u32::from_be_bytes(bytes[20..24].try_into().unwrap()))
}

#[tokio::test]
async fn the_phone_site_is_installable() {
    let app = TestApp::spawn_with(|c| c.product_name = "Acme Compute Market".into()).await;
    let res = app.get("/manifest.webmanifest").await;
    assert_eq!(res.status(), 200);
    assert_eq!(header(res.headers(), "content-type"), "application/manifest+json");
    let m: Value = res.json().await.unwrap();
    assert_eq!(m["name"], "Acme Compute Market");
    assert_eq!(m["short_name"], "Acme Compute");
    assert_eq!(m["start_url"], "/m/market");
    assert_eq!(m["display"], "standalone");
    assert_eq!(m["theme_color"], "#486aed");
    for size in [192u32, 512] {
        let icon = m["icons"].as_array().unwrap().iter().find(|i| i["sizes"] == format!("{size}x{size}")).expect("an icon of the size");
        assert_eq!(icon["type"], "image/png");
        let res = app.get(icon["src"].as_str().unwrap()).await;
        assert_eq!(res.status(), 200);
        assert_eq!(png_size(&res.bytes().await.unwrap()), (size, size));
    }
    // Every page's head names it, with the home-screen icon; no service worker is registered.
    let phone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
    for (path, ua) in [("/m/market", phone), ("/market", "Mozilla/5.0 (X11; Linux x86_64)")] {
        let html = app.client.get(app.url(path)).header("user-agent", ua).send().await.unwrap().text().await.unwrap();
        assert!(html.contains(r#"<link rel="manifest" href="/manifest.webmanifest">"#), "{path}");
        assert!(html.contains(r#"<link rel="apple-touch-icon" href="/assets/icons/app-192.png">"#), "{path}");
        assert!(html.contains(r##"<meta name="theme-color" content="#486aed">"##), "{path}");
        assert!(!html.contains("serviceWorker.register"), "{path}");
    }
}

/// `zmarket agent doctor` with these arguments and environment: (exit code, stdout). Awaited:
/// the test's market answers on this same (one-thread) runtime.
async fn doctor(args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let out = tokio::process::Command::new(BIN)
        .args(["agent", "doctor"])
        .args(args)
        .env("ZMARKET_LOG__LEVEL", "warn")
        .env_remove("ZMARKET_AGENT__DOCKER_SOCKET")
        .envs(env.iter().copied())
        .output()
        .await
        .expect("doctor runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

fn has_line(out: &str, tag: &str, check: &str) -> bool {
    out.lines().any(|l| l.starts_with(tag) && l[tag.len()..].trim_start().starts_with(check))
}

#[tokio::test]
async fn doctor_fails_without_docker_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("agent-state");
    let closed = format!("unix://{}", dir.path().join("closed.sock").display());
    let (code, out) = doctor(&["--server", &app.base, "--state-dir", state.to_str().unwrap()], &[("DOCKER_HOST", &closed)]).await;
    assert_eq!(code, 1, "{out}");
    assert!(has_line(&out, "FAIL", "docker") && out.contains("install Docker"), "{out}");
    assert!(has_line(&out, "ok", "market") && has_line(&out, "ok", "clock") && has_line(&out, "ok", "channel"), "{out}");
    assert!(has_line(&out, "ok", "nvidia") || has_line(&out, "warn", "nvidia"), "{out}");
    assert!(out.lines().any(|l| l.contains(" disk ")), "{out}");
    assert!(!state.exists(), "doctor made no state directory");

    // A market that does not answer fails too, saying what to check.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (code, out) = doctor(&["--server", &format!("http://127.0.0.1:{port}"), "--state-dir", state.to_str().unwrap()], &[("DOCKER_HOST", &closed)]).await;
    assert_eq!(code, 1, "{out}");
    assert!(has_line(&out, "FAIL", "market") && out.contains("firewall"), "{out}");
    assert!(!state.exists());
}

#[tokio::test]
async fn doctor_passes_with_a_reachable_docker() {
    if !Path::new("/var/run/docker.sock").exists() {
        eprintln!("skipped: no Docker daemon on this machine");
        return;
    }
    let app = TestApp::spawn().await;
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = doctor(&["--server", &app.base, "--state-dir", dir.path().to_str().unwrap()], &[("DOCKER_HOST", "unix:///var/run/docker.sock")]).await;
    assert!(has_line(&out, "ok", "docker"), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("FAIL")), "{out}");
    assert_eq!(code, 0, "{out}");
}

// ---- install.sh in a scratch root ----

fn write_exec(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `docker` that answers `info` as `docker_ok` says; `systemctl` that logs its arguments and,
/// on `restart`, starts the unit's ExecStart in the background (as systemd would).
fn fakes(root: &Path, docker_ok: bool) -> PathBuf {
    let bin = root.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    write_exec(&bin.join("docker"), &format!("#!/bin/sh\necho \"docker $*\" >>\"{}/calls.log\"\nexit {}\n", root.display(), if docker_ok { 0 } else { 1 }));
    write_exec(
        &bin.join("systemctl"),
        &format!(
            r#"#!/bin/sh
echo "systemctl $*" >>"{root}/calls.log"
if [ "$1" = restart ]; then
  cmd=$(sed -n 's/^ExecStart=//p' "{root}/etc/systemd/system/$2")
  envf=$(sed -n 's/^EnvironmentFile=-//p' "{root}/etc/systemd/system/$2")
  if [ -f "$envf" ]; then set -a; . "$envf"; set +a; fi
  ZMARKET_LOG__LEVEL=warn ZMARKET_AGENT__DOCKER_SOCKET=unix://{root}/no-docker.sock nohup sh -c "exec $cmd" >"{root}/agent.log" 2>&1 &
  echo $! >"{root}/agent.pid"
fi
exit 0
"#,
            root = root.display()
        ),
    );
    bin
}

/// Runs install.sh (fetched with curl, as people will) in `root`: (exit code, stdout + stderr).
fn install(base: &str, root: &Path, fake_bin: &Path, script_edit: &str) -> (i32, String) {
    let path = format!("{}:{}", fake_bin.display(), std::env::var("PATH").unwrap_or_default());
    let line = format!("curl -fsSL '{base}/install.sh?code=K7Q2-M9XD' {script_edit} | sh");
    let out = Command::new("sh").arg("-c").arg(line).env("ZMARKET_ROOT", root).env("PATH", path).env_remove("ZMARKET_AGENT_REGISTRATION_TOKEN").output().expect("sh runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

struct Killed(Vec<PathBuf>, Option<std::process::Child>);
impl Drop for Killed {
    fn drop(&mut self) {
        for pid in &self.0 {
            if let Ok(p) = std::fs::read_to_string(pid) {
                let _ = Command::new("kill").arg(p.trim()).status();
            }
        }
        if let Some(c) = &mut self.1 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[tokio::test]
async fn install_sh_installs_checks_and_starts_the_agent_in_a_scratch_root() {
    let data = tempfile::tempdir().unwrap();
    // The real binary: what it serves at /downloads is itself.
    let (server, base) = crate::common::serve_binary(data.path(), Duration::from_secs(30)).await;
    let mut guard = Killed(vec![], Some(server));
    let binary = std::fs::read(BIN).unwrap();

    // Docker installed but not running: the script stops before installing anything.
    let root = tempfile::tempdir().unwrap();
    let fake = fakes(root.path(), false);
    let (code, out) = install(&base, root.path(), &fake, "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Docker is installed but not running"), "{out}");
    assert!(out.contains("warning: This market's server.public_url is not set"), "{out}");
    assert!(!root.path().join("usr/local/bin/zmarket").exists() && !root.path().join("etc/systemd/system/zmarket-agent.service").exists());

    // A checksum that does not match stops it too: nothing installed, the partial file removed.
    let fake = fakes(root.path(), true);
    let (code, out) = install(&base, root.path(), &fake, "| sed \"s/^SHA256=.*/SHA256='0000'/\"");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("not 0000 as the market says: nothing was installed"), "{out}");
    assert!(!root.path().join("usr/local/bin/zmarket").exists() && !root.path().join("usr/local/bin/zmarket.part").exists());
    assert!(!root.path().join("etc/systemd/system/zmarket-agent.service").exists());

    // A download broken after its first MiB resumes from there.
    std::fs::create_dir_all(root.path().join("usr/local/bin")).unwrap();
    std::fs::write(root.path().join("usr/local/bin/zmarket.part"), &binary[..1 << 20]).unwrap();
    let (code, out) = install(&base, root.path(), &fake, "");
    guard.0.push(root.path().join("agent.pid"));
    assert_eq!(code, 0, "{out}");

    // The binary is the market's own, executable.
    let installed = root.path().join("usr/local/bin/zmarket");
    assert!(std::fs::read(&installed).unwrap() == binary, "the installed agent is the served binary");
    assert_eq!(std::fs::metadata(&installed).unwrap().permissions().mode() & 0o777, 0o755);
    // The unit runs it against this market, restarts it, starts at boot.
    let unit = std::fs::read_to_string(root.path().join("etc/systemd/system/zmarket-agent.service")).unwrap();
    let state = root.path().join("var/lib/zmarket-agent");
    assert!(unit.contains(&format!("ExecStart={} agent --server {} --state-dir {}\n", installed.display(), app_url(&base), state.display())), "{unit}");
    for needed in ["Restart=always", "WantedBy=multi-user.target", "After=network-online.target docker.service", "EnvironmentFile=-"] {
        assert!(unit.contains(needed), "{needed} in {unit}");
    }
    let calls = std::fs::read_to_string(root.path().join("calls.log")).unwrap();
    assert!(calls.contains("docker info\n"), "{calls}");
    assert!(calls.contains("systemctl daemon-reload\nsystemctl enable zmarket-agent.service\nsystemctl restart zmarket-agent.service\n"), "{calls}");

    // It printed the device id and pairing code of the agent the unit started: they bind it.
    let field = |prefix: &str| out.lines().find_map(|l| l.strip_prefix(prefix)).map(|v| v.trim().to_string()).unwrap_or_else(|| panic!("{prefix} in {out}"));
    let (id, code) = (field("device id:"), field("pairing code:"));
    // The code is the bind page's (install.sh?code=), so the page finds the box by it.
    assert_eq!(code, "K7Q2M9XD");
    let env = std::fs::read_to_string(root.path().join("etc/zmarket-agent.env")).unwrap();
    assert_eq!(env, "ZMARKET_AGENT_PAIRING_CODE=K7Q2M9XD\n");
    assert_eq!(std::fs::metadata(root.path().join("etc/zmarket-agent.env")).unwrap().permissions().mode() & 0o777, 0o600);
    let client = reqwest::Client::new();
    let email = "installer@example.com";
    let body = json!({"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": true});
    assert_eq!(client.post(format!("{base}/api/iam/v1/register")).json(&body).send().await.unwrap().status(), 200);
    let (s, session) = json_of(client.post(format!("{base}/api/iam/v2/login/password")).json(&json!({"email": email, "password": PASSWORD})).send().await.unwrap()).await;
    assert_eq!(s, 200, "{session}");
    let token = token_of(&session["data"]);
    let res = client.get(format!("{base}/api/ebs/v2/devices/pending?pairing_code=k7q2 m9xd")).bearer_auth(&token).send().await.unwrap();
    let (s, b) = json_of(res).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["device_id"], id.as_str());
    let res = client.post(format!("{base}/api/ebs/v2/devices/link")).bearer_auth(&token).json(&json!({"device_id": id, "pairing_code": code})).send().await.unwrap();
    let (s, b) = json_of(res).await;
    assert_eq!(s, 200, "{b}");
    // Bound: no longer pending.
    let res = client.get(format!("{base}/api/ebs/v2/devices/pending?pairing_code=K7Q2M9XD")).bearer_auth(&token).send().await.unwrap();
    let (s, b) = json_of(res).await;
    assert_eq!((s, &b["data"]), (200, &Value::Null), "{b}");

    // doctor, with the installed agent's state: the market knows this box.
    let (_, out) = doctor(&["--state-dir", state.to_str().unwrap()], &[("DOCKER_HOST", "unix:///nonexistent.sock")]).await;
    assert!(has_line(&out, "ok", "channel") && out.contains(&format!("device id {id}")), "{out}");
    drop(guard);
}

/// The address the script bakes in for a market bound to 127.0.0.1 (derived: localhost).
fn app_url(base: &str) -> String {
    base.replace("127.0.0.1", "localhost")
}

/// The bind page's wait: nothing pending for a code until a box registers with it; a malformed
/// code (in the page's query or the install line) is refused; members cannot bind, so cannot ask.
#[tokio::test]
async fn a_box_registered_with_the_pages_code_is_found_by_it() {
    let app = TestApp::spawn().await;
    let token = token_of(&app.signed_in("pending@example.com").await);
    let (s, b) = app.get_auth("/api/ebs/v2/devices/pending?pairing_code=ABCD2345", &token).await;
    assert_eq!((s, &b["data"]), (200, &Value::Null), "{b}");
    let (s, b) = app.get_auth("/api/ebs/v2/devices/pending?pairing_code=nope", &token).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("pairing_code")), "{b}");
    let (s, _) = app.get_json("/api/ebs/v2/devices/pending?pairing_code=ABCD2345").await;
    assert_eq!(s, 401);
    assert_eq!(app.get("/install.sh?code=nope").await.status(), 400);

    let spec = json!({"cpu_cores": 4, "memory_bytes": 8_000_000_000i64, "disk_bytes": 100_000_000_000i64, "gpus": []});
    let body = json!({"type": "Z-BOX", "name": "garage box", "spec": spec, "pairing_code": "abcd-2345"});
    let (s, b) = app.post_json("/api/agent/v1/register", &body, None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["pairing_code"], "ABCD2345");
    let (s, p) = app.get_auth("/api/ebs/v2/devices/pending?pairing_code=ABCD2345", &token).await;
    assert_eq!(s, 200, "{p}");
    assert_eq!((p["data"]["device_id"].clone(), p["data"]["name"].as_str(), p["data"]["type"].as_str()), (b["data"]["device_id"].clone(), Some("garage box"), Some("Z-BOX")));
    let bad = json!({"type": "Z-BOX", "name": "x", "spec": spec, "pairing_code": "0000"});
    let (s, b) = app.post_json("/api/agent/v1/register", &bad, None).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("pairing_code")), "{b}");
}

/// The phone console (issue 41): its pages are rendered for a phone where they are (no redirect:
/// the phone rule leaves /m/ alone), in the asked language, with the mobile layout's state; a
/// desktop console path on a phone (a link in a mail) opens its phone twin with its query, the
/// console pages a phone has none of land on the mobile market.
#[tokio::test]
async fn the_phone_console_is_rendered_for_a_phone_and_desktop_console_paths_open_their_twins() {
    let app = TestApp::spawn().await;
    let phones = [
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36",
    ];
    let pages = [
        ("/m/auth/signin?redirect=%2Fm%2Fwallet", "Sign In", "登录"),
        ("/m/auth/signup", "Sign Up", "注册"),
        ("/m/forgot-password", "Forgot password", "忘记密码"),
        ("/m/app", "Z-APP", "Z-APP"),
        ("/m/app?show=ended", "Z-APP", "Z-APP"),
        ("/m/app/details?id=0190a1b2-0000-7000-8000-000000000001", "Z-APP Details", "Z-APP 详情"),
        ("/m/wallet", "Wallet", "钱包"),
        ("/m/notifications", "Notifications", "通知"),
    ];
    for ua in phones {
        for (path, en, zh) in pages {
            for (lang, title) in [("en", en), ("zh", zh)] {
                let sep = if path.contains('?') { '&' } else { '?' };
                let url = format!("{path}{sep}language={lang}");
                let res = app.client.get(app.url(&url)).header("user-agent", ua).send().await.unwrap();
                assert_eq!(res.status(), 200, "{url} ({ua})");
                let html = res.text().await.unwrap();
                assert!(html.contains(&format!(r#"<html lang="{lang}""#)), "{url}");
                assert!(html.contains(r#""isMobile":true"#), "{url}: the phone's state");
                if !html.contains("The UI bundle was not built") {
                    assert!(html.contains(&format!("<title>{title} - ZMarket</title>")), "{url}: {title}");
                    assert!(html.contains(r#"data-ssr="1""#), "{url}: rendered on the server");
                    assert!(html.contains("tab-bar"), "{url}: in the mobile layout");
                }
            }
        }
    }
    // A desktop console path (the links in mails) on a phone: its phone twin, query kept.
    for (from, to) in [
        ("/auth/signin?redirect=%2Fwallet", "/m/auth/signin?redirect=%2Fwallet"),
        ("/auth/signup?language=zh", "/m/auth/signup?language=zh"),
        ("/forgot-password?email=a%40b.co", "/m/forgot-password?email=a%40b.co"),
        ("/app", "/m/app"),
        ("/app/?show=ended", "/m/app?show=ended"),
        ("/app/details?id=i1&extend=1", "/m/app/details?id=i1&extend=1"),
        ("/wallet?language=zh", "/m/wallet?language=zh"),
        ("/wallet/top-up", "/m/wallet"),
        ("/messages?tab=notifications", "/m/notifications?tab=notifications"),
        // No phone page: the mobile market in the same language.
        ("/devices?language=zh", "/m/market?language=zh"),
        ("/app/aicompute", "/m/market"),
        ("/account", "/m/market"),
    ] {
        for ua in phones {
            let res = app.client.get(app.url(from)).header("user-agent", ua).send().await.unwrap();
            assert_eq!(res.status(), 302, "{from}");
            assert_eq!(header(res.headers(), "location"), to, "{from}");
        }
        // A computer stays on the desktop page.
        let res = app.client.get(app.url(from)).header("user-agent", "Mozilla/5.0 (X11; Linux x86_64)").send().await.unwrap();
        assert_eq!(res.status(), 200, "{from} on a computer");
    }
}

/// docs/product.md §8's two messages (issue 41, item 5): a remote desktop app whose ports a browser cannot
/// speak (RustDesk's relay) is marked as needing the native client (the page shows its tunnels
/// and "{product} client not installed, download now"), a browser remote desktop or a web app is
/// not; the market refusing a tunnel or an app's origin for the network says "Network
/// authorization failed", then why, in both languages (the closed market's token: limits.rs).
#[tokio::test]
async fn a_native_client_app_is_marked_and_network_refusals_say_network_authorization_failed() {
    use crate::boxes::{beat, bound_device, box_spec};
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(16, 0)).await;
    beat(&app, &secret, json!([]), json!([])).await;
    let mut ids = std::collections::HashMap::new();
    for app_id in ["rustdesk-server", "guacamole", "grafana"] {
        let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": app_id, "device_id": dev}), Some(&alice)).await;
        assert_eq!(s, 200, "{app_id}: {b}");
        ids.insert(app_id, b["data"]["id"].as_str().unwrap().to_string());
    }
    for (app_id, native) in [("rustdesk-server", true), ("guacamole", false), ("grafana", false)] {
        let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{}/connect", ids[app_id]), &alice).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["data"]["native_client"], native, "{app_id}: {b}");
    }

    // A tunnel to a port the app does not declare.
    let grafana = &ids["grafana"];
    let undeclared = ["Network authorization failed: the app does not declare this port", "网络授权失败：该应用未声明此端口"];
    let tunnel = get(format!("/api/rmp/v1/apps/{grafana}/tcp?port=81"));
    says(&app, &tunnel, Some(&alice), (400, "port_not_declared", Some("port")), undeclared).await;
    let err = crate::connect::doors::tunnel_error(&app, &format!("/api/rmp/v1/apps/{grafana}/tcp?port=81"), &alice, zmarket::lang::Lang::En).await;
    assert_eq!(err, "The market refused the tunnel: Network authorization failed: the app does not declare this port.");

    // The app's own origin without the market's link: a page that says so, in the reader's language.
    let base = url::Url::parse(&app.base).unwrap();
    let host = format!("{}.localhost:{}", grafana.replace('-', ""), base.port().unwrap());
    for (lang, want) in [("en", "Network authorization failed: open this app from the market to use it"), ("zh-CN", "网络授权失败：请从市场打开此应用")] {
        let res = app.client.get(format!("{}/", app.base)).header("host", &host).header("accept-language", lang).send().await.unwrap();
        assert_eq!(res.status(), 401);
        assert!(res.text().await.unwrap().contains(want), "{lang}");
    }
    let res = app.client.get(format!("{}/_zmarket/enter?token=used-or-made-up", app.base)).header("host", &host).send().await.unwrap();
    assert_eq!(res.status(), 403);
    assert!(res.text().await.unwrap().contains("Network authorization failed: this link has expired or was already used."));
}
