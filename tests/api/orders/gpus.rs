//! A demand's minimum CUDA and VRAM per GPU (issue 38, docs/orders.md §The matcher): stored and
//! shown, checked at the edge (400 naming the field, in both languages, nothing stored), and met
//! or not by boxes whose GPUs the agent reports by UUID: the live count, the check and the take
//! agree, the app's own CUDA counts when it is higher, a box that does not say its CUDA is refused
//! only when the demand asked for one, and a held GPU does not count towards the VRAM.

use serde_json::{Value, json};

use super::*;

const TIB: i64 = 1024 * GIB;

/// One GPU as a current agent reports it; `cuda` None plays an agent that does not say.
fn gpu(n: usize, i: usize, vram_gib: i64, cuda: Option<&str>) -> Value {
    let mut g = json!({"index": i, "uuid": format!("GPU-{n:08x}-0000-4111-8222-{i:012x}"), "name": "NVIDIA H200",
        "vram": vram_gib * GIB, "passthrough": false, "driver": "580.159.04", "compute_capability": "9.0", "mig": false});
    if let Some(c) = cuda {
        g["cuda"] = c.into();
    }
    g
}

/// A big box (box number `n`) with these GPUs.
fn spec(n: usize, gpus: &[(i64, Option<&str>)]) -> Value {
    let gpus: Vec<Value> = gpus.iter().enumerate().map(|(i, (vram, cuda))| gpu(n, i, *vram, *cuda)).collect();
    json!({"cpu_cores": 64, "memory_bytes": 512 * GIB, "disk_bytes": 8192 * GIB, "gpu_runtime": true, "gpus": gpus})
}

/// vLLM (CUDA 12.1, one GPU) on two GPUs of CUDA 12.4 or newer with 80 GiB each, in Shenzhen.
fn gpu_demand(extra: Value) -> Value {
    let mut d = demand(json!({"app_id": "vllm", "gpu_count": 2, "gpu_models": "", "min_cuda": "12.4", "min_vram": 80 * GIB, "price_per_hour": 100}));
    for (k, v) in extra.as_object().unwrap() {
        d[k] = v.clone();
    }
    d
}

fn gaps(c: &Value) -> Value {
    c["gaps"].clone()
}

#[tokio::test]
async fn a_demand_asks_a_minimum_cuda_and_vram_and_check_take_and_count_follow() {
    let app = spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    grant(&app, "alice@example.com", 100_000).await;
    let terms = format!("app_id=vllm&gpu_count=2&min_cuda=12.4&min_vram={}&distance_km=25&lat={}&lng={}", 80 * GIB, SZ.0, SZ.1);
    let any = format!("app_id=vllm&gpu_count=2&distance_km=25&lat={}&lng={}", SZ.0, SZ.1);

    // Stored and shown as asked: on the answer, the order and the public board.
    let (s, b) = post(&app, &alice, &gpu_demand(json!({}))).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    assert_eq!((b["data"]["min_cuda"].as_str(), b["data"]["min_vram"].as_i64()), (Some("12.4"), Some(80 * GIB)));
    let o = order(&app, &alice, &id).await;
    assert_eq!((o["min_cuda"].as_str(), o["min_vram"].as_i64()), (Some("12.4"), Some(80 * GIB)));
    let (_, board) = app.get_json("/api/rmp/v1/demands").await;
    assert_eq!((board["data"]["items"][0]["min_cuda"].as_str(), board["data"]["items"][0]["min_vram"].as_i64()), (Some("12.4"), Some(80 * GIB)));
    assert_eq!(count(&app, &terms).await, 0);

    // Two H200s of 141 GiB whose driver runs CUDA 13.0: qualifies.
    let (good, _) = offered_spec(&app, &bob, spec(1, &[(141, Some("13.0")), (141, Some("13.0"))]), SZ).await;
    assert_eq!(check(&app, &bob, &id, &good).await, json!({"ok": true, "gaps": []}));
    assert_eq!(count(&app, &terms).await, 1);

    // CUDA 12.2: too old for the 12.4 asked (the app alone needs 12.1).
    let (old, _) = offered_spec(&app, &bob, spec(2, &[(141, Some("12.2")), (141, Some("12.2"))]), SZ).await;
    assert_eq!(gaps(&check(&app, &bob, &id, &old).await), json!([{"field": "cuda", "need": "12.4", "have": "12.2"}]));
    // The box's CUDA is its lowest GPU's.
    let (mixed, _) = offered_spec(&app, &bob, spec(3, &[(141, Some("13.0")), (141, Some("12.2"))]), SZ).await;
    assert_eq!(gaps(&check(&app, &bob, &id, &mixed).await), json!([{"field": "cuda", "need": "12.4", "have": "12.2"}]));
    // 24 GiB GPUs: the VRAM gap, with the largest the box has.
    let (small, _) = offered_spec(&app, &bob, spec(4, &[(24, Some("13.0")), (24, Some("13.0"))]), SZ).await;
    assert_eq!(gaps(&check(&app, &bob, &id, &small).await), json!([{"field": "min_vram", "need": 80 * GIB, "have": 24 * GIB}]));
    // One big GPU and one small: two are needed, only one has 80 GiB.
    let (one_big, _) = offered_spec(&app, &bob, spec(5, &[(24, Some("13.0")), (141, Some("13.0"))]), SZ).await;
    assert_eq!(gaps(&check(&app, &bob, &id, &one_big).await), json!([{"field": "min_vram", "need": 80 * GIB, "have": 141 * GIB}]));
    // A box that does not say its CUDA: the demand asked for one, so it is refused, with null.
    let (unsaid, _) = offered_spec(&app, &bob, spec(6, &[(141, None), (141, None)]), SZ).await;
    assert_eq!(gaps(&check(&app, &bob, &id, &unsaid).await), json!([{"field": "cuda", "need": "12.4", "have": null}]));
    // No GPU at all: too few GPUs, no CUDA, no VRAM, in the documented order.
    let (none, _) = offered_spec(&app, &bob, spec(7, &[]), SZ).await;
    assert_eq!(
        gaps(&check(&app, &bob, &id, &none).await),
        json!([{"field": "gpu_count", "need": 2, "have": 0}, {"field": "cuda", "need": "12.4", "have": null}, {"field": "min_vram", "need": 80 * GIB, "have": null}])
    );
    // The live count agrees: only the good box; without the two minimums, every box with two GPUs.
    assert_eq!(count(&app, &terms).await, 1);
    assert_eq!(count(&app, &any).await, 6);
    assert_eq!(count(&app, &format!("{any}&min_cuda=12.2")).await, 5, "all but the box that does not say");
    assert_eq!(count(&app, &format!("{any}&min_vram={}", 24 * GIB)).await, 6);
    assert_eq!(count(&app, &format!("{any}&min_vram={}", 141 * GIB + 1)).await, 0);

    // The take refuses with the same gaps, in both languages; the good box takes it.
    let (s, b) = take(&app, &bob, &id, &old).await;
    assert_eq!((s, b["msg"].as_str(), b["data"]["gaps"].clone()), (409, Some(SPEC_MSG), json!([{"field": "cuda", "need": "12.4", "have": "12.2"}])));
    let (s, b) = zh(&app, reqwest::Method::POST, &format!("/api/rmp/v1/demands/{id}/take"), Some(&json!({"device_id": small})), &bob).await;
    assert_eq!((s, b["msg"].as_str(), b["data"]["gaps"][0]["field"].as_str()), (409, Some(SPEC_MSG_ZH), Some("min_vram")));
    let (s, b) = take(&app, &bob, &id, &good).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!((b["data"]["status"].as_str(), b["data"]["device_id"].as_str()), (Some("order_processing"), Some(good.as_str())));
    assert_eq!((b["data"]["min_cuda"].as_str(), b["data"]["min_vram"].as_i64()), (Some("12.4"), Some(80 * GIB)));
    verified(&app).await;
}

#[tokio::test]
async fn the_app_s_own_cuda_counts_and_a_held_gpu_is_not_counted_for_vram() {
    let app = spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let bob = token_of(&app.signed_in("bob@example.com").await);
    grant(&app, "alice@example.com", 100_000).await;
    // One GPU of 80 GiB, no CUDA asked: vLLM's own 12.1 is the need.
    let id = posted(&app, &alice, &gpu_demand(json!({"gpu_count": 1, "min_cuda": null}))).await;
    assert_eq!(order(&app, &alice, &id).await["min_cuda"], Value::Null);
    let (old, _) = offered_spec(&app, &bob, spec(1, &[(141, Some("11.8"))]), SZ).await;
    assert_eq!(gaps(&check(&app, &bob, &id, &old).await), json!([{"field": "cuda", "need": "12.1", "have": "11.8"}]));
    // The app's need alone does not refuse a box that does not say (nor does the fit).
    let (unsaid, _) = offered_spec(&app, &bob, spec(2, &[(141, None)]), SZ).await;
    assert_eq!(check(&app, &bob, &id, &unsaid).await, json!({"ok": true, "gaps": []}));
    // Asked lower than the app's: the app's 12.1 is the need, and now the box that does not say is refused.
    let low = posted(&app, &alice, &gpu_demand(json!({"gpu_count": 1, "min_cuda": "11.0"}))).await;
    assert_eq!(gaps(&check(&app, &bob, &low, &old).await), json!([{"field": "cuda", "need": "12.1", "have": "11.8"}]));
    assert_eq!(gaps(&check(&app, &bob, &low, &unsaid).await), json!([{"field": "cuda", "need": "12.1", "have": null}]));

    // A big GPU and a small one: qualifies until the big one is held by the owner's own app.
    let (shared, _) = offered_spec(&app, &bob, spec(3, &[(141, Some("13.0")), (24, Some("13.0"))]), SZ).await;
    assert_eq!(check(&app, &bob, &id, &shared).await, json!({"ok": true, "gaps": []}));
    let (s, b) = app.post_json("/api/rmp/v1/apps/install", &json!({"app_id": "ollama", "device_id": shared}), Some(&bob)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["gpus"][0]["uuid"], format!("GPU-{:08x}-0000-4111-8222-{:012x}", 3, 0), "the big one, first in the box's order");
    assert_eq!(gaps(&check(&app, &bob, &id, &shared).await), json!([{"field": "min_vram", "need": 80 * GIB, "have": 24 * GIB}]));
    let (s, b) = take(&app, &bob, &id, &shared).await;
    assert_eq!((s, b["data"]["gaps"][0]["field"].as_str()), (409, Some("min_vram")), "{b}");
    verified(&app).await;
}

#[tokio::test]
async fn bad_minimums_are_refused_naming_the_field_in_both_languages_and_nothing_is_stored() {
    let app = spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    grant(&app, "alice@example.com", 100_000).await;
    let before = wallet(&app, &alice).await;
    for (extra, field) in [
        (json!({"min_cuda": "abc"}), "min_cuda"),
        (json!({"min_cuda": "12.x"}), "min_cuda"),
        (json!({"min_cuda": "12.4.1"}), "min_cuda"),
        (json!({"min_cuda": "1234.0"}), "min_cuda"),
        (json!({"min_cuda": ".4"}), "min_cuda"),
        (json!({"min_cuda": 12.4}), "min_cuda"),
        (json!({"min_vram": -1}), "min_vram"),
        (json!({"min_vram": 16 * TIB + 1}), "min_vram"),
        (json!({"min_vram": "80G"}), "min_vram"),
        (json!({"min_vram": 1.5}), "min_vram"),
    ] {
        let body = gpu_demand(extra);
        let (s, b) = post(&app, &alice, &body).await;
        assert_eq!((s, b["data"]["field"].as_str()), (400, Some(field)), "{body}: {b}");
    }
    let (s, b) = post(&app, &alice, &gpu_demand(json!({"min_cuda": "abc"}))).await;
    assert_eq!((s, b["msg"].as_str()), (400, Some("Invalid value for min_cuda")));
    let (s, b) = zh(&app, reqwest::Method::POST, "/api/rmp/v1/demands", Some(&gpu_demand(json!({"min_cuda": "abc"}))), &alice).await;
    assert_eq!((s, b["msg"].as_str(), b["data"]["field"].as_str()), (400, Some("参数 min_cuda 无效"), Some("min_cuda")));
    let (s, b) = post(&app, &alice, &gpu_demand(json!({"min_vram": -1}))).await;
    assert_eq!((s, b["msg"].as_str()), (400, Some("Invalid value for min_vram")));
    let (s, b) = zh(&app, reqwest::Method::POST, "/api/rmp/v1/demands", Some(&gpu_demand(json!({"min_vram": 16 * TIB + 1}))), &alice).await;
    assert_eq!((s, b["msg"].as_str(), b["data"]["field"].as_str()), (400, Some("参数 min_vram 无效"), Some("min_vram")));
    // Nothing stored, nothing held.
    let (_, board) = app.get_json("/api/rmp/v1/demands").await;
    assert_eq!(board["data"]["total"], 0);
    let after = wallet(&app, &alice).await;
    assert_eq!((&after["held"], &after["available"]), (&before["held"], &before["available"]));

    // The live count checks them alike.
    for (query, field) in [("min_cuda=abc", "min_cuda"), ("min_cuda=12.4.1", "min_cuda"), ("min_vram=-1", "min_vram"), ("min_vram=17592186044417", "min_vram")] {
        let (s, b) = app.get_json(&format!("/api/rmp/v1/demands/qualifying?app_id=vllm&{query}")).await;
        assert_eq!((s, b["data"]["field"].as_str()), (400, Some(field)), "{query}: {b}");
    }
    let r = app.client.get(app.url("/api/rmp/v1/demands/qualifying?app_id=vllm&min_cuda=abc")).header("Accept-Language", "zh-CN");
    let (s, b) = json_of(r.send().await.unwrap()).await;
    assert_eq!((s, b["msg"].as_str()), (400, Some("参数 min_cuda 无效")));

    // The bounds and the empty values are accepted: "12" is 12.0, empty is any, 16 TiB is the most.
    assert_eq!(count(&app, &format!("app_id=vllm&min_cuda=&min_vram={}", 16 * TIB)).await, 0);
    let (s, b) = post(&app, &alice, &gpu_demand(json!({"min_cuda": " 12 ", "min_vram": 16 * TIB}))).await;
    assert_eq!((s, b["data"]["min_cuda"].as_str(), b["data"]["min_vram"].as_i64()), (200, Some("12.0"), Some(16 * TIB)), "{b}");
    let (s, b) = post(&app, &alice, &gpu_demand(json!({"min_cuda": "", "min_vram": null}))).await;
    assert_eq!((s, b["data"]["min_cuda"].clone(), b["data"]["min_vram"].as_i64()), (200, Value::Null, Some(0)), "{b}");
    let (s, b) = post(&app, &alice, &gpu_demand(json!({"min_cuda": null, "min_vram": 0}))).await;
    assert_eq!((s, b["data"]["min_cuda"].clone(), b["data"]["min_vram"].as_i64()), (200, Value::Null, Some(0)), "{b}");
    verified(&app).await;
}
