//! The `Idempotency-Key` mechanism of docs/api.md §Money, for any route that moves coins:
//!
//! ```ignore
//! OpenApiRouter::new().routes(routes!(rent)).route_layer(crate::billing::idempotency::layer())
//! ```
//!
//! A request carrying the header is fingerprinted (method, path, query, body). The first request
//! with a key reserves it (a row inserted with `ON CONFLICT DO NOTHING`: two racing requests
//! cannot both win) and runs; a success is kept as the key's answer. The same key with the same
//! request answers that answer again (header `Idempotent-Replayed: true`) and runs nothing; with
//! another request it answers 409; while the first still runs, 409 too. A refusal or failure is
//! not kept: it moved nothing, so the key is freed for a corrected retry. Keys belong to the
//! caller and their context and are kept `billing.idempotency_ttl_secs`.
//!
//! Handlers also take [`IdempotencyKey`] and derive their ledger keys from it, so even a lost
//! answer (a crash between the commit and keeping the answer) never moves coins twice.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Duration, Utc};
use futures::future::BoxFuture;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set};
use sha2::{Digest, Sha256};

use crate::db::entity::idempotency_keys as keys;
use crate::db::now;
use crate::error::{AppError, Msg};
use crate::iam::tokens::Keys;

pub const HEADER: &str = "idempotency-key";
pub const REPLAYED_HEADER: &str = "idempotent-replayed";
/// A reservation older than this whose request never finished (the process stopped) is taken over.
const STALE_SECS: i64 = 60;
/// Answers larger than this are not kept (none of ours comes close).
const ANSWER_LIMIT: usize = 1024 * 1024;

/// What the layer needs, put in the request extensions by the app's router.
#[derive(Clone)]
pub struct IdempotencyStore {
    db: DatabaseConnection,
    keys: Arc<Keys>,
    body_limit: usize,
}

impl IdempotencyStore {
    pub fn new(db: DatabaseConnection, keys: Arc<Keys>, body_limit: usize) -> Self {
        IdempotencyStore { db, keys, body_limit }
    }
}

type Guard = fn(Request, Next) -> BoxFuture<'static, Response>;

/// The layer to put on coin-moving routes (`route_layer`).
pub fn layer() -> axum::middleware::FromFnLayer<Guard, (), (Request,)> {
    axum::middleware::from_fn(boxed_guard as Guard)
}

fn boxed_guard(req: Request, next: Next) -> BoxFuture<'static, Response> {
    Box::pin(guard(req, next))
}

/// The request's key, validated: 1-255 visible ASCII characters.
pub fn key_of(headers: &HeaderMap) -> Result<Option<String>, AppError> {
    let Some(v) = headers.get(HEADER) else { return Ok(None) };
    match v.to_str() {
        Ok(k) if (1..=255).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()) => Ok(Some(k.to_string())),
        _ => Err(AppError::invalid("Idempotency-Key", Msg::IdempotencyKeyInvalid)),
    }
}

/// The `Idempotency-Key` of the request, for handlers deriving their ledger keys from it.
pub struct IdempotencyKey(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyKey {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        key_of(&parts.headers).map(IdempotencyKey)
    }
}

enum Reservation {
    Fresh,
    Replay(u16, String),
    OtherRequest,
    Running,
}

async fn guard(req: Request, next: Next) -> Response {
    match run(req, next).await {
        Ok(res) | Err(res) => res,
    }
}

async fn run(req: Request, next: Next) -> Result<Response, Response> {
    let key = match key_of(req.headers()) {
        Ok(Some(k)) => k,
        Ok(None) => return Ok(next.run(req).await),
        Err(e) => return Err(e.into_response()),
    };
    let store = req
        .extensions()
        .get::<IdempotencyStore>()
        .cloned()
        .ok_or_else(|| AppError::Internal(anyhow::anyhow!("the idempotency store is not installed")).into_response())?;
    // Keys are the caller's: an unauthenticated request is left to the handler (401).
    let Some(scope) = scope(&store, req.headers()) else { return Ok(next.run(req).await) };
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, store.body_limit).await.map_err(|_| AppError::Refused(Msg::BodyTooLarge).into_response())?;
    let fp = fingerprint(&parts, &bytes);
    match reserve(&store.db, &scope, &key, &fp, now()).await.map_err(IntoResponse::into_response)? {
        Reservation::Replay(status, body) => return Ok(replayed(status, body)),
        Reservation::OtherRequest => return Err(AppError::Refused(Msg::IdempotencyKeyReused).into_response()),
        Reservation::Running => return Err(AppError::Refused(Msg::IdempotencyKeyInProgress).into_response()),
        Reservation::Fresh => {}
    }
    let res = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    if !res.status().is_success() {
        forget(&store.db, &scope, &key).await;
        return Ok(res);
    }
    let (parts, body) = res.into_parts();
    let kept = match axum::body::to_bytes(body, ANSWER_LIMIT).await {
        Ok(b) => b,
        Err(e) => {
            forget(&store.db, &scope, &key).await;
            return Err(AppError::Internal(anyhow::anyhow!("answer not readable: {e}")).into_response());
        }
    };
    match String::from_utf8(kept.to_vec()) {
        Ok(text) => keep(&store.db, &scope, &key, parts.status.as_u16(), text).await,
        Err(_) => forget(&store.db, &scope, &key).await,
    }
    Ok(Response::from_parts(parts, Body::from(kept)))
}

/// `<user id>|<context>` from a valid access token.
fn scope(store: &IdempotencyStore, headers: &HeaderMap) -> Option<String> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))?;
    let claims = store.keys.verify(token.trim())?;
    Some(format!("{}|{}", claims.sub, claims.sme))
}

fn fingerprint(parts: &Parts, body: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(parts.method.as_str().as_bytes());
    h.update(b" ");
    h.update(parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("").as_bytes());
    h.update(b"\n");
    h.update(body);
    hex::encode(h.finalize())
}

async fn reserve(db: &DatabaseConnection, scope: &str, key: &str, fp: &str, t: DateTime<Utc>) -> Result<Reservation, AppError> {
    let row = keys::ActiveModel {
        scope: Set(scope.to_string()),
        key: Set(key.to_string()),
        fingerprint: Set(fp.to_string()),
        status: Set(None),
        body: Set(None),
        created_at: Set(t),
    };
    let inserted = keys::Entity::insert(row).on_conflict_do_nothing_on([keys::Column::Scope, keys::Column::Key]).exec_without_returning(db).await?;
    if matches!(inserted, sea_orm::TryInsertResult::Inserted(n) if n > 0) {
        return Ok(Reservation::Fresh);
    }
    let Some(first) = keys::Entity::find_by_id((scope.to_string(), key.to_string())).one(db).await? else {
        // Freed between the insert and the read: the caller may simply retry.
        return Ok(Reservation::Running);
    };
    if first.fingerprint != fp {
        return Ok(Reservation::OtherRequest);
    }
    match (first.status, first.body) {
        (Some(status), Some(body)) => Ok(Reservation::Replay(u16::try_from(status).unwrap_or(200), body)),
        _ if first.created_at <= t - Duration::seconds(STALE_SECS) => {
            // The first request never finished: take the key over, once.
            let taken = keys::Entity::update_many()
                .col_expr(keys::Column::CreatedAt, sea_orm::sea_query::Expr::value(t))
                .filter(keys::Column::Scope.eq(scope))
                .filter(keys::Column::Key.eq(key))
                .filter(keys::Column::Status.is_null())
                .filter(keys::Column::CreatedAt.eq(first.created_at))
                .exec(db)
                .await?
                .rows_affected;
            Ok(if taken == 1 { Reservation::Fresh } else { Reservation::Running })
        }
        _ => Ok(Reservation::Running),
    }
}

async fn keep(db: &DatabaseConnection, scope: &str, key: &str, status: u16, body: String) {
    let r = keys::Entity::update_many()
        .col_expr(keys::Column::Status, sea_orm::sea_query::Expr::value(i32::from(status)))
        .col_expr(keys::Column::Body, sea_orm::sea_query::Expr::value(body))
        .filter(keys::Column::Scope.eq(scope))
        .filter(keys::Column::Key.eq(key))
        .exec(db)
        .await;
    if let Err(e) = r {
        // The ledger's own keys still keep a retry from moving coins again.
        tracing::warn!(error = %e, "idempotency answer not kept");
    }
}

async fn forget(db: &DatabaseConnection, scope: &str, key: &str) {
    let r = keys::Entity::delete_many()
        .filter(keys::Column::Scope.eq(scope))
        .filter(keys::Column::Key.eq(key))
        .filter(keys::Column::Status.is_null())
        .exec(db)
        .await;
    if let Err(e) = r {
        tracing::warn!(error = %e, "idempotency reservation not freed");
    }
}

fn replayed(status: u16, body: String) -> Response {
    let mut res = (StatusCode::from_u16(status).unwrap_or(StatusCode::OK), body).into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    res
}

/// Deletes keys older than `ttl_secs` (the cleanup job). Returns how many.
pub async fn cleanup(db: &DatabaseConnection, ttl_secs: u64) -> Result<u64, AppError> {
    let before = now() - Duration::seconds(i64::try_from(ttl_secs).unwrap_or(i64::MAX / 2));
    Ok(keys::Entity::delete_many().filter(keys::Column::CreatedAt.lt(before)).exec(db).await?.rows_affected)
}
