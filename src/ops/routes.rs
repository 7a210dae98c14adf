//! The operator's endpoints (`/api/ops/v1`): 403 for everyone who is not an operator.

use axum::extract::{FromRef, State};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::billing::idempotency::{self, IdempotencyKey};
use crate::billing::model::{Entry, TopUp, TopUpRequest};
use crate::error::{ApiResult, AppError, Envelope, ok};
use crate::http::{ApiPath, ApiQuery, List, Page, Valid};
use crate::iam::auth::{Operator, Sessions};
use crate::lang::Lang;
use crate::ops::model::*;
use crate::ops::{OpsCtx, audit, people};

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    OpsCtx: FromRef<S>,
    crate::ops::apps::Publisher: FromRef<S>,
    Sessions: FromRef<S>,
{
    let moving = OpenApiRouter::new().routes(routes!(grant)).route_layer(idempotency::layer());
    OpenApiRouter::new().routes(routes!(list_users)).routes(routes!(suspend)).routes(routes!(unsuspend)).routes(routes!(list_audit)).merge(moving)
        .merge(crate::ops::apps::routes::router())
}

async fn actor(cx: &OpsCtx, op: &Operator) -> Result<Actor, AppError> {
    crate::ops::operators::actor_of(&cx.db, op).await
}

/// People, newest first; `q` finds part of an email or a name.
#[utoipa::path(get, path = "/api/ops/v1/users", tag = "operator", params(UsersQuery, Page),
    responses((status = 200, body = Envelope<List<UserRow>>), (status = 400), (status = 403)))]
async fn list_users(State(cx): State<OpsCtx>, _op: Operator, ApiQuery(q): ApiQuery<UsersQuery>, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<UserRow>> {
    let (offset, limit) = page.checked(20)?;
    ok(people::list(&cx.db, q.checked()?, offset, limit).await?)
}

/// Suspend a person: their sessions end, their rentals end, their boxes are withdrawn, and
/// sign-in answers 403 with the reason. 409 for yourself or the last operator.
#[utoipa::path(post, path = "/api/ops/v1/users/{id}/suspend", tag = "operator", params(("id" = String, Path)), request_body = SuspendRequest,
    responses((status = 200, body = Envelope<UserRow>), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn suspend(State(cx): State<OpsCtx>, op: Operator, ApiPath(id): ApiPath<String>, Valid(req): Valid<Suspend>) -> ApiResult<UserRow> {
    let actor = actor(&cx, &op).await?;
    ok(people::suspend(&cx.db, &actor, &id, req).await?)
}

/// Lift a suspension (they sign in again).
#[utoipa::path(post, path = "/api/ops/v1/users/{id}/unsuspend", tag = "operator", params(("id" = String, Path)), request_body = UnsuspendRequest,
    responses((status = 200, body = Envelope<UserRow>), (status = 400), (status = 403), (status = 404)))]
async fn unsuspend(State(cx): State<OpsCtx>, op: Operator, ApiPath(id): ApiPath<String>, Valid(req): Valid<UnsuspendRequest>) -> ApiResult<UserRow> {
    let actor = actor(&cx, &op).await?;
    ok(people::unsuspend(&cx.db, &actor, &id, req.reason.unwrap_or_default()).await?)
}

/// Grant coins to a person's wallet (`amount` in cents). Accepts `Idempotency-Key`.
#[utoipa::path(post, path = "/api/ops/v1/users/{id}/grant", tag = "operator", request_body = TopUpRequest,
    params(("id" = String, Path), ("Idempotency-Key" = Option<String>, Header, description = "1-255 characters: a retry with the same key and body answers the first answer and grants nothing")),
    responses((status = 200, body = Envelope<Entry>), (status = 400), (status = 403), (status = 404)))]
async fn grant(State(cx): State<OpsCtx>, op: Operator, lang: Lang, IdempotencyKey(key): IdempotencyKey, ApiPath(id): ApiPath<String>, Valid(req): Valid<TopUp>) -> ApiResult<Entry> {
    let actor = actor(&cx, &op).await?;
    ok(people::grant(&cx.db, &actor, &id, req, key.as_deref(), lang).await?)
}

/// Every operator write, newest first; `action` keeps one kind.
#[utoipa::path(get, path = "/api/ops/v1/audit", tag = "operator", params(AuditQuery, Page),
    responses((status = 200, body = Envelope<List<AuditEntry>>), (status = 400), (status = 403)))]
async fn list_audit(State(cx): State<OpsCtx>, _op: Operator, ApiQuery(q): ApiQuery<AuditQuery>, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<AuditEntry>> {
    let (offset, limit) = page.checked(50)?;
    ok(audit::list(&cx.db, q.checked()?, offset, limit).await?)
}
