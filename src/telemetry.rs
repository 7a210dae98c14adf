//! Logging: `tracing`, one structured line per request carrying its request id.

use std::cell::RefCell;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, Method, StatusCode};
use bytes::{Bytes, BytesMut};
use tracing::Span;
use tracing_subscriber::EnvFilter;

use crate::config::LogConfig;

/// Lines waiting for the writer before a request that logs waits for room (none is dropped).
const LINES_QUEUED: usize = 64 * 1024;

/// Logging as `[log]` says. A request only formats its line and queues it: a thread of its own
/// writes the lines (issue 42, item 5), through a buffer flushed whenever the queue is empty, so
/// under load many lines go out in one write and at rest each line goes out at once. Keep the
/// guard for the life of the process: dropping it writes what is queued.
pub fn init(cfg: &LogConfig) -> tracing_appender::non_blocking::WorkerGuard {
    let out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout());
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .buffered_lines_limit(LINES_QUEUED)
        .thread_name("zmarket-log")
        .finish(out);
    let filter = EnvFilter::try_new(filter_of(&cfg.level)).unwrap_or_else(|_| EnvFilter::new(filter_of("info")));
    // Colours for a person at a terminal only: a file or the journal gets plain text.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(false).with_ansi(colour).with_writer(writer);
    let _ = if cfg.format == "json" { builder.json().flatten_event(true).try_init() } else { builder.compact().try_init() };
    guard
}

/// The filter of `[log] level`: the level asked, with the chatty crates one step quieter unless
/// the level names them (a later directive for a crate wins): sqlx logs every statement at INFO,
/// the job scheduler ~20 lines of its own start-up ("Uninited", "Job creator created"; issue 44).
pub fn filter_of(level: &str) -> String {
    format!("sqlx=warn,sea_orm=warn,tokio_cron_scheduler=warn,{level}")
}

/// The header a request id travels in (kept when a client or a proxy sent one).
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// How many ids one buffer of a thread holds.
const IDS_PER_CHUNK: usize = 64;
const ID_LEN: usize = 36;

thread_local! {
    /// Ids made ahead (random UUIDs v4, hyphenated) and the offset of the next one.
    static IDS: RefCell<(Bytes, usize)> = const { RefCell::new((Bytes::new(), 0)) };
}

/// A new request id: a random UUID (v4) from the thread's generator, as a header value. Ids are
/// made 64 at a time into one buffer that every id's value shares, so a request costs no
/// allocation and no `getrandom` call (tower-http's `MakeRequestUuid` pays both for each).
pub fn new_request_id() -> HeaderValue {
    IDS.with(|ids| {
        let mut ids = ids.borrow_mut();
        if ids.1 + ID_LEN > ids.0.len() {
            // The chunk's randomness in one call (the generator works in blocks).
            let mut random = [0u8; IDS_PER_CHUNK * 16];
            rand::fill(&mut random[..]);
            let mut chunk = BytesMut::with_capacity(IDS_PER_CHUNK * ID_LEN);
            let mut buf = uuid::Uuid::encode_buffer();
            for bytes in random.as_chunks::<16>().0 {
                let id = uuid::Builder::from_random_bytes(*bytes).into_uuid();
                chunk.extend_from_slice(id.hyphenated().encode_lower(&mut buf).as_bytes());
            }
            *ids = (chunk.freeze(), 0);
        }
        let at = ids.1;
        ids.1 += ID_LEN;
        HeaderValue::from_maybe_shared(ids.0.slice(at..at + ID_LEN)).expect("hex digits and hyphens")
    })
}

/// The span of one request (its fields are on every line logged while it is answered). Costs
/// nothing beyond a check when the level leaves it out (the bench runs at `warn`).
pub fn request_span(id: &HeaderValue, method: &Method, path: &str) -> Span {
    let id = id.to_str().unwrap_or("-");
    tracing::info_span!("request", request_id = %id, method = %method, path = %path)
}

/// The request's line, once its response head is ready (`took`: since the request arrived).
pub fn log_response(status: StatusCode, took: Duration) {
    let status = status.as_u16();
    let ms = took.as_secs_f64() * 1000.0;
    if status >= 500 {
        tracing::error!(status, latency_ms = ms, "request");
    } else if tracing::enabled!(tracing::Level::INFO) {
        tracing::info!(status, latency_ms = ms, "request");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn request_ids_are_distinct_uuids() {
        let ids: Vec<_> = (0..200).map(|_| super::new_request_id()).collect();
        let set: std::collections::HashSet<_> = ids.iter().map(|v| v.to_str().unwrap().to_string()).collect();
        assert_eq!(set.len(), 200);
        for id in &set {
            let u = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(u.get_version_num(), 4, "{id}");
            assert_eq!(id, &u.hyphenated().to_string());
        }
    }
}
