//! Apps on devices (`/api/rmp/v1`) and the image archives agents download (`/api/agent/v1/images`).

use axum::extract::{FromRef, Request, State};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::devices::model::DeviceId;
use crate::ids::{self, InstallationId, SnapshotId};
use crate::apps::model::*;
use crate::apps::{AppsCtx, copies, extend, images, install, rental, snapshots};
use crate::billing::idempotency::IdempotencyKey;
use crate::devices::DevicesCtx;
use crate::error::{ApiResult, AppError, Envelope, Msg, ok};
use crate::http::{ApiPath, ApiQuery, List, Page, Valid};
use crate::iam::auth::{Auth, Sessions};
use crate::lang::Lang;

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    AppsCtx: FromRef<S>,
    DevicesCtx: FromRef<S>,
    Sessions: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_apps))
        .routes(routes!(device_fit))
        .routes(routes!(get_app))
        .routes(routes!(app_history))
        .routes(routes!(install_app))
        .routes(routes!(rent_options))
        .merge(
            OpenApiRouter::new()
                .routes(routes!(rent_app))
                .routes(routes!(extend_app))
                .routes(routes!(restore_snapshot))
                .route_layer(crate::billing::idempotency::layer()),
        )
        .routes(routes!(app_snapshots))
        .routes(routes!(set_backups))
        .routes(routes!(my_snapshots))
        .routes(routes!(get_snapshot, delete_snapshot))
        .routes(routes!(keep_snapshot))
        .routes(routes!(download_snapshot))
        .routes(routes!(snapshot_link))
        .routes(routes!(snapshot_file))
        .routes(routes!(agent_snapshot_offset))
        .routes(routes!(agent_snapshot_data))
        // A snapshot's pieces are larger than `server.body_limit_bytes`: each is bounded by
        // UPLOAD_CHUNK while it streams to disk.
        .merge(OpenApiRouter::new().routes(routes!(agent_snapshot_piece)).layer(axum::extract::DefaultBodyLimit::disable()))
        .routes(routes!(act))
        .routes(routes!(aicompute))
        .routes(routes!(device_apps))
        .routes(routes!(device_metrics))
        .routes(routes!(image_archive))
}

/// Installations of the current context, own and rented (a member: those of the apps assigned
/// to them). Removed ones (`not_install`) only when asked for by status.
#[utoipa::path(get, path = "/api/rmp/v1/apps", tag = "apps", params(AppsFilter, Page),
    responses((status = 200, body = Envelope<List<Installation>>)))]
async fn list_apps(
    State(cx): State<AppsCtx>,
    auth: Auth,
    lang: Lang,
    ApiQuery(f): ApiQuery<AppsFilter>,
    ApiQuery(page): ApiQuery<Page>,
) -> ApiResult<List<Installation>> {
    let (offset, limit) = page.checked(Page::MAX_LIMIT)?;
    let status = match f.status.as_deref().map(str::trim) {
        None => None,
        Some(s) => Some(AppStatus::parse(s).ok_or(AppError::invalid("status", Msg::InvalidField("status")))?),
    };
    ok(install::list(&cx, &auth, status, offset, limit, lang).await?)
}

/// How each of the caller's devices fits an app: free capacity, what is short, or why it cannot
/// take it (the install dialog).
#[utoipa::path(get, path = "/api/rmp/v1/apps/fit", tag = "apps", params(FitQuery),
    responses((status = 200, body = Envelope<Vec<DeviceFit>>), (status = 403), (status = 404)))]
async fn device_fit(State(cx): State<AppsCtx>, auth: Auth, ApiQuery(q): ApiQuery<FitQuery>) -> ApiResult<Vec<DeviceFit>> {
    let app_id = ids::required(q.app_id, "app_id", Msg::InvalidField("app_id"))?;
    ok(install::fit_mine(&cx, &auth, &app_id).await?)
}

/// One installation with its state history.
#[utoipa::path(get, path = "/api/rmp/v1/apps/{id}", tag = "apps", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<InstallationDetails>), (status = 404)))]
async fn get_app(State(cx): State<AppsCtx>, auth: Auth, lang: Lang, ApiPath(id): ApiPath<InstallationId>) -> ApiResult<InstallationDetails> {
    ok(install::details(&cx, &auth, &id, lang).await?)
}

/// The states an installation went through, newest first: time, status, reason (code and the
/// reader's language) and the version it ran.
#[utoipa::path(get, path = "/api/rmp/v1/apps/{id}/history", tag = "apps", params(("id" = String, Path), Page),
    responses((status = 200, body = Envelope<List<StateEvent>>), (status = 404)))]
async fn app_history(
    State(cx): State<AppsCtx>,
    auth: Auth,
    lang: Lang,
    ApiPath(id): ApiPath<InstallationId>,
    ApiQuery(page): ApiQuery<Page>,
) -> ApiResult<List<StateEvent>> {
    let (offset, limit) = page.checked(Page::MAX_LIMIT)?;
    ok(install::history(&cx, &auth, &id, offset, limit, lang).await?)
}

/// Install an app on a device of the current context (`own`): 403 for members, 409 when the
/// device is offline or lacks what the app requires (`data.gaps`).
#[utoipa::path(post, path = "/api/rmp/v1/apps/install", tag = "apps", request_body = InstallRequest,
    responses((status = 200, body = Envelope<Installation>), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn install_app(State(cx): State<AppsCtx>, auth: Auth, lang: Lang, Valid(req): Valid<InstallAsk>) -> ApiResult<Installation> {
    ok(install::install(&cx, &auth, req, lang).await?)
}

/// Rent an app on another owner's online, rentable device for `hours`: the wallet of the current
/// context holds `price_per_hour × hours` (409 when it cannot), charged by the minute while the
/// app runs. Accepts `Idempotency-Key`.
#[utoipa::path(post, path = "/api/rmp/v1/apps/rent", tag = "apps", request_body = RentRequest,
    params(("Idempotency-Key" = Option<String>, Header)),
    responses((status = 200, body = Envelope<Installation>), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn rent_app(State(cx): State<AppsCtx>, auth: Auth, lang: Lang, IdempotencyKey(key): IdempotencyKey, Valid(req): Valid<RentAsk>) -> ApiResult<Installation> {
    ok(rental::rent(&cx, &auth, req, key, lang).await?)
}

/// Extend a rental under way by `hours` (1-720): its hold grows by `price_per_hour × hours` from
/// the wallet that pays for it (409 when it cannot hold it) and `rental.ends_at` moves that far.
/// The renter only (another's rental: 404); an ended, failed or spent rental: 409. Accepts
/// `Idempotency-Key`.
#[utoipa::path(post, path = "/api/rmp/v1/apps/{id}/extend", tag = "apps", request_body = ExtendRequest,
    params(("id" = String, Path), ("Idempotency-Key" = Option<String>, Header)),
    responses((status = 200, body = Envelope<Installation>), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn extend_app(
    State(cx): State<AppsCtx>,
    auth: Auth,
    lang: Lang,
    IdempotencyKey(key): IdempotencyKey,
    ApiPath(id): ApiPath<InstallationId>,
    Valid(req): Valid<ExtendAsk>,
) -> ApiResult<Installation> {
    ok(extend::extend(&cx, &auth, &id, req, key, lang).await?)
}

/// Offers for the Rent dialog: other owners' online, rentable boxes, each with its price, how it
/// fits the app (a "why not" when it does not), its spec, free GPUs, verification, reliability
/// (uptime over 7 and 30 days, measured from its beats) and place; `lat`/`lng` give each its
/// distance. Sorted by `sort` (price by default) and filtered by GPU model, VRAM, CUDA and
/// reliability; a bad filter is refused naming it. At most 100.
#[utoipa::path(get, path = "/api/rmp/v1/apps/rent-options", tag = "apps", params(OffersQuery),
    responses((status = 200, body = Envelope<Vec<DeviceFit>>), (status = 400), (status = 403), (status = 404)))]
async fn rent_options(
    State(cx): State<AppsCtx>,
    auth: Auth,
    headers: axum::http::HeaderMap,
    ApiQuery(q): ApiQuery<OffersQuery>,
) -> Result<axum::response::Response, AppError> {
    let body = rental::options_answer(&cx, &auth, q.checked()?).await?;
    let mut res = body.response(&headers, "Accept-Encoding, Authorization, Cookie");
    res.headers_mut().insert(axum::http::header::CONTENT_TYPE, axum::http::HeaderValue::from_static("application/json"));
    res.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("private, no-store"));
    Ok(res)
}

/// start, stop, restart, suspend, resume, snapshot, retry (a failed install), uninstall, update
/// (to the catalogue's newer version, rolled back if it does not start) or cancel (what is under
/// way on an offline box); 403 for what a member may not do, 409 when the state does not allow
/// it or the device is offline.
#[utoipa::path(post, path = "/api/rmp/v1/apps/{id}/actions", tag = "apps", params(("id" = String, Path)), request_body = ActionRequest,
    responses((status = 200, body = Envelope<Installation>), (status = 403), (status = 404), (status = 409)))]
async fn act(State(cx): State<AppsCtx>, auth: Auth, lang: Lang, ApiPath(id): ApiPath<InstallationId>, Valid(action): Valid<Action>) -> ApiResult<Installation> {
    ok(install::act(&cx, &auth, &id, action, lang).await?)
}

/// The AI compute and AI server installations, with their endpoint and GPUs.
#[utoipa::path(get, path = "/api/rmp/v1/aicompute", tag = "apps",
    responses((status = 200, body = Envelope<List<AiCompute>>)))]
async fn aicompute(State(cx): State<AppsCtx>, auth: Auth, lang: Lang) -> ApiResult<List<AiCompute>> {
    ok(install::aicompute(&cx, &auth, lang).await?)
}

/// Every app on a device the caller manages (the owner's and the renters').
#[utoipa::path(get, path = "/api/rmp/v1/devices/{id}/apps", tag = "apps", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<List<Installation>>), (status = 403), (status = 404)))]
async fn device_apps(State(cx): State<AppsCtx>, auth: Auth, lang: Lang, ApiPath(id): ApiPath<DeviceId>) -> ApiResult<List<Installation>> {
    ok(install::on_device(&cx, &auth, &id, lang).await?)
}

/// An image archive the market holds (Bearer device secret); HTTP ranges resume a download.
#[utoipa::path(get, path = "/api/agent/v1/images/{sha256}", tag = "agent", params(("sha256" = String, Path)),
    responses((status = 200, content_type = "application/x-tar", body = Vec<u8>), (status = 206), (status = 401), (status = 404)))]
async fn image_archive(State(cx): State<AppsCtx>, State(devices): State<DevicesCtx>, ApiPath(sha): ApiPath<String>, req: Request) -> Result<Response, AppError> {
    let (parts, body) = req.into_parts();
    crate::devices::agent_api::device_by_secret(&devices, crate::iam::auth::bearer(&parts)).await?;
    let path = images::file_of(&cx.db, &cx.data_dir, &sha).await?.ok_or(AppError::Refused(Msg::NotFound))?;
    let req = Request::from_parts(parts, body);
    let res = tower_http::services::ServeFile::new(path).oneshot(req).await.map_err(|e| AppError::Internal(e.into()))?;
    Ok(res.into_response())
}

#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MetricsQuery {
    /// How far back, 1 to 1440 (a day); 60 when left out. An hour or less comes at beat
    /// resolution, more at one point a minute.
    pub minutes: Option<i64>,
}

/// A box's recent figures (docs/gpus.md): CPU, memory and each GPU's use. The owner reads the
/// whole box; a person whose installation holds GPUs on it reads those GPUs (404 otherwise).
#[utoipa::path(get, path = "/api/ebs/v2/devices/{id}/metrics", tag = "devices", params(("id" = String, Path), MetricsQuery),
    responses((status = 200, body = Envelope<crate::devices::telemetry::DeviceMetrics>), (status = 400), (status = 404)))]
async fn device_metrics(
    State(cx): State<AppsCtx>,
    auth: Auth,
    ApiPath(id): ApiPath<DeviceId>,
    ApiQuery(q): ApiQuery<MetricsQuery>,
) -> ApiResult<crate::devices::telemetry::DeviceMetrics> {
    let minutes = q.minutes.unwrap_or(60);
    if !(1..=crate::devices::telemetry::MAX_MINUTES).contains(&minutes) {
        return Err(AppError::invalid("minutes", Msg::InvalidField("minutes")));
    }
    ok(crate::apps::gpus::device_metrics(&cx, &auth, &id, minutes).await?)
}

// ---- snapshots (docs/data.md) ----

/// An installation's snapshots, newest first, and its daily backup (owners; 404 otherwise).
#[utoipa::path(get, path = "/api/rmp/v1/apps/{id}/snapshots", tag = "apps", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<SnapshotList>), (status = 403), (status = 404)))]
async fn app_snapshots(State(cx): State<AppsCtx>, auth: Auth, lang: Lang, ApiPath(id): ApiPath<InstallationId>) -> ApiResult<SnapshotList> {
    ok(snapshots::of_installation(&cx, &auth, &id, lang).await?)
}

/// Turns an installation's daily backup on or off; `keep` (1-30) newest backups are kept.
#[utoipa::path(put, path = "/api/rmp/v1/apps/{id}/backups", tag = "apps", params(("id" = String, Path)), request_body = Backups,
    responses((status = 200, body = Envelope<Backups>), (status = 400), (status = 403), (status = 404)))]
async fn set_backups(State(cx): State<AppsCtx>, auth: Auth, ApiPath(id): ApiPath<InstallationId>, crate::http::ApiJson(ask): crate::http::ApiJson<Backups>) -> ApiResult<Backups> {
    ok(snapshots::set_backups(&cx, &auth, &id, ask).await?)
}

/// Every snapshot of the current context, newest first (also those of removed installations:
/// an ended rental's kept data).
#[utoipa::path(get, path = "/api/rmp/v1/snapshots", tag = "apps", params(Page),
    responses((status = 200, body = Envelope<List<Snapshot>>), (status = 403)))]
async fn my_snapshots(State(cx): State<AppsCtx>, auth: Auth, lang: Lang, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<Snapshot>> {
    let (offset, limit) = page.checked(Page::MAX_LIMIT)?;
    ok(snapshots::mine(&cx, &auth, offset, limit, lang).await?)
}

#[utoipa::path(get, path = "/api/rmp/v1/snapshots/{id}", tag = "apps", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Snapshot>), (status = 404)))]
async fn get_snapshot(State(cx): State<AppsCtx>, auth: Auth, lang: Lang, ApiPath(id): ApiPath<SnapshotId>) -> ApiResult<Snapshot> {
    ok(snapshots::one(&cx, &auth, &id, lang).await?)
}

/// Deletes a snapshot from the market and its box; 409 while a restore from it is under way.
#[utoipa::path(delete, path = "/api/rmp/v1/snapshots/{id}", tag = "apps", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<crate::error::Null>), (status = 404), (status = 409)))]
async fn delete_snapshot(State(cx): State<AppsCtx>, auth: Auth, ApiPath(id): ApiPath<SnapshotId>) -> ApiResult<crate::error::Null> {
    snapshots::delete(&cx, &auth, &id).await?;
    ok(crate::error::Null)
}

/// Keep a snapshot on the market: its box copies it there (resumable); 409 when the box is
/// offline or it is not ready, 413 over the owner's limit.
#[utoipa::path(post, path = "/api/rmp/v1/snapshots/{id}/upload", tag = "apps", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Snapshot>), (status = 404), (status = 409), (status = 413)))]
async fn keep_snapshot(State(cx): State<AppsCtx>, auth: Auth, lang: Lang, ApiPath(id): ApiPath<SnapshotId>) -> ApiResult<Snapshot> {
    ok(snapshots::keep_on_market(&cx, &auth, &id, lang).await?)
}

/// A new installation from a snapshot on one of the caller's devices, or with `hours` a rental
/// on another owner's device; the snapshot's volumes and version come back. 409 when the device
/// is offline or lacks what the app needs (the gaps), or a restore from it is under way.
#[utoipa::path(post, path = "/api/rmp/v1/snapshots/{id}/restore", tag = "apps", request_body = RestoreRequest,
    params(("id" = String, Path), ("Idempotency-Key" = Option<String>, Header)),
    responses((status = 200, body = Envelope<Installation>), (status = 400), (status = 403), (status = 404), (status = 409), (status = 413)))]
async fn restore_snapshot(
    State(cx): State<AppsCtx>,
    auth: Auth,
    lang: Lang,
    IdempotencyKey(key): IdempotencyKey,
    ApiPath(id): ApiPath<SnapshotId>,
    Valid(ask): Valid<RestoreAsk>,
) -> ApiResult<Installation> {
    ok(snapshots::restore(&cx, &auth, &id, ask, key, lang).await?)
}

/// The snapshot's archive (`.tar.zst`), when the market holds it (409 `snapshot_not_on_market`
/// otherwise); HTTP ranges resume a download.
#[utoipa::path(get, path = "/api/rmp/v1/snapshots/{id}/download", tag = "apps", params(("id" = String, Path)),
    responses((status = 200, content_type = "application/zstd", body = Vec<u8>), (status = 206), (status = 404), (status = 409)))]
async fn download_snapshot(State(cx): State<AppsCtx>, auth: Auth, ApiPath(id): ApiPath<SnapshotId>, req: Request) -> Result<Response, AppError> {
    let (path, name) = snapshots::download(&cx, &auth, &id).await?;
    attachment(serve_file(path, req).await?, &name)
}

/// A link a browser downloads the snapshot with: `url` needs no credentials for half an hour
/// (the browser's own download, resumable); 409 while only on its box.
#[utoipa::path(post, path = "/api/rmp/v1/snapshots/{id}/download-link", tag = "apps", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<DownloadLink>), (status = 404), (status = 409)))]
async fn snapshot_link(State(cx): State<AppsCtx>, auth: Auth, ApiPath(id): ApiPath<SnapshotId>) -> ApiResult<DownloadLink> {
    ok(snapshots::download_link(&cx, &auth, &id).await?)
}

#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TicketQuery {
    pub ticket: Option<String>,
}

/// A snapshot's archive by its download link's ticket (404 for a wrong or expired one).
#[utoipa::path(get, path = "/api/rmp/v1/snapshots/{id}/file", tag = "apps", params(("id" = String, Path), TicketQuery),
    responses((status = 200, content_type = "application/zstd", body = Vec<u8>), (status = 206), (status = 404)))]
async fn snapshot_file(State(cx): State<AppsCtx>, ApiPath(id): ApiPath<SnapshotId>, ApiQuery(q): ApiQuery<TicketQuery>, req: Request) -> Result<Response, AppError> {
    let ticket = q.ticket.filter(|t| !t.is_empty() && t.len() <= 100).ok_or(AppError::Refused(Msg::SnapshotNotFound))?;
    let (path, name) = snapshots::by_ticket(&cx, &id, &ticket).await?;
    attachment(serve_file(path, req).await?, &name)
}

/// A file answer as a download named `name`.
fn attachment(mut res: Response, name: &str) -> Result<Response, AppError> {
    if let Ok(v) = axum::http::HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        res.headers_mut().insert(axum::http::header::CONTENT_DISPOSITION, v);
    }
    res.headers_mut().insert(axum::http::header::CONTENT_TYPE, axum::http::HeaderValue::from_static("application/zstd"));
    res.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("private, no-store"));
    Ok(res)
}

/// A file with ranges (tower-http's ServeFile).
async fn serve_file(path: std::path::PathBuf, req: Request) -> Result<Response, AppError> {
    let res = tower_http::services::ServeFile::new(path).oneshot(req).await.map_err(|e| AppError::Internal(e.into()))?;
    Ok(res.into_response())
}

/// How much of a snapshot the market holds (Bearer device secret): the box that made it resumes
/// its copy there; a box restoring it waits until `offset` reaches `size`.
#[utoipa::path(get, path = "/api/agent/v1/snapshots/{id}/upload", tag = "agent", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<zmarket_protocol::snapshots::UploadOffset>), (status = 401), (status = 404)))]
async fn agent_snapshot_offset(State(cx): State<AppsCtx>, State(devices): State<DevicesCtx>, ApiPath(id): ApiPath<SnapshotId>, req: Request) -> ApiResult<zmarket_protocol::snapshots::UploadOffset> {
    let (parts, _) = req.into_parts();
    let device = crate::devices::agent_api::device_by_secret(&devices, crate::iam::auth::bearer(&parts)).await?;
    ok(copies::upload_offset(&cx, &device, &id).await?)
}

/// A snapshot's archive for the box restoring it (Bearer device secret); ranges resume.
#[utoipa::path(get, path = "/api/agent/v1/snapshots/{id}/data", tag = "agent", params(("id" = String, Path)),
    responses((status = 200, content_type = "application/zstd", body = Vec<u8>), (status = 206), (status = 401), (status = 404), (status = 409)))]
async fn agent_snapshot_data(State(cx): State<AppsCtx>, State(devices): State<DevicesCtx>, ApiPath(id): ApiPath<SnapshotId>, req: Request) -> Result<Response, AppError> {
    let (parts, body) = req.into_parts();
    let device = crate::devices::agent_api::device_by_secret(&devices, crate::iam::auth::bearer(&parts)).await?;
    let path = copies::agent_file(&cx, &device, &id).await?;
    serve_file(path, Request::from_parts(parts, body)).await
}

/// One piece of a snapshot from the box that made it (Bearer device secret), `Content-Range:
/// bytes START-END/TOTAL`, at most 8 MiB: 409 when START is not where the market's copy stands
/// (`data.offset` says where), 422 when the whole does not match the snapshot's sha256.
#[utoipa::path(put, path = "/api/agent/v1/snapshots/{id}/data", tag = "agent", params(("id" = String, Path)),
    request_body(content = Vec<u8>, content_type = "application/zstd"),
    responses((status = 200, body = Envelope<zmarket_protocol::snapshots::UploadOffset>), (status = 400), (status = 401), (status = 404), (status = 409), (status = 422)))]
async fn agent_snapshot_piece(State(cx): State<AppsCtx>, State(devices): State<DevicesCtx>, ApiPath(id): ApiPath<SnapshotId>, req: Request) -> ApiResult<zmarket_protocol::snapshots::UploadOffset> {
    let (parts, body) = req.into_parts();
    let device = crate::devices::agent_api::device_by_secret(&devices, crate::iam::auth::bearer(&parts)).await?;
    let bad = || AppError::invalid("content-range", Msg::InvalidField("content-range"));
    let range = parts.headers.get(axum::http::header::CONTENT_RANGE).and_then(|v| v.to_str().ok()).ok_or_else(bad)?;
    let (start, end, total) = content_range(range).ok_or_else(bad)?;
    let len = end + 1 - start;
    if len as usize > zmarket_protocol::snapshots::UPLOAD_CHUNK {
        return Err(bad());
    }
    ok(copies::receive(&cx, &device, &id, start, total, |part| async move {
        use futures::StreamExt;
        use tokio::io::AsyncWriteExt;
        let mut f = tokio::fs::OpenOptions::new().create(true).append(true).open(&part).await.map_err(|e| AppError::Internal(e.into()))?;
        let before = f.metadata().await.map(|m| m.len()).unwrap_or(0);
        let mut stream = body.into_data_stream();
        let (mut written, mut whole) = (0u64, true);
        while let Some(chunk) = stream.next().await {
            let Ok(chunk) = chunk else {
                whole = false;
                break;
            };
            if written + chunk.len() as u64 > len {
                whole = false;
                break;
            }
            f.write_all(&chunk).await.map_err(|e| AppError::Internal(e.into()))?;
            written += chunk.len() as u64;
        }
        f.flush().await.map_err(|e| AppError::Internal(e.into()))?;
        if !whole || written != len {
            // What came is not what the range said (or the connection broke): the piece is undone.
            f.set_len(before).await.map_err(|e| AppError::Internal(e.into()))?;
            return Err(bad());
        }
        Ok(written)
    })
    .await?)
}

/// `bytes START-END/TOTAL`.
fn content_range(v: &str) -> Option<(u64, u64, u64)> {
    let rest = v.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let (start, end) = range.split_once('-')?;
    let (start, end, total) = (start.parse::<u64>().ok()?, end.parse::<u64>().ok()?, total.parse::<u64>().ok()?);
    (start <= end && end < total).then_some((start, end, total))
}
