//! Shared HTTP pieces: extractors whose rejections are our own envelope (JSON body, query, path),
//! pagination, and the security headers every response gets.

use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::client_ip::TrustedProxies;
use crate::error::{AppError, Msg};

/// A JSON body whose rejection is our envelope: 415 for another content type, 413 over the body
/// limit, 400 `data.field = "body"` when it is not JSON, and 400 naming the field (its path, e.g.
/// `metrics.cpu_percent` or `acks[0].ok`) when the JSON has a value of the wrong shape, or a
/// string holding a control character (issue 29, finding 6).
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = AppError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let (value, bytes) = json_body::<T, S>(req, state).await?;
        no_control_in_json(&bytes)?;
        Ok(ApiJson(value))
    }
}

/// The body read and deserialized, with its bytes (for the control-character check, made after
/// a [`Checked`] type's own rules so that their messages come first).
async fn json_body<T: DeserializeOwned, S: Send + Sync>(req: Request, state: &S) -> Result<(T, axum::body::Bytes), AppError> {
    if !json_content_type(req.headers()) {
        return Err(AppError::Refused(Msg::JsonContentType));
    }
    let bytes = axum::body::Bytes::from_request(req, state).await.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            AppError::Refused(Msg::BodyTooLarge)
        } else if too_slow(&e) {
            AppError::Refused(Msg::BodyTooSlow)
        } else {
            AppError::invalid("body", Msg::MalformedJson)
        }
    })?;
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Ok(v) => de.end().map(|_| (v, bytes)).map_err(|_| AppError::invalid("body", Msg::MalformedJson)),
        Err(e) => Err(body_error::<T>(&e, &bytes)),
    }
}

fn no_control_in_json(bytes: &[u8]) -> Result<(), AppError> {
    match control_in_json(bytes) {
        Some(field) => Err(control_error(field)),
        None => Ok(()),
    }
}

/// A character no text input may hold: the C0 controls (U+0000 NUL among them; PostgreSQL
/// cannot store it) but tab, line feed and carriage return, and DEL.
pub fn control_char(c: char) -> bool {
    (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{7f}'
}

fn control_error(field: String) -> AppError {
    let mut field = field;
    field.truncate(200);
    AppError::InvalidBody { msg: Msg::ControlCharacters(field.clone()), field }
}

/// The path (`acks[0].id`, `name`) of the first string or key of a JSON body that holds a
/// control character. A control character can only be in JSON as an escape (`\u0000`) or a raw
/// DEL byte, so a body without either is answered without parsing it twice.
fn control_in_json(bytes: &[u8]) -> Option<String> {
    let escaped = bytes.windows(6).any(|w| {
        w.starts_with(b"\\u00") && (matches!(w[4], b'0' | b'1') || (w[4] == b'7' && matches!(w[5], b'f' | b'F')))
    });
    if !escaped && !bytes.contains(&0x7f) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    control_in_value(&value, "")
}

fn control_in_value(v: &serde_json::Value, path: &str) -> Option<String> {
    use serde_json::Value;
    let here = || if path.is_empty() { "body".to_string() } else { path.to_string() };
    match v {
        Value::String(s) => s.chars().any(control_char).then(here),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, x)| control_in_value(x, &format!("{path}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(k, x)| {
            let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
            if k.chars().any(control_char) { Some(p) } else { control_in_value(x, &p) }
        }),
        _ => None,
    }
}

/// The first query parameter (decoded) whose name or value holds a control character.
fn control_in_query(query: Option<&str>) -> Option<String> {
    url::form_urlencoded::parse(query?.as_bytes())
        .find(|(k, v)| k.chars().chain(v.chars()).any(control_char))
        .map(|(k, _)| if k.chars().any(control_char) { "query".to_string() } else { k.into_owned() })
}

fn json_content_type(headers: &axum::http::HeaderMap) -> bool {
    let Some(ct) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else { return false };
    let Ok(mime) = ct.parse::<mime::Mime>() else { return false };
    mime.type_() == "application" && (mime.subtype() == "json" || mime.suffix().is_some_and(|s| s == "json"))
}

/// The envelope for a body serde refused: a syntax error is the body's; a data error names
/// its field.
fn body_error<T: DeserializeOwned>(e: &serde_path_to_error::Error<serde_json::Error>, bytes: &[u8]) -> AppError {
    use serde_json::error::Category;
    if !matches!(e.inner().classify(), Category::Data) {
        return AppError::invalid("body", Msg::MalformedJson);
    }
    let mut path = e.path().to_string();
    if path == "." {
        path.clear();
    }
    // "missing field `x`" is reported at the parent: name the field itself.
    let text = e.inner().to_string();
    if let Some(missing) = text.strip_prefix("missing field `").and_then(|r| r.split('`').next()) {
        path = if path.is_empty() { missing.to_string() } else { format!("{path}.{missing}") };
    }
    if path.is_empty() {
        return field_alone::<T>(bytes).unwrap_or(AppError::invalid("body", Msg::MalformedJson));
    }
    invalid_body_field(path)
}

fn invalid_body_field(mut path: String) -> AppError {
    path.truncate(200);
    AppError::InvalidBody { msg: Msg::InvalidBodyField(path.clone()), field: path }
}

/// serde reads the fields of a flattened group (`#[serde(flatten)]`) from a buffer, where it
/// names none of them: a body refused at its root (such a field of the wrong type, or a field no
/// group takes) is read again one field at a time, in the body's order, and the first field
/// refused on its own is named, as a plain struct's would be. A body type with required fields
/// refuses every field alone (the others are missing): nothing is named then.
fn field_alone<T: DeserializeOwned>(bytes: &[u8]) -> Option<AppError> {
    let Entries(entries) = serde_json::from_slice(bytes).ok()?;
    for (key, value) in entries {
        let alone = serde_json::Value::Object(serde_json::Map::from_iter([(key.clone(), value)]));
        let Err(e) = serde_path_to_error::deserialize::<_, T>(alone) else { continue };
        if e.inner().to_string().starts_with("missing field") {
            return None;
        }
        let path = e.path().to_string();
        return Some(invalid_body_field(if path == "." { key } else { path }));
    }
    None
}

/// A JSON object's entries in the order it writes them.
struct Entries(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Entries, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// A request body checked at the edge: a type whose values are valid by construction, built from
/// its JSON body by [`Checked::check`] (the body's fields are options, so a missing one gets its
/// own message). A service takes only such checked values.
pub trait Checked: Sized {
    type Body: DeserializeOwned;
    fn check(body: Self::Body) -> Result<Self, AppError>;
}

/// The extractor of a [`Checked`] body: a malformed body and an invalid field both answer our
/// envelope (400 with `data.field`).
pub struct Valid<T>(pub T);

impl<T: Checked, S: Send + Sync> FromRequest<S> for Valid<T> {
    type Rejection = AppError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let (body, bytes) = json_body::<T::Body, S>(req, state).await?;
        let checked = T::check(body)?;
        no_control_in_json(&bytes)?;
        Ok(Valid(checked))
    }
}

/// `axum::extract::Query` whose rejection is our envelope.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(field) = control_in_query(parts.uri.query()) {
            return Err(control_error(field));
        }
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(v)) => Ok(ApiQuery(v)),
            Err(QueryRejection::FailedToDeserializeQueryString(e)) => {
                tracing::debug!(error = %e, "bad query string");
                Err(AppError::invalid("query", Msg::InvalidField("query")))
            }
            Err(_) => Err(AppError::invalid("query", Msg::InvalidField("query"))),
        }
    }
}

/// `axum::extract::Path` whose rejection is our envelope: a path parameter that is not valid
/// UTF-8 or does not parse as `T` (e.g. a typed id) answers 400 with `data.field = "id"`.
pub struct ApiPath<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiPath<T> {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        if let Ok(raw) = axum::extract::RawPathParams::from_request_parts(parts, state).await
            && let Some((name, _)) = raw.iter().find(|(_, v)| v.chars().any(control_char))
        {
            return Err(control_error(name.to_string()));
        }
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(v)) => Ok(ApiPath(v)),
            Err(e) => {
                tracing::debug!(error = %e, "bad path parameter");
                Err(AppError::invalid("id", Msg::InvalidField("id")))
            }
        }
    }
}

/// `axum::extract::Multipart` whose rejection (not multipart, no boundary) is our envelope: 400
/// with `data.field` set to the form field the call expects.
pub struct ApiMultipart(pub axum::extract::Multipart);

impl<S: Send + Sync> FromRequest<S> for ApiMultipart {
    type Rejection = AppError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Multipart::from_request(req, state).await.map(ApiMultipart).map_err(|e| {
            tracing::debug!(error = %e, "not a multipart body");
            AppError::invalid("file", Msg::AvatarMissing)
        })
    }
}

impl ApiMultipart {
    /// The form's field `name` read whole (a small file: an avatar, an icon): 413 with
    /// `too_large` once it passes `max` bytes (or the request announced far more), 400 naming
    /// the field with `missing` when there is none. The rest of the form is ignored.
    pub async fn small_file(mut self, headers: &axum::http::HeaderMap, name: &'static str, max: usize, too_large: Msg, missing: Msg) -> Result<Vec<u8>, AppError> {
        let announced = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
        if announced.is_some_and(|n| n > max + 64 * 1024) {
            return Err(AppError::Refused(too_large));
        }
        let broken = |e: axum::extract::multipart::MultipartError| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE { AppError::Refused(too_large.clone()) } else { AppError::invalid(name, missing.clone()) }
        };
        while let Some(mut field) = self.0.next_field().await.map_err(broken)? {
            if field.name() != Some(name) {
                continue;
            }
            let mut bytes = Vec::new();
            while let Some(chunk) = field.chunk().await.map_err(broken)? {
                if bytes.len() + chunk.len() > max {
                    return Err(AppError::Refused(too_large));
                }
                bytes.extend_from_slice(&chunk);
            }
            return Ok(bytes);
        }
        Err(AppError::invalid(name, missing))
    }
}

/// `?offset=&limit=`; limit at most 100.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Page {
    #[param(minimum = 0)]
    pub offset: Option<i64>,
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

impl Page {
    pub const MAX_LIMIT: u64 = 100;
    /// Checked `(offset, limit)` with the given default limit.
    pub fn checked(&self, default_limit: u64) -> Result<(u64, u64), AppError> {
        let offset = self.offset.unwrap_or(0);
        let limit = self.limit.unwrap_or(default_limit as i64);
        if offset < 0 || !(1..=Self::MAX_LIMIT as i64).contains(&limit) {
            return Err(AppError::invalid(if offset < 0 { "offset" } else { "limit" }, Msg::InvalidPagination));
        }
        Ok((offset as u64, limit as u64))
    }
}

/// A list answer: `{items, total}`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct List<T> {
    pub items: Vec<T>,
    pub total: u64,
}

/// Security headers on every response. A document (HTML, or SVG, which a browser may open as
/// one) gets the page's policy: a CSP with no inline script (the page state is a non-executable
/// JSON script element), the referrer and opener policies and the permissions. Any other answer
/// (JSON, text, scripts, images …) cannot run anything as a page: it gets `default-src 'none'`
/// with the same frame ancestors, `nosniff` and `X-Frame-Options` (what OWASP asks of an API),
/// half the bytes on every API call. Frames are allowed only from configured origins.
pub struct SecurityHeaders {
    csp: HeaderValue,
    csp_other: HeaderValue,
    frame_options: Option<HeaderValue>,
}

impl Clone for SecurityHeaders {
    /// A copy with buffers of its own (the listener's copy for each connection, see
    /// `stack::Market`): every response takes a reference to them, and connections served on
    /// different cores should not all count on one buffer.
    fn clone(&self) -> Self {
        let own = |v: &HeaderValue| HeaderValue::from_bytes(v.as_bytes()).expect("a header value's own bytes");
        SecurityHeaders { csp: own(&self.csp), csp_other: own(&self.csp_other), frame_options: self.frame_options.clone() }
    }
}

impl SecurityHeaders {
    pub fn new(frame_ancestors: &[String], extra_img_src: Option<&str>) -> Self {
        let ancestors = if frame_ancestors.is_empty() { "'none'".to_string() } else { frame_ancestors.join(" ") };
        let img = match extra_img_src {
            Some(origin) => format!("'self' data: blob: {origin}"),
            None => "'self' data: blob:".to_string(),
        };
        let csp = format!(
            "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src {img}; \
             font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; \
             base-uri 'none'; form-action 'self'; frame-ancestors {ancestors}"
        );
        let csp_other = format!("default-src 'none'; frame-ancestors {ancestors}");
        SecurityHeaders {
            csp: HeaderValue::from_str(&csp).expect("validated origins form a header value"),
            csp_other: HeaderValue::from_str(&csp_other).expect("validated origins form a header value"),
            frame_options: frame_ancestors.is_empty().then(|| HeaderValue::from_static("DENY")),
        }
    }
}

/// What the security headers of a response depend on in its request: its path.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// The PC-mode entry (tokens in its URL).
    PcWeb,
    /// `/api/…`.
    Api,
    Other,
}

impl PathKind {
    pub fn of(path: &str) -> PathKind {
        if path == "/pc-web" {
            PathKind::PcWeb
        } else if path.starts_with("/api/") {
            PathKind::Api
        } else {
            PathKind::Other
        }
    }
}

const COOP: HeaderName = HeaderName::from_static("cross-origin-opener-policy");
const PERMISSIONS: HeaderName = HeaderName::from_static("permissions-policy");

impl SecurityHeaders {
    /// The market's headers on a response to a request of `kind` (every value built once). An
    /// answer without a body type (a 304, a redirect) counts as a document outside `/api/`: a
    /// 304's headers replace the cached page's, which must keep the page's policy.
    pub fn apply(&self, kind: PathKind, h: &mut axum::http::HeaderMap) {
        // API answers (tokens, personal data) and the PC-mode entry (tokens in its URL) are never
        // stored by a browser or a proxy, unless the handler chose a policy (avatars).
        if kind == PathKind::PcWeb || (kind == PathKind::Api && !h.contains_key(header::CACHE_CONTROL)) {
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        }
        let document = match h.get(header::CONTENT_TYPE) {
            Some(t) => t.as_bytes().starts_with(b"text/html") || t.as_bytes().starts_with(b"image/svg+xml"),
            None => kind != PathKind::Api,
        };
        // A policy the handler set (the API door's `sandbox`, issue 43 item 5) stays: the
        // market's is added beside it, and a browser enforces both.
        let csp = |h: &mut axum::http::HeaderMap, v: HeaderValue| {
            if h.contains_key(header::CONTENT_SECURITY_POLICY) {
                h.append(header::CONTENT_SECURITY_POLICY, v);
            } else {
                h.insert(header::CONTENT_SECURITY_POLICY, v);
            }
        };
        if document {
            h.reserve(6);
            csp(h, self.csp.clone());
            h.insert(header::REFERRER_POLICY, HeaderValue::from_static("strict-origin-when-cross-origin"));
            h.insert(COOP, HeaderValue::from_static("same-origin"));
            h.insert(PERMISSIONS, HeaderValue::from_static("camera=(), microphone=(), geolocation=(self)"));
        } else {
            csp(h, self.csp_other.clone());
        }
        h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        if let Some(xfo) = &self.frame_options {
            h.insert(header::X_FRAME_OPTIONS, xfo.clone());
        }
    }
}

/// True when the request's `If-None-Match` names `etag` (or `*`): the client holds the answer.
pub fn not_modified(headers: &axum::http::HeaderMap, etag: &HeaderValue) -> bool {
    let tag = etag.as_bytes();
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t.as_bytes() == tag)
}

// ---- slow bodies (src/http/rate.rs) and event streams (issue 29, finding 7) ----

mod rate;

pub use rate::{BodyTooSlow, MinRate, SlowBodies};
use rate::too_slow;

/// The connection a request came on, as the listener gave it (a request extension, the one
/// clone per request an `Arc`): its peer and the proxies trusted to name a client behind it
/// ([`ClientIp`]), its place among the connections serving requests, and the cap of event
/// streams.
#[derive(Clone)]
pub struct Conn(std::sync::Arc<ConnShared>);

struct ConnShared {
    peer: std::net::IpAddr,
    trusted: TrustedProxies,
    place: std::sync::Mutex<Option<tokio::sync::OwnedSemaphorePermit>>,
    streams: std::sync::Arc<tokio::sync::Semaphore>,
    /// The connection's share of its address (the listener's), given back with the last clone.
    _ip_slot: Box<dyn Send + Sync>,
    sockets: std::sync::Arc<crate::sockets::SocketCaps>,
}

impl Conn {
    pub fn new(
        peer: std::net::IpAddr,
        trusted: TrustedProxies,
        place: tokio::sync::OwnedSemaphorePermit,
        streams: std::sync::Arc<tokio::sync::Semaphore>,
        ip_slot: Box<dyn Send + Sync>,
        sockets: std::sync::Arc<crate::sockets::SocketCaps>,
    ) -> Conn {
        Conn(std::sync::Arc::new(ConnShared { peer, trusted, place: std::sync::Mutex::new(Some(place)), streams, _ip_slot: ip_slot, sockets }))
    }
}

/// The place of a WebSocket of `kind` for `owner` on the request's connection (issue 43, item
/// 1, src/sockets.rs): it holds the connection, so its places among the connections and its
/// address's are kept until the socket closes; 429 when a cap of the kind is reached. Take it
/// before upgrading and move it into the socket's task.
pub fn socket_place(
    extensions: &axum::http::Extensions,
    headers: &axum::http::HeaderMap,
    kind: crate::sockets::Kind,
    owner: Option<&str>,
) -> Result<crate::sockets::SocketPlace, AppError> {
    let Some(conn) = extensions.get::<Conn>() else { return Ok(crate::sockets::SocketPlace::uncounted()) };
    let c = &conn.0;
    // A trusted proxy's own connections are not counted per address; the client it names is.
    let ip = if c.trusted.trusts(c.peer) && !headers.contains_key("x-forwarded-for") { None } else { Some(c.trusted.client_of(c.peer, headers)) };
    c.sockets.take(kind, ip, owner, Box::new(conn.clone()))
}

/// The client's address (`crate::client_ip`): the peer of the request's connection, or the
/// client a trusted proxy names in `X-Forwarded-For`; 127.0.0.1 for a request served without
/// the listener. Worked out when asked (the few handlers with per-client limits, the connect
/// proxy), not for every request.
#[derive(Debug, Clone, Copy)]
pub struct ClientIp(pub std::net::IpAddr);

impl ClientIp {
    pub fn of(extensions: &axum::http::Extensions, headers: &axum::http::HeaderMap) -> ClientIp {
        ClientIp(match extensions.get::<Conn>() {
            Some(c) => c.0.trusted.client_of(c.0.peer, headers),
            None => std::net::IpAddr::from([127, 0, 0, 1]),
        })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientIp::of(&parts.extensions, &parts.headers))
    }
}

/// An event stream's place (`server.max_event_streams`): taking it gives the connection's place
/// among request connections back, so idle streams never keep requests (or `/healthz`) out;
/// when none is left the stream is refused with 429. Held by the stream's body
/// ([`EventStreamPlace::hold`]); the connection closes when the stream ends.
pub struct EventStreamPlace {
    /// Given back when the stream's body is dropped.
    _permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl<S: Send + Sync> FromRequestParts<S> for EventStreamPlace {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        EventStreamPlace::take(parts.extensions.get::<Conn>())
    }
}

impl EventStreamPlace {
    /// The place of the connection `conn` (a handler that streams only sometimes extracts
    /// `Option<Extension<Conn>>`); served without the listener, nothing to count.
    pub fn take(conn: Option<&Conn>) -> Result<EventStreamPlace, AppError> {
        let Some(Conn(conn)) = conn else { return Ok(EventStreamPlace { _permit: None }) };
        let permit = conn.streams.clone().try_acquire_owned().map_err(|_| AppError::TooManyRequests { retry_after_secs: 5 })?;
        drop(conn.place.lock().unwrap_or_else(|e| e.into_inner()).take());
        Ok(EventStreamPlace { _permit: Some(permit) })
    }

    /// `res` (an event stream) holding this place until its body ends; its connection closes
    /// then (it no longer has a place among request connections).
    pub fn hold(self, res: Response) -> Response {
        use futures::StreamExt;
        let (mut parts, body) = res.into_parts();
        parts.headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        let body = body.into_data_stream().map(move |chunk| {
            let _held = &self;
            chunk
        });
        Response::from_parts(parts, axum::body::Body::from_stream(body))
    }
}

/// A CSV download named `name`, never cached.
pub fn csv_response(body: Vec<u8>, name: &str) -> Response {
    use axum::response::IntoResponse;
    let headers = [
        (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
        (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
        (header::CACHE_CONTROL, "no-store".to_string()),
    ];
    (headers, body).into_response()
}
