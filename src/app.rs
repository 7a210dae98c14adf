//! Builds the router; nothing else. Each domain owns its routes (`<domain>::routes::router()`,
//! generic over the state: a handler names only its domain's context); they are composed here,
//! with the OpenAPI document, over the state of src/state.rs.

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

use crate::client_ip::TrustedProxies;
use crate::error::{AppError, Msg};
use crate::http::{ClientIp, SecurityHeaders};
use crate::observe::{self, HttpMetrics};
use crate::stack::{Compress, Edge, Market};
use crate::state::AppState;

#[derive(OpenApi)]
#[openapi(info(title = "zmarket API", description = "The HTTP contract of zmarket: every response is {code, data, msg}."))]
struct ApiDoc;

/// The API routes of every domain with their OpenAPI document.
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(crate::iam::routes::router())
        .merge(crate::companies::routes::router())
        .merge(crate::market::routes::router())
        .merge(crate::devices::routes::router())
        .merge(crate::apps::routes::router())
        .merge(crate::orders::routes::router())
        .merge(crate::notifications::routes::router())
        .merge(crate::billing::routes::router())
        .merge(crate::social::routes::router())
        .merge(crate::connect::routes::router())
        .merge(crate::ops::routes::router())
}

/// What the listener serves: the router inside the middleware stack (src/stack.rs), a concrete
/// type; the listener keeps one copy of it per connection.
pub type App = Edge<Compress<Market<Router>>>;

/// The routes, wrapped once by the middleware stack (outermost first: request id, trace, panic
/// guard, app origins; compression; body limit, idempotency store, localized errors, security
/// headers: src/stack.rs). The stack wraps the whole router rather than each route
/// (`Router::layer`), so a request passes through it once, before routing, without cloning a
/// per-route stack. A route with its own body limit (an upload) has it as its own layer, inside.
pub fn router(state: AppState) -> App {
    let (api, mut doc) = api().split_for_parts();
    crate::openapi::complete(&mut doc);
    let http = HttpMetrics::new(doc.paths.paths.keys().map(String::as_str));
    let doc_json = Arc::new(doc.to_pretty_json().unwrap_or_else(|_| "{}".into()));
    let security = SecurityHeaders::new(&state.config.server.frame_ancestors, state.config.tile_origin().as_deref());
    let idempotency = state.idempotency.clone();
    let body_limit = state.config.server.body_limit_bytes;
    let connect = state.connect.clone();
    // Validated at start (src/config/limits.rs): read once here, not on every scrape.
    let metrics_allow = TrustedProxies::new(&state.config.server.metrics_allow).ok();

    let routes = Router::new()
        .merge(api)
        .route(
            "/api/openapi.json",
            get(move || {
                let doc = doc_json.clone();
                async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], doc.as_str().to_owned()) }
            }),
        )
        .route("/api", any(api_not_found))
        .route("/api/{*rest}", any(api_not_found))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(move |state: State<AppState>, ip: ClientIp| metrics(state, ip, metrics_allow.clone())))
        .route("/static/{*file}", get(crate::ssr::static_file))
        .route("/assets/{*file}", get(crate::ssr::asset_file))
        .route("/favicon.ico", get(crate::ssr::favicon))
        .route("/manifest.webmanifest", get(crate::ssr::web_manifest))
        .merge(crate::devices::routes::install_router())
        .fallback(crate::ssr::page)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state);
    let market = Market::new(routes, DefaultBodyLimit::max(body_limit), security, idempotency);
    // An app's own origin (`<label>.<apps domain>`) is the app's, not the market's: served
    // outside the market's headers and compression (src/connect/web.rs).
    Edge::new(Compress::new(market), connect, http)
}

async fn api_not_found() -> AppError {
    AppError::Refused(Msg::ApiNotFound)
}

async fn method_not_allowed() -> AppError {
    AppError::Refused(Msg::MethodNotAllowed)
}

/// The process is up.
async fn healthz() -> &'static str {
    "ok"
}

/// The process's metrics in Prometheus text (docs/api.md "Observability"), to the addresses of
/// `[server] metrics_allow` only (403 otherwise). The gauges read from the database (its pool,
/// the GPUs of the boxes) are read now.
async fn metrics(State(state): State<AppState>, ClientIp(ip): ClientIp, allow: Option<TrustedProxies>) -> Response {
    let allowed = allow.is_some_and(|list| list.trusts(ip));
    if !allowed {
        return AppError::Refused(Msg::MetricsNotAllowed).into_response();
    }
    let mut now = crate::db::pool_gauges(&state.db);
    match crate::devices::gpus::live_use(&state.db).await {
        Ok(gpus) => {
            let busy = gpus.iter().map(|(d, g)| (vec![("device", d.as_str()), ("uuid", g.uuid.as_str())], g.utilization));
            now.push_str(&observe::gauge_lines(observe::GPU_UTILIZATION, "GPU utilization (0-100) at its online box's last beat.", busy));
            let memory = gpus.iter().map(|(d, g)| (vec![("device", d.as_str()), ("uuid", g.uuid.as_str())], g.memory_used as f64));
            now.push_str(&observe::gauge_lines(observe::GPU_MEMORY_USED, "GPU memory in use, in bytes, at its online box's last beat.", memory));
        }
        Err(e) => tracing::warn!(error = %e, "GPU figures unreadable for /metrics"),
    }
    ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], observe::render(&now)).into_response()
}

/// The database answers.
async fn readyz(State(state): State<AppState>) -> Response {
    if crate::db::ping(&state.db).await {
        (StatusCode::OK, "ready").into_response()
    } else {
        AppError::Refused(Msg::DatabaseUnreachable).into_response()
    }
}

