//! Issue 44 (what a newcomer hits, round three), the server's side: an app's revision and the
//! stale edit, the invitation that asks before joining, the app API's root with a trailing
//! slash, the API key that says it is not valid, `zmarket tunnel`'s sentences, the address a
//! renter never gets, and a quiet start.

use std::time::Duration;

use serde_json::{Value, json};

use crate::boxes::rented_running;
use crate::common::*;
use crate::ops::apps::docker_save_tar;
use crate::ops::{make_operator, send};

async fn call(app: &TestApp, method: reqwest::Method, path: &str, body: Option<&Value>, token: &str, lang: &str) -> (u16, Value) {
    let mut req = app.client.request(method, app.url(path)).bearer_auth(token).header("Accept-Language", lang);
    if let Some(b) = body {
        req = req.json(b);
    }
    json_of(req.send().await.expect("request")).await
}

async fn upload_image(app: &TestApp, token: &str, id: &str, tags: &[&str]) -> (u16, Value) {
    let part = reqwest::multipart::Part::bytes(docker_save_tar(tags)).file_name("a.tar").mime_str("application/x-tar").unwrap();
    let form = reqwest::multipart::Form::new().part("file", part);
    json_of(app.client.post(app.url(&format!("/api/ops/v1/apps/{id}/image"))).bearer_auth(token).multipart(form).send().await.unwrap()).await
}

fn wiki() -> Value {
    json!({
        "id": "team-wiki",
        "name_en": "Team Wiki", "name_zh": "团队维基",
        "summary_en": "Our own wiki for the team", "summary_zh": "团队自己的维基",
        "category": "Work", "display_type": "Server", "tier": "basic", "kind": "own",
        "publisher": "Acme IT", "version": "1.0",
        "requirements": {"cpu_cores": 1, "memory_bytes": 268435456, "disk_bytes": 1073741824, "gpu_count": 0},
        "image": "zmarket-test/httpd:1",
        "ports": [{"container": 80, "web": true, "name": "web"}],
    })
}

/// Item 1: a form opened before an archive upload cannot put the old image and version back.
#[tokio::test]
async fn a_stale_app_edit_is_refused_and_an_upload_moves_the_revision() {
    let app = TestApp::spawn().await;
    let op = token_of(&app.signed_in("op@example.com").await);
    make_operator(&app, "op@example.com");
    let (s, b) = app.post_json("/api/ops/v1/apps", &wiki(), Some(&op)).await;
    assert_eq!(s, 200, "{b}");
    let opened = b["data"]["revision"].as_i64().expect("a revision");
    let (_, b) = app.get_auth("/api/ops/v1/apps/team-wiki", &op).await;
    assert_eq!(b["data"]["revision"].as_i64(), Some(opened));

    // The archive holds another image: the app moves to it and to 1.0+r1, and its revision moves.
    let (s, b) = upload_image(&app, &op, "team-wiki", &["acme/wiki:2"]).await;
    assert_eq!((s, b["data"]["image"].as_str()), (200, Some("acme/wiki:2")), "{b}");
    let (_, b) = app.get_auth("/api/ops/v1/apps/team-wiki", &op).await;
    let now = b["data"].clone();
    assert_eq!((now["image"].as_str(), now["version"].as_str()), (Some("acme/wiki:2"), Some("1.0+r1")));
    let uploaded = now["revision"].as_i64().unwrap();
    assert!(uploaded > opened, "{now}");

    // The form opened before saves what it showed: refused in both languages, nothing changed.
    let stale = json!({"summary_en": "A new summary", "image": "zmarket-test/httpd:1", "version": "1.0", "revision": opened});
    let (s, b, _) = send(&app, "PUT", "/api/ops/v1/apps/team-wiki", Some(&stale), &op, "en", None).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("stale_edit")), "{b}");
    assert_eq!(
        b["msg"],
        "This app changed since you opened the form (an upload or another edit): it has been reloaded, check it and save again"
    );
    let (s, b, _) = send(&app, "PUT", "/api/ops/v1/apps/team-wiki", Some(&stale), &op, "zh-CN", None).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("打开表单后此应用已有改动（上传或其他编辑）：已重新载入，请检查后再保存")));
    let (_, b) = app.get_auth("/api/ops/v1/apps/team-wiki", &op).await;
    assert_eq!(b["data"], now, "a refused edit changes nothing");

    // Saved with the revision it now has: it applies, and the revision moves again.
    let fresh = json!({"summary_en": "A new summary", "revision": uploaded});
    let (s, b, _) = send(&app, "PUT", "/api/ops/v1/apps/team-wiki", Some(&fresh), &op, "en", None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!((b["data"]["summary_en"].as_str(), b["data"]["image"].as_str(), b["data"]["version"].as_str()), (Some("A new summary"), Some("acme/wiki:2"), Some("1.0+r1")));
    let saved = b["data"]["revision"].as_i64().unwrap();
    assert!(saved > uploaded);
    // The same form saved twice: the second save is stale.
    let (s, b, _) = send(&app, "PUT", "/api/ops/v1/apps/team-wiki", Some(&json!({"summary_en": "Again", "revision": uploaded})), &op, "en", None).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("stale_edit")));
    // An icon is a change too.
    let png = {
        let mut v = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, b'I', b'H', b'D', b'R'];
        v.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89]);
        v
    };
    let part = reqwest::multipart::Part::bytes(png).file_name("i.png").mime_str("image/png").unwrap();
    let res = app.client.post(app.url("/api/ops/v1/apps/team-wiki/icon")).bearer_auth(&op).multipart(reqwest::multipart::Form::new().part("file", part)).send().await.unwrap();
    let (s, b) = json_of(res).await;
    assert_eq!(s, 200, "{b}");
    assert!(b["data"]["revision"].as_i64().unwrap() > saved);
    let (s, b, _) = send(&app, "PUT", "/api/ops/v1/apps/team-wiki", Some(&json!({"summary_en": "Again", "revision": saved})), &op, "en", None).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("stale_edit")));
    // A revision that is no number of a revision names the field.
    let (s, b, _) = send(&app, "PUT", "/api/ops/v1/apps/team-wiki", Some(&json!({"summary_en": "x", "revision": -1})), &op, "en", None).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("revision")), "{b}");
}

/// Item 2: opening the link shows the invitation and changes nothing; Accept joins, Decline
/// declines.
#[tokio::test]
async fn an_invitation_link_asks_before_it_joins() {
    let app = TestApp::spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let (s, b) = app.put_json("/api/iam/v1/account/profile/info", &json!({"name": "Olivia"}), &token_of(&owner)).await;
    assert_eq!(s, 200, "{b}");
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let carol = token_of(&app.signed_in("carol@example.com").await);
    let (s, b) = app.post_json("/api/iam/v1/sme", &json!({"name": "Acme Compute"}), Some(&token_of(&owner))).await;
    assert_eq!(s, 200, "{b}");
    let company = b["data"]["id"].as_str().unwrap().to_string();
    let admin = token_of(&app.switch(&owner, &company).await);
    let bob_code = app.invite(&admin, "bob@example.com", "admin").await;
    let carol_code = app.invite(&admin, "carol@example.com", "member").await;

    // Opened (twice): what it is, nothing joined.
    for _ in 0..2 {
        let (s, b) = app.get_auth(&format!("/api/iam/v1/sme/join?code={bob_code}"), &bob).await;
        assert_eq!(s, 200, "{b}");
        let d = &b["data"];
        assert_eq!((d["company"].as_str(), d["invited_by"].as_str(), d["role"].as_str(), d["status"].as_str()), (Some("Acme Compute"), Some("Olivia"), Some("admin"), Some("invited")), "{b}");
        assert_eq!(d["sme_id"], company.as_str());
    }
    let (s, _) = app.post_json("/api/iam/v1/switch", &json!({"smeId": company}), Some(&bob)).await;
    assert_eq!(s, 403, "opening the link joined the company");
    let (_, records) = app.get_auth("/api/iam/v1/sme/member/records", &admin).await;
    assert!(records["data"]["items"].as_array().unwrap().iter().all(|r| r["status"] == "invited"), "{records}");

    // Bad answers: named, in both languages; nothing changes.
    let (s, b) = call(&app, reqwest::Method::POST, "/api/iam/v1/sme/join", Some(&json!({"code": bob_code})), &bob, "en").await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("accept")), "{b}");
    let (s, b) = call(&app, reqwest::Method::POST, "/api/iam/v1/sme/join", Some(&json!({"code": bob_code, "accept": true})), &carol, "zh-CN").await;
    assert_eq!((s, b["error"].as_str()), (403, Some("invitation_not_for_you")), "{b}");
    assert!(b["msg"].as_str().unwrap().chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "{b}");
    let (s, b) = call(&app, reqwest::Method::GET, "/api/iam/v1/sme/join?code=nope", None, &bob, "zh-CN").await;
    assert_eq!((s, b["msg"].as_str()), (404, Some("邀请不存在")));

    // Carol declines: not a member, the invitation is declined and cannot be accepted after.
    let (s, b) = app.post_json("/api/iam/v1/sme/join", &json!({"code": carol_code, "accept": false}), Some(&carol)).await;
    assert_eq!((s, b["data"]["status"].as_str()), (200, Some("declined")), "{b}");
    let (s, _) = app.post_json("/api/iam/v1/switch", &json!({"smeId": company}), Some(&carol)).await;
    assert_eq!(s, 403);
    let (_, b) = app.get_auth(&format!("/api/iam/v1/sme/join?code={carol_code}"), &carol).await;
    assert_eq!(b["data"]["status"], "declined");
    let (s, b) = app.post_json("/api/iam/v1/sme/join", &json!({"code": carol_code, "accept": true}), Some(&carol)).await;
    assert_eq!((s, b["data"]["status"].as_str()), (409, Some("declined")), "{b}");

    // Bob accepts: an admin of the company; the link then says so.
    let (s, b) = app.post_json("/api/iam/v1/sme/join", &json!({"code": bob_code, "accept": true}), Some(&bob)).await;
    assert_eq!((s, b["data"]["status"].as_str(), b["data"]["sme_id"].as_str()), (200, Some("accepted"), Some(company.as_str())), "{b}");
    let (s, b) = app.post_json("/api/iam/v1/switch", &json!({"smeId": company}), Some(&bob)).await;
    assert_eq!((s, b["data"]["userType"].as_str()), (200, Some("admin")), "{b}");
    let (_, b) = app.get_auth(&format!("/api/iam/v1/sme/join?code={bob_code}"), &bob).await;
    assert_eq!(b["data"]["status"], "accepted");
}

/// Items 3 and 7: the renter's views never carry the address on the box's network (the owner's
/// device page does), and the app API's root answers alike with and without a trailing slash.
#[tokio::test]
async fn a_renter_never_gets_the_box_network_address_and_the_api_root_takes_a_slash() {
    let app = TestApp::spawn().await;
    let (alice, bob, dev, _secret, id) = rented_running(&app, 2).await;
    const ADDRESS: &str = "10.0.0.9:32768";

    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/{id}"), &alice).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!((b["data"]["status"].as_str(), b["data"]["openable"].as_bool()), (Some("running"), Some(true)), "{b}");
    assert!(!b.to_string().contains(ADDRESS), "the renter got the box's address: {b}");
    for path in ["/api/rmp/v1/apps", "/api/rmp/v1/aicompute"] {
        let (s, b) = app.get_auth(path, &alice).await;
        assert_eq!(s, 200, "{path}: {b}");
        assert!(!b.to_string().contains(ADDRESS), "{path}: {b}");
    }
    // The box's owner sees where it runs on their network.
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/devices/{dev}/apps"), &bob).await;
    assert_eq!(s, 200, "{b}");
    let mine = b["data"]["items"].as_array().unwrap().iter().find(|i| i["id"] == id.as_str()).unwrap().clone();
    assert_eq!(mine["open_url"], format!("http://{ADDRESS}/"));

    // The API root: the same answer with the slash as without (the box's channel is not open
    // here, so both say so), never `api_not_found`.
    let (plain_s, plain) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/api"), &alice).await;
    let (slash_s, slash) = app.get_auth(&format!("/api/rmp/v1/apps/{id}/api/"), &alice).await;
    assert_ne!(slash["error"], "api_not_found", "{slash}");
    assert_eq!((slash_s, &slash["error"]), (plain_s, &plain["error"]), "{slash} vs {plain}");
    let (s, b) = app.get_auth("/api/rmp/v1/apps/nope/api/", &alice).await;
    assert_eq!(s, 404, "{b}");
    assert_ne!(b["error"], "api_not_found", "{b}");
}

/// Item 4: a key that is not valid says so, in both languages; a session keeps its own words.
#[tokio::test]
async fn an_invalid_api_key_is_named_and_the_tunnel_says_so_in_sentences() {
    let app = TestApp::spawn().await;
    let session = token_of(&app.signed_in("ada@example.com").await);
    let (s, b) = app.post_json("/api/iam/v1/api-keys", &json!({"name": "laptop"}), Some(&session)).await;
    assert_eq!(s, 200, "{b}");
    let (key, key_id) = (b["data"]["key"].as_str().unwrap().to_string(), b["data"]["id"].as_str().unwrap().to_string());
    assert_eq!(app.get_auth("/api/iam/v1/account/profile", &key).await.0, 200);
    let (s, _) = call(&app, reqwest::Method::DELETE, &format!("/api/iam/v1/api-keys/{key_id}"), None, &session, "en").await;
    assert_eq!(s, 200);
    for bad in [key.as_str(), "zk_not-a-key", "zk_"] {
        let (s, b) = call(&app, reqwest::Method::GET, "/api/iam/v1/account/profile", None, bad, "en").await;
        assert_eq!((s, b["error"].as_str(), b["msg"].as_str()), (401, Some("api_key_invalid"), Some("This API key is not valid: create a new one on your account page")), "{bad}");
        let (_, b) = call(&app, reqwest::Method::GET, "/api/iam/v1/account/profile", None, bad, "zh-CN").await;
        assert_eq!(b["msg"], "此 API 密钥无效：请在账户页面新建一个");
    }
    let (s, b) = app.get_auth("/api/iam/v1/account/profile", "not-a-token").await;
    assert_eq!((s, b["error"].as_str()), (401, Some("session_expired")));

    // `zmarket tunnel` with the revoked key: the market's sentence in the user's language.
    for (lang, want) in [
        (zmarket::lang::Lang::En, "The market refused the tunnel: This API key is not valid: create a new one on your account page."),
        (zmarket::lang::Lang::Zh, "市场拒绝了隧道：此 API 密钥无效：请在账户页面新建一个。"),
    ] {
        let err = tunnel_error(&app, "/api/rmp/v1/apps/anything/tcp?port=80", &key, lang).await;
        assert_eq!(err, want);
        assert!(!err.contains('{') && !err.contains("401"), "{err}");
    }
    // A refusal of a valid caller (no such installation) reads alike.
    let err = tunnel_error(&app, "/api/rmp/v1/apps/nope/tcp?port=80", &session, zmarket::lang::Lang::En).await;
    assert!(err.starts_with("The market refused the tunnel: ") && !err.contains('{'), "{err}");
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

/// Item 12: a server started with the default log settings says it listens, without the
/// scheduler's start-up chatter.
#[tokio::test]
async fn startup_logs_are_quiet_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = dir.path().join("out.log");
    let log = std::fs::File::create(&out).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_zmarket"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env_remove("ZMARKET_LOG__LEVEL")
        .env_remove("ZMARKET_DATABASE__URL")
        .env_remove("RUST_LOG")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut up = false;
    for _ in 0..600 {
        if reqwest::get(format!("http://127.0.0.1:{port}/healthz")).await.is_ok_and(|r| r.status() == 200) {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Lines are written by a thread of their own (src/telemetry.rs): give it a moment.
    for _ in 0..100 {
        if std::fs::read_to_string(&out).unwrap_or_default().contains("listening on") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(up, "zmarket serve did not answer: {text}");
    assert!(text.contains("listening on"), "{text}");
    for chatter in ["Uninited", "Job creator created", "Job creator", "Notification creator"] {
        assert!(!text.contains(chatter), "{chatter:?} at start-up:\n{text}");
    }
}

/// Item 10: every backup counts for the overview (`zmarket backup --to FILE` too), with its kind;
/// the console's "Back up now" writes into the backups folder.
#[tokio::test]
async fn every_backup_counts_and_the_console_backs_up_now() {
    let app = TestApp::spawn().await;
    if !app.state.config.database.url.is_empty() {
        return; // PostgreSQL: pg_dump's job (the refusal is below).
    }
    let op = token_of(&app.signed_in("op@example.com").await);
    make_operator(&app, "op@example.com");
    let person = token_of(&app.signed_in("p@example.com").await);
    let (_, b) = app.get_auth("/api/ops/v1/overview", &op).await;
    assert!(b["data"]["last_backup"].is_null(), "{b}");

    // A backup on the command line, to a file of the operator's choosing.
    let out = tempfile::tempdir().unwrap();
    let to = out.path().join("by-hand.sqlite3");
    let (ok, stdout, stderr) = cli(&app, &["backup", "--to", to.to_str().unwrap()]);
    assert!(ok, "{stdout}{stderr}");
    let (_, b) = app.get_auth("/api/ops/v1/overview", &op).await;
    let last = &b["data"]["last_backup"];
    assert_eq!((last["kind"].as_str(), last["file"].as_str()), (Some("manual"), to.to_str()), "{b}");
    assert_eq!(last["size"].as_u64(), Some(std::fs::metadata(&to).unwrap().len()));

    // Back up now: only for operators; a copy in the backups folder, the last backup, audited.
    let (s, b) = app.post_json("/api/ops/v1/backup", &json!({}), Some(&person)).await;
    assert_eq!(s, 403, "{b}");
    let (s, b) = app.post_json("/api/ops/v1/backup", &json!({}), Some(&op)).await;
    assert_eq!(s, 200, "{b}");
    let file = b["data"]["file"].as_str().unwrap().to_string();
    assert_eq!(b["data"]["kind"], "manual");
    let copy = app.state.config.data_dir.join("backups").join(&file);
    assert_eq!(b["data"]["size"].as_u64(), Some(std::fs::metadata(&copy).unwrap().len()));
    let (_, o) = app.get_auth("/api/ops/v1/overview", &op).await;
    assert_eq!((o["data"]["last_backup"]["file"].as_str(), o["data"]["last_backup"]["kind"].as_str()), (Some(file.as_str()), Some("manual")), "{o}");
    let (_, audit) = app.get_auth("/api/ops/v1/audit?action=backup.run", &op).await;
    assert_eq!(audit["data"]["items"][0]["detail"]["file"], file.as_str(), "{audit}");
    // The scheduled job does not take another at once (the folder's newest is fresh).
    let took = zmarket::ops::backup::run_due(&app.state.db, &app.state.config.data_dir, &app.state.config.backup, zmarket::db::now()).await.unwrap();
    assert_eq!(took, None);
}
