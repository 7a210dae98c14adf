//! One error type, one table: every failure a user can meet is a [`Msg`] (`msg.rs`), which has
//! its HTTP status, its stable name and its texts in English and Chinese in one row of one table
//! (`table.rs`). The body is the envelope of docs/api.md:
//! `{"code": <status>, "data": <value or null>, "msg": <localized message>, "error": <name>}`.
//!
//! Handlers return `AppError`; the response carries the error until `localize`, which the
//! middleware stack calls with the request's `Accept-Language`, writes the envelope.

mod msg;
mod table;

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Value, json};

use crate::lang::Lang;

pub use msg::Msg;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// A refusal: its status and name are the message's ([`Msg::code`]); `data` is null.
    #[error("refused: {0:?}")]
    Refused(Msg),
    /// A refusal naming the input it refuses: `data` is `{"field": field}`.
    #[error("invalid input in {field}")]
    Invalid { field: &'static str, msg: Msg },
    /// The same for a JSON body whose value at `field` (a path, e.g. `acks[0].ok`) is refused.
    #[error("invalid body field {field}")]
    InvalidBody { field: String, msg: Msg },
    /// A refusal with `data` that explains it (e.g. the reasons an account cannot be deleted).
    #[error("refused: {msg:?}")]
    Explained { msg: Msg, data: Value },
    /// 429, with `Retry-After`.
    #[error("too many requests")]
    TooManyRequests { retry_after_secs: u64 },
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl From<Msg> for AppError {
    fn from(msg: Msg) -> Self {
        AppError::Refused(msg)
    }
}

impl AppError {
    pub fn invalid(field: &'static str, msg: Msg) -> Self {
        AppError::Invalid { field, msg }
    }
    /// The message this error answers with.
    pub fn msg(&self) -> Msg {
        match self {
            AppError::Refused(msg) | AppError::Invalid { msg, .. } | AppError::InvalidBody { msg, .. } | AppError::Explained { msg, .. } => msg.clone(),
            AppError::TooManyRequests { .. } => Msg::TooManyRequests,
            AppError::Internal(_) => Msg::Internal,
        }
    }
    /// The status: always the message's, from the one table.
    pub fn status(&self) -> StatusCode {
        match self {
            AppError::Refused(msg) | AppError::Invalid { msg, .. } | AppError::InvalidBody { msg, .. } | AppError::Explained { msg, .. } => msg.code().0,
            AppError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
    fn data(&self) -> Value {
        match self {
            AppError::Invalid { field, .. } => json!({ "field": field }),
            AppError::InvalidBody { field, .. } => json!({ "field": field }),
            AppError::Explained { data, .. } => data.clone(),
            AppError::TooManyRequests { retry_after_secs } => json!({ "retry_after": retry_after_secs }),
            _ => Value::Null,
        }
    }
}

/// A field the agent protocol's checks refuse (zmarket_protocol::Invalid): 400 `invalid_field`
/// naming it, as every refused input.
impl From<zmarket_protocol::Invalid> for AppError {
    fn from(e: zmarket_protocol::Invalid) -> Self {
        AppError::invalid(e.field, Msg::InvalidField(e.field))
    }
}

impl From<sea_orm::DbErr> for AppError {
    fn from(e: sea_orm::DbErr) -> Self {
        AppError::Internal(anyhow::Error::new(e))
    }
}

impl From<sea_orm::TransactionError<AppError>> for AppError {
    fn from(e: sea_orm::TransactionError<AppError>) -> Self {
        match e {
            sea_orm::TransactionError::Connection(db) => db.into(),
            sea_orm::TransactionError::Transaction(app) => app,
        }
    }
}

/// The error as it travels from the handler to the `localize` middleware.
#[derive(Clone)]
struct PendingError {
    msg: Msg,
    data: Value,
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        if let AppError::Internal(e) = &self {
            // Internals are logged, never shown.
            tracing::error!(error = ?e, "internal error");
        }
        let pending = PendingError { msg: self.msg(), data: self.data() };
        // Until localized, the body is the English envelope (also what a test without the
        // middleware sees).
        let mut res = (status, Json(envelope(&pending.msg, Lang::En, &pending.data))).into_response();
        if let AppError::TooManyRequests { retry_after_secs } = self
            && let Ok(v) = HeaderValue::from_str(&retry_after_secs.to_string())
        {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        res.extensions_mut().insert(pending);
        res
    }
}

/// The message of an error response not yet localized (the app origin writes it as its page, not
/// as the API's envelope).
pub fn refusal_of(res: &Response) -> Option<Msg> {
    res.extensions().get::<PendingError>().map(|p| p.msg.clone())
}

/// `{code, data, msg, error}`: the status, what explains it, the text in `lang` and the stable name.
fn envelope(msg: &Msg, lang: Lang, data: &Value) -> Value {
    let (status, name, text) = msg.row(lang);
    json!({ "code": status.as_u16(), "data": data, "msg": text, "error": name })
}

/// Writes the envelope of an `AppError` in the language the request asked for (called by the
/// middleware stack, src/stack.rs, on every response with the request's language).
pub fn localize(lang: Lang, mut res: Response) -> Response {
    if let Some(pending) = res.extensions_mut().remove::<PendingError>()
        && lang != Lang::En
    {
        let body = envelope(&pending.msg, lang, &pending.data);
        let (mut parts, _) = res.into_parts();
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, axum::body::Body::from(body.to_string()));
    }
    res
}
/// The success envelope.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Envelope<T> {
    /// 200 on success.
    pub code: u16,
    pub data: T,
    pub msg: String,
}

/// `data: null` of a call that answers nothing.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Null;

pub type ApiResult<T> = Result<Json<Envelope<T>>, AppError>;

pub fn ok<T>(data: T) -> ApiResult<T> {
    Ok(Json(Envelope { code: 200, data, msg: "success".into() }))
}
