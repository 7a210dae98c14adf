//! Issue 18 (performance) behaviours: the stats poll's ETag and 304, the nearby list read through
//! a coordinate box giving exactly the answers of a scan of every shared device (the edge of the
//! radius included), and the public pages rendered ahead of their first visitor and again after
//! public data changes. Speed itself is only printed by bench/.

use std::time::Duration;

use sea_orm::{EntityTrait, Set};
use serde_json::{Value, json};
use zmarket::db::entity::devices;
use zmarket::db::enums::{DeviceStatus, DeviceType, SharingMode};
use zmarket::devices::nearby::{EARTH_RADIUS_KM, coarse, distance_km};
use zmarket::lang::Lang;

use crate::common::*;

async fn get_with(app: &TestApp, path: &str, token: &str, etag: Option<&str>) -> reqwest::Response {
    let mut req = app.client.get(app.url(path)).bearer_auth(token);
    if let Some(tag) = etag {
        req = req.header("If-None-Match", tag);
    }
    req.send().await.unwrap()
}

#[tokio::test]
async fn stats_poll_answers_304_while_nothing_changed() {
    let app = TestApp::spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let carol = app.signed_in("carol@example.com").await;
    let tc = token_of(&carol);
    let path = "/api/ebs/v1/notifications/stats";

    let first = get_with(&app, path, &tc, None).await;
    assert_eq!(first.status(), 200);
    let tag = header(first.headers(), "etag").to_string();
    assert!(tag.starts_with('"') && tag.ends_with('"'), "{tag}");
    let (_, b) = json_of(first).await;
    assert_eq!(b["data"]["member_records_unread"], 0);

    // Unchanged: 304, the same tag, no body, and still not stored by a browser.
    let again = get_with(&app, path, &tc, Some(&tag)).await;
    assert_eq!(again.status(), 304);
    assert_eq!(header(again.headers(), "etag"), tag);
    assert_eq!(header(again.headers(), "cache-control"), "no-store");
    assert!(again.bytes().await.unwrap().is_empty());
    // Another tag (or a weak form of this one) is compared as RFC 9110 says.
    assert_eq!(get_with(&app, path, &tc, Some("\"other\"")).await.status(), 200);
    assert_eq!(get_with(&app, path, &tc, Some(&format!("W/{tag}"))).await.status(), 304);

    // News for Carol (an invitation): the same tag is now answered in full, with a new tag.
    let (s, b) = app.post_json("/api/iam/v1/sme", &json!({"name": "Acme Labs"}), Some(&token_of(&owner))).await;
    assert_eq!(s, 200, "{b}");
    let admin = app.switch(&owner, b["data"]["id"].as_str().unwrap()).await;
    app.invite(&token_of(&admin), "carol@example.com", "member").await;
    let changed = get_with(&app, path, &tc, Some(&tag)).await;
    assert_eq!(changed.status(), 200);
    let new_tag = header(changed.headers(), "etag").to_string();
    assert_ne!(new_tag, tag);
    let (_, b) = json_of(changed).await;
    assert_eq!(b["data"]["member_records_unread"], 1, "{b}");
    assert_eq!(get_with(&app, path, &tc, Some(&new_tag)).await.status(), 304);

    // The tag is no way around signing in.
    let res = app.client.get(app.url(path)).header("If-None-Match", &new_tag).send().await.unwrap();
    assert_eq!(res.status(), 401);
}

/// A point `km` away from `(lat, lng)` along `bearing` (degrees), on the 6371 km sphere.
fn destination(lat: f64, lng: f64, km: f64, bearing: f64) -> (f64, f64) {
    let d = km / EARTH_RADIUS_KM;
    let (p1, l1, b) = (lat.to_radians(), lng.to_radians(), bearing.to_radians());
    let p2 = (p1.sin() * d.cos() + p1.cos() * d.sin() * b.cos()).asin();
    let l2 = l1 + (b.sin() * d.sin() * p1.cos()).atan2(d.cos() - p1.sin() * p2.sin());
    (p2.to_degrees(), (l2.to_degrees() + 540.0) % 360.0 - 180.0)
}

#[tokio::test]
async fn nearby_through_the_box_answers_as_a_scan_of_every_device() {
    let app = TestApp::spawn().await;
    let alice = app.signed_in("alice@example.com").await;
    let owner = user_id_of(&app, &alice).await;

    // Devices around three centres: spread out, on rings at the edge of the radii asked below,
    // across the ±180° meridian and near the north pole; a few not shared (never listed).
    let centres = [(22.54, 114.06), (60.0, 179.95), (89.6, 10.0)];
    let mut seed = 7u64;
    let mut rnd = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut points = Vec::new();
    for &(lat, lng) in &centres {
        for _ in 0..120 {
            points.push(destination(lat, lng, rnd() * 2500.0, rnd() * 360.0));
        }
        for r in [1.0, 50.0, 100.0] {
            for k in 0..24 {
                points.push(destination(lat, lng, r - 1.0 + rnd() * 2.0, k as f64 * 15.0 + rnd()));
            }
        }
    }
    let now = chrono::Utc::now();
    let rows: Vec<devices::ActiveModel> = points
        .iter()
        .enumerate()
        .map(|(i, &(lat, lng))| devices::ActiveModel {
            id: Set(format!("PERF{i:05}").into()),
            name: Set(format!("box {i}")),
            device_type: Set(DeviceType::ZBox),
            status: Set(DeviceStatus::Online),
            status_reason: Set(None),
            secret_hash: Set(None),
            pairing_hash: Set(None),
            owner_user_id: Set(Some(owner.clone().into())),
            owner_company_id: Set(None),
            bound_by: Set(Some(owner.clone().into())),
            bound_at: Set(Some(now)),
            sharing_mode: Set(if i % 17 == 0 { SharingMode::Dedicated } else { SharingMode::Manual }),
            rentable: Set(i % 17 != 0),
            price_per_hour: Set(100),
            cpu_cores: Set(4),
            memory_bytes: Set(1 << 30),
            disk_bytes: Set(1 << 30),
            gpus: Set("[]".into()),
            gpu_runtime: Set(None),
            cpu_percent: Set(None),
            memory_used_bytes: Set(None),
            disk_used_bytes: Set(None),
            lat: Set(Some(lat)),
            lng: Set(Some(lng)),
            host_id: Set(None),
            gpu_count: Set(0),
            gpu_model: Set(String::new()),
            passthrough: Set(false),
            last_seen_at: Set(Some(now)),
            channel_instance: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
            verification: Set(None),
            gpu_use: Set(None),
            presence: Set(None),
            presence_hour: Set(None),
        })
        .collect();
    for chunk in rows.chunks(100) {
        devices::Entity::insert_many(chunk.to_vec()).exec(&app.state.db).await.unwrap();
    }

    // The scan the list used to make: every shared device, listed distance, radius, order, page.
    let scan = |at: (f64, f64), radius: Option<f64>, offset: usize, limit: usize| -> (usize, Vec<(String, i64)>) {
        let mut all: Vec<(String, i64)> = points
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 17 != 0)
            .map(|(i, &(lat, lng))| (format!("PERF{i:05}"), distance_km(at.0, at.1, coarse(lat), coarse(lng))))
            .filter(|(_, d)| radius.is_none_or(|r| *d as f64 <= r))
            .collect();
        all.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        (all.len(), all.into_iter().skip(offset).take(limit).collect())
    };
    let mut edge_cases = 0;
    for &at in &centres {
        let asks: Vec<(Option<f64>, usize, usize)> = vec![
            (Some(0.0), 0, 100),
            (Some(1.0), 0, 100),
            (Some(49.0), 0, 100),
            (Some(50.0), 0, 100),
            (Some(99.5), 0, 100),
            (Some(100.0), 0, 100),
            (Some(101.0), 0, 100),
            (Some(3000.0), 40, 100),
            (None, 0, 24),
            (None, 24, 24),
            (None, 300, 100),
        ];
        for (radius, offset, limit) in asks {
            let r = radius.map(|r| format!("&radius_km={r}")).unwrap_or_default();
            let (s, b) = app.get_json(&format!("/api/ebs/v2/nearby?lat={}&lng={}{r}&offset={offset}&limit={limit}", at.0, at.1)).await;
            assert_eq!(s, 200, "{b}");
            let got: Vec<(String, i64)> = b["data"]["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d: &Value| (d["id"].as_str().unwrap().to_string(), d["distance_km"].as_i64().unwrap()))
                .collect();
            let (total, want) = scan(at, radius, offset, limit);
            assert_eq!(b["data"]["total"].as_u64(), Some(total as u64), "{at:?} radius {radius:?}");
            assert_eq!(got, want, "{at:?} radius {radius:?} offset {offset}");
            if let Some(r) = radius {
                edge_cases += want.iter().filter(|(_, d)| *d as f64 == r.floor()).count();
            }
        }
    }
    assert!(edge_cases > 20, "devices listed exactly at the radius were asked about: {edge_cases}");
}

async fn render_kind(app: &TestApp, path: &str) -> (String, String) {
    let res = app.get(path).await;
    assert_eq!(res.status(), 200);
    let kind = header(res.headers(), "x-render").to_string();
    (kind, res.text().await.unwrap())
}

/// Waits (bounded) until the warming beside the server has rendered `path` for the current
/// version of public data, without asking for the page (which would render it on a miss).
async fn warmed(app: &TestApp, path: &str) {
    for _ in 0..400 {
        if app.state.ssr.is_cached(path, Lang::En, false) && app.state.ssr.is_cached(path, Lang::Zh, false) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{path} was not rendered ahead");
}

#[tokio::test]
async fn public_pages_are_rendered_ahead_and_again_after_a_change() {
    let app = TestApp::spawn().await;
    // Nobody has asked for /nearby or /market yet: they are rendered at start-up.
    warmed(&app, "/nearby").await;
    warmed(&app, "/market").await;
    let (kind, html) = render_kind(&app, "/market").await;
    assert_eq!(kind, "cache");
    // The document names the entry and its chunks on the boot script (no waterfall; the
    // SKIP_UI_BUILD placeholder has no boot script and names the entry itself).
    let manifest = zmarket::ssr::bundle::manifest();
    if manifest.boot.is_empty() {
        assert!(html.contains(&format!("<script type=\"module\" src=\"/static/{}\">", manifest.js)));
    } else {
        let tag = format!("<script type=\"module\" src=\"/static/{}\" data-main=\"{}\" data-preload=\"{}\">", manifest.boot, manifest.js, manifest.preload.join(" "));
        assert!(html.contains(&tag), "the boot script names the entry and its chunks: {tag}");
        assert!(!html.contains("rel=\"modulepreload\""), "no script competes with the stylesheet before the first paint");
        // A Chinese page also preloads the Chinese messages, which it needs before hydrating.
        if let Some(zh) = manifest.messages.get("zh") {
            assert!(!html.contains(zh.as_str()), "an English page does not fetch the Chinese messages");
            let res = app.client.get(app.url("/market")).header("cookie", "zm_lang=zh").send().await.unwrap();
            let zh_html = res.text().await.unwrap();
            assert!(zh_html.contains(&format!(" {zh}\"")), "the Chinese page preloads {zh}");
        }
    }

    // A device becomes shared: the version moves, the page is rendered again ahead of its next
    // visitor, with the device.
    let t = token_of(&app.signed_in("alice@example.com").await);
    let (id, _) = crate::devices::bound_device(&app, &t, "Z-BOX", crate::devices::spec(4)).await;
    let (s, _) = app.put_json(&format!("/api/ebs/v2/devices/{id}/location"), &json!({"lat": 22.54, "lng": 114.06}), &t).await;
    assert_eq!(s, 200);
    let before = app.state.public.version();
    let (s, _) = app.put_json(&format!("/api/ebs/v2/devices/{id}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 300}), &t).await;
    assert_eq!(s, 200);
    assert!(app.state.public.version() > before);
    warmed(&app, "/nearby").await;
    let (kind, html) = render_kind(&app, "/nearby").await;
    assert_eq!(kind, "cache");
    assert!(html.contains(&id), "the page rendered ahead carries the newly shared device");
}

fn decoded(encoding: &str, body: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    match encoding {
        "gzip" => {
            flate2::read::GzDecoder::new(body).read_to_end(&mut out).unwrap();
        }
        "br" => brotli::BrotliDecompress(&mut &body[..], &mut out).unwrap(),
        other => panic!("unexpected encoding {other}"),
    }
    out
}

/// A page from the render cache and a market answer are compressed once per encoding and sent in
/// the form the request accepts, decoding to exactly the plain answer; `Vary` names every header
/// the answer depends on; the ETag's 304 still holds.
#[tokio::test]
async fn cached_pages_and_market_answers_are_sent_in_the_encoding_asked() {
    let app = TestApp::spawn().await;
    warmed(&app, "/market").await;
    for path in ["/market", "/api/ebs/v1/market/applications"] {
        let plain = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(plain.status(), 200);
        assert!(plain.headers().get("content-encoding").is_none());
        let plain = plain.bytes().await.unwrap();
        for (ask, expect) in [("gzip", "gzip"), ("gzip, deflate, br, zstd", "br"), ("br;q=0.5, gzip", "gzip"), ("br;q=0, gzip;q=0", "")] {
            let res = app.client.get(app.url(path)).header("accept-encoding", ask).send().await.unwrap();
            assert_eq!(res.status(), 200);
            let vary: Vec<String> = res.headers().get_all("vary").iter().map(|v| v.to_str().unwrap().to_lowercase()).collect();
            assert!(vary.iter().any(|v| v.contains("accept-encoding")), "{path} {vary:?}");
            assert!(vary.iter().any(|v| v.contains("accept-language")), "{path} {vary:?}");
            let encoding = res.headers().get("content-encoding").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
            assert_eq!(encoding, expect, "{path} asked {ask}");
            let body = res.bytes().await.unwrap();
            if expect.is_empty() {
                assert_eq!(body, plain);
            } else {
                assert!(body.len() * 3 < plain.len(), "{path} {expect}: {} of {}", body.len(), plain.len());
                assert_eq!(decoded(expect, &body), plain.to_vec(), "{path} {expect}");
            }
        }
    }
    let res = app.client.get(app.url("/api/ebs/v1/market/applications")).send().await.unwrap();
    let tag = header(res.headers(), "etag").to_string();
    let again = app.client.get(app.url("/api/ebs/v1/market/applications")).header("accept-encoding", "br").header("if-none-match", &tag).send().await.unwrap();
    assert_eq!(again.status(), 304);
}
