//! The real agent process (`zmarket agent`) with real Docker: an app installed from an image
//! archive the market server holds (`zmarket images add`), running, its page fetched through
//! `open_url`, stopped, started, snapshotted (an archive on the box) and uninstalled with no container left behind; an
//! image that exits at once fails the install. Without a Docker daemon the Docker test is skipped
//! with a message; the agent without a Docker socket is tested everywhere.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_zmarket");

/// Held by the tests that remove the shared test images from Docker or tag them (they run at
/// once in this binary): one removing `zmarket-test/exit:1` must not pull it from under another
/// installing it.
pub(crate) static TEST_IMAGES: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A running `zmarket agent`; killed when dropped.
pub(crate) struct Agent {
    child: Child,
    pub device_id: String,
    pub pairing_code: String,
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start_agent(app: &TestApp, state_dir: &Path, docker_socket: &str) -> Agent {
    start_agent_with(app, state_dir, docker_socket, &[])
}

/// `start_agent` with more settings for the agent (`ZMARKET_AGENT__…`).
pub(crate) fn start_agent_with(app: &TestApp, state_dir: &Path, docker_socket: &str, env: &[(&str, &str)]) -> Agent {
    let mut child = Command::new(BIN)
        .args(["agent", "--server", &app.base, "--state-dir"])
        .arg(state_dir)
        .args(["--heartbeat-secs", "1", "--public-host", "127.0.0.1", "--name", "test box"])
        .env("ZMARKET_AGENT__DOCKER_SOCKET", docker_socket)
        .env("ZMARKET_LOG__LEVEL", "warn")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the agent starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut field = |prefix: &str| loop {
        let line = lines.next().expect("the agent prints its id").expect("stdout");
        if let Some(v) = line.strip_prefix(prefix) {
            return v.trim().to_string();
        }
    };
    let device_id = field("device id:");
    let pairing_code = field("pairing code:");
    Agent { child, device_id, pairing_code }
}

pub(crate) async fn link(app: &TestApp, token: &str, agent: &Agent) {
    let body = json!({"device_id": agent.device_id, "pairing_code": agent.pairing_code});
    let (s, b) = app.post_json("/api/ebs/v2/devices/link", &body, Some(token)).await;
    assert_eq!(s, 200, "{b}");
}

pub(crate) async fn get(app: &TestApp, token: &str, id: &str) -> Value {
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}"), token).await;
    assert_eq!(s, 200, "{b}");
    b["data"].clone()
}

/// Polls the installation until it settles in `status` (a failure state on the way fails the test).
pub(crate) async fn settle(app: &TestApp, token: &str, id: &str, status: &str) -> Value {
    for _ in 0..600 {
        let d = get(app, token, id).await;
        if d["status"] == status {
            return d;
        }
        let s = d["status"].as_str().unwrap_or("");
        if s != status && (s.ends_with("failed") || s == "failed") {
            panic!("{id} became {s} waiting for {status}: {d}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{id} never became {status}: {}", get(app, token, id).await);
}

pub(crate) async fn act(app: &TestApp, token: &str, id: &str, action: &str) {
    let (s, b) = app.post_json(&format!("/api/rmp/v1/apps/{id}/actions"), &json!({"action": action}), Some(token)).await;
    assert_eq!(s, 200, "{action}: {b}");
}

/// Manifests replacing two catalogue apps with the local test images.
pub(crate) fn test_manifests(dir: &Path) -> PathBuf {
    let path = dir.join("manifests.json");
    let m = json!({"version": 1, "manifests": {
        "grafana": {"image": "zmarket-test/httpd:1", "ports": [{"container": 80, "web": true}], "volumes": [{"name": "data", "path": "/data"}], "health": {"path": "/"}},
        "vaultwarden": {"image": "zmarket-test/exit:1", "ports": [{"container": 80, "web": true}]}
    }});
    std::fs::write(&path, m.to_string()).unwrap();
    path
}

pub(crate) fn images_add(app: &TestApp, file: &Path) {
    let mut cmd = Command::new(BIN);
    cmd.args(["images", "add"]).arg(file).arg("--data-dir").arg(&app.state.config.data_dir);
    cmd.env("ZMARKET_DATABASE__URL", app.state.config.database_url());
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "images add: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("sha256:"));
}

/// The test images (scripts/test-images builds them from busybox-static), or None without Docker.
pub(crate) async fn docker_and_images() -> Option<(bollard::Docker, PathBuf)> {
    let docker = bollard::Docker::connect_with_socket("/var/run/docker.sock", 60, &bollard::ClientVersion { major_version: 1, minor_version: 41 }).ok()?;
    let docker = docker.negotiate_version().await.ok()?;
    docker.ping().await.ok()?;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-images");
    if !dir.join("httpd.tar").exists() || !dir.join("exit.tar").exists() {
        let st = Command::new(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/test-images")).arg(&dir).status().unwrap();
        assert!(st.success(), "scripts/test-images failed");
    }
    Some((docker, dir))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_agent_runs_an_app_from_the_markets_archive() {
    let Some((docker, images)) = docker_and_images().await else {
        // CI sets ZMARKET_TEST_DOCKER=required: there a missing daemon fails instead of skipping.
        assert!(std::env::var("ZMARKET_TEST_DOCKER").as_deref() != Ok("required"), "no Docker daemon reachable at /var/run/docker.sock");
        eprintln!("SKIPPED a_real_agent_runs_an_app_from_the_markets_archive: no Docker daemon reachable at /var/run/docker.sock (start dockerd to run it)");
        return;
    };
    let _images = TEST_IMAGES.lock().await;
    let conf = tempfile::tempdir().unwrap();
    let manifests = test_manifests(conf.path());
    let app = TestApp::spawn_with(|c| {
        c.apps.manifests = manifests.display().to_string();
        c.devices.heartbeat_secs = 1;
    })
    .await;
    images_add(&app, &images.join("httpd.tar"));
    images_add(&app, &images.join("exit.tar"));
    // The images come from the market's archives, not from what Docker already has.
    for image in ["zmarket-test/httpd:1", "zmarket-test/exit:1"] {
        let _ = docker.remove_image(image, Some(bollard::query_parameters::RemoveImageOptions { force: true, ..Default::default() }), None).await;
    }

    let alice = token_of(&app.signed_in("alice@example.com").await);
    let state = tempfile::tempdir().unwrap();
    let agent = start_agent(&app, state.path(), "");
    link(&app, &alice, &agent).await;

    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "grafana", "device_id": agent.device_id}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let d = settle(&app, &alice, &id, "running").await;
    let history: Vec<String> = d["history"].as_array().unwrap().iter().map(|h| h["status"].as_str().unwrap().to_string()).collect();
    assert!(history.contains(&"downloading".to_string()) && history.contains(&"installing".to_string()), "{history:?}");
    assert!(state.path().join("images").read_dir().unwrap().count() == 1, "the archive was downloaded into the agent's state dir");
    let url = d["open_url"].as_str().expect("open_url while running").to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let page = reqwest::get(&url).await.unwrap().text().await.unwrap();
    assert!(page.contains("Hello from a zmarket test app"), "{page}");
    let name = format!("zmarket-{id}");
    assert!(docker.inspect_container(&name, None).await.is_ok());

    act(&app, &alice, &id, "stop").await;
    let d = settle(&app, &alice, &id, "stopped").await;
    assert_eq!(d["open_url"], Value::Null);
    assert!(reqwest::get(&url).await.is_err(), "a stopped app does not answer");

    act(&app, &alice, &id, "start").await;
    let d = settle(&app, &alice, &id, "running").await;
    assert_eq!(d["open_url"].as_str(), Some(url.as_str()), "the same port on the box after a start");
    let page = reqwest::get(d["open_url"].as_str().unwrap()).await.unwrap().text().await.unwrap();
    assert!(page.contains("Hello from a zmarket test app"));

    act(&app, &alice, &id, "snapshot").await;
    settle(&app, &alice, &id, "running").await;
    let snap = crate::apps::snapshots::ready(&app, &alice, &id).await;
    let sid = snap["id"].as_str().unwrap();
    assert!(state.path().join("snapshots").join(format!("{sid}.tar.zst")).exists(), "the archive is on the box");

    act(&app, &alice, &id, "uninstall").await;
    settle(&app, &alice, &id, "not_install").await;
    assert!(docker.inspect_container(&name, None).await.is_err(), "no container left behind");
    assert!(!state.path().join("apps").join(&id).exists(), "the app's volumes are removed");

    // An image that exits at once fails the install, and nothing is left running.
    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "vaultwarden", "device_id": agent.device_id}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let bad = b["data"]["id"].as_str().unwrap().to_string();
    let mut d = get(&app, &alice, &bad).await;
    for _ in 0..300 {
        if d["status"] == "install_failed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        d = get(&app, &alice, &bad).await;
    }
    assert_eq!(d["status"], "install_failed", "{d}");
    assert_eq!((d["status_reason_code"].as_str(), d["status_reason"].as_str()), (Some("exited"), Some("The app exited (exit code 1)")), "{d}");
    assert!(docker.inspect_container(&format!("zmarket-{bad}"), None).await.is_err());
    drop(agent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_docker_an_install_fails_with_the_reason() {
    let app = TestApp::spawn_with(|c| c.devices.heartbeat_secs = 1).await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let state = tempfile::tempdir().unwrap();
    let agent = start_agent(&app, state.path(), "/nonexistent/docker.sock");
    link(&app, &alice, &agent).await;
    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "grafana", "device_id": agent.device_id}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let mut d = get(&app, &alice, &id).await;
    for _ in 0..150 {
        if d["status"] == "install_failed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        d = get(&app, &alice, &id).await;
    }
    assert_eq!(d["status"], "install_failed", "{d}");
    assert_eq!(d["status_reason"], "Docker is not available on this device");
    let (_, zh) = json_of(app.client.get(app.url(&format!("/api/rmp/v1/apps/{id}"))).bearer_auth(&alice).header("Accept-Language", "zh").send().await.unwrap()).await;
    assert_eq!(zh["data"]["status_reason"], "此设备上没有可用的 Docker");
}

/// Polls the installation until `ok` holds (at most 2 minutes).
async fn until(app: &TestApp, token: &str, id: &str, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..600 {
        let d = get(app, token, id).await;
        if ok(&d) {
            return d;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{id} never became {what}: {}", get(app, token, id).await);
}

fn manifests_with(path: &Path, grafana_image: &str) {
    let m = json!({"version": 1, "manifests": {
        "grafana": {"image": grafana_image, "ports": [{"container": 80, "web": true}], "volumes": [{"name": "data", "path": "/data"}], "health": {"path": "/"}},
        "vaultwarden": {"image": "zmarket-test/exit:1", "ports": [{"container": 80, "web": true}]}
    }});
    std::fs::write(path, m.to_string()).unwrap();
}

/// Apps over time with a real agent and Docker: the exit image's own exit code, limits in
/// `docker inspect`, an update that switches and one that rolls back with the old container
/// still serving, a taken host port given up for another, a removed container (en and zh).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_agent_keeps_apps_trustworthy_over_time() {
    let Some((docker, images)) = docker_and_images().await else {
        assert!(std::env::var("ZMARKET_TEST_DOCKER").as_deref() != Ok("required"), "no Docker daemon reachable at /var/run/docker.sock");
        eprintln!("SKIPPED a_real_agent_keeps_apps_trustworthy_over_time: no Docker daemon reachable");
        return;
    };
    let _images = TEST_IMAGES.lock().await;
    for tar in ["httpd.tar", "exit.tar"] {
        let st = Command::new("docker").arg("load").arg("-q").arg("-i").arg(images.join(tar)).stdout(Stdio::null()).status().unwrap();
        assert!(st.success(), "docker load {tar}");
    }
    use sea_orm::ConnectionTrait;
    // A second tag of the test web image, this test's own: the "new version".
    let tag = format!("upd-{}", std::process::id());
    let new_image = format!("zmarket-test/httpd:{tag}");
    docker.tag_image("zmarket-test/httpd:1", Some(bollard::query_parameters::TagImageOptions { repo: Some("zmarket-test/httpd".into()), tag: Some(tag.clone()) })).await.unwrap();
    let conf = tempfile::tempdir().unwrap();
    let manifests = conf.path().join("manifests.json");
    manifests_with(&manifests, "zmarket-test/httpd:1");
    let app = TestApp::spawn_with(|c| {
        c.apps.manifests = manifests.display().to_string();
        c.devices.heartbeat_secs = 1;
    })
    .await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let state = tempfile::tempdir().unwrap();
    let agent = start_agent(&app, state.path(), "");
    link(&app, &alice, &agent).await;
    let zh = |id: String| {
        let app = &app;
        let alice = alice.clone();
        async move {
            let (_, b) = json_of(app.client.get(app.url(&format!("/api/rmp/v1/apps/{id}"))).bearer_auth(&alice).header("Accept-Language", "zh").send().await.unwrap()).await;
            b["data"]["status_reason"].as_str().unwrap_or_default().to_string()
        }
    };

    // The exit image fails with its own exit code.
    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "vaultwarden", "device_id": agent.device_id}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let bad = b["data"]["id"].as_str().unwrap().to_string();
    let d = until(&app, &alice, &bad, "install_failed", |d| d["status"] == "install_failed").await;
    assert_eq!((d["status_reason_code"].as_str(), d["status_reason"].as_str()), (Some("exited"), Some("The app exited (exit code 1)")), "{d}");
    assert_eq!(zh(bad.clone()).await, "应用已退出（退出码 1）");

    // A web app, with the CPU and memory it holds as its container's limits.
    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "grafana", "device_id": agent.device_id}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let d = settle(&app, &alice, &id, "running").await;
    let name = format!("zmarket-{id}");
    let host = docker.inspect_container(&name, None).await.unwrap().host_config.unwrap();
    assert_eq!(host.nano_cpus, Some(d["holds"]["cpu_cores"].as_i64().unwrap() * 1_000_000_000));
    assert_eq!(host.memory, d["holds"]["memory_bytes"].as_i64());
    let url1 = d["open_url"].as_str().unwrap().to_string();
    let v1 = d["version"].as_str().unwrap().to_string();

    // A newer catalogue version with a new image: Update available, then the switch.
    manifests_with(&manifests, &new_image);
    let db = &app.state.db;
    db.execute_unprepared("UPDATE apps SET version = '2.0.0' WHERE id = 'grafana'").await.unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(get(&app, &alice, &id).await["update_available"], "2.0.0");
    act(&app, &alice, &id, "update").await;
    let d = until(&app, &alice, &id, "running 2.0.0", |d| d["status"] == "running" && d["version"] == "2.0.0").await;
    assert_eq!(d["update_available"], Value::Null);
    let c = docker.inspect_container(&name, None).await.unwrap();
    assert_eq!(c.config.unwrap().image.as_deref(), Some(new_image.as_str()));
    let url2 = until(&app, &alice, &id, "an address", |d| d["open_url"].is_string()).await["open_url"].as_str().unwrap().to_string();
    assert!(reqwest::get(&url2).await.unwrap().text().await.unwrap().contains("Hello from a zmarket test app"));
    let _ = url1;

    // An update to an image that exits: rolled back, the running version serves on.
    manifests_with(&manifests, "zmarket-test/exit:1");
    db.execute_unprepared("UPDATE apps SET version = '3.0.0' WHERE id = 'grafana'").await.unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    act(&app, &alice, &id, "update").await;
    let d = until(&app, &alice, &id, "rolled back", |d| d["status"] == "running" && d["status_reason_code"] == "rolled_back").await;
    assert_eq!((d["version"].as_str(), d["update_available"].as_str()), (Some("2.0.0"), Some("3.0.0")));
    assert_eq!(d["status_reason"], "Updating to 3.0.0 failed; the previous version runs again: The app exited (exit code 1)");
    assert!(reqwest::get(&url2).await.unwrap().text().await.unwrap().contains("Hello from a zmarket test app"), "the old container still serves");
    assert!(docker.inspect_container(&format!("{name}-next"), None).await.is_err(), "the failed new container is gone");
    let (_, h) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/history"), &alice).await;
    let versions: Vec<&str> = h["data"]["items"].as_array().unwrap().iter().filter_map(|i| i["version"].as_str()).collect();
    assert!(versions.contains(&"2.0.0") && versions.contains(&v1.as_str()), "{versions:?}");

    // A host port taken on the box while the app is stopped: another one is chosen at start.
    act(&app, &alice, &id, "stop").await;
    settle(&app, &alice, &id, "stopped").await;
    let port: u16 = url2.trim_end_matches('/').rsplit(':').next().unwrap().parse().unwrap();
    let squatter = std::net::TcpListener::bind(("0.0.0.0", port)).expect("the stopped app's port is free");
    act(&app, &alice, &id, "start").await;
    let d = settle(&app, &alice, &id, "running").await;
    let url3 = until(&app, &alice, &id, "an address", |d| d["open_url"].is_string()).await["open_url"].as_str().unwrap().to_string();
    assert_ne!(url3, url2, "{d}");
    assert!(reqwest::get(&url3).await.unwrap().text().await.unwrap().contains("Hello from a zmarket test app"));
    drop(squatter);

    // The container removed behind the agent's back: container_gone, in both languages.
    docker.remove_container(&name, Some(bollard::query_parameters::RemoveContainerOptions { force: true, ..Default::default() })).await.unwrap();
    let d = until(&app, &alice, &id, "failed", |d| d["status"] == "failed").await;
    assert_eq!((d["status_reason_code"].as_str(), d["status_reason"].as_str()), (Some("container_gone"), Some("The app's container is gone")));
    assert_eq!(zh(id.clone()).await, "应用的容器已不存在");

    act(&app, &alice, &id, "uninstall").await;
    settle(&app, &alice, &id, "not_install").await;
    act(&app, &alice, &bad, "uninstall").await;
    settle(&app, &alice, &bad, "not_install").await;
    for n in [name.clone(), format!("{name}-old"), format!("{name}-next")] {
        assert!(docker.inspect_container(&n, None).await.is_err(), "{n} left behind");
    }
    drop(agent);
    let _ = docker.remove_image(&new_image, None::<bollard::query_parameters::RemoveImageOptions>, None).await;
}
