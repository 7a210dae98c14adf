//! `/api/ops/v1/apps…`: publishing apps (403 for everyone who is not an operator).

use axum::extract::{DefaultBodyLimit, FromRef, State};
use axum::http::{HeaderMap, header};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::ids::AppId;
use crate::error::{ApiResult, AppError, Envelope, Msg, ok};
use crate::http::{ApiMultipart, ApiPath, ApiQuery, List, Valid};
use crate::iam::auth::{Operator, Sessions};
use crate::ops::OpsCtx;
use crate::ops::apps::model::{AppEdit, AppRequest, AppsQuery, ICON_MAX_BYTES, ImageUpload, OpsApp};
use crate::ops::apps::{self as publish, Publisher, uploads};

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    OpsCtx: FromRef<S>,
    Publisher: FromRef<S>,
    Sessions: FromRef<S>,
{
    // An image archive is far larger than `server.body_limit_bytes`: this route has no body
    // limit of its own; `[apps] max_image_bytes` is enforced while it streams to disk.
    let archives = OpenApiRouter::new().routes(routes!(ops_upload_image)).layer(DefaultBodyLimit::disable());
    OpenApiRouter::new().routes(routes!(ops_list_apps, ops_create_app)).routes(routes!(ops_get_app, ops_update_app)).routes(routes!(ops_upload_icon)).merge(archives)
}

/// Every app, hidden ones too, with how it installs.
#[utoipa::path(get, path = "/api/ops/v1/apps", tag = "operator", params(AppsQuery),
    responses((status = 200, body = Envelope<List<OpsApp>>), (status = 400), (status = 403)))]
async fn ops_list_apps(State(cx): State<Publisher>, _op: Operator, ApiQuery(q): ApiQuery<AppsQuery>) -> ApiResult<List<OpsApp>> {
    ok(publish::list(&cx, q.checked()?, q.listed).await?)
}

/// Publish a new app (`origin: local`). 400 names the field; 409 when the id exists.
#[utoipa::path(post, path = "/api/ops/v1/apps", tag = "operator", request_body = AppRequest,
    responses((status = 200, body = Envelope<OpsApp>), (status = 400), (status = 403), (status = 409)))]
async fn ops_create_app(State(ops): State<OpsCtx>, State(cx): State<Publisher>, op: Operator, Valid(req): Valid<AppEdit>) -> ApiResult<OpsApp> {
    let actor = crate::ops::operators::actor_of(&ops.db, &op).await?;
    ok(publish::create(&cx, &actor, req).await?)
}

/// One app as the operator sees it.
#[utoipa::path(get, path = "/api/ops/v1/apps/{id}", tag = "operator", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<OpsApp>), (status = 403), (status = 404)))]
async fn ops_get_app(State(cx): State<Publisher>, _op: Operator, ApiPath(id): ApiPath<AppId>) -> ApiResult<OpsApp> {
    ok(publish::get(&cx, &id).await?)
}

/// Edit an app: the fields given change (`listed` hides or shows it, `top_pick`), the others
/// stay. A new image without a new version gets one, so installations see the update.
#[utoipa::path(put, path = "/api/ops/v1/apps/{id}", tag = "operator", params(("id" = String, Path)), request_body = AppRequest,
    responses((status = 200, body = Envelope<OpsApp>), (status = 400), (status = 403), (status = 404)))]
async fn ops_update_app(State(ops): State<OpsCtx>, State(cx): State<Publisher>, op: Operator, ApiPath(id): ApiPath<AppId>, Valid(req): Valid<AppEdit>) -> ApiResult<OpsApp> {
    let actor = crate::ops::operators::actor_of(&ops.db, &op).await?;
    ok(publish::update(&cx, &actor, &id, req).await?)
}

fn announced(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok())
}

/// Upload the app's icon (multipart `file`): PNG, JPEG or WebP, at most 256 KB.
#[utoipa::path(post, path = "/api/ops/v1/apps/{id}/icon", tag = "operator", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<OpsApp>), (status = 400), (status = 403), (status = 404), (status = 413), (status = 415)))]
async fn ops_upload_icon(State(ops): State<OpsCtx>, State(cx): State<Publisher>, op: Operator, ApiPath(id): ApiPath<AppId>, headers: HeaderMap, form: ApiMultipart) -> ApiResult<OpsApp> {
    let actor = crate::ops::operators::actor_of(&ops.db, &op).await?;
    let bytes = form.small_file(&headers, "file", ICON_MAX_BYTES, Msg::AppIconTooLarge, Msg::AppIconMissing).await?;
    ok(publish::set_icon(&cx, &actor, &id, bytes).await?)
}

/// Upload a `docker save` archive of the app's image (multipart `file`) into the store agents
/// install from (`zmarket images add`'s): boxes with no internet install it. 415 when it is not
/// such an archive, 413 over `[apps] max_image_bytes`; nothing is kept then.
#[utoipa::path(post, path = "/api/ops/v1/apps/{id}/image", tag = "operator", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<ImageUpload>), (status = 400), (status = 403), (status = 404), (status = 413), (status = 415)))]
async fn ops_upload_image(State(ops): State<OpsCtx>, State(cx): State<Publisher>, op: Operator, ApiPath(id): ApiPath<AppId>, headers: HeaderMap, ApiMultipart(mut form): ApiMultipart) -> ApiResult<ImageUpload> {
    let actor = crate::ops::operators::actor_of(&ops.db, &op).await?;
    // 404 before reading a byte of a possibly large body.
    publish::get(&cx, &id).await?;
    let max = cx.apps.settings.max_image_bytes;
    if announced(&headers).is_some_and(|n| n > max.saturating_add(64 * 1024)) {
        return Err(AppError::Refused(Msg::ImageArchiveTooLarge(max)));
    }
    let received = uploads::receive(&mut form, &cx.apps.data_dir, max).await?;
    ok(publish::add_image(&cx, &actor, &id, received).await?)
}
