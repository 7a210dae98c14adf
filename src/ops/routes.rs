//! The operator's endpoints (`/api/ops/v1`): 403 for everyone who is not an operator.

use axum::extract::{FromRef, State};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::ids::UserId;
use crate::billing::idempotency::{self, IdempotencyKey};
use crate::billing::model::{Entry, TopUp, TopUpRequest};
use crate::error::{ApiResult, AppError, Envelope, ok};
use crate::http::{ApiPath, ApiQuery, List, Page, Valid};
use crate::iam::auth::{Operator, Sessions};
use crate::lang::Lang;
use crate::ops::model::*;
use crate::ops::{OpsCtx, audit, console, people};
use crate::settings::MarketSettings;
use crate::billing::model::CodeRow;
use crate::billing::{codes, export};
use axum::response::Response;

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    OpsCtx: FromRef<S>,
    crate::ops::apps::Publisher: FromRef<S>,
    Sessions: FromRef<S>,
    crate::devices::DevicesCtx: FromRef<S>,
{
    let moving = OpenApiRouter::new().routes(routes!(grant)).routes(routes!(issue_codes)).route_layer(idempotency::layer());
    OpenApiRouter::new()
        .routes(routes!(list_users))
        .routes(routes!(suspend))
        .routes(routes!(unsuspend))
        .routes(routes!(list_audit))
        .routes(routes!(overview))
        .routes(routes!(back_up_now))
        .routes(routes!(get_settings, put_settings))
        .routes(routes!(list_codes))
        .routes(routes!(codes_csv))
        .merge(moving)
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
async fn suspend(State(cx): State<OpsCtx>, State(devices): State<crate::devices::DevicesCtx>, op: Operator, ApiPath(id): ApiPath<UserId>, Valid(req): Valid<Suspend>) -> ApiResult<UserRow> {
    let actor = actor(&cx, &op).await?;
    ok(people::suspend(&cx.db, &devices, &actor, &id, req).await?)
}

/// Lift a suspension (they sign in again).
#[utoipa::path(post, path = "/api/ops/v1/users/{id}/unsuspend", tag = "operator", params(("id" = String, Path)), request_body = UnsuspendRequest,
    responses((status = 200, body = Envelope<UserRow>), (status = 400), (status = 403), (status = 404)))]
async fn unsuspend(State(cx): State<OpsCtx>, op: Operator, ApiPath(id): ApiPath<UserId>, Valid(req): Valid<UnsuspendRequest>) -> ApiResult<UserRow> {
    let actor = actor(&cx, &op).await?;
    ok(people::unsuspend(&cx.db, &actor, &id, req.reason.unwrap_or_default()).await?)
}

/// Grant coins to a person's wallet (`amount` in cents). Accepts `Idempotency-Key`.
#[utoipa::path(post, path = "/api/ops/v1/users/{id}/grant", tag = "operator", request_body = TopUpRequest,
    params(("id" = String, Path), ("Idempotency-Key" = Option<String>, Header, description = "1-255 characters: a retry with the same key and body answers the first answer and grants nothing")),
    responses((status = 200, body = Envelope<Entry>), (status = 400), (status = 403), (status = 404)))]
async fn grant(State(cx): State<OpsCtx>, op: Operator, lang: Lang, IdempotencyKey(key): IdempotencyKey, ApiPath(id): ApiPath<UserId>, Valid(req): Valid<TopUp>) -> ApiResult<Entry> {
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

/// The market at a glance: people, boxes, what runs, coins and the fee income of the last 30 days.
#[utoipa::path(get, path = "/api/ops/v1/overview", tag = "operator",
    responses((status = 200, body = Envelope<Overview>), (status = 403)))]
async fn overview(State(cx): State<OpsCtx>, _op: Operator) -> ApiResult<Overview> {
    ok(console::overview(&cx).await?)
}

/// The market's settings in force (config.toml's defaults with the operator's changes over them).
#[utoipa::path(get, path = "/api/ops/v1/settings", tag = "operator",
    responses((status = 200, body = Envelope<MarketSettings>), (status = 403)))]
async fn get_settings(State(cx): State<OpsCtx>, _op: Operator) -> ApiResult<MarketSettings> {
    ok(cx.market_settings.read(&cx.db).await?)
}

/// Changes the settings sent (the others keep their value); every instance applies a change
/// within 10 seconds. The fee applies to rentals and orders started after the change.
#[utoipa::path(put, path = "/api/ops/v1/settings", tag = "operator", request_body = SettingsRequest,
    responses((status = 200, body = Envelope<MarketSettings>), (status = 400), (status = 403)))]
async fn put_settings(State(cx): State<OpsCtx>, op: Operator, Valid(change): Valid<SettingsChange>) -> ApiResult<MarketSettings> {
    let actor = actor(&cx, &op).await?;
    ok(console::update_settings(&cx, &actor, change).await?)
}

/// Back up now: a copy of the SQLite database into `<data_dir>/backups` (the overview's last
/// backup, `kind: manual`). 409 on PostgreSQL.
#[utoipa::path(post, path = "/api/ops/v1/backup", tag = "operator",
    responses((status = 200, body = Envelope<crate::ops::backup::BackupInfo>), (status = 403), (status = 409)))]
async fn back_up_now(State(cx): State<OpsCtx>, op: Operator) -> ApiResult<crate::ops::backup::BackupInfo> {
    let actor = actor(&cx, &op).await?;
    ok(console::back_up_now(&cx, &actor).await?)
}

/// Issues top-up codes: answered once (only their hash is kept). Accepts `Idempotency-Key`.
#[utoipa::path(post, path = "/api/ops/v1/topup-codes", tag = "operator", request_body = IssueCodesRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "1-255 characters: a retry with the same key and body answers the first answer and issues nothing")),
    responses((status = 200, body = Envelope<IssuedCodes>), (status = 400), (status = 403)))]
async fn issue_codes(State(cx): State<OpsCtx>, op: Operator, Valid(req): Valid<IssueCodes>) -> ApiResult<IssuedCodes> {
    let actor = actor(&cx, &op).await?;
    ok(console::issue_codes(&cx, &actor, req).await?)
}

/// The codes issued, newest first, with their state; `state` and `batch` narrow the list.
#[utoipa::path(get, path = "/api/ops/v1/topup-codes", tag = "operator", params(CodesQuery, Page),
    responses((status = 200, body = Envelope<List<CodeRow>>), (status = 400), (status = 403)))]
async fn list_codes(State(cx): State<OpsCtx>, _op: Operator, ApiQuery(q): ApiQuery<CodesQuery>, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<CodeRow>> {
    let (offset, limit) = page.checked(50)?;
    let (state, batch) = q.checked()?;
    ok(codes::list(&cx.db, state, batch.as_deref(), offset, limit).await?)
}

/// The same list as CSV (UTF-8 with a byte-order mark, the header in `language`).
#[utoipa::path(get, path = "/api/ops/v1/topup-codes.csv", tag = "operator", params(CodesQuery),
    responses((status = 200, content_type = "text/csv"), (status = 400), (status = 403)))]
async fn codes_csv(State(cx): State<OpsCtx>, _op: Operator, lang: Lang, ApiQuery(q): ApiQuery<CodesQuery>) -> Result<Response, AppError> {
    let (state, batch) = q.checked()?;
    let body = export::codes_csv(&cx.db, state, batch.as_deref(), lang).await?;
    Ok(crate::http::csv_response(body, "topup-codes.csv"))
}
