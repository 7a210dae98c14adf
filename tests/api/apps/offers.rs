//! Offers a renter can choose from (issue 39, docs/api.md §Offers and the meter): every offer of
//! the Rent dialog carries the box's spec (GPUs with memory and CUDA, no UUIDs), free GPUs,
//! verification, reliability, place and distance; sorts by price, distance and VRAM; filters by GPU
//! model, VRAM, CUDA and reliability; a bad filter is refused naming it. Reliability measured over
//! days is in tests/clock/rental.rs (it moves the clock).

use serde_json::{Value, json};

use super::bound_device;
use crate::boxes::GIB;
use crate::common::*;

fn gpu(name: &str, uuid: &str, vram_gib: i64, cuda: &str) -> Value {
    json!({"index": 0, "uuid": uuid, "name": name, "vram": vram_gib * GIB, "passthrough": true,
           "driver": "580.159.04", "cuda": cuda, "compute_capability": "9.0", "mig": false})
}

fn spec(cores: i64, gpus: Vec<Value>) -> Value {
    json!({"cpu_cores": cores, "memory_bytes": 64 * GIB, "disk_bytes": 1024 * GIB, "gpu_runtime": true, "gpus": gpus})
}

/// A box of `owner` shared at `price`, named, placed at `at` when given.
async fn offered(app: &TestApp, owner: &str, name: &str, price: i64, spec: Value, at: Option<(f64, f64)>) -> String {
    let (id, _) = bound_device(app, owner, "Z-BOX", spec).await;
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{id}"), &json!({"name": name}), owner).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = app
        .put_json(&format!("/api/ebs/v2/devices/{id}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": price}), owner)
        .await;
    assert_eq!(s, 200, "{b}");
    if let Some((lat, lng)) = at {
        let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{id}/location"), &json!({"lat": lat, "lng": lng}), owner).await;
        assert_eq!(s, 200, "{b}");
    }
    id
}

async fn offers(app: &TestApp, token: &str, query: &str) -> Vec<Value> {
    let (s, b) = app.get_auth(&format!("/api/rmp/v1/apps/rent-options?app_id=grafana{query}"), token).await;
    assert_eq!(s, 200, "{query}: {b}");
    b["data"].as_array().unwrap().clone()
}

fn names(list: &[Value]) -> Vec<&str> {
    list.iter().map(|o| o["device_name"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn offers_carry_the_box_and_sort_and_filter() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let carol = token_of(&app.signed_in("carol@example.com").await);
    let dave = token_of(&app.signed_in("dave@example.com").await);
    let beijing = (39.9042, 116.4074);
    let shanghai = (31.2304, 121.4737);
    let rtx = vec![gpu("NVIDIA RTX 4090", "GPU-11111111-1111-4111-8111-111111111111", 24, "12.2"), {
        let mut g = gpu("NVIDIA RTX 4090", "GPU-22222222-2222-4222-8222-222222222222", 24, "12.2");
        g["index"] = json!(1);
        g
    }];
    let a = offered(&app, &bob, "Bob 4090s", 100, spec(16, rtx), Some(beijing)).await;
    let b = offered(&app, &carol, "Carol H200", 300, spec(64, vec![gpu("NVIDIA H200", "GPU-33333333-3333-4333-8333-333333333333", 141, "12.8")]), Some(shanghai)).await;
    offered(&app, &dave, "Dave CPU", 50, spec(4, vec![]), None).await;

    // Cheapest first; each offer says what the box is.
    let list = offers(&app, &alice, "").await;
    assert_eq!(names(&list), ["Dave CPU", "Bob 4090s", "Carol H200"]);
    let bob_offer = &list[1];
    assert_eq!(bob_offer["device_id"], a.as_str());
    assert_eq!(bob_offer["fits"], true);
    assert_eq!(bob_offer["price_per_hour"], 100);
    assert_eq!((bob_offer["spec"]["cpu_cores"].as_i64(), bob_offer["spec"]["memory_bytes"].as_i64()), (Some(16), Some(64 * GIB)));
    assert_eq!(bob_offer["spec"]["disk_bytes"], 1024 * GIB);
    assert_eq!(bob_offer["spec"]["gpus"].as_array().unwrap().len(), 2);
    assert_eq!((bob_offer["spec"]["gpus"][0]["vram"].as_i64(), bob_offer["spec"]["gpus"][0]["cuda"].as_str()), (Some(24 * GIB), Some("12.2")));
    assert_eq!(bob_offer["gpus_free"], 2);
    assert_eq!(bob_offer["verified"], Value::Null);
    // A box bound less than a day ago has no reliability figure yet.
    assert_eq!(bob_offer["reliability"], json!({"uptime_7d": null, "uptime_30d": null}));
    // Its place as the nearby map shows it (about 1 km); no point given, no distance.
    assert_eq!(bob_offer["location"], json!({"lat": 39.9, "lng": 116.41}));
    assert_eq!(bob_offer["distance_km"], Value::Null);
    assert_eq!(list[0]["location"], Value::Null);
    // A GPU's UUID names the hardware: a renter is not given it.
    assert!(!serde_json::to_string(&list).unwrap().contains("GPU-"), "{list:?}");

    // From Shanghai: Carol's box is near, Bob's about 1,070 km away, Dave's has no place (last).
    let near = offers(&app, &alice, &format!("&sort=distance&lat={}&lng={}", shanghai.0, shanghai.1)).await;
    assert_eq!(names(&near), ["Carol H200", "Bob 4090s", "Dave CPU"]);
    assert!(near[0]["distance_km"].as_i64().unwrap() <= 1, "{:?}", near[0]);
    let far = near[1]["distance_km"].as_i64().unwrap();
    assert!((1050..=1090).contains(&far), "Beijing to Shanghai: {far} km");
    assert_eq!(near[2]["distance_km"], Value::Null);
    // The largest GPU first.
    assert_eq!(names(&offers(&app, &alice, "&sort=vram").await), ["Carol H200", "Bob 4090s", "Dave CPU"]);
    // Price is the default, and may be asked.
    assert_eq!(names(&offers(&app, &alice, "&sort=price").await), ["Dave CPU", "Bob 4090s", "Carol H200"]);

    // Filters.
    assert_eq!(names(&offers(&app, &alice, "&gpu_model=h200").await), ["Carol H200"]);
    assert_eq!(names(&offers(&app, &alice, "&gpu_model=4090").await), ["Bob 4090s"]);
    assert_eq!(names(&offers(&app, &alice, &format!("&min_vram={}", 80 * GIB)).await), ["Carol H200"]);
    assert_eq!(names(&offers(&app, &alice, &format!("&min_vram={}", 24 * GIB)).await), ["Bob 4090s", "Carol H200"]);
    assert_eq!(names(&offers(&app, &alice, "&min_cuda=12.4").await), ["Carol H200"]);
    assert_eq!(names(&offers(&app, &alice, "&min_cuda=12").await), ["Bob 4090s", "Carol H200"]);
    // No box has a month's reliability yet: a minimum leaves none.
    assert!(offers(&app, &alice, "&min_reliability=0.5").await.is_empty());
    assert_eq!(offers(&app, &alice, "&min_reliability=0").await.len(), 0, "an unmeasured box meets no minimum");
    assert_eq!(names(&offers(&app, &alice, "&gpu_model=4090&sort=vram&min_cuda=12.0").await), ["Bob 4090s"]);
    let _ = b;

    // Answers are kept a moment, but a change shows at once: rented on Bob's box, Grafana is on it.
    zmarket::billing::issuance::grant_by_email(&app.state.db, "alice@example.com", zmarket::coins::Coins::from_cents(10_000), "test").await.unwrap();
    let before = offers(&app, &alice, "").await;
    assert_eq!(before[1]["fits"], true);
    let (s, body) = app
        .post_json("/api/rmp/v1/apps/rent", &json!({"app_id": "grafana", "device_id": a, "hours": 1, "price_per_hour": 100}), Some(&alice))
        .await;
    assert_eq!(s, 200, "{body}");
    let after = offers(&app, &alice, "").await;
    assert_eq!((after[1]["device_id"].as_str(), after[1]["fits"].as_bool(), after[1]["reason"].as_str()), (Some(a.as_str()), Some(false), Some("installed")));
    // Another renter's answer is their own.
    let erin = token_of(&app.signed_in("erin@example.com").await);
    assert_eq!(offers(&app, &erin, "").await.len(), 3);
    assert_eq!(offers(&app, &bob, "").await.len(), 2, "Bob's own box is no offer to him");

    // A bad filter is refused naming it, and in Chinese too.
    for (query, field) in [
        ("&sort=cheapest", "sort"),
        ("&min_vram=-1", "min_vram"),
        ("&min_vram=lots", "min_vram"),
        ("&min_cuda=twelve", "min_cuda"),
        ("&min_reliability=1.5", "min_reliability"),
        ("&min_reliability=-0.1", "min_reliability"),
        ("&min_reliability=NaN", "min_reliability"),
        ("&lat=95&lng=0", "lat"),
        ("&lat=30", "lng"),
        ("&lat=x&lng=0", "lat"),
        ("&sort=distance", "lat"),
    ] {
        let (s, body) = app.get_auth(&format!("/api/rmp/v1/apps/rent-options?app_id=grafana{query}"), &alice).await;
        assert_eq!((s, body["data"]["field"].as_str()), (400, Some(field)), "{query}: {body}");
    }
    let r = app
        .client
        .get(app.url("/api/rmp/v1/apps/rent-options?app_id=grafana&min_vram=-5"))
        .bearer_auth(&alice)
        .header("Accept-Language", "zh-CN")
        .send()
        .await
        .unwrap();
    let (s, body) = json_of(r).await;
    assert_eq!(s, 400);
    assert_eq!(body["msg"], "参数 min_vram 无效");
}
