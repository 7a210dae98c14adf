//! Publishing apps from the operator's console: every call refused to others, create / edit /
//! hide / top pick reaching the market at once, bad fields named in both languages, icons, image
//! archives (415, 413, nothing kept), an image change offering the update to installations, a
//! stale edit refused (every change moves the app's revision), the seed merge keeping an
//! operator's edit, the audit.

use serde_json::{Value, json};

use super::{send, signed_in_operator};
use crate::apps::{act, beat, bound_device, box_spec, command_for, get};
use crate::common::*;
use crate::scenario::{self, Roles, refused_signed_out, refused_to, with};

/// A minimal `docker save` archive: a tar holding a manifest.json naming `tags`, and a layer.
pub(crate) fn docker_save_tar(tags: &[&str]) -> Vec<u8> {
    fn entry(out: &mut Vec<u8>, name: &str, data: &[u8]) {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..108].copy_from_slice(b"0000644\0");
        h[108..116].copy_from_slice(b"0000000\0");
        h[116..124].copy_from_slice(b"0000000\0");
        h[124..136].copy_from_slice(format!("{:011o}\0", data.len()).as_bytes());
        h[136..148].copy_from_slice(b"00000000000\0");
        h[156] = b'0';
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|b| *b as u32).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    let mut out = Vec::new();
    entry(&mut out, "layer.tar", &[7u8; 3000]);
    let manifest = json!([{"Config": "config.json", "RepoTags": tags, "Layers": ["layer.tar"]}]).to_string();
    entry(&mut out, "manifest.json", manifest.as_bytes());
    out.resize(out.len() + 1024, 0);
    out
}

fn new_app(id: &str) -> Value {
    json!({
        "id": id,
        "name_en": "Team Wiki", "name_zh": "团队维基",
        "summary_en": "Our own wiki for the team", "summary_zh": "团队自己的维基",
        "description_en": "Pages and search.", "description_zh": "页面与搜索。",
        "category": "Work", "display_type": "Server", "tier": "basic", "kind": "own",
        "publisher": "Acme IT", "version": "1.0",
        "requirements": {"cpu_cores": 1, "memory_bytes": 268435456, "disk_bytes": 1073741824, "gpu_count": 0},
        "image": "zmarket-test/httpd:1",
        "ports": [{"container": 80, "web": true, "name": "web"}],
        "volumes": [{"name": "data", "path": "/srv/data"}],
        "health": "/",
    })
}

async fn upload(app: &TestApp, token: &str, path: &str, bytes: Vec<u8>, file_name: &str, mime: &str, lang: &str) -> (u16, Value) {
    let part = reqwest::multipart::Part::bytes(bytes).file_name(file_name.to_string()).mime_str(mime).unwrap();
    let form = reqwest::multipart::Form::new().part("file", part);
    let res = app.client.post(app.url(path)).bearer_auth(token).header("Accept-Language", lang).multipart(form).send().await.unwrap();
    json_of(res).await
}

async fn market_search(app: &TestApp, keyword: &str) -> Vec<String> {
    let (s, b) = app.get_json(&format!("/api/ebs/v1/market/search?keyword={keyword}&language=en")).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["items"].as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap().to_string()).collect()
}

async fn audit_actions(app: &TestApp, token: &str) -> Vec<Value> {
    let (s, b) = app.get_auth("/api/ops/v1/audit?limit=100", token).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["items"].as_array().unwrap().clone()
}

fn files_in(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default()
}

async fn stored_archives(app: &TestApp) -> i64 {
    use sea_orm::{EntityTrait, PaginatorTrait};
    zmarket::db::entity::app_images::Entity::find().count(&app.state.db).await.unwrap() as i64
}

#[tokio::test]
async fn every_publishing_call_refuses_people_company_admins_and_members() {
    let app = TestApp::spawn().await;
    let roles = Roles::new(&app).await;
    let op = token_of(&roles.operator);
    let calls = [
        scenario::get("/api/ops/v1/apps"),
        with("POST", "/api/ops/v1/apps", new_app("wiki")),
        scenario::get("/api/ops/v1/apps/grafana"),
        with("PUT", "/api/ops/v1/apps/grafana", json!({"listed": false})),
    ];
    refused_to(&app, &roles.others(), &calls, "en", 403, "not_operator").await;
    refused_signed_out(&app, &calls[..1]).await;
    // The uploads (multipart), in both languages.
    for who in roles.others() {
        let t = token_of(who);
        let (s, b) = upload(&app, &t, "/api/ops/v1/apps/grafana/icon", vec![0x89, b'P', b'N', b'G'], "i.png", "image/png", "zh").await;
        assert_eq!((s, b["error"].as_str(), b["msg"].as_str()), (403, Some("not_operator"), Some("只有市场运营者可以执行此操作")));
        let (s, b) = upload(&app, &t, "/api/ops/v1/apps/grafana/image", docker_save_tar(&["x/y:1"]), "a.tar", "application/x-tar", "en").await;
        assert_eq!((s, b["error"].as_str()), (403, Some("not_operator")));
    }
    // Nothing changed: grafana is listed, no archive, no wiki.
    let (_, b) = app.get_auth("/api/ops/v1/apps?q=grafana", &op).await;
    assert_eq!(b["data"]["items"][0]["listed"], true);
    assert_eq!(stored_archives(&app).await, 0);
    assert_eq!(app.get_auth("/api/ops/v1/apps/wiki", &op).await.0, 404);
}

#[tokio::test]
async fn an_operator_publishes_edits_hides_and_picks_an_app_and_the_market_shows_it_at_once() {
    let app = TestApp::spawn().await;
    let op = signed_in_operator(&app).await;
    let (s, listed) = app.get_auth("/api/ops/v1/apps", &op).await;
    assert_eq!(s, 200, "{listed}");
    let seeds = listed["data"]["total"].as_u64().unwrap();
    assert_eq!(seeds, 50);
    let grafana = listed["data"]["items"].as_array().unwrap().iter().find(|a| a["id"] == "grafana").unwrap().clone();
    assert_eq!((grafana["origin"].as_str(), grafana["image"].as_str()), (Some("seed"), Some("grafana/grafana:11.5.0")));

    // Publish.
    let (s, b) = app.post_json("/api/ops/v1/apps", &new_app("team-wiki"), Some(&op)).await;
    assert_eq!(s, 200, "{b}");
    let a = &b["data"];
    assert_eq!((a["origin"].as_str(), a["listed"].as_bool(), a["top_pick"].as_bool()), (Some("local"), Some(true), Some(false)));
    assert_eq!(a["ports"], json!([{"container": 80, "web": true, "name": "web", "protocol": "tcp"}]));
    assert_eq!((a["health"].as_str(), a["volumes"][0]["path"].as_str()), (Some("/"), Some("/srv/data")));
    // The market, its search (either language's words) and details show it at once.
    assert_eq!(market_search(&app, "wiki").await, vec!["team-wiki"]);
    assert_eq!(market_search(&app, "维基").await, vec!["team-wiki"]);
    let (s, d) = app.get_json("/api/ebs/v1/market/applications/team-wiki?language=zh").await;
    assert_eq!((s, d["data"]["name"].as_str(), d["data"]["publisher"].as_str()), (200, Some("团队维基"), Some("Acme IT")));
    let (_, l) = app.get_json("/api/ebs/v1/market/applications?category=Work&limit=100").await;
    assert!(l["data"]["items"].as_array().unwrap().iter().any(|a| a["id"] == "team-wiki"), "{l}");
    let (_, all) = app.get_auth("/api/ops/v1/apps", &op).await;
    assert_eq!(all["data"]["total"], seeds + 1);

    // The same id again, or a seed app's: 409, in both languages.
    let (s, b) = app.post_json("/api/ops/v1/apps", &new_app("team-wiki"), Some(&op)).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("An app with this id already exists")));
    let (s, b, _) = send(&app, "POST", "/api/ops/v1/apps", Some(&new_app("grafana")), &op, "zh", None).await;
    assert_eq!((s, b["msg"].as_str()), (409, Some("该应用 ID 已存在")));

    // Edit a text: the version stays (the manifest did not change).
    let (s, b) = app.put_json("/api/ops/v1/apps/team-wiki", &json!({"summary_en": "The wiki of every team"}), &op).await;
    assert_eq!((s, b["data"]["summary_en"].as_str(), b["data"]["version"].as_str()), (200, Some("The wiki of every team"), Some("1.0")), "{b}");
    assert_eq!(market_search(&app, "every team").await, vec!["team-wiki"]);

    // Hide: gone from the market's list, search and details; the console still has it.
    let (s, b) = app.put_json("/api/ops/v1/apps/team-wiki", &json!({"listed": false}), &op).await;
    assert_eq!((s, b["data"]["listed"].as_bool()), (200, Some(false)));
    assert!(market_search(&app, "wiki").await.is_empty());
    assert_eq!(app.get_json("/api/ebs/v1/market/applications/team-wiki").await.0, 404);
    let (_, hidden) = app.get_auth("/api/ops/v1/apps?listed=false", &op).await;
    assert_eq!(hidden["data"]["items"].as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap()).collect::<Vec<_>>(), vec!["team-wiki"]);
    // Show, and make it a top pick.
    let (s, b) = app.put_json("/api/ops/v1/apps/team-wiki", &json!({"listed": true, "top_pick": true}), &op).await;
    assert_eq!((s, b["data"]["top_pick"].as_bool()), (200, Some(true)));
    let (_, picks) = app.get_json("/api/ebs/v1/market/applications?category=top_picks&limit=100").await;
    assert!(picks["data"]["items"].as_array().unwrap().iter().any(|a| a["id"] == "team-wiki"), "{picks}");
    // A seed app hidden and shown the same way.
    assert_eq!(app.put_json("/api/ops/v1/apps/grafana", &json!({"listed": false}), &op).await.0, 200);
    assert!(market_search(&app, "grafana").await.is_empty());
    assert_eq!(app.put_json("/api/ops/v1/apps/grafana", &json!({"listed": true}), &op).await.0, 200);
    assert_eq!(market_search(&app, "grafana").await, vec!["grafana"]);
    // Unknown app: 404.
    assert_eq!(app.put_json("/api/ops/v1/apps/nope", &json!({"listed": true}), &op).await.0, 404);

    // Every write is audited: who, what, before and after.
    let audit = audit_actions(&app, &op).await;
    let apps: Vec<&Value> = audit.iter().filter(|e| e["target"].as_str().is_some_and(|t| t.starts_with("app:"))).collect();
    let actions: Vec<&str> = apps.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, vec!["app.update", "app.update", "app.update", "app.update", "app.update", "app.create"], "{audit:?}");
    assert!(apps.iter().all(|e| e["operator"] == "op@example.com"));
    let hide = apps[3];
    assert_eq!((hide["target"].as_str(), &hide["detail"]["before"], &hide["detail"]["after"]), (Some("app:team-wiki"), &json!({"listed": true}), &json!({"listed": false})));
    assert_eq!(apps[5]["detail"]["after"]["image"], "zmarket-test/httpd:1");
    let (_, filtered) = app.get_auth("/api/ops/v1/audit?action=app.create", &op).await;
    assert_eq!(filtered["data"]["total"], 1);
}

#[tokio::test]
async fn choices_are_read_in_any_case_and_stored_as_the_catalogue_spells_them() {
    let app = TestApp::spawn().await;
    let op = signed_in_operator(&app).await;
    let mut body = new_app("team-wiki");
    (body["category"], body["tier"], body["kind"]) = (json!(" z-cloud "), json!("HIGH"), json!("Rent"));
    let (s, b) = app.post_json("/api/ops/v1/apps", &body, Some(&op)).await;
    assert_eq!(s, 200, "{b}");
    let read = |a: &Value| [a["category"].clone(), a["tier"].clone(), a["kind"].clone()];
    assert_eq!(read(&b["data"]), [json!("Z-CLOUD"), json!("high"), json!("rent")]);
    assert_eq!(stored(&app, "SELECT category, tier, kind FROM apps WHERE id = 'team-wiki'").await, [["Z-CLOUD", "high", "rent"]]);
    // The market answers them as stored, and finds the app by them in any case.
    let (_, d) = app.get_json("/api/ebs/v1/market/applications/team-wiki").await;
    assert_eq!(read(&d["data"]), [json!("Z-CLOUD"), json!("high"), json!("rent")]);
    let (_, l) = app.get_json("/api/ebs/v1/market/search?keyword=wiki&category=Z-Cloud&tier=High").await;
    assert_eq!(l["data"]["items"].as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap()).collect::<Vec<_>>(), ["team-wiki"], "{l}");
    let (_, l) = app.get_json("/api/ebs/v1/market/search?keyword=wiki&tier=basic").await;
    assert_eq!(l["data"]["total"], 0, "{l}");
    // An edit changes one of them and keeps the others.
    let (s, b) = app.put_json("/api/ops/v1/apps/team-wiki", &json!({"tier": "Standard"}), &op).await;
    assert_eq!((s, read(&b["data"])), (200, [json!("Z-CLOUD"), json!("standard"), json!("rent")]), "{b}");
}

#[tokio::test]
async fn bad_fields_are_refused_naming_the_field_in_both_languages_and_change_nothing() {
    let app = TestApp::spawn().await;
    let op = signed_in_operator(&app).await;
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        ("id", json!("Team Wiki"), "The app id must be 1 to 64 lowercase letters, digits and single dashes, e.g. my-app", "应用 ID 须为 1 到 64 个小写字母、数字和单个连字符，例如 my-app"),
        ("name_en", json!(""), "Give the name in English and Chinese, 1 to 60 characters each", "请填写中英文名称，各 1 到 60 个字符"),
        ("name_zh", json!("x".repeat(61)), "Give the name in English and Chinese, 1 to 60 characters each", "请填写中英文名称，各 1 到 60 个字符"),
        ("summary_en", json!("   "), "Give the summary in English and Chinese, 1 to 200 characters each", "请填写中英文简介，各 1 到 200 个字符"),
        ("description_zh", json!("长".repeat(5001)), "The description may be at most 5000 characters", "描述最多 5000 个字符"),
        ("category", json!("Toys"), "category must be one of: AI, Metaverse, Game, Work, Home, Others, Z-CLOUD", "category 须为以下之一：AI、Metaverse、Game、Work、Home、Others、Z-CLOUD"),
        ("display_type", json!("Phone"), "display_type must be one of: Desktop, Lite App, NAS, AI compute, Server, Remote desktop, AI server, Z-SERVER", "display_type 须为以下之一：Desktop、Lite App、NAS、AI compute、Server、Remote desktop、AI server、Z-SERVER"),
        ("tier", json!("gold"), "tier must be one of: high, standard, basic", "tier 须为以下之一：high、standard、basic"),
        ("kind", json!("lease"), "kind must be one of: own, rent", "kind 须为以下之一：own、rent"),
        ("publisher", json!(""), "The publisher must be 1 to 60 characters", "发布者须为 1 到 60 个字符"),
        ("version", json!("1.0 beta"), "The version must be 1 to 40 letters, digits, dots, dashes or plus signs", "版本须为 1 到 40 个字母、数字、点、连字符或加号"),
        ("requirements", json!({"cpu_cores": 0, "memory_bytes": 1, "disk_bytes": 1, "gpu_count": 0}), "Requirements are whole numbers: at least 1 CPU core, memory and disk of at least 0 bytes, 0 to 16 GPUs", "需求须为整数：至少 1 个 CPU 核心，内存和磁盘不小于 0 字节，GPU 0 到 16 个"),
        ("image", json!("httpd"), "The image must be a reference with a tag, e.g. registry.example.com/team/app:1.0", "镜像须为带标签的引用，例如 registry.example.com/team/app:1.0"),
        ("ports", json!([{"container": 80, "web": true}, {"container": 8080, "web": true}]), "Ports are container ports 1 to 65535, each once, TCP or UDP, with at most one web port (TCP) and names of at most 40 characters", "端口须为 1 到 65535 的容器端口，各出现一次，TCP 或 UDP，最多一个网页端口（TCP），名称最多 40 个字符"),
        ("ports", json!([{"container": 70000, "web": false}]), "Ports are container ports 1 to 65535, each once, TCP or UDP, with at most one web port (TCP) and names of at most 40 characters", "端口须为 1 到 65535 的容器端口，各出现一次，TCP 或 UDP，最多一个网页端口（TCP），名称最多 40 个字符"),
        ("volumes", json!([{"name": "data", "path": "relative/path"}]), "A volume needs a name (lowercase letters, digits and dashes, each name once) and an absolute path inside the container", "数据卷须有名称（小写字母、数字和连字符，不可重复）和容器内的绝对路径"),
        ("health", json!("healthz"), "The health path must start with / and needs a web port", "健康检查路径须以 / 开头，且需要一个网页端口"),
    ];
    for (field, value, en, zh) in &cases {
        let mut body = new_app("team-wiki");
        body[*field] = value.clone();
        for (lang, want) in [("en", en), ("zh", zh)] {
            let (s, b, _) = send(&app, "POST", "/api/ops/v1/apps", Some(&body), &op, lang, None).await;
            assert_eq!((s, b["data"]["field"].as_str(), b["msg"].as_str()), (400, Some(*field), Some(*want)), "{field} {lang}: {b}");
        }
    }
    // A missing required field is named too; a health path without a web port.
    let mut body = new_app("team-wiki");
    body.as_object_mut().unwrap().remove("name_zh");
    let (s, b) = app.post_json("/api/ops/v1/apps", &body, Some(&op)).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("name_zh")));
    let mut body = new_app("team-wiki");
    body["ports"] = json!([{"container": 80, "web": false}]);
    let (s, b) = app.post_json("/api/ops/v1/apps", &body, Some(&op)).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("health")), "{b}");
    // Nothing was published.
    assert_eq!(app.get_auth("/api/ops/v1/apps/team-wiki", &op).await.0, 404);
    assert!(audit_actions(&app, &op).await.iter().all(|e| e["action"] != "app.create"));

    // A missing choice is refused listing the choices.
    for field in ["category", "tier", "kind"] {
        let mut body = new_app("team-wiki");
        body.as_object_mut().unwrap().remove(field);
        let (s, b, _) = send(&app, "POST", "/api/ops/v1/apps", Some(&body), &op, "zh", None).await;
        let want = cases.iter().find(|c| c.0 == field).unwrap().3;
        assert_eq!((s, b["data"]["field"].as_str(), b["msg"].as_str()), (400, Some(field), Some(want)), "{field}: {b}");
    }

    // An edit with a bad field changes nothing either.
    let (s, b, _) = send(&app, "PUT", "/api/ops/v1/apps/grafana", Some(&json!({"name_en": "Grafana 2", "tier": "gold"})), &op, "zh", None).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("tier")));
    let (_, g) = app.get_auth("/api/ops/v1/apps/grafana", &op).await;
    assert_eq!(g["data"]["name_en"], "Grafana");
}

#[tokio::test]
async fn icons_are_checked_stored_and_served_with_a_cache_header() {
    let app = TestApp::spawn().await;
    let op = signed_in_operator(&app).await;
    assert_eq!(app.post_json("/api/ops/v1/apps", &new_app("team-wiki"), Some(&op)).await.0, 200);
    // A 1x1 PNG.
    let png: Vec<u8> = vec![
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1F, 0x15,
        0xC4, 0x89, 0, 0, 0, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x60, 0, 0, 0, 2, 0, 1, 0xE2, 0x21, 0xBC, 0x33, 0, 0, 0, 0, 0x49, 0x45,
        0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ];
    let (s, b) = upload(&app, &op, "/api/ops/v1/apps/team-wiki/icon", b"<svg onload=alert(1)>".to_vec(), "i.svg", "image/svg+xml", "en").await;
    assert_eq!((s, b["msg"].as_str()), (415, Some("The icon must be a PNG, JPEG or WebP image")));
    let (s, b) = upload(&app, &op, "/api/ops/v1/apps/team-wiki/icon", vec![0x89; 300 * 1024], "big.png", "image/png", "zh").await;
    assert_eq!((s, b["msg"].as_str()), (413, Some("图标不能超过 256 KB")));
    let (s, b) = upload(&app, &op, "/api/ops/v1/apps/team-wiki/icon", png.clone(), "i.png", "image/png", "en").await;
    assert_eq!(s, 200, "{b}");
    let url = b["data"]["icon_url"].as_str().unwrap().to_string();
    assert!(url.starts_with("/api/ebs/v1/market/icons/team-wiki?v="), "{url}");
    // The market's cards name it, and it is served with a long cache.
    let (_, d) = app.get_json("/api/ebs/v1/market/applications/team-wiki").await;
    assert_eq!(d["data"]["icon_url"], url.as_str());
    let res = app.get(&url).await;
    assert_eq!(res.status(), 200);
    assert_eq!(header(res.headers(), "content-type"), "image/png");
    assert_eq!(header(res.headers(), "cache-control"), "public, max-age=31536000, immutable");
    assert_eq!(res.bytes().await.unwrap().to_vec(), png);
    assert_eq!(app.get("/api/ebs/v1/market/icons/grafana").await.status(), 404);
    assert_eq!(audit_actions(&app, &op).await[0]["action"], "app.icon");
}

#[tokio::test]
async fn an_archive_that_is_not_a_docker_save_tar_or_too_large_is_refused_and_nothing_is_kept() {
    let app = TestApp::spawn_with(|c| {
        c.apps.max_image_bytes = 64 * 1024;
        c.server.body_limit_bytes = 4 * 1024;
    })
    .await;
    let op = signed_in_operator(&app).await;
    assert_eq!(app.post_json("/api/ops/v1/apps", &new_app("team-wiki"), Some(&op)).await.0, 200);
    let images = app.state.config.data_dir.join("images");
    let path = "/api/ops/v1/apps/team-wiki/image";

    let (s, b) = upload(&app, &op, path, b"hello, not a tar".repeat(100), "a.tar", "application/x-tar", "en").await;
    assert_eq!((s, b["msg"].as_str()), (415, Some("This is not an image archive made with docker save (a tar with manifest.json and tagged images)")), "{b}");
    // A tar with no tagged image is not one either.
    let (s, b) = upload(&app, &op, path, docker_save_tar(&[]), "a.tar", "application/x-tar", "zh").await;
    assert_eq!((s, b["msg"].as_str()), (415, Some("这不是用 docker save 生成的镜像归档（须为含 manifest.json 和带标签镜像的 tar）")));
    let mut big = docker_save_tar(&["zmarket-test/httpd:1"]);
    big.resize(70 * 1024, 0);
    let (s, b) = upload(&app, &op, path, big, "a.tar", "application/x-tar", "en").await;
    assert_eq!((s, b["msg"].as_str()), (413, Some("The archive is larger than this market accepts (64 KiB)")), "{b}");
    let (s, _) = upload(&app, &op, path, vec![], "a.tar", "application/x-tar", "en").await;
    assert_eq!(s, 400);
    // Nothing stored: no archive listed, no file left behind, the app unchanged.
    assert_eq!(stored_archives(&app).await, 0);
    assert!(files_in(&images).is_empty(), "{:?}", files_in(&images));
    let (_, a) = app.get_auth("/api/ops/v1/apps/team-wiki", &op).await;
    assert_eq!((a["data"]["version"].as_str(), &a["data"]["archive"]), (Some("1.0"), &Value::Null));
    assert!(audit_actions(&app, &op).await.iter().all(|e| e["action"] != "app.image"));
    // An unknown app: 404 before the body is read.
    let (s, _) = upload(&app, &op, "/api/ops/v1/apps/nope/image", docker_save_tar(&["a/b:1"]), "a.tar", "application/x-tar", "en").await;
    assert_eq!(s, 404);
    // The route takes archives far over `server.body_limit_bytes` (configured at 4 KiB here),
    // up to `max_image_bytes`.
    let mut fits = docker_save_tar(&["zmarket-test/httpd:1"]);
    fits.resize(60 * 1024, 0);
    let (s, b) = upload(&app, &op, path, fits, "a.tar", "application/x-tar", "en").await;
    assert_eq!((s, b["data"]["size"].as_u64()), (200, Some(60 * 1024)), "{b}");
    assert_eq!(stored_archives(&app).await, 1);
    assert_eq!(files_in(&images), vec![format!("{}.tar", b["data"]["sha256"].as_str().unwrap())]);
}

#[tokio::test]
async fn an_uploaded_archive_is_what_agents_install_and_an_image_change_offers_the_update() {
    let app = TestApp::spawn().await;
    let op = signed_in_operator(&app).await;
    assert_eq!(app.post_json("/api/ops/v1/apps", &new_app("team-wiki"), Some(&op)).await.0, 200);
    // The archive holds the app's image: the image stays, the archive is listed with it.
    let tar = docker_save_tar(&["zmarket-test/httpd:1"]);
    let (s, b) = upload(&app, &op, "/api/ops/v1/apps/team-wiki/image", tar.clone(), "httpd.tar", "application/x-tar", "en").await;
    assert_eq!(s, 200, "{b}");
    let sha = b["data"]["sha256"].as_str().unwrap().to_string();
    assert_eq!((b["data"]["size"].as_u64(), b["data"]["image"].as_str()), (Some(tar.len() as u64), Some("zmarket-test/httpd:1")));
    let (_, a) = app.get_auth("/api/ops/v1/apps/team-wiki", &op).await;
    assert_eq!((a["data"]["archive"]["sha256"].as_str(), a["data"]["version"].as_str()), (Some(sha.as_str()), Some("1.0")));
    // The same store as `zmarket images add`.
    let (ok, out, err) = cli(&app, &["images", "list"]);
    assert!(ok && out.contains(&sha) && out.contains("zmarket-test/httpd:1"), "{out}{err}");

    // A box installs it: the command carries the published manifest and the archive.
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", box_spec(8, 0)).await;
    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "team-wiki", "device_id": dev}), Some(&alice)).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let cmd = command_for(&cmds, &id).clone();
    let m = &cmd["payload"]["manifest"];
    assert_eq!((m["image"].as_str(), m["ports"][0]["container"].as_u64(), m["ports"][0]["web"].as_bool()), (Some("zmarket-test/httpd:1"), Some(80), Some(true)), "{cmd}");
    assert_eq!((m["volumes"][0]["path"].as_str(), m["health"]["path"].as_str()), (Some("/srv/data"), Some("/")));
    assert_eq!(cmd["payload"]["archive"]["sha256"], sha.as_str());
    beat(&app, &secret, json!([{"id": id, "status": "running", "url": "http://10.0.0.5:32768/"}]), json!([{"id": cmd["id"], "ok": true}])).await;
    let d = get(&app, &alice, &id).await;
    assert_eq!((d["status"].as_str(), d["version"].as_str(), d["update_available"].clone()), (Some("running"), Some("1.0"), Value::Null));

    // A new image without a new version: the version moves, installations see the update.
    let (s, b) = app.put_json("/api/ops/v1/apps/team-wiki", &json!({"image": "zmarket-test/httpd:2"}), &op).await;
    assert_eq!((s, b["data"]["version"].as_str()), (200, Some("1.0+r1")), "{b}");
    let d = get(&app, &alice, &id).await;
    assert_eq!(d["update_available"], "1.0+r1");
    assert!(d["actions"].as_array().unwrap().contains(&json!("update")), "{d}");
    // An archive holding another image: the app now installs that one, a new revision.
    let (s, b) = upload(&app, &op, "/api/ops/v1/apps/team-wiki/image", docker_save_tar(&["zmarket-test/httpd:3"]), "h3.tar", "application/x-tar", "en").await;
    assert_eq!((s, b["data"]["image"].as_str()), (200, Some("zmarket-test/httpd:3")), "{b}");
    assert_eq!(get(&app, &alice, &id).await["update_available"], "1.0+r2");
    // An explicit new version is kept as given.
    let (_, b) = app.put_json("/api/ops/v1/apps/team-wiki", &json!({"version": "2.0", "ports": [{"container": 80, "web": true, "name": "site"}, {"container": 53, "protocol": "udp"}]}), &op).await;
    assert_eq!(b["data"]["version"], "2.0", "{b}");
    assert_eq!(get(&app, &alice, &id).await["update_available"], "2.0");
    // The update carries the new manifest and its archive.
    let (s, b) = act(&app, &alice, &id, "update").await;
    assert_eq!(s, 200, "{b}");
    let cmds = beat(&app, &secret, json!([]), json!([])).await;
    let cmd = command_for(&cmds, &id).clone();
    assert_eq!((cmd["kind"].as_str(), cmd["payload"]["manifest"]["image"].as_str(), cmd["payload"]["version"].as_str()), (Some("app_update"), Some("zmarket-test/httpd:3"), Some("2.0")), "{cmd}");
    assert_eq!(cmd["payload"]["manifest"]["ports"][1], json!({"container": 53, "protocol": "udp", "web": false, "scheme": null}));
    assert!(cmd["payload"]["archive"]["sha256"].is_string(), "{cmd}");
    let image_audit: Vec<Value> = audit_actions(&app, &op).await.into_iter().filter(|e| e["action"] == "app.image").collect();
    assert_eq!(image_audit.len(), 2);
    assert_eq!((&image_audit[0]["detail"]["before"]["image"], &image_audit[0]["detail"]["after"]["image"]), (&json!("zmarket-test/httpd:2"), &json!("zmarket-test/httpd:3")));
}

#[tokio::test]
async fn the_seed_merge_keeps_what_an_operator_changed() {
    let app = TestApp::spawn().await;
    let op = signed_in_operator(&app).await;
    let (s, _) = app.put_json("/api/ops/v1/apps/grafana", &json!({"name_en": "Dashboards", "image": "registry.local/grafana:11.5.0", "listed": false}), &op).await;
    assert_eq!(s, 200);
    assert_eq!(app.post_json("/api/ops/v1/apps", &new_app("team-wiki"), Some(&op)).await.0, 200);
    // A later binary's catalogue: grafana gets a new summary and version; a new app under the
    // local app's id.
    let mut cat: Value = serde_json::from_str(&zmarket::market::seed::embedded_catalogue().unwrap()).unwrap();
    let apps = cat["apps"].as_array_mut().unwrap();
    let g = apps.iter_mut().find(|a| a["slug"] == "grafana").unwrap();
    g["summary"]["en"] = json!("Dashboards for everything, newer");
    g["version"] = json!("12.0.0");
    g["name"]["en"] = json!("Grafana 12");
    let mut wiki = apps[0].clone();
    wiki["slug"] = json!("team-wiki");
    wiki["name"]["en"] = json!("Catalogue Wiki");
    apps.push(wiki);
    let report = zmarket::market::seed::apply(&app.state.db, &cat.to_string()).await.unwrap();
    assert!(!report.skipped);
    let (_, g) = app.get_auth("/api/ops/v1/apps/grafana", &op).await;
    let g = &g["data"];
    // The operator's name, image (its manifest), version (moved by the image change) and
    // hiding stay; the field they did not touch follows the catalogue.
    assert_eq!((g["name_en"].as_str(), g["image"].as_str(), g["listed"].as_bool()), (Some("Dashboards"), Some("registry.local/grafana:11.5.0"), Some(false)));
    assert_eq!((g["version"].as_str(), g["summary_en"].as_str()), (Some("11.5.0+r1"), Some("Dashboards for everything, newer")));
    // The local app is left alone.
    let (_, w) = app.get_auth("/api/ops/v1/apps/team-wiki", &op).await;
    assert_eq!((w["data"]["name_en"].as_str(), w["data"]["origin"].as_str()), (Some("Team Wiki"), Some("local")));
}

#[tokio::test]
async fn a_publish_on_one_instance_reaches_the_other_instances_market() {
    let (a, b) = crate::instances::pair(|_| {}).await;
    let op = signed_in_operator(&a).await;
    assert!(market_search(&b, "wiki").await.is_empty());
    let (s, body) = a.post_json("/api/ops/v1/apps", &new_app("team-wiki"), Some(&op)).await;
    assert_eq!(s, 200, "{body}");
    // B follows the shared public version (polled every second) and reloads its index.
    let mut found = Vec::new();
    for _ in 0..250 {
        found = market_search(&b, "wiki").await;
        if !found.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(40)).await;
    }
    assert_eq!(found, vec!["team-wiki"], "B's market never showed the app published on A");
    // Hidden on B: A's market drops it the same way.
    assert_eq!(b.put_json("/api/ops/v1/apps/team-wiki", &json!({"listed": false}), &op).await.0, 200);
    for _ in 0..250 {
        found = market_search(&a, "wiki").await;
        if found.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(40)).await;
    }
    assert!(found.is_empty(), "A's market still shows the app hidden on B");
}

/// A form opened before an archive upload cannot put the old image and version back.
#[tokio::test]
async fn a_stale_app_edit_is_refused_and_an_upload_moves_the_revision() {
    let app = TestApp::spawn().await;
    let op = signed_in_operator(&app).await;
    let (s, b) = app.post_json("/api/ops/v1/apps", &new_app("team-wiki"), Some(&op)).await;
    assert_eq!(s, 200, "{b}");
    let opened = b["data"]["revision"].as_i64().expect("a revision");
    let (_, b) = app.get_auth("/api/ops/v1/apps/team-wiki", &op).await;
    assert_eq!(b["data"]["revision"].as_i64(), Some(opened));

    // The archive holds another image: the app moves to it and to 1.0+r1, and its revision moves.
    let (s, b) = upload(&app, &op, "/api/ops/v1/apps/team-wiki/image", docker_save_tar(&["acme/wiki:2"]), "a.tar", "application/x-tar", "en").await;
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
    let (s, b) = upload(&app, &op, "/api/ops/v1/apps/team-wiki/icon", crate::iam::png_bytes(), "i.png", "image/png", "en").await;
    assert_eq!(s, 200, "{b}");
    assert!(b["data"]["revision"].as_i64().unwrap() > saved);
    let (s, b, _) = send(&app, "PUT", "/api/ops/v1/apps/team-wiki", Some(&json!({"summary_en": "Again", "revision": saved})), &op, "en", None).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("stale_edit")));
    // A revision that is no number of a revision names the field.
    let (s, b, _) = send(&app, "PUT", "/api/ops/v1/apps/team-wiki", Some(&json!({"summary_en": "x", "revision": -1})), &op, "en", None).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("revision")), "{b}");
}

#[tokio::test]
async fn an_unknown_or_wrongly_typed_field_is_refused_naming_it_in_both_languages() {
    let app = TestApp::spawn().await;
    let op = signed_in_operator(&app).await;
    let (_, before) = app.get_auth("/api/ops/v1/apps/grafana", &op).await;
    let with_field = |mut body: Value, field: &str, value: Value| {
        body[field] = value;
        body
    };
    // Each body is refused naming its field: a field the call does not take (top level or in
    // `requirements`), and a known field of the wrong type, whichever group of fields it is in.
    let mut requirements = new_app("team-wiki")["requirements"].clone();
    requirements["colour"] = json!("red");
    let cases: Vec<(&str, Value, &str)> = vec![
        ("colour", json!("red"), "colour"),
        ("price_per_hour", json!(0), "price_per_hour"),
        ("name_en", json!(5), "name_en"),
        ("description_zh", json!(["x"]), "description_zh"),
        ("category", json!(1), "category"),
        ("kind", json!({"own": true}), "kind"),
        ("publisher", json!(true), "publisher"),
        ("version", json!(1.0), "version"),
        ("listed", json!("yes"), "listed"),
        ("requirements", requirements, "requirements.colour"),
    ];
    let mut rows = Vec::new();
    for (field, value, named) in &cases {
        let texts = [format!("Invalid value for {named}"), format!("参数 {named} 无效")];
        rows.push((with("POST", "/api/ops/v1/apps", with_field(new_app("team-wiki"), field, value.clone())), *named, texts.clone()));
        rows.push((with("PUT", "/api/ops/v1/apps/grafana", with_field(json!({"name_en": "Grafana 2"}), field, value.clone())), *named, texts));
    }
    for (call, named, [en, zh]) in &rows {
        scenario::says(&app, call, Some(&op), (400, "invalid_body_field", Some(named)), [en, zh]).await;
    }
    // Nothing was written.
    assert_eq!(app.get_auth("/api/ops/v1/apps/team-wiki", &op).await.0, 404);
    assert_eq!(app.get_auth("/api/ops/v1/apps/grafana", &op).await.1, before);
}
