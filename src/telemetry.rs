//! Logging: `tracing`, one compact line per request carrying its request id.

use std::cell::RefCell;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use axum::http::{HeaderName, HeaderValue, Method, StatusCode, Uri};
use bytes::{Bytes, BytesMut};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::{JsonFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

use crate::config::LogConfig;

/// How long a line waits at most before it is written.
const FLUSH_EVERY: Duration = Duration::from_millis(20);
/// Bytes waiting that wake the writer before its time.
const WAKE_AT: usize = 256 * 1024;
/// Bytes waiting beyond which a request that logs waits for the writer (none is dropped).
const WAIT_AT: usize = 8 * 1024 * 1024;

/// Logging as `[log]` says. A request only formats its line and appends it to a buffer in memory;
/// a thread of its own writes the buffer every [`FLUSH_EVERY`] (sooner past [`WAKE_AT`] bytes), so
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

/// Where lines go: a buffer in memory that [`LogWriter::start`]'s thread writes out.
#[derive(Clone)]
pub struct LogWriter(Arc<Pending>);

struct Pending {
    lines: Mutex<Waiting>,
    /// Tells the writer thread to write now (past [`WAKE_AT`], or stopping).
    wake: Condvar,
    /// Tells requests waiting past [`WAIT_AT`] that the buffer was taken.
    room: Condvar,
}

#[derive(Default)]
struct Waiting {
    bytes: Vec<u8>,
    stopping: bool,
}

/// Writes what is left and stops the writer thread when dropped.
pub struct LogGuard {
    pending: Arc<Pending>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LogWriter {
    /// The writer and the thread writing its lines to `out`.
    pub fn start(out: impl std::io::Write + Send + 'static) -> (LogWriter, LogGuard) {
        let pending = Arc::new(Pending { lines: Mutex::new(Waiting::default()), wake: Condvar::new(), room: Condvar::new() });
        let thread = {
            let pending = pending.clone();
            std::thread::Builder::new().name("zmarket-log".into()).spawn(move || write_out(&pending, out)).ok()
        };
        (LogWriter(pending.clone()), LogGuard { pending, thread })
    }

    fn append(&self, line: &[u8]) {
        let mut w = self.0.lines.lock().unwrap_or_else(PoisonError::into_inner);
        while w.bytes.len() >= WAIT_AT && !w.stopping {
            self.0.wake.notify_one();
            w = self.0.room.wait(w).unwrap_or_else(PoisonError::into_inner);
        }
        let before = w.bytes.len();
        w.bytes.extend_from_slice(line);
        if before < WAKE_AT && w.bytes.len() >= WAKE_AT {
            self.0.wake.notify_one();
        }
    }
}

/// The writer thread: takes the buffer (leaving it an empty one of the same size) and writes it.
fn write_out(pending: &Pending, mut out: impl std::io::Write) {
    let mut taken = Vec::new();
    loop {
        let stopping = {
            let mut w = pending.lines.lock().unwrap_or_else(PoisonError::into_inner);
            if w.bytes.len() < WAKE_AT && !w.stopping {
                w = pending.wake.wait_timeout(w, FLUSH_EVERY).unwrap_or_else(PoisonError::into_inner).0;
            }
            std::mem::swap(&mut w.bytes, &mut taken);
            pending.room.notify_all();
            w.stopping
        };
        if !taken.is_empty() {
            let _ = out.write_all(&taken).and_then(|()| out.flush());
            // Keep the room of an ordinary interval's lines, not of a burst's.
            taken.clear();
            taken.shrink_to(WAKE_AT);
        }
        if stopping {
            return;
        }
    }
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        if let Ok(mut w) = self.pending.lines.lock() {
            w.stopping = true;
        }
        self.pending.wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What the fmt layer writes one event's line through (it writes the whole line at once).
pub struct LineOut<'a>(&'a LogWriter);

impl std::io::Write for LineOut<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.append(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LineOut<'a>;

    fn make_writer(&'a self) -> LineOut<'a> {
        LineOut(self)
    }
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

/// Makes the lines (`[log] format`): text,
/// `2026-11-30T02:23:16.123456Z  INFO request status=200 latency_ms=0.137 request_id=… method=GET path=/healthz`,
/// or one JSON object a line with the same keys (`timestamp`, `level`, `message`, the event's
/// fields, the request's, and `spans` when the event was logged inside any). Written straight into
/// the formatter's buffer: the timestamp's date and time made once a second a thread, numbers
/// through `itoa`, no `Debug` of a field that has a value of its own.
pub struct Line {
    json: bool,
    colour: bool,
}

impl<S, N> FormatEvent<S, N> for Line
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut w: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let level = *event.metadata().level();
        if self.json {
            w.write_str("{\"timestamp\":\"")?;
            timestamp(&mut w)?;
            w.write_str("\",\"level\":\"")?;
            w.write_str(level.as_str())?;
            w.write_char('"')?;
        } else {
            timestamp(&mut w)?;
            let (name, colour) = match level {
                Level::ERROR => ("ERROR", "31"),
                Level::WARN => (" WARN", "33"),
                Level::INFO => (" INFO", "32"),
                Level::DEBUG => ("DEBUG", "34"),
                _ => ("TRACE", "35"),
            };
            if self.colour {
                write!(w, " \x1b[{colour}m{name}\x1b[0m")?;
            } else {
                w.write_char(' ')?;
                w.write_str(name)?;
            }
        }
        let mut fields = Fields { w: &mut w, json: self.json, result: Ok(()) };
        event.record(&mut fields);
        fields.result?;
        let request = |w: &mut Writer<'_>| -> fmt::Result {
            CURRENT.with(|c| match c.try_borrow().as_deref() {
                Ok(Some(r)) => {
                    field(w, self.json, "request_id", r.id.to_str().unwrap_or("-"))?;
                    field(w, self.json, "method", r.method.as_str())?;
                    field(w, self.json, "path", r.uri.path())
                }
                _ => Ok(()),
            })
        };
        request(&mut w)?;
        if let Some(scope) = ctx.event_scope() {
            if self.json {
                w.write_str(",\"spans\":[")?;
            }
            for (i, span) in scope.from_root().enumerate() {
                let ext = span.extensions();
                let formatted = ext.get::<FormattedFields<N>>().map(|f| f.fields.as_str()).unwrap_or("");
                if self.json {
                    // The span's fields are a JSON object already (`JsonFields`).
                    w.write_str(if i == 0 { "{\"name\":" } else { ",{\"name\":" })?;
                    json_string(&mut w, span.name())?;
                    match formatted.strip_prefix('{').filter(|rest| rest.len() > 1) {
                        Some(rest) => write!(w, ",{rest}")?,
                        None => w.write_char('}')?,
                    }
                } else if formatted.is_empty() {
                    write!(w, " {}:", span.name())?;
                } else {
                    write!(w, " {}{{{formatted}}}:", span.name())?;
                }
            }
            if self.json {
                w.write_char(']')?;
            }
        }
        if self.json {
            w.write_char('}')?;
        }
        w.write_char('\n')
    }
}

thread_local! {
    /// The second last written and its `YYYY-MM-DDTHH:MM:SS`.
    static SECOND: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
}

/// Now, in UTC to the microsecond (`2026-11-30T02:23:16.123456Z`).
fn timestamp(w: &mut Writer<'_>) -> fmt::Result {
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs();
    SECOND.with(|s| {
        let mut s = s.borrow_mut();
        if s.0 != secs {
            let at = chrono::DateTime::from_timestamp(secs as i64, 0).unwrap_or_default();
            *s = (secs, at.format("%Y-%m-%dT%H:%M:%S").to_string());
        }
        w.write_str(&s.1)
    })?;
    w.write_char('.')?;
    // Six digits, the leading zeros kept: the digits of 1_000_000 + µs without the 1.
    w.write_str(&itoa::Buffer::new().format(1_000_000 + now.subsec_micros())[1..])?;
    w.write_char('Z')
}

/// ` key=value` (text) or `,"key":"value"` (JSON) for a string value.
fn field(w: &mut Writer<'_>, json: bool, key: &str, value: &str) -> fmt::Result {
    if json {
        w.write_char(',')?;
        json_string(w, key)?;
        w.write_char(':')?;
        json_string(w, value)
    } else {
        w.write_char(' ')?;
        w.write_str(key)?;
        w.write_char('=')?;
        if value.is_empty() || value.contains(|c: char| c.is_whitespace() || c == '"' || c == '=') {
            write!(w, "{value:?}")
        } else {
            w.write_str(value)
        }
    }
}

/// A JSON string: quotes, backslashes and control characters escaped (RFC 8259 §7).
fn json_string(w: &mut impl fmt::Write, s: &str) -> fmt::Result {
    w.write_char('"')?;
    let mut from = 0;
    for (i, c) in s.char_indices() {
        let escaped = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            c if (c as u32) < 0x20 => "",
            _ => continue,
        };
        w.write_str(&s[from..i])?;
        if escaped.is_empty() {
            write!(w, "\\u{:04x}", c as u32)?;
        } else {
            w.write_str(escaped)?;
        }
        from = i + c.len_utf8();
    }
    w.write_str(&s[from..])?;
    w.write_char('"')
}

/// Writes an event's fields: the message first and bare in text, each value as its own kind.
struct Fields<'a, 'w> {
    w: &'a mut Writer<'w>,
    json: bool,
    result: fmt::Result,
}

impl Fields<'_, '_> {
    /// The key, then the value written by `value` (`raw`: a JSON number or boolean, unquoted).
    fn put(&mut self, f: &Field, raw: bool, value: impl FnOnce(&mut Writer<'_>) -> fmt::Result) {
        if self.result.is_err() {
            return;
        }
        let w = &mut *self.w;
        self.result = (|| {
            if self.json {
                w.write_char(',')?;
                json_string(w, f.name())?;
                w.write_char(':')?;
                if raw { value(w) } else {
                    let mut s = String::new();
                    value(&mut Writer::new(&mut s))?;
                    json_string(w, &s)
                }
            } else {
                w.write_char(' ')?;
                if f.name() != "message" {
                    w.write_str(f.name())?;
                    w.write_char('=')?;
                }
                value(w)
            }
        })();
    }
}

impl Visit for Fields<'_, '_> {
    fn record_str(&mut self, f: &Field, value: &str) {
        if self.result.is_err() {
            return;
        }
        if self.json {
            self.result = field(self.w, true, f.name(), value);
        } else if f.name() == "message" {
            self.put(f, false, |w| w.write_str(value));
        } else {
            self.result = field(self.w, false, f.name(), value);
        }
    }

    fn record_u64(&mut self, f: &Field, value: u64) {
        self.put(f, true, |w| w.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_i64(&mut self, f: &Field, value: i64) {
        self.put(f, true, |w| w.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_bool(&mut self, f: &Field, value: bool) {
        self.put(f, true, |w| w.write_str(if value { "true" } else { "false" }));
    }

    fn record_f64(&mut self, f: &Field, value: f64) {
        if value.is_finite() {
            self.put(f, true, |w| write!(w, "{value}"));
        } else {
            self.put(f, false, |w| write!(w, "{value}"));
        }
    }

    fn record_debug(&mut self, f: &Field, value: &dyn fmt::Debug) {
        self.put(f, false, |w| write!(w, "{value:?}"));
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

    use std::sync::{Arc, Mutex};

    use axum::http::{HeaderValue, Method, Uri};
    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Captured;
        fn make_writer(&'a self) -> Captured {
            self.clone()
        }
    }

    /// The lines `log` writes through [`Line`] (as `json` or text).
    fn lines(json: bool, log: impl FnOnce()) -> Vec<String> {
        let out = Captured::default();
        let builder = tracing_subscriber::fmt().with_writer(out.clone()).with_max_level(Level::INFO);
        if json {
            tracing::subscriber::with_default(builder.fmt_fields(JsonFields::new()).event_format(Line { json, colour: false }).finish(), log);
        } else {
            tracing::subscriber::with_default(builder.event_format(Line { json, colour: false }).finish(), log);
        }
        String::from_utf8(out.0.lock().unwrap().clone()).unwrap().lines().map(str::to_string).collect()
    }

    fn request() -> Option<RequestContext> {
        let uri: Uri = "/market/apps?q=x".parse().unwrap();
        Some(RequestContext::new(HeaderValue::from_static("abc-1"), &Method::POST, &uri))
    }

    fn log_a_request() {
        let mut r = request();
        within(&mut r, || {
            log_response(StatusCode::CREATED, Duration::from_micros(1_234));
            tracing::warn!(who = "a \"b\"\nc", n = -3, ok = true, "inside");
        });
        assert!(r.is_some(), "the request is given back");
        tracing::info!("outside");
        tracing::debug!("filtered out");
    }

    #[test]
    fn text_lines_carry_the_request_they_were_logged_for() {
        let lines = lines(false, log_a_request);
        assert_eq!(lines.len(), 3, "{lines:?}");
        let (at, rest) = lines[0].split_once(' ').unwrap();
        assert!(chrono::DateTime::parse_from_rfc3339(at).is_ok() && at.ends_with('Z') && at.len() == 27, "{at}");
        assert_eq!(rest, " INFO request status=201 latency_ms=1.234 request_id=abc-1 method=POST path=/market/apps");
        assert!(lines[1].ends_with(r#" WARN inside who="a \"b\"\nc" n=-3 ok=true request_id=abc-1 method=POST path=/market/apps"#), "{}", lines[1]);
        assert!(lines[2].ends_with(" INFO outside"), "{}", lines[2]);
    }

    #[test]
    fn json_lines_are_objects_with_the_same_keys() {
        let lines = lines(true, || {
            log_a_request();
            let span = tracing::info_span!("job", kind = "sweep");
            span.in_scope(|| tracing::info!(k = 1.5, "in a span"));
        });
        let v: Vec<serde_json::Value> = lines.iter().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"))).collect();
        assert_eq!(v.len(), 4, "{lines:?}");
        assert!(chrono::DateTime::parse_from_rfc3339(v[0]["timestamp"].as_str().unwrap()).is_ok());
        assert_eq!(v[0]["level"], "INFO");
        assert_eq!(
            (&v[0]["message"], &v[0]["status"], &v[0]["latency_ms"], &v[0]["request_id"], &v[0]["method"], &v[0]["path"]),
            (&"request".into(), &201.into(), &1.234.into(), &"abc-1".into(), &"POST".into(), &"/market/apps".into())
        );
        assert_eq!((&v[1]["level"], &v[1]["who"], &v[1]["n"], &v[1]["ok"]), (&"WARN".into(), &"a \"b\"\nc".into(), &(-3).into(), &true.into()));
        assert!(v[2].get("request_id").is_none(), "{}", lines[2]);
        assert_eq!(v[3]["spans"], serde_json::json!([{"name": "job", "kind": "sweep"}]), "{}", lines[3]);
        assert_eq!(v[3]["k"], 1.5);
    }

    /// A disk slower than the lines come: each write takes 30 ms.
    struct Slow(Captured);

    impl std::io::Write for Slow {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            std::thread::sleep(Duration::from_millis(30));
            self.0.write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_writer_writes_every_line_in_order_soon_and_all_at_the_end() {
        let out = Captured::default();
        let (writer, guard) = LogWriter::start(Slow(out.clone()));
        use std::io::Write as _;
        writer.make_writer().write_all(b"first\n").unwrap();
        // Written within its interval, without the guard's help.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while out.0.lock().unwrap().is_empty() {
            assert!(std::time::Instant::now() < deadline, "a line waited more than 5 s");
            std::thread::sleep(Duration::from_millis(5));
        }
        // Four threads write 16 MB, more than the buffer holds before a writer waits for the
        // slow disk: nothing lost, each thread's lines in its order.
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let writer = writer.clone();
                std::thread::spawn(move || {
                    let x = "x".repeat(1000);
                    for i in 0..4000 {
                        writer.make_writer().write_all(format!("{t}:{i} {x}\n").as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        writer.make_writer().write_all(b"last\n").unwrap();
        drop(guard);
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert!(text.starts_with("first\n") && text.ends_with("last\n"));
        let mut next = [0usize; 4];
        for line in text.lines().skip(1).take(16_000) {
            let (t, i) = line.split_once(' ').unwrap().0.split_once(':').unwrap();
            let (t, i): (usize, usize) = (t.parse().unwrap(), i.parse().unwrap());
            assert_eq!(i, next[t], "thread {t}");
            next[t] += 1;
        }
        assert_eq!(next, [4000; 4]);
    }
}

