//! Device endpoints (`/api/ebs/v2`), the agent protocol (`/api/agent/v1`) and nearby (public).

use axum::extract::{DefaultBodyLimit, FromRef, FromRequestParts, State};
use axum::http::request::Parts;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::devices::model::*;
use crate::devices::{DevicesCtx, agent_api, binding, install, nearby, rental, sharing, zcloud};
use axum::http::header;
use crate::error::{ApiResult, AppError, Envelope, Null, ok};
use crate::http::{ApiJson, ApiPath, ApiQuery, ClientIp, List, Page, Valid};
use crate::iam::auth::{Auth, Sessions};
use crate::ids::DeviceId;

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    DevicesCtx: FromRef<S>,
    Sessions: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_devices))
        .routes(routes!(link_device))
        .routes(routes!(pending_device))
        .routes(routes!(get_device, rename_device, unlink_device))
        .routes(routes!(update_sharing))
        .routes(routes!(update_location))
        .routes(routes!(verify_gpus))
        .routes(routes!(create_zcloud))
        .routes(routes!(zcloud_capacity))
        .routes(routes!(zcloud_rentals))
        .routes(routes!(end_zcloud_rental))
        .merge(OpenApiRouter::new().routes(routes!(register)).layer(DefaultBodyLimit::max(AGENT_REGISTER_BODY_LIMIT)))
        .merge(OpenApiRouter::new().routes(routes!(heartbeat)).layer(DefaultBodyLimit::max(HEARTBEAT_BODY_LIMIT)))
        .routes(routes!(nearby))
        .routes(routes!(nearby_one))
}

/// Devices of the current context (a person's, or the company's for its administrators; a
/// member sees the devices assigned to them).
#[utoipa::path(get, path = "/api/ebs/v2/devices", tag = "devices", params(DeviceFilter, Page),
    responses((status = 200, body = Envelope<List<Device>>)))]
async fn list_devices(
    State(cx): State<DevicesCtx>,
    auth: Auth,
    ApiQuery(f): ApiQuery<DeviceFilter>,
    ApiQuery(page): ApiQuery<Page>,
) -> ApiResult<List<Device>> {
    let (offset, limit) = page.checked(Page::MAX_LIMIT)?;
    ok(binding::list(&cx, &auth, f, offset, limit).await?)
}

/// Bind a device by its id and pairing code (400 "Invalid Device ID" for a malformed or unknown
/// id or a wrong code; 409 when already bound). In a company context the company owns it.
#[utoipa::path(post, path = "/api/ebs/v2/devices/link", tag = "devices", request_body = LinkRequest,
    responses((status = 200, body = Envelope<Device>), (status = 400), (status = 403), (status = 409)))]
async fn link_device(State(cx): State<DevicesCtx>, auth: Auth, ApiJson(req): ApiJson<LinkRequest>) -> ApiResult<Device> {
    ok(binding::link(&cx, &auth, req).await?)
}

/// The box that registered with this pairing code (the bind page's, baked into its install
/// line) in the last hour, bound to nobody yet; `data: null` until one has (the page asks every
/// few seconds: waiting is not an error).
#[utoipa::path(get, path = "/api/ebs/v2/devices/pending", tag = "devices", params(PendingQuery),
    responses((status = 200, body = Envelope<Option<PendingDevice>>), (status = 400), (status = 403)))]
async fn pending_device(State(cx): State<DevicesCtx>, auth: Auth, ApiQuery(q): ApiQuery<PendingQuery>) -> ApiResult<Option<PendingDevice>> {
    ok(binding::pending(&cx, &auth, q.pairing_code.as_deref()).await?)
}

#[utoipa::path(get, path = "/api/ebs/v2/devices/{id}", tag = "devices", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Device>), (status = 404)))]
async fn get_device(State(cx): State<DevicesCtx>, auth: Auth, ApiPath(id): ApiPath<DeviceId>) -> ApiResult<Device> {
    ok(binding::get(&cx, &auth, &id).await?)
}

/// Rename a device.
#[utoipa::path(put, path = "/api/ebs/v2/devices/{id}", tag = "devices", params(("id" = String, Path)), request_body = RenameRequest,
    responses((status = 200, body = Envelope<Device>)))]
async fn rename_device(State(cx): State<DevicesCtx>, auth: Auth, ApiPath(id): ApiPath<DeviceId>, Valid(req): Valid<DeviceName>) -> ApiResult<Device> {
    ok(sharing::rename(&cx, &auth, &id, req).await?)
}

/// Unlink a device (its agent's secret stops working), or delete a Z-CLOUD machine.
#[utoipa::path(delete, path = "/api/ebs/v2/devices/{id}", tag = "devices", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Null>), (status = 403), (status = 404), (status = 409)))]
async fn unlink_device(State(cx): State<DevicesCtx>, auth: Auth, ApiPath(id): ApiPath<DeviceId>) -> ApiResult<Null> {
    binding::unlink(&cx, &auth, &id).await?;
    ok(Null)
}

/// Measure the box's GPUs now (the owner): the agent copies through each GPU for a few seconds
/// and reports `verification` (docs/gpus.md). 409 when the box is offline.
#[utoipa::path(post, path = "/api/ebs/v2/devices/{id}/verify", tag = "devices", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Device>), (status = 403), (status = 404), (status = 409)))]
async fn verify_gpus(State(cx): State<DevicesCtx>, auth: Auth, ApiPath(id): ApiPath<DeviceId>) -> ApiResult<Device> {
    ok(crate::devices::verify::request_verify(&cx, &auth, &id).await?)
}

/// Sharing settings; they reach the device with its next heartbeat.
#[utoipa::path(put, path = "/api/ebs/v2/devices/{id}/sharing", tag = "devices", params(("id" = String, Path)),
    request_body = SharingRequest, responses((status = 200, body = Envelope<Device>), (status = 409)))]
async fn update_sharing(State(cx): State<DevicesCtx>, auth: Auth, ApiPath(id): ApiPath<DeviceId>, Valid(req): Valid<Sharing>) -> ApiResult<Device> {
    ok(sharing::update_sharing(&cx, &auth, &id, req).await?)
}

/// Set (`{lat, lng}`) or clear (`{lat: null, lng: null}`) a device's location.
#[utoipa::path(put, path = "/api/ebs/v2/devices/{id}/location", tag = "devices", params(("id" = String, Path)),
    request_body = LocationRequest, responses((status = 200, body = Envelope<Device>)))]
async fn update_location(State(cx): State<DevicesCtx>, auth: Auth, ApiPath(id): ApiPath<DeviceId>, Valid(req): Valid<NewLocation>) -> ApiResult<Device> {
    ok(sharing::update_location(&cx, &auth, &id, req).await?)
}

/// Create a Z-CLOUD machine on a server-group host with free capacity (409 when none fits).
#[utoipa::path(post, path = "/api/ebs/v2/zcloud", tag = "devices", request_body = ZcloudRequest,
    responses((status = 200, body = Envelope<Device>), (status = 409)))]
async fn create_zcloud(State(cx): State<DevicesCtx>, auth: Auth, Valid(req): Valid<ZcloudAsk>) -> ApiResult<Device> {
    ok(zcloud::create_zcloud(&cx, &auth, req).await?)
}

/// What each usable server-group host has left for Z-CLOUD machines.
#[utoipa::path(get, path = "/api/ebs/v2/zcloud/capacity", tag = "devices",
    responses((status = 200, body = Envelope<Vec<HostFree>>)))]
async fn zcloud_capacity(State(cx): State<DevicesCtx>, auth: Auth) -> ApiResult<Vec<HostFree>> {
    ok(zcloud::capacity(&cx, &auth).await?)
}

/// The Z-CLOUD machines other owners run on this server-group host (running, or `ending` with the
/// time they stop), for the host's owner: each is a rental paying the host's price.
#[utoipa::path(get, path = "/api/ebs/v2/devices/{id}/zcloud-rentals", tag = "devices", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Vec<ZcloudRental>>), (status = 403), (status = 404)))]
async fn zcloud_rentals(State(cx): State<DevicesCtx>, auth: Auth, ApiPath(id): ApiPath<DeviceId>) -> ApiResult<Vec<ZcloudRental>> {
    ok(rental::on_host(&cx, &auth, &id).await?)
}

/// The host's owner ends a Z-CLOUD machine another owner runs on this host: its renter is told,
/// and it is stopped after `devices.zcloud_notice_minutes`, then its rental settled (404 when no
/// such machine runs here; 409 when it is already ending).
#[utoipa::path(post, path = "/api/ebs/v2/devices/{id}/zcloud-rentals/{machine_id}/end", tag = "devices",
    params(("id" = String, Path), ("machine_id" = String, Path)),
    responses((status = 200, body = Envelope<ZcloudRental>), (status = 403), (status = 404), (status = 409)))]
async fn end_zcloud_rental(State(cx): State<DevicesCtx>, auth: Auth, ApiPath((id, machine_id)): ApiPath<(DeviceId, DeviceId)>) -> ApiResult<ZcloudRental> {
    ok(rental::end_by_host(&cx, &auth, &id, &machine_id).await?)
}

/// The protocol version an agent speaks (its `zmarket-protocol` header, docs/connect.md), read
/// before anything else of its request: a version this market does not know is refused first.
pub struct AgentProtocol(pub u32);

impl<S: Send + Sync> FromRequestParts<S> for AgentProtocol {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let sent = parts.headers.get(zmarket_protocol::version::HEADER).map(|v| v.to_str().unwrap_or_default());
        agent_api::protocol_of(sent).map(AgentProtocol)
    }
}

/// An agent registers its machine; the answer's secret authenticates its heartbeats.
#[utoipa::path(post, path = "/api/agent/v1/register", tag = "agent", operation_id = "register_agent", request_body = RegisterRequest,
    responses((status = 200, body = Envelope<RegisterResponse>)))]
async fn register(State(cx): State<DevicesCtx>, _: AgentProtocol, ClientIp(ip): ClientIp, Valid(req): Valid<AgentRegistration>) -> ApiResult<RegisterResponse> {
    ok(agent_api::register(&cx, ip, req).await?)
}

/// Heartbeat (Bearer device secret): report spec and metrics, acknowledge commands; answers the
/// settings and the pending commands.
#[utoipa::path(post, path = "/api/agent/v1/heartbeat", tag = "agent", request_body = HeartbeatRequest,
    responses((status = 200, body = Envelope<HeartbeatResponse>), (status = 401)))]
async fn heartbeat(State(cx): State<DevicesCtx>, _: AgentProtocol, parts: Parts, ApiJson(req): ApiJson<HeartbeatRequest>) -> ApiResult<HeartbeatResponse> {
    ok(agent_api::heartbeat(&cx, crate::iam::auth::bearer(&parts), req).await?)
}

/// Shared, rentable devices near a point (default: the configured map centre), nearest first.
/// Coordinates are coarsened to about 1 km.
#[utoipa::path(get, path = "/api/ebs/v2/nearby", tag = "nearby", params(NearbyQuery),
    responses((status = 200, body = Envelope<List<NearbyDevice>>)))]
async fn nearby(State(cx): State<DevicesCtx>, ApiQuery(q): ApiQuery<NearbyQuery>) -> ApiResult<List<NearbyDevice>> {
    ok(nearby::nearby(&cx, q).await?)
}

/// One shared device with the apps on it.
#[utoipa::path(get, path = "/api/ebs/v2/nearby/{id}", tag = "nearby", params(("id" = String, Path), NearbyPoint),
    responses((status = 200, body = Envelope<NearbyDevice>), (status = 404)))]
async fn nearby_one(State(cx): State<DevicesCtx>, ApiPath(id): ApiPath<DeviceId>, ApiQuery(q): ApiQuery<NearbyPoint>) -> ApiResult<NearbyDevice> {
    ok(nearby::nearby_one(&cx, &id, q).await?)
}

/// `/install.sh` and `/downloads/{file}`: a box set up in one line (devices::install). Outside
/// the API (plain text and bytes, no envelope but the 404's) and so outside the OpenAPI document.
pub fn install_router<S>() -> axum::Router<S>
where
    S: Clone + Send + Sync + 'static,
    DevicesCtx: FromRef<S>,
{
    axum::Router::new().route("/install.sh", axum::routing::get(install_script)).route("/downloads/{file}", axum::routing::get(download))
}

async fn install_script(State(cx): State<DevicesCtx>, ApiQuery(q): ApiQuery<InstallQuery>) -> Result<axum::response::Response, crate::error::AppError> {
    use axum::response::IntoResponse;
    let script = cx.installer.script(q.code.as_deref()).await?;
    Ok(([(header::CONTENT_TYPE, "text/x-shellscript; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], script).into_response())
}

/// The agent (ranges answered, `X-Checksum-Sha256`), or `<file>.sha256` (`sha256sum` format).
async fn download(State(cx): State<DevicesCtx>, axum::extract::Path(file): axum::extract::Path<String>, headers: axum::http::HeaderMap) -> Result<axum::response::Response, crate::error::AppError> {
    use axum::response::IntoResponse;
    if let Some(name) = file.strip_suffix(".sha256") {
        let bin = cx.installer.binary(name).await?;
        let body = format!("{}  {}\n", bin.sha256, install::AGENT_FILE);
        return Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], body).into_response());
    }
    let bin = cx.installer.binary(&file).await?;
    let range = headers.get(header::RANGE).and_then(|v| v.to_str().ok());
    let (status, first, len) = match install::span(range, bin.size) {
        install::Span::Whole => (axum::http::StatusCode::OK, 0, bin.size),
        install::Span::Part(a, b) => (axum::http::StatusCode::PARTIAL_CONTENT, a, b - a + 1),
        install::Span::Unsatisfiable => {
            return Ok((axum::http::StatusCode::RANGE_NOT_SATISFIABLE, [(header::CONTENT_RANGE, format!("bytes */{}", bin.size))]).into_response());
        }
    };
    let body = axum::body::Body::from_stream(install::chunks(&bin, first, len).await?);
    let mut res = (status, body).into_response();
    let h = res.headers_mut();
    let value = |s: String| axum::http::HeaderValue::from_str(&s).unwrap_or(axum::http::HeaderValue::from_static(""));
    h.insert(header::CONTENT_TYPE, axum::http::HeaderValue::from_static("application/octet-stream"));
    h.insert(header::CONTENT_LENGTH, value(len.to_string()));
    h.insert(header::ACCEPT_RANGES, axum::http::HeaderValue::from_static("bytes"));
    h.insert(header::ETAG, value(format!("\"{}\"", bin.sha256)));
    h.insert("x-checksum-sha256", value(bin.sha256.clone()));
    h.insert(header::CONTENT_DISPOSITION, value(format!("attachment; filename=\"{}\"", install::AGENT_FILE)));
    // Bytes as they are: never compressed on the way (a range is of the file, not of a gzip).
    h.insert(header::CONTENT_ENCODING, axum::http::HeaderValue::from_static("identity"));
    h.insert(header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-cache"));
    if status == axum::http::StatusCode::PARTIAL_CONTENT {
        h.insert(header::CONTENT_RANGE, value(format!("bytes {}-{}/{}", first, first + len - 1, bin.size)));
    }
    Ok(res)
}
