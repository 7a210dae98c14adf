//! Logging: `tracing`, one structured line per request carrying its request id.

use std::time::Duration;

use axum::http::{HeaderValue, Request, Response};
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::request_id::{MakeRequestId, RequestId};
use tower_http::trace::{MakeSpan, OnResponse, TraceLayer};
use tracing::Span;
use tracing_subscriber::EnvFilter;

use crate::config::LogConfig;

pub fn init(cfg: &LogConfig) {
    // sqlx logs every statement at INFO: keep it quiet unless asked.
    let filter = EnvFilter::try_new(format!("{},sqlx=warn,sea_orm=warn", cfg.level)).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(false);
    let _ = if cfg.format == "json" { builder.json().flatten_event(true).try_init() } else { builder.compact().try_init() };
}

/// Request ids: random UUIDs (v4) from the thread's generator. tower-http's `MakeRequestUuid`
/// asks the kernel for every one (a `getrandom` call per request).
#[derive(Clone, Copy, Default)]
pub struct RequestUuid;

impl MakeRequestId for RequestUuid {
    fn make_request_id<B>(&mut self, _: &Request<B>) -> Option<RequestId> {
        let id = uuid::Builder::from_random_bytes(rand::random()).into_uuid();
        let mut buf = uuid::Uuid::encode_buffer();
        HeaderValue::from_str(id.hyphenated().encode_lower(&mut buf)).ok().map(RequestId::new)
    }
}

#[derive(Clone)]
pub struct RequestSpan;

impl<B> MakeSpan<B> for RequestSpan {
    fn make_span(&mut self, req: &Request<B>) -> Span {
        let id = req.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("-");
        tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.uri().path())
    }
}

#[derive(Clone)]
pub struct LogResponse;

impl<B> OnResponse<B> for LogResponse {
    fn on_response(self, res: &Response<B>, latency: Duration, _: &Span) {
        let status = res.status().as_u16();
        let ms = latency.as_secs_f64() * 1000.0;
        if status >= 500 {
            tracing::error!(status, latency_ms = ms, "request");
        } else {
            tracing::info!(status, latency_ms = ms, "request");
        }
    }
}

pub fn trace_layer() -> TraceLayer<SharedClassifier<ServerErrorsAsFailures>, RequestSpan, (), LogResponse, (), (), ()> {
    TraceLayer::new_for_http()
        .make_span_with(RequestSpan)
        .on_request(())
        .on_response(LogResponse)
        .on_body_chunk(())
        .on_eos(())
        .on_failure(())
}
