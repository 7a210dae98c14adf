//! Notification endpoints (`/api/ebs/v1/notifications`): parse, call, answer.

use axum::extract::{Path, State};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;
use crate::error::{ApiResult, Envelope, Null, ok};
use crate::http::{ApiQuery, Lang, List, Page};
use crate::iam::service::Auth;
use crate::notifications::model::{ListFilter, Notification, Stats};
use crate::notifications::service;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(stats)).routes(routes!(list)).routes(routes!(mark_read))
}

/// The signed-in person's counters, polled by the console every 10 seconds.
#[utoipa::path(get, path = "/api/ebs/v1/notifications/stats", tag = "notifications",
    responses((status = 200, body = Envelope<Stats>), (status = 401)))]
async fn stats(State(s): State<AppState>, auth: Auth) -> ApiResult<Stats> {
    ok(service::stats(&s.db, &auth).await?)
}

/// The signed-in person's notifications, newest first (`?filter=unread` for the unread ones).
#[utoipa::path(get, path = "/api/ebs/v1/notifications", tag = "notifications", params(ListFilter, Page),
    responses((status = 200, body = Envelope<List<Notification>>), (status = 400), (status = 401)))]
async fn list(
    State(s): State<AppState>,
    auth: Auth,
    lang: Lang,
    ApiQuery(f): ApiQuery<ListFilter>,
    ApiQuery(page): ApiQuery<Page>,
) -> ApiResult<List<Notification>> {
    let (offset, limit) = page.checked(20)?;
    ok(service::list(&s.db, &auth, lang, f.unread_only()?, offset, limit).await?)
}

/// Marks one notification read.
#[utoipa::path(put, path = "/api/ebs/v1/notifications/{id}/read", tag = "notifications", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Null>), (status = 404)))]
async fn mark_read(State(s): State<AppState>, auth: Auth, Path(id): Path<String>) -> ApiResult<Null> {
    service::mark_read(&s.db, &auth, &id).await?;
    ok(Null)
}
