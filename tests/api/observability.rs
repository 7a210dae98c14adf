//! `GET /metrics` (docs/api.md "Observability"): the names and types an operator's Prometheus
//! reads, counters that move with what happens, gauges read at the moment (a GPU's use at its box's
//! last beat), and the allow list.

use serde_json::json;

use crate::boxes::{GIB, bound_device, heartbeat};
use crate::common::*;
use crate::scenario::{get, says};

const GPU: &str = "GPU-0b5e1c2d-0000-4111-8222-42424242aaaa";

async fn metrics(app: &TestApp) -> String {
    let res = app.get("/metrics").await;
    assert_eq!(res.status(), 200);
    assert!(header(res.headers(), "content-type").starts_with("text/plain; version=0.0.4"));
    res.text().await.unwrap()
}

/// The value of the series written exactly `series` (name and labels), if present.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')).and_then(|v| v.trim().parse().ok()))
}

#[tokio::test]
async fn metrics_carry_the_contracts_names_and_move_with_requests_beats_and_money() {
    let app = TestApp::spawn().await;
    let alice = token_of(&app.signed_in("metrics@example.com").await);
    let healthz = r#"zmarket_http_requests_total{route="/healthz",status="200"}"#;
    let before = value(&metrics(&app).await, healthz).unwrap_or(0.0);
    for _ in 0..3 {
        assert_eq!(app.get("/healthz").await.status(), 200);
    }
    // A path with an id is counted under its route, not under the id.
    let (s, _) = app.get_auth("/api/ebs/v2/devices/NOPE", &alice).await;
    assert_eq!(s, 404);
    let spec = json!({"cpu_cores": 8, "memory_bytes": 32 * GIB, "disk_bytes": 512 * GIB, "gpu_runtime": true,
        "gpus": [{"index": 0, "uuid": GPU, "name": "NVIDIA H200", "vram": 141 * GIB, "passthrough": true,
                  "driver": "580.159.04", "cuda": "13.0", "compute_capability": "9.0", "mig": false}]});
    let (dev, secret) = bound_device(&app, &alice, "Z-BOX", spec).await;
    let gpus = json!([{"uuid": GPU, "utilization": 97.0, "memory_used": 39_000_000_000i64, "temperature": 61.0, "power_watts": 540.5}]);
    let (s, b) = heartbeat(&app, &secret, json!({"metrics": {"cpu_percent": 5.0, "gpus": gpus}})).await;
    assert_eq!(s, 200, "{b}");
    zmarket::billing::issuance::grant_by_email(&app.state.db, "metrics@example.com", zmarket::coins::Coins::from_cents(500), "metrics test").await.unwrap();

    let text = metrics(&app).await;
    for (name, kind) in [
        ("zmarket_http_requests_total", "counter"),
        ("zmarket_http_request_duration_seconds", "histogram"),
        ("zmarket_agent_beats_total", "counter"),
        ("zmarket_db_pool_connections", "gauge"),
        ("zmarket_ledger_transfers_total", "counter"),
        ("zmarket_gpu_utilization", "gauge"),
        ("zmarket_gpu_memory_used_bytes", "gauge"),
    ] {
        assert!(text.contains(&format!("# TYPE {name} {kind}\n")), "{name} is not a {kind}:\n{text}");
    }
    // Other tests share the process's counters: they only ever add.
    assert!(value(&text, healthz).unwrap() >= before + 3.0, "{text}");
    assert!(value(&text, r#"zmarket_http_requests_total{route="/api/ebs/v2/devices/{id}",status="404"}"#).unwrap() >= 1.0, "{text}");
    assert!(!text.contains("NOPE"), "an id became a label");
    assert!(text.contains(r#"zmarket_http_request_duration_seconds_bucket{route="/healthz",le="0.0005"}"#), "{text}");
    assert!(value(&text, "zmarket_agent_beats_total").unwrap() >= 1.0);
    assert!(value(&text, "zmarket_ledger_transfers_total").unwrap() >= 1.0);
    assert!(value(&text, r#"zmarket_db_pool_connections{state="idle"}"#).is_some(), "{text}");
    assert_eq!(value(&text, &format!(r#"zmarket_gpu_utilization{{device="{dev}",uuid="{GPU}"}}"#)), Some(97.0), "{text}");
    assert_eq!(value(&text, &format!(r#"zmarket_gpu_memory_used_bytes{{device="{dev}",uuid="{GPU}"}}"#)), Some(39e9));

    // The box goes offline: its GPU's series goes with it (read at the moment, not kept).
    stored(&app, &format!("UPDATE devices SET status = 'offline' WHERE id = '{dev}'")).await;
    assert!(!metrics(&app).await.contains(&format!("device=\"{dev}\"")));
}

#[tokio::test]
async fn metrics_are_refused_outside_the_allow_list_in_both_languages() {
    let app = TestApp::spawn_with(|c| c.server.metrics_allow = vec!["10.0.0.0/8".into()]).await;
    let texts = ["Metrics are served only to the addresses in server.metrics_allow", "指标仅对 server.metrics_allow 中的地址提供"];
    says(&app, &get("/metrics"), None, (403, "metrics_not_allowed", None), texts).await;
}

#[tokio::test]
async fn an_allow_list_that_is_not_addresses_stops_the_start() {
    let mut c = zmarket::config::Config::default();
    c.server.metrics_allow = vec!["prometheus.internal".into()];
    let e = c.validate().expect_err("a host name is no address");
    assert!(e.to_string().contains("server.metrics_allow"), "{e}");
}
