//! Notification endpoints (`/api/ebs/v1/notifications`): parse, call, answer.

use axum::extract::{FromRef, State};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::{ApiResult, AppError, Envelope, Null, ok};
use crate::http::{ApiPath, ApiQuery, List, Page};
use crate::ids::NotificationId;
use crate::lang::Lang;
use crate::iam::auth::{Auth, Sessions};
use crate::notifications::model::{ListFilter, Notification, Stats};
use crate::notifications::{NotificationsCtx, service};

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    NotificationsCtx: FromRef<S>,
    Sessions: FromRef<S>,
{
    OpenApiRouter::new().routes(routes!(stats)).routes(routes!(list)).routes(routes!(mark_read))
}

/// The signed-in person's counters, polled by the console every 10 seconds. The answer carries
/// an ETag made of the counters; a poll sending it back in `If-None-Match` while nothing changed
/// is answered 304 with no body.
#[utoipa::path(get, path = "/api/ebs/v1/notifications/stats", tag = "notifications",
    responses((status = 200, body = Envelope<Stats>), (status = 304, description = "not modified"), (status = 401)))]
async fn stats(State(cx): State<NotificationsCtx>, auth: Auth, headers: HeaderMap) -> Result<Response, AppError> {
    let stats = service::stats(&cx, &auth).await?;
    let etag = stats.etag();
    let mut res = if crate::http::not_modified(&headers, &etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ok(stats).into_response()
    };
    res.headers_mut().insert(header::ETAG, etag);
    Ok(res)
}

/// The signed-in person's notifications, newest first (`?filter=unread` for the unread ones).
#[utoipa::path(get, path = "/api/ebs/v1/notifications", tag = "notifications", operation_id = "list_notifications", params(ListFilter, Page),
    responses((status = 200, body = Envelope<List<Notification>>), (status = 400), (status = 401)))]
async fn list(
    State(cx): State<NotificationsCtx>,
    auth: Auth,
    lang: Lang,
    ApiQuery(f): ApiQuery<ListFilter>,
    ApiQuery(page): ApiQuery<Page>,
) -> ApiResult<List<Notification>> {
    let (offset, limit) = page.checked(20)?;
    ok(service::list(&cx.db, &auth, lang, f.unread_only()?, offset, limit).await?)
}

/// Marks one notification read.
#[utoipa::path(put, path = "/api/ebs/v1/notifications/{id}/read", tag = "notifications", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Null>), (status = 404)))]
async fn mark_read(State(cx): State<NotificationsCtx>, auth: Auth, ApiPath(id): ApiPath<NotificationId>) -> ApiResult<Null> {
    service::mark_read(&cx.db, &auth, id.as_str()).await?;
    ok(Null)
}
