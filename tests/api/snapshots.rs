//! Snapshots (issue 40, docs/data.md) over the agent protocol, the box played by the test: a
//! snapshot listed, reported, kept on the market piece by piece (a wrong offset, a damaged copy),
//! downloaded with ranges, restored (the install carries the archive), deleted; an ended rental's
//! data kept for its renter only, noticed the day before and removed; daily backups and their
//! pruning; bad input. The real agent with real Docker: tests/api/apps/snapshots.rs.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::boxes::{act, beat, box_spec, bound_device, command_for, heartbeat, rented_running, running};
use crate::common::*;
use crate::scenario::{bare, each_says, get};

/// Alice's own box with grafana running on it: (alice, device, secret, installation).
async fn own_running(app: &TestApp) -> (String, String, String, String) {
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(app, &alice, "Z-BOX", box_spec(8, 0)).await;
    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "grafana", "device_id": dev}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    running(app, &secret, &id).await;
    (alice, dev, secret, id)
}

/// The snapshot command the box gets for `installation`, acknowledged once the box reports the
/// archive made (`data`'s size and sha256): answers the snapshot's id.
async fn made(app: &TestApp, secret: &str, installation: &str, data: &[u8]) -> String {
    let cmds = beat(app, secret, json!([]), json!([])).await;
    let cmd = command_for(&cmds, installation).clone();
    assert_eq!(cmd["kind"], "app_snapshot", "{cmd}");
    let sid = cmd["payload"]["snapshot_id"].as_str().expect("the snapshot to make").to_string();
    report(app, secret, &sid, data).await;
    beat(app, secret, json!([{"id": installation, "status": "running", "url": "http://10.0.0.9:32768/"}]), json!([{"id": cmd["id"], "ok": true}])).await;
    sid
}

async fn report(app: &TestApp, secret: &str, sid: &str, data: &[u8]) {
    let sha = hex::encode(Sha256::digest(data));
    let (s, b) = heartbeat(app, secret, json!({"snapshots": [{"id": sid, "status": "ready", "size": data.len(), "sha256": sha}]})).await;
    assert_eq!(s, 200, "{b}");
}

async fn snapshots_of(app: &TestApp, token: &str, installation: &str) -> Value {
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{installation}/snapshots"), token).await;
    assert_eq!(s, 200, "{b}");
    b["data"].clone()
}

async fn piece(app: &TestApp, secret: &str, sid: &str, start: usize, bytes: &[u8], total: usize) -> (u16, Value) {
    let res = app
        .client
        .put(app.url(&format!("/api/agent/v1/snapshots/{sid}/data")))
        .bearer_auth(secret)
        .header("Content-Range", format!("bytes {start}-{}/{total}", start + bytes.len() - 1))
        .body(bytes.to_vec())
        .send()
        .await
        .unwrap();
    json_of(res).await
}

async fn zh(app: &TestApp, method: reqwest::Method, path: &str, token: &str) -> (u16, Value) {
    json_of(app.client.request(method, app.url(path)).bearer_auth(token).header("Accept-Language", "zh").send().await.unwrap()).await
}

#[tokio::test]
async fn a_snapshot_is_kept_on_the_market_downloaded_and_deleted() {
    let app = TestApp::spawn().await;
    let (alice, _dev, secret, id) = own_running(&app).await;
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let (_, bob_secret) = bound_device(&app, &bob, "Z-BOX", box_spec(8, 0)).await;

    let (s, b) = act(&app, &alice, &id, "snapshot").await;
    assert_eq!((s, b["data"]["status"].as_str()), (200, Some("snapshotting")), "{b}");
    let list = snapshots_of(&app, &alice, &id).await;
    assert_eq!(list["total"], 1);
    assert_eq!(list["backups"], json!({"enabled": false, "keep": 7}));
    let first = &list["items"][0];
    assert_eq!((first["status"].as_str(), first["kind"].as_str(), first["where"].as_str()), (Some("creating"), Some("manual"), Some("box")), "{first}");

    // The box makes it (about 300 KB here), reports it, and the app runs again.
    let data: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2654435761) >> 7) as u8).collect();
    let sid = made(&app, &secret, &id, &data).await;
    assert_eq!(crate::boxes::get(&app, &alice, &id).await["status"], "running");
    let s1 = &snapshots_of(&app, &alice, &id).await["items"][0];
    assert_eq!((s1["id"].as_str(), s1["status"].as_str(), s1["size"].as_i64()), (Some(sid.as_str()), Some("ready"), Some(data.len() as i64)), "{s1}");
    assert_eq!(s1["sha256"].as_str(), Some(hex::encode(Sha256::digest(&data)).as_str()));
    assert_eq!((s1["installation_present"].as_bool(), s1["restoring"].as_bool()), (Some(true), Some(false)));

    // Not Bob's: every door answers 404.
    let not_found = ((404, "snapshot_not_found", None), ["Snapshot not found", "未找到该快照"]);
    let doors = [
        get(format!("/api/rmp/v1/snapshots/{sid}")),
        bare("POST", format!("/api/rmp/v1/snapshots/{sid}/upload")),
        get(format!("/api/rmp/v1/snapshots/{sid}/download")),
        bare("DELETE", format!("/api/rmp/v1/snapshots/{sid}")),
    ];
    let rows: Vec<_> = doors.iter().map(|door| (door, not_found.0, not_found.1)).collect();
    each_says(&app, Some(&bob), &rows).await;
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/restore"), &json!({"device_id": _dev}), Some(&bob)).await;
    assert_eq!(s, 404, "{b}");
    let (s, b) = zh(&app, reqwest::Method::GET, &format!("/api/rmp/v1/snapshots/{sid}"), &bob).await;
    assert_eq!((s, b["msg"].as_str()), (404, Some("未找到该快照")));

    // Only on the box: a download says to keep it on the market first.
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/snapshots/{sid}/download"), &alice).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("This snapshot is only on its box: keep it on the market first, then download it")));
    let (_, b) = zh(&app, reqwest::Method::GET, &format!("/api/rmp/v1/snapshots/{sid}/download"), &alice).await;
    assert_eq!(b["msg"], "该快照仅保存在设备上：请先保存到市场，再下载");

    // Keep it on the market: the box is told to copy it.
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/upload"), &json!({}), Some(&alice)).await;
    assert_eq!((s, b["data"]["uploading"].as_bool()), (200, Some(true)), "{b}");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let upload = cmds.iter().find(|c| c["kind"] == "snapshot_upload").expect("an upload command").clone();
    assert_eq!(upload["payload"], json!({"snapshot_id": sid}));

    // The box copies it in pieces: where it stands, a piece that does not start there, another
    // box's secret, a damaged copy (thrown away), then the right bytes.
    let offset = |secret: String| {
        let (app, sid) = (&app, sid.clone());
        async move { app.client.get(app.url(&format!("/api/agent/v1/snapshots/{sid}/upload"))).bearer_auth(secret).send().await.unwrap() }
    };
    let (s, b) = json_of(offset(secret.clone()).await).await;
    assert_eq!((s, b["data"].clone()), (200, json!({"offset": 0, "size": data.len()})));
    let (s, b) = json_of(offset(bob_secret.clone()).await).await;
    assert_eq!(s, 404, "{b}");
    let (s, b) = piece(&app, &secret, &sid, 5, &data[5..10], data.len()).await;
    assert_eq!((s, b["error"].as_str(), b["data"]["offset"].as_i64()), (409, Some("snapshot_offset"), Some(0)), "{b}");
    let (s, _) = piece(&app, &bob_secret, &sid, 0, &data[..100], data.len()).await;
    assert_eq!(s, 404);
    let half = data.len() / 2;
    let (s, b) = piece(&app, &secret, &sid, 0, &data[..half], data.len()).await;
    assert_eq!((s, b["data"]["offset"].as_u64()), (200, Some(half as u64)), "{b}");
    let mut damaged = data[half..].to_vec();
    damaged[10] ^= 0xff;
    let (s, b) = piece(&app, &secret, &sid, half, &damaged, data.len()).await;
    assert_eq!((s, b["error"].as_str()), (422, Some("snapshot_checksum")), "{b}");
    let (_, b) = json_of(offset(secret.clone()).await).await;
    assert_eq!(b["data"]["offset"], 0, "the damaged copy is thrown away");
    let (s, _) = piece(&app, &secret, &sid, 0, &data[..half], data.len()).await;
    assert_eq!(s, 200);
    let (s, b) = piece(&app, &secret, &sid, half, &data[half..], data.len()).await;
    assert_eq!((s, b["data"]["offset"].as_u64()), (200, Some(data.len() as u64)), "{b}");
    beat(&app, &secret, json!([]), json!([{"id": upload["id"], "ok": true}])).await;
    let s1 = &snapshots_of(&app, &alice, &id).await["items"][0];
    assert_eq!((s1["where"].as_str(), s1["uploading"].as_bool(), s1["on_box"].as_bool()), (Some("market"), Some(false), Some(true)), "{s1}");

    // The operator's overview counts what is kept, on the market and on the boxes.
    let op = token_of(&app.signed_in("op@example.com").await);
    crate::ops::make_operator(&app, "op@example.com");
    let (_, o) = app.get_auth("/api/ops/v1/overview", &op).await;
    assert_eq!(o["data"]["snapshots"], json!({"count": 1, "market_bytes": data.len(), "box_bytes": data.len()}), "{o}");

    // Downloaded whole and in ranges.
    let res = app.client.get(app.url(&format!("/api/rmp/v1/snapshots/{sid}/download"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(header(res.headers(), "content-disposition").starts_with("attachment; filename=\"grafana-"), "{:?}", res.headers());
    assert_eq!(res.bytes().await.unwrap().to_vec(), data);
    let res = app.client.get(app.url(&format!("/api/rmp/v1/snapshots/{sid}/download"))).bearer_auth(&alice).header("Range", "bytes=100-199").send().await.unwrap();
    assert_eq!(res.status(), 206);
    assert_eq!(res.bytes().await.unwrap().to_vec(), data[100..200].to_vec());

    // A browser's link: no credentials with it, resumable, for half an hour; a wrong or old
    // ticket finds nothing.
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/download-link"), &json!({}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let url = b["data"]["url"].as_str().unwrap().to_string();
    assert!(url.starts_with(&format!("/api/rmp/v1/snapshots/{sid}/file?ticket=")), "{url}");
    let res = app.client.get(app.url(&url)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(header(res.headers(), "content-disposition").starts_with("attachment;"));
    assert_eq!(res.bytes().await.unwrap().to_vec(), data);
    let res = app.client.get(app.url(&url)).header("Range", "bytes=10-19").send().await.unwrap();
    assert_eq!((res.status().as_u16(), res.bytes().await.unwrap().to_vec()), (206, data[10..20].to_vec()));
    let (s, _) = json_of(app.client.get(app.url(&format!("{}x", url))).send().await.unwrap()).await;
    assert_eq!(s, 404);
    let (s, _) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/download-link"), &json!({}), Some(&bob)).await;
    assert_eq!(s, 404, "not Bob's");
    {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        zmarket::db::entity::snapshots::Entity::update_many()
            .col_expr(zmarket::db::entity::snapshots::Column::DownloadTicketExpiresAt, sea_orm::sea_query::Expr::value(chrono::Utc::now() - chrono::Duration::seconds(1)))
            .filter(zmarket::db::entity::snapshots::Column::Id.eq(sid.clone()))
            .exec(&app.state.db)
            .await
            .unwrap();
    }
    let (s, _) = json_of(app.client.get(app.url(&url)).send().await.unwrap()).await;
    assert_eq!(s, 404, "an old link");

    // Deleted: gone from the market now, from the box by its command.
    let store = app.state.config.data_dir.join("snapshots").join(format!("{sid}.tar.zst"));
    assert!(store.exists());
    let (s, b) = json_of(app.client.delete(app.url(&format!("/api/rmp/v1/snapshots/{sid}"))).bearer_auth(&alice).send().await.unwrap()).await;
    assert_eq!(s, 200, "{b}");
    assert!(!store.exists());
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert!(cmds.iter().any(|c| c["kind"] == "snapshot_delete" && c["payload"]["snapshot_id"] == sid.as_str()), "{cmds:?}");
    assert_eq!(snapshots_of(&app, &alice, &id).await["total"], 0);
}

#[tokio::test]
async fn a_restore_carries_the_archive_and_holds_the_snapshot_until_it_is_done() {
    let app = TestApp::spawn().await;
    let (alice, dev, secret, id) = own_running(&app).await;
    let (dev2, secret2) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;
    act(&app, &alice, &id, "snapshot").await;
    let data = b"a tiny archive".to_vec();
    let sid = made(&app, &secret, &id, &data).await;

    // Bad input changes nothing.
    for (body, field) in [(json!({}), "device_id"), (json!({"device_id": dev, "hours": 0}), "hours"), (json!({"device_id": dev, "hours": 721}), "hours")] {
        let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/restore"), &body, Some(&alice)).await;
        assert_eq!((s, b["data"]["field"].as_str()), (400, Some(field)), "{body}: {b}");
    }
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/restore"), &json!({"device_id": "NOSUCHBOX"}), Some(&alice)).await;
    assert_eq!(s, 404, "{b}");

    // On the same box, once the app is gone from it (one installation of an app per box): the
    // install command carries the box's own archive.
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/restore"), &json!({"device_id": dev}), Some(&alice)).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("app_already_installed")), "{b}");
    act(&app, &alice, &id, "uninstall").await;
    crate::boxes::ack_pending(&app, &secret, &id, true, None).await;
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/restore"), &json!({"device_id": dev}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let restored = b["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(b["data"]["status"], "preparing");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let install = command_for(&cmds, &restored);
    assert_eq!(install["kind"], "app_install");
    assert_eq!(
        install["payload"]["restore"],
        json!({"snapshot_id": sid, "sha256": hex::encode(Sha256::digest(&data)), "size": data.len(), "path": format!("/api/agent/v1/snapshots/{sid}/data")})
    );
    // While it installs, the snapshot is held: no delete, no second restore.
    let s1 = &snapshots_of(&app, &alice, &id).await["items"][0];
    assert_eq!(s1["restoring"], true, "{s1}");
    let (s, b) = json_of(app.client.delete(app.url(&format!("/api/rmp/v1/snapshots/{sid}"))).bearer_auth(&alice).send().await.unwrap()).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("snapshot_restoring")), "{b}");
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/restore"), &json!({"device_id": dev2}), Some(&alice)).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("snapshot_restoring")), "{b}");
    // The restoring box may read it from the market; another may not.
    let (s, _) = json_of(app.client.get(app.url(&format!("/api/agent/v1/snapshots/{sid}/upload"))).bearer_auth(&secret2).send().await.unwrap()).await;
    assert_eq!(s, 404);
    running(&app, &secret, &restored).await;
    assert_eq!(snapshots_of(&app, &alice, &id).await["items"][0]["restoring"], false);

    // On another of her boxes while it is only on the first: the first box copies it to the
    // market and the second downloads it from there.
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/restore"), &json!({"device_id": dev2}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let other = b["data"]["id"].as_str().unwrap().to_string();
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert!(cmds.iter().any(|c| c["kind"] == "snapshot_upload" && c["payload"]["snapshot_id"] == sid.as_str()), "{cmds:?}");
    let cmds2 = beat(&app, &secret2, json!([]), json!([])).await;
    assert_eq!(command_for(&cmds2, &other)["payload"]["restore"]["snapshot_id"], sid.as_str());
    let (s, b) = json_of(app.client.get(app.url(&format!("/api/agent/v1/snapshots/{sid}/upload"))).bearer_auth(&secret2).send().await.unwrap()).await;
    assert_eq!((s, b["data"]["offset"].as_i64()), (200, Some(0)), "the second box waits for the copy: {b}");
    let (s, b) = json_of(app.client.get(app.url(&format!("/api/agent/v1/snapshots/{sid}/data"))).bearer_auth(&secret2).send().await.unwrap()).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("snapshot_not_on_market")));
    piece(&app, &secret, &sid, 0, &data, data.len()).await;
    let res = app.client.get(app.url(&format!("/api/agent/v1/snapshots/{sid}/data"))).bearer_auth(&secret2).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().to_vec(), data);
}

#[tokio::test]
async fn an_ended_rentals_data_is_kept_for_its_renter_then_removed() {
    let app = TestApp::spawn().await;
    // Alice rents Bob's box.
    let (alice, bob, _dev, secret, id) = rented_running(&app, 2).await;
    let row = zmarket::db::entity::installations::Entity::find_by_id(id.clone()).one(&app.state.db).await.unwrap().unwrap();
    use sea_orm::EntityTrait;
    assert!(zmarket::apps::rental::end(&app.state.db, &row).await.unwrap().is_some());
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let uninstall = command_for(&cmds, &id).clone();
    assert_eq!(uninstall["kind"], "app_uninstall");
    let sid = uninstall["payload"]["snapshot_id"].as_str().expect("the data is kept first").to_string();
    report(&app, &secret, &sid, b"the renter's data").await;
    beat(&app, &secret, json!([]), json!([{"id": uninstall["id"], "ok": true}])).await;

    let (s, b) = app.get_auth("/api/rmp/v1/snapshots", &alice).await;
    assert_eq!((s, b["data"]["total"].as_u64()), (200, Some(1)), "{b}");
    let kept = &b["data"]["items"][0];
    assert_eq!((kept["kind"].as_str(), kept["status"].as_str(), kept["installation_present"].as_bool()), (Some("ended"), Some("ready"), Some(false)), "{kept}");
    let expires: chrono::DateTime<chrono::Utc> = kept["expires_at"].as_str().unwrap().parse().unwrap();
    let days = (expires - chrono::Utc::now()).num_hours();
    assert!((167..=168).contains(&days), "kept for 7 days: {days} hours");
    // The box's owner does not see the renter's data.
    let (_, b) = app.get_auth("/api/rmp/v1/snapshots", &bob).await;
    assert_eq!(b["data"]["total"], 0);
    let (s, _) = app.get_auth(&format!("/api/rmp/v1/snapshots/{sid}"), &bob).await;
    assert_eq!(s, 404);

    // The day before it goes, one notice; then it goes, from the box too.
    let db = &app.state.db;
    let at = |t: chrono::DateTime<chrono::Utc>| {
        zmarket::db::entity::snapshots::Entity::update_many()
            .col_expr(zmarket::db::entity::snapshots::Column::ExpiresAt, sea_orm::sea_query::Expr::value(t))
            .filter(sea_orm::ColumnTrait::eq(&zmarket::db::entity::snapshots::Column::Id, sid.clone()))
            .exec(db)
    };
    use sea_orm::QueryFilter;
    at(chrono::Utc::now() + chrono::Duration::hours(12)).await.unwrap();
    zmarket::apps::snapshots::sweep(&app.state.apps).await.unwrap();
    zmarket::apps::snapshots::sweep(&app.state.apps).await.unwrap();
    let (_, n) = app.get_auth("/api/ebs/v1/notifications", &alice).await;
    let notices: Vec<&Value> = n["data"]["items"].as_array().unwrap().iter().filter(|n| n["kind"] == "snapshot_expiring").collect();
    assert_eq!(notices.len(), 1, "{n}");
    assert_eq!(notices[0]["path"], "/app");
    at(chrono::Utc::now() - chrono::Duration::minutes(1)).await.unwrap();
    zmarket::apps::snapshots::sweep(&app.state.apps).await.unwrap();
    let (_, b) = app.get_auth("/api/rmp/v1/snapshots", &alice).await;
    assert_eq!(b["data"]["total"], 0);
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert!(cmds.iter().any(|c| c["kind"] == "snapshot_delete" && c["payload"]["snapshot_id"] == sid.as_str()), "{cmds:?}");
}

#[tokio::test]
async fn daily_backups_are_taken_and_the_oldest_go() {
    let app = TestApp::spawn().await;
    let (alice, _dev, secret, id) = own_running(&app).await;
    for keep in [0, 31] {
        let (s, b) = app.put_json(&format!("/api/rmp/v1/apps/{id}/backups"), &json!({"enabled": true, "keep": keep}), &alice).await;
        assert_eq!((s, b["data"]["field"].as_str()), (400, Some("keep")), "{b}");
    }
    assert_eq!(snapshots_of(&app, &alice, &id).await["backups"]["enabled"], false, "bad input changes nothing");
    let (s, b) = app.put_json(&format!("/api/rmp/v1/apps/{id}/backups"), &json!({"enabled": true, "keep": 2}), &alice).await;
    assert_eq!((s, b["data"].clone()), (200, json!({"enabled": true, "keep": 2})));

    let mut taken = Vec::new();
    for n in 0..3 {
        zmarket::apps::snapshots::sweep(&app.state.apps).await.unwrap();
        let sid = made(&app, &secret, &id, format!("backup {n}").as_bytes()).await;
        // Not again the same day.
        zmarket::apps::snapshots::sweep(&app.state.apps).await.unwrap();
        let cmds = beat(&app, &secret, json!([]), json!([])).await;
        assert!(!cmds.iter().any(|c| c["kind"] == "app_snapshot"), "{cmds:?}");
        // A day passes.
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        zmarket::db::entity::snapshots::Entity::update_many()
            .col_expr(zmarket::db::entity::snapshots::Column::CreatedAt, sea_orm::sea_query::Expr::value(chrono::Utc::now() - chrono::Duration::hours(25 * (3 - n))))
            .filter(zmarket::db::entity::snapshots::Column::Id.eq(sid.clone()))
            .exec(&app.state.db)
            .await
            .unwrap();
        taken.push(sid);
    }
    let list = snapshots_of(&app, &alice, &id).await;
    let ids: Vec<&str> = list["items"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{list}");
    assert!(!ids.contains(&taken[0].as_str()), "the oldest backup went: {ids:?}");
    assert!(list["items"].as_array().unwrap().iter().all(|s| s["kind"] == "backup"));
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert!(cmds.iter().any(|c| c["kind"] == "snapshot_delete" && c["payload"]["snapshot_id"] == taken[0].as_str()), "{cmds:?}");
    // A pruned backup's copy in the market's store goes with the next run of the job; a kept
    // one's stays.
    let store = app.state.config.data_dir.join("snapshots");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join(format!("{}.tar.zst", taken[0])), b"pruned").unwrap();
    std::fs::write(store.join(format!("{}.tar.zst", taken[2])), b"kept").unwrap();
    zmarket::apps::snapshots::sweep(&app.state.apps).await.unwrap();
    assert!(!store.join(format!("{}.tar.zst", taken[0])).exists());
    assert!(store.join(format!("{}.tar.zst", taken[2])).exists());
}

#[tokio::test]
async fn a_snapshot_needs_room_and_its_failures_have_reasons() {
    let app = TestApp::spawn_with(|c| c.apps.snapshot_box_quota_bytes = 1000).await;
    let (alice, _dev, secret, id) = own_running(&app).await;
    act(&app, &alice, &id, "snapshot").await;
    made(&app, &secret, &id, &[7u8; 1500]).await;
    // The installation's snapshots fill its quota on the box: 413 with the limit, nothing queued.
    let (s, b) = act(&app, &alice, &id, "snapshot").await;
    assert_eq!((s, b["error"].as_str()), (413, Some("snapshot_box_quota")), "{b}");
    assert_eq!(b["msg"], "This app's snapshots on its box may use at most 1000 bytes: delete some first");
    assert_eq!(snapshots_of(&app, &alice, &id).await["total"], 1);
    // A failure the box reports is the snapshot's, with its reason (zh too).
    let list = snapshots_of(&app, &alice, &id).await;
    let sid = list["items"][0]["id"].as_str().unwrap().to_string();
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/upload"), &json!({}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let upload = cmds.iter().find(|c| c["kind"] == "snapshot_upload").unwrap().clone();
    beat(&app, &secret, json!([]), json!([{"id": upload["id"], "ok": false, "error": "x", "reason": {"code": "checksum_mismatch"}}])).await;
    let s1 = &snapshots_of(&app, &alice, &id).await["items"][0];
    assert_eq!((s1["where"].as_str(), s1["uploading"].as_bool(), s1["reason_code"].as_str()), (Some("box"), Some(false), Some("checksum_mismatch")), "{s1}");
}

#[tokio::test]
async fn a_renters_kept_data_comes_back_as_a_rental_elsewhere_and_the_market_has_a_limit() {
    let app = TestApp::spawn_with(|c| c.apps.snapshot_market_limit_bytes = 100).await;
    let (alice, _bob, _dev, secret, id) = rented_running(&app, 2).await;
    let row = zmarket::db::entity::installations::Entity::find_by_id(id.clone()).one(&app.state.db).await.unwrap().unwrap();
    use sea_orm::EntityTrait;
    zmarket::apps::rental::end(&app.state.db, &row).await.unwrap();
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let uninstall = command_for(&cmds, &id).clone();
    let sid = uninstall["payload"]["snapshot_id"].as_str().unwrap().to_string();
    report(&app, &secret, &sid, &[1u8; 300]).await;
    beat(&app, &secret, json!([]), json!([{"id": uninstall["id"], "ok": true}])).await;

    // Over the owner's limit on the market: 413 with the limit, nothing queued.
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/upload"), &json!({}), Some(&alice)).await;
    assert_eq!((s, b["error"].as_str(), b["msg"].as_str()), (413, Some("snapshot_quota"), Some("Your snapshots on the market may use at most 100 bytes: delete some first")), "{b}");
    let (_, zh) = zh(&app, reqwest::Method::POST, &format!("/api/rmp/v1/snapshots/{sid}/upload"), &alice).await;
    assert_eq!(zh["msg"], "您保存在市场上的快照最多占用 100 bytes：请先删除一些");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert!(!cmds.iter().any(|c| c["kind"] == "snapshot_upload"), "{cmds:?}");

    // Rented again on Carol's box from the kept data (its copy is asked of Bob's box; the
    // restore is refused while the market may not hold it).
    let carol = token_of(&app.signed_in("carol@example.com").await);
    let (carol_dev, carol_secret) = bound_device(&app, &carol, "Z-BOX", box_spec(8, 0)).await;
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{carol_dev}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 100}), &carol).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/restore"), &json!({"device_id": carol_dev, "hours": 1}), Some(&alice)).await;
    assert_eq!((s, b["error"].as_str()), (413, Some("snapshot_quota")), "{b}");
    {
        use sea_orm::{ColumnTrait, QueryFilter};
        zmarket::db::entity::snapshots::Entity::update_many()
            .col_expr(zmarket::db::entity::snapshots::Column::Size, sea_orm::sea_query::Expr::value(50i64))
            .filter(zmarket::db::entity::snapshots::Column::Id.eq(sid.clone()))
            .exec(&app.state.db)
            .await
            .unwrap();
    }
    let (s, b) = app.post_json(&format!("/api/rmp/v1/snapshots/{sid}/restore"), &json!({"device_id": carol_dev, "hours": 1}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!((b["data"]["kind"].as_str(), b["data"]["rental"]["price_per_hour"].as_i64()), (Some("rent"), Some(100)), "{b}");
    let rented = b["data"]["id"].as_str().unwrap().to_string();
    let cmds = beat(&app, &carol_secret, json!([]), json!([])).await;
    assert_eq!(command_for(&cmds, &rented)["payload"]["restore"]["snapshot_id"], sid.as_str());
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    assert!(cmds.iter().any(|c| c["kind"] == "snapshot_upload" && c["payload"]["snapshot_id"] == sid.as_str()), "{cmds:?}");
    crate::boxes::verified(&app).await;
}

/// Two restores of one snapshot at the same moment: one starts, the other is told a restore is
/// under way (the snapshot's row is locked: SQLite and PostgreSQL alike).
#[tokio::test]
async fn two_restores_at_once_make_one_installation() {
    let app = TestApp::spawn().await;
    let (alice, _dev, secret, id) = own_running(&app).await;
    let (dev2, _) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;
    let (dev3, _) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;
    act(&app, &alice, &id, "snapshot").await;
    let sid = made(&app, &secret, &id, b"one archive").await;
    let path = format!("/api/rmp/v1/snapshots/{sid}/restore");
    let (body2, body3) = (json!({"device_id": dev2}), json!({"device_id": dev3}));
    let (a, b) = tokio::join!(app.post_json(&path, &body2, Some(&alice)), app.post_json(&path, &body3, Some(&alice)));
    let mut answers = vec![(a.0, a.1["error"].as_str().map(str::to_string)), (b.0, b.1["error"].as_str().map(str::to_string))];
    answers.sort();
    assert_eq!(answers, vec![(200, None), (409, Some("snapshot_restoring".to_string()))], "{a:?} {b:?}");
}
