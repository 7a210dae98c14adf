//! What an operator watches (issue 42 item 4): the process's metrics, served as Prometheus text
//! at `GET /metrics` (src/app.rs; allowed to `[server] metrics_allow`). The names are the
//! contract's (docs/api.md "Observability"); docs/operations.md says what each series means.
//!
//! One recorder per process (`metrics` with `metrics-exporter-prometheus`, installed on first use;
//! a second server in the same process, as in the tests, shares it). The domains count with the
//! `metrics` macros and the names below; this module depends on no domain.
//!
//! The request series cost a request one route lookup (a `matchit` tree of the API's paths, made
//! once) and two atomic updates on handles made once per route and status: no label is built,
//! hashed or allocated on the way.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use metrics::{Counter, Histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

pub const HTTP_REQUESTS: &str = "zmarket_http_requests_total";
pub const HTTP_DURATION: &str = "zmarket_http_request_duration_seconds";
pub const AGENT_CHANNELS: &str = "zmarket_agent_channels";
pub const AGENT_BEATS: &str = "zmarket_agent_beats_total";
pub const STREAMS: &str = "zmarket_streams";
pub const DB_POOL: &str = "zmarket_db_pool_connections";
pub const JOB_RUNS: &str = "zmarket_job_runs_total";
pub const LEDGER_TRANSFERS: &str = "zmarket_ledger_transfers_total";
pub const GPU_UTILIZATION: &str = "zmarket_gpu_utilization";
pub const GPU_MEMORY_USED: &str = "zmarket_gpu_memory_used_bytes";

/// The request-duration buckets, in seconds: from a cached answer (under a millisecond) to a
/// slow upload.
const DURATION_BUCKETS: [f64; 14] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// How often histograms are folded (the exporter keeps samples until then).
const UPKEEP: Duration = Duration::from_secs(5);

/// The process's recorder, installed the first time it is asked for.
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(HTTP_DURATION.into()), &DURATION_BUCKETS)
            .expect("buckets are not empty")
            .build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("a metrics recorder was installed before: /metrics shows nothing of this process's");
        }
        metrics::describe_counter!(HTTP_REQUESTS, "Requests answered, by route (the API's path template, page, app) and status.");
        metrics::describe_histogram!(HTTP_DURATION, metrics::Unit::Seconds, "Time to a request's response head, by route.");
        metrics::describe_gauge!(AGENT_CHANNELS, "Agent channels open on this instance.");
        metrics::describe_counter!(AGENT_BEATS, "Heartbeats received (over HTTP or a channel).");
        metrics::describe_gauge!(STREAMS, "Terminals and tunnels, and apps' own WebSockets, open on this instance.");
        metrics::describe_counter!(JOB_RUNS, "Background job runs by job and result (ok, failed, elsewhere: another instance ran it).");
        metrics::describe_counter!(LEDGER_TRANSFERS, "Ledger transfers posted by this instance (replays of a key not counted).");
        let upkeep = handle.clone();
        // A thread of its own: it outlives any one runtime (the tests start many).
        let _ = std::thread::Builder::new().name("metrics-upkeep".into()).spawn(move || {
            loop {
                std::thread::sleep(UPKEEP);
                upkeep.run_upkeep();
            }
        });
        handle
    })
}

/// The request series, by route: the label of each path, and the handles of each route.
pub struct HttpMetrics {
    paths: matchit::Router<usize>,
    routes: Vec<Route>,
}

struct Route {
    label: Arc<str>,
    duration: Histogram,
    /// By the index of the status in [`STATUSES`]; the last for any other status.
    counts: [OnceLock<Counter>; STATUSES.len() + 1],
}

/// The statuses this server answers with, each with a handle made when first seen; another
/// status (rare) takes the slow way, through the recorder's map.
const STATUSES: [u16; 24] = [200, 201, 204, 206, 301, 302, 303, 304, 307, 400, 401, 403, 404, 405, 409, 410, 413, 416, 422, 429, 431, 500, 502, 503];

/// Routes that are not in the API document, labelled as they are written.
const OTHER_ROUTES: [&str; 10] = [
    "/api/openapi.json",
    "/healthz",
    "/readyz",
    "/metrics",
    "/static/{*file}",
    "/assets/{*file}",
    "/favicon.ico",
    "/manifest.webmanifest",
    "/install.sh",
    "/downloads/{file}",
];
/// An `/api/` path that names no route (answered 404 `api_not_found`).
const UNKNOWN_API: &str = "/api/{unknown}";
/// A page (server-rendered; every other path).
const PAGE: &str = "page";
/// A request to an app's own origin (src/connect/web.rs).
pub const APP_ORIGIN: &str = "app";

impl HttpMetrics {
    /// The table for the API's `paths` (OpenAPI templates, `{id}` parameters) and the routes
    /// outside it.
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> HttpMetrics {
        handle();
        let mut table = HttpMetrics { paths: matchit::Router::new(), routes: Vec::new() };
        for path in paths.into_iter().chain(OTHER_ROUTES) {
            let at = table.routes.len();
            if table.paths.insert(path, at).is_ok() {
                table.routes.push(Route::new(path));
            }
        }
        for label in [UNKNOWN_API, PAGE, APP_ORIGIN] {
            table.routes.push(Route::new(label));
        }
        table
    }

    /// The route of a request: an index into this table.
    pub fn route(&self, path: &str, app_origin: bool) -> usize {
        let last = self.routes.len();
        if app_origin {
            return last - 1;
        }
        match self.paths.at(path) {
            Ok(m) => *m.value,
            Err(_) if path == "/api" || path.starts_with("/api/") => last - 3,
            Err(_) => last - 2,
        }
    }

    /// One answered request of `route` with `status`, `seconds` after it arrived.
    pub fn record(&self, route: usize, status: u16, seconds: f64) {
        let Some(r) = self.routes.get(route) else { return };
        r.duration.record(seconds);
        match STATUSES.iter().position(|&s| s == status) {
            Some(i) => r.counts[i].get_or_init(|| counter(&r.label, status)).increment(1),
            None => counter(&r.label, status).increment(1),
        }
    }
}

impl Route {
    fn new(label: &str) -> Route {
        let label: Arc<str> = Arc::from(label);
        Route { duration: metrics::histogram!(HTTP_DURATION, "route" => label.to_string()), label, counts: Default::default() }
    }
}

fn counter(route: &str, status: u16) -> Counter {
    metrics::counter!(HTTP_REQUESTS, "route" => route.to_string(), "status" => status.to_string())
}

/// The text of `GET /metrics`: the recorder's series, then `now` (gauges read at this moment,
/// written by [`gauge_lines`], so a series that is gone, such as a GPU of a box now offline, is
/// gone from the text too).
pub fn render(now: &str) -> String {
    let mut text = handle().render();
    text.push_str(now);
    text
}

/// A gauge read now, as Prometheus text: its help and type, then one line per labelled value.
pub fn gauge_lines<'a>(name: &str, help: &str, values: impl IntoIterator<Item = (Vec<(&'a str, &'a str)>, f64)>) -> String {
    use std::fmt::Write;
    let mut out = format!("# HELP {name} {help}\n# TYPE {name} gauge\n");
    for (labels, value) in values {
        let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
        let _ = writeln!(out, "{name}{{{}}} {value}", labels.join(","));
    }
    out.push('\n');
    out
}

/// A label value as the text format writes it.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_labelled_by_its_route() {
        let m = HttpMetrics::new(["/api/ebs/v2/devices/{id}", "/api/ebs/v2/devices/pending", "/api/rmp/v1/apps"]);
        let label = |path: &str| m.routes[m.route(path, false)].label.to_string();
        assert_eq!(label("/api/ebs/v2/devices/D1"), "/api/ebs/v2/devices/{id}");
        assert_eq!(label("/api/ebs/v2/devices/pending"), "/api/ebs/v2/devices/pending");
        assert_eq!(label("/api/nothing/here"), UNKNOWN_API);
        assert_eq!(label("/api"), UNKNOWN_API);
        assert_eq!(label("/assets/map/world.json"), "/assets/{*file}");
        assert_eq!(label("/market"), PAGE);
        assert_eq!(m.routes[m.route("/anything", true)].label.as_ref(), APP_ORIGIN);
    }

    #[test]
    fn gauges_read_now_are_written_with_escaped_labels() {
        let text = gauge_lines("g", "A gauge.", [(vec![("device", "D\"1"), ("uuid", "GPU-1")], 97.5)]);
        assert_eq!(text, "# HELP g A gauge.\n# TYPE g gauge\ng{device=\"D\\\"1\",uuid=\"GPU-1\"} 97.5\n\n");
    }
}
