//! Snapshots with the real agent and real Docker (issue 40, docs/data.md): a file written into an
//! app's volume and one into its container come back after the app is uninstalled, restored on
//! the same box and, through the market's store, on a second box (two agents on this machine
//! with their own state folders); the download is the archive the box made, byte for byte.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::apps::agent::{TEST_IMAGES, act, docker_and_images, images_add, link, settle, start_agent, test_manifests};
use crate::common::*;

/// Polls the installation's newest snapshot until it is ready (a failure fails the test).
pub(crate) async fn ready(app: &TestApp, token: &str, installation: &str) -> Value {
    for _ in 0..600 {
        let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{installation}/snapshots"), token).await;
        assert_eq!(s, 200, "{b}");
        let first = b["data"]["items"][0].clone();
        match first["status"].as_str() {
            Some("ready") => return first,
            Some("failed") => panic!("the snapshot failed: {first}"),
            _ => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
    panic!("the snapshot of {installation} was never ready");
}

/// Polls snapshot `id` until `ok` holds.
async fn snapshot_until(app: &TestApp, token: &str, id: &str, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..600 {
        let (s, b) = app.get_auth(&format!("/api/rmp/v1/snapshots/{id}"), token).await;
        assert_eq!(s, 200, "{b}");
        if ok(&b["data"]) {
            return b["data"].clone();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("snapshot {id} never became {what}");
}

fn sha_of(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

fn exec(container: &str, script: &str) -> String {
    let out = Command::new("docker").args(["exec", container, "sh", "-c", script]).output().unwrap();
    assert!(out.status.success(), "docker exec {script}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

async fn restore(app: &TestApp, token: &str, sid: &str, device: &str) -> String {
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/restore"), &json!({"device_id": device}), Some(token)).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["id"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_data_comes_back_on_the_same_box_and_on_another() {
    let Some((_docker, images)) = docker_and_images().await else {
        assert!(std::env::var("ZMARKET_TEST_DOCKER").as_deref() != Ok("required"), "no Docker daemon reachable at /var/run/docker.sock");
        eprintln!("SKIPPED an_apps_data_comes_back_on_the_same_box_and_on_another: no Docker daemon reachable");
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
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (state_a, state_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = start_agent(&app, state_a.path(), "");
    link(&app, &alice, &a).await;
    let b = start_agent(&app, state_b.path(), "");
    link(&app, &alice, &b).await;

    let (s, body) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "grafana", "device_id": a.device_id}), Some(&alice)).await;
    assert_eq!(s, 200, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_string();
    settle(&app, &alice, &id, "running").await;
    // Data in the app's volume (a note and 2 MB that do not compress) and a change to its container.
    let volume = state_a.path().join("apps").join(&id).join("data");
    std::fs::create_dir_all(volume.join("notes")).unwrap();
    std::fs::write(volume.join("notes/hello.txt"), "kept by zmarket\n").unwrap();
    let noise: Vec<u8> = (0..2_000_000u32).map(|i| (i.wrapping_mul(2654435761) >> 11) as u8).collect();
    std::fs::write(volume.join("noise.bin"), &noise).unwrap();
    exec(&format!("zmarket-{id}"), "mkdir -p /srv/extra && echo changed in the container > /srv/extra/mine.txt");

    act(&app, &alice, &id, "snapshot").await;
    settle(&app, &alice, &id, "running").await;
    let snap = ready(&app, &alice, &id).await;
    let sid = snap["id"].as_str().unwrap().to_string();
    let archive = state_a.path().join("snapshots").join(format!("{sid}.tar.zst"));
    assert_eq!(snap["sha256"].as_str(), Some(sha_of(&archive).as_str()), "{snap}");
    assert_eq!(snap["size"].as_u64(), Some(std::fs::metadata(&archive).unwrap().len()));
    assert_eq!(std::fs::read(&archive).unwrap()[..4], [0x28, 0xB5, 0x2F, 0xFD], "a zstd archive");
    assert_eq!((snap["where"].as_str(), snap["version"].as_str()), (Some("box"), settle(&app, &alice, &id, "running").await["version"].as_str()));

    act(&app, &alice, &id, "uninstall").await;
    settle(&app, &alice, &id, "not_install").await;
    assert!(!volume.exists());

    // Back on the same box, from its own copy.
    let same = restore(&app, &alice, &sid, &a.device_id).await;
    settle(&app, &alice, &same, "running").await;
    let back = state_a.path().join("apps").join(&same).join("data");
    assert_eq!(std::fs::read_to_string(back.join("notes/hello.txt")).unwrap(), "kept by zmarket\n");
    assert_eq!(std::fs::read(back.join("noise.bin")).unwrap(), noise);
    assert_eq!(exec(&format!("zmarket-{same}"), "cat /srv/extra/mine.txt"), "changed in the container");

    // On the second box: the first copies it to the market, the second downloads it from there.
    let other = restore(&app, &alice, &sid, &b.device_id).await;
    settle(&app, &alice, &other, "running").await;
    let there = state_b.path().join("apps").join(&other).join("data");
    assert_eq!(std::fs::read_to_string(there.join("notes/hello.txt")).unwrap(), "kept by zmarket\n");
    assert_eq!(std::fs::read(there.join("noise.bin")).unwrap(), noise);
    assert_eq!(exec(&format!("zmarket-{other}"), "cat /srv/extra/mine.txt"), "changed in the container");
    assert_eq!(sha_of(&state_b.path().join("snapshots").join(format!("{sid}.tar.zst"))), snap["sha256"].as_str().unwrap());

    // Kept on the market now: the person's download is the box's archive, byte for byte.
    let kept = snapshot_until(&app, &alice, &sid, "on the market", |s| s["where"] == "market" && s["uploading"] == false).await;
    assert_eq!(kept["on_box"], true);
    let res = app.client.get(app.url(&format!("/api/rmp/v1/snapshots/{sid}/download"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(hex::encode(Sha256::digest(res.bytes().await.unwrap())), snap["sha256"].as_str().unwrap());

    // Deleted: the box's copy goes too.
    let (s, body) = json_of(app.client.delete(app.url(&format!("/api/rmp/v1/snapshots/{sid}"))).bearer_auth(&alice).send().await.unwrap()).await;
    assert_eq!(s, 200, "{body}");
    for _ in 0..100 {
        if !archive.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(!archive.exists(), "the box removed its copy");
    for i in [&same, &other] {
        act(&app, &alice, i, "uninstall").await;
        settle(&app, &alice, i, "not_install").await;
    }
    drop((a, b));
}
