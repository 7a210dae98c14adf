//! One line an event (`[log] format`, text or JSON), carrying the request it was logged for.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::time::SystemTime;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

use super::CURRENT;

/// Makes the lines (`[log] format`): text,
/// `2026-11-30T02:23:16.123456Z  INFO request status=200 latency_ms=0.137 request_id=… method=GET path=/healthz`,
/// or one JSON object a line with the same keys (`timestamp`, `level`, `message`, the event's
/// fields, the request's, and `spans` when the event was logged inside any). Written straight into
/// the formatter's buffer: the timestamp's date and time made once a second a thread, numbers
/// through `itoa`, no `Debug` of a field that has a value of its own.
pub struct Line {
    pub(super) json: bool,
    pub(super) colour: bool,
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
        CURRENT.with(|c| match c.try_borrow().as_deref() {
            Ok(Some(r)) => {
                field(&mut w, self.json, "request_id", r.id.to_str().unwrap_or("-"))?;
                field(&mut w, self.json, "method", r.method.as_str())?;
                field(&mut w, self.json, "path", r.uri.path())
            }
            _ => Ok(()),
        })?;
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
    JsonEscaped(&mut *w).write_str(s)?;
    w.write_char('"')
}

/// Writes what it is given escaped for the inside of a JSON string.
struct JsonEscaped<W>(W);

impl<W: fmt::Write> fmt::Write for JsonEscaped<W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
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
            self.0.write_str(&s[from..i])?;
            if escaped.is_empty() {
                write!(self.0, "\\u{:04x}", c as u32)?;
            } else {
                self.0.write_str(escaped)?;
            }
            from = i + c.len_utf8();
        }
        self.0.write_str(&s[from..])
    }
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
                if raw {
                    value(w)
                } else {
                    w.write_char('"')?;
                    value(&mut Writer::new(&mut JsonEscaped(&mut *w)))?;
                    w.write_char('"')
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
    use std::time::Duration;

    use axum::http::{HeaderValue, Method, StatusCode, Uri};
    use tracing_subscriber::fmt::format::JsonFields;

    use super::*;
    use crate::telemetry::writer::tests::Captured;
    use crate::telemetry::{RequestContext, log_response, within};

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
}
