//! Shared HTTP pieces: extractors whose rejections are our own envelope (JSON body, query, path),
//! pagination, and the security headers every response gets.

use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{AppError, Msg};

/// A JSON body whose rejection is our envelope: 415 for another content type, 413 over the body
/// limit, 400 `data.field = "body"` when it is not JSON, and 400 naming the field (its path, e.g.
/// `metrics.cpu_percent` or `acks[0].ok`) when the JSON has a value of the wrong shape.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = AppError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !json_content_type(req.headers()) {
            return Err(AppError::Unsupported(Msg::JsonContentType));
        }
        let bytes = axum::body::Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE { AppError::TooLarge(Msg::BodyTooLarge) } else { AppError::invalid("body", Msg::MalformedJson) }
        })?;
        if let Some(field) = control_in_json(&bytes) {
            return Err(control_error(field));
        }
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        match serde_path_to_error::deserialize::<_, T>(&mut de) {
            Ok(v) => de.end().map(|_| ApiJson(v)).map_err(|_| AppError::invalid("body", Msg::MalformedJson)),
            Err(e) => Err(body_error(&e)),
        }
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
fn body_error(e: &serde_path_to_error::Error<serde_json::Error>) -> AppError {
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
        return AppError::invalid("body", Msg::MalformedJson);
    }
    path.truncate(200);
    AppError::InvalidBody { msg: Msg::InvalidBodyField(path.clone()), field: path }
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
        let ApiJson(body) = ApiJson::<T::Body>::from_request(req, state).await?;
        Ok(Valid(T::check(body)?))
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

/// Security headers on every response. The CSP has no inline script (the page state is a
/// non-executable JSON script element); frames are allowed only from configured origins.
#[derive(Clone)]
pub struct SecurityHeaders {
    csp: HeaderValue,
    frame_options: Option<HeaderValue>,
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
        SecurityHeaders {
            csp: HeaderValue::from_str(&csp).expect("validated origins form a header value"),
            frame_options: frame_ancestors.is_empty().then(|| HeaderValue::from_static("DENY")),
        }
    }
}

pub async fn security_headers(
    axum::extract::State(sec): axum::extract::State<SecurityHeaders>,
    req: Request,
    next: Next,
) -> Response {
    // API answers (tokens, personal data) and the PC-mode entry (tokens in its URL) are never
    // stored by a browser or a proxy, unless the handler chose a policy (avatars).
    let pc_web = req.uri().path() == "/pc-web";
    let api = req.uri().path().starts_with("/api/");
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    if pc_web || (api && !h.contains_key(header::CACHE_CONTROL)) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    h.insert(header::CONTENT_SECURITY_POLICY, sec.csp.clone());
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("strict-origin-when-cross-origin"));
    h.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    h.insert("permissions-policy", HeaderValue::from_static("camera=(), microphone=(), geolocation=(self)"));
    if let Some(xfo) = &sec.frame_options {
        h.insert(header::X_FRAME_OPTIONS, xfo.clone());
    }
    res
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
