//! Logging: `tracing`, one compact line per request carrying its request id. The lines are made
//! by [`line::Line`] and written by [`writer::LogWriter`]'s thread.

mod line;
mod writer;

use std::cell::RefCell;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, Method, StatusCode, Uri};
use bytes::{Bytes, BytesMut};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::JsonFields;

pub use line::Line;
pub use writer::{LogGuard, LogWriter};

use crate::config::LogConfig;

/// Logging as `[log]` says. A request only formats its line and appends it to a buffer in memory;
/// a thread of its own writes the buffer every 20 ms (sooner past 256 KiB: [`LogWriter`]), so
/// under load thousands of lines go out in one write and no request wakes a thread (issue 42,
/// item 5: a channel to a writer thread woke it for every line, 8 % of the server's CPU on
/// `/market`). Keep the guard for the life of the process: dropping it writes what is left.
///
/// Lines are made by [`Line`]: one compact line an event, carrying the request it was logged
/// for (its id, method and path, from [`within`]) without a span a request.
pub fn init(cfg: &LogConfig) -> LogGuard {
    let (writer, guard) = LogWriter::start(std::io::stdout());
    let filter = EnvFilter::try_new(filter_of(&cfg.level)).unwrap_or_else(|_| EnvFilter::new(filter_of("info")));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    let _ = if cfg.format == "json" {
        builder.fmt_fields(JsonFields::new()).event_format(Line { json: true, colour: false }).try_init()
    } else {
        // Colours for a person at a terminal only: a file or the journal gets plain text.
        let colour = std::io::IsTerminal::is_terminal(&std::io::stdout());
        builder.event_format(Line { json: false, colour }).try_init()
    };
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

/// The request a line is logged for: its id, method and path.
pub struct RequestContext {
    id: HeaderValue,
    method: Method,
    uri: Uri,
}

impl RequestContext {
    pub fn new(id: HeaderValue, method: &Method, uri: &Uri) -> RequestContext {
        RequestContext { id, method: method.clone(), uri: uri.clone() }
    }

    /// The request's id (for its answer, once its lines are logged).
    pub fn into_id(self) -> HeaderValue {
        self.id
    }
}

thread_local! {
    /// The request being answered on this thread, while [`within`] runs.
    static CURRENT: RefCell<Option<RequestContext>> = const { RefCell::new(None) };
}

/// Runs `f` with the request in `slot` current: the lines it logs carry the request. The request
/// moves into the thread's slot and back (no copy, no allocation: a request pays this at each
/// poll, where a span cost a registry entry, its fields formatted into a `String`, and an enter
/// and exit at each poll).
pub fn within<R>(slot: &mut Option<RequestContext>, f: impl FnOnce() -> R) -> R {
    struct Back<'a>(&'a mut Option<RequestContext>);
    impl Drop for Back<'_> {
        fn drop(&mut self) {
            CURRENT.with(|c| std::mem::swap(&mut *c.borrow_mut(), self.0));
        }
    }
    CURRENT.with(|c| std::mem::swap(&mut *c.borrow_mut(), slot));
    let _back = Back(slot);
    f()
}

/// The request's line, once its response head is ready (`took`: since the request arrived).
pub fn log_response(status: StatusCode, took: Duration) {
    let status = status.as_u16();
    // To the microsecond: a short number to write.
    let ms = took.as_micros() as f64 / 1000.0;
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
