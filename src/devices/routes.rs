//! Device endpoints (`/api/ebs/v2`), the agent protocol (`/api/agent/v1`) and nearby (public).

use axum::extract::{Path, State};
use axum::http::request::Parts;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;
use crate::devices::model::*;
use crate::devices::service;
use crate::error::{ApiResult, Envelope, Null, ok};
use crate::http::{ApiJson, ApiQuery, List, Page};
use crate::iam::service::Auth;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_devices))
        .routes(routes!(link_device))
        .routes(routes!(get_device, rename_device, unlink_device))
        .routes(routes!(update_sharing))
        .routes(routes!(update_location))
        .routes(routes!(create_zcloud))
        .routes(routes!(zcloud_capacity))
        .routes(routes!(register))
        .routes(routes!(heartbeat))
        .routes(routes!(nearby))
        .routes(routes!(nearby_one))
}

/// Devices of the current context (a person's, or the company's for its administrators; a
/// member sees the devices assigned to them).
#[utoipa::path(get, path = "/api/ebs/v2/devices", tag = "devices", params(DeviceFilter, Page),
    responses((status = 200, body = Envelope<List<Device>>)))]
async fn list_devices(
    State(s): State<AppState>,
    auth: Auth,
    ApiQuery(f): ApiQuery<DeviceFilter>,
    ApiQuery(page): ApiQuery<Page>,
) -> ApiResult<List<Device>> {
    let (offset, limit) = page.checked(Page::MAX_LIMIT)?;
    ok(service::list(&s, &auth, f, offset, limit).await?)
}

/// Bind a device by its id and pairing code (400 "Invalid Device ID" for a malformed or unknown
/// id or a wrong code; 409 when already bound). In a company context the company owns it.
#[utoipa::path(post, path = "/api/ebs/v2/devices/link", tag = "devices", request_body = LinkRequest,
    responses((status = 200, body = Envelope<Device>), (status = 400), (status = 403), (status = 409)))]
async fn link_device(State(s): State<AppState>, auth: Auth, ApiJson(req): ApiJson<LinkRequest>) -> ApiResult<Device> {
    ok(service::link(&s, &auth, req).await?)
}

#[utoipa::path(get, path = "/api/ebs/v2/devices/{id}", tag = "devices", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Device>), (status = 404)))]
async fn get_device(State(s): State<AppState>, auth: Auth, Path(id): Path<String>) -> ApiResult<Device> {
    ok(service::get(&s, &auth, &id).await?)
}

/// Rename a device.
#[utoipa::path(put, path = "/api/ebs/v2/devices/{id}", tag = "devices", params(("id" = String, Path)), request_body = RenameRequest,
    responses((status = 200, body = Envelope<Device>)))]
async fn rename_device(State(s): State<AppState>, auth: Auth, Path(id): Path<String>, ApiJson(req): ApiJson<RenameRequest>) -> ApiResult<Device> {
    ok(service::rename(&s, &auth, &id, req).await?)
}

/// Unlink a device (its agent's secret stops working), or delete a Z-CLOUD machine.
#[utoipa::path(delete, path = "/api/ebs/v2/devices/{id}", tag = "devices", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Null>), (status = 403), (status = 404), (status = 409)))]
async fn unlink_device(State(s): State<AppState>, auth: Auth, Path(id): Path<String>) -> ApiResult<Null> {
    service::unlink(&s, &auth, &id).await?;
    ok(Null)
}

/// Sharing settings; they reach the device with its next heartbeat.
#[utoipa::path(put, path = "/api/ebs/v2/devices/{id}/sharing", tag = "devices", params(("id" = String, Path)),
    request_body = SharingRequest, responses((status = 200, body = Envelope<Device>), (status = 409)))]
async fn update_sharing(State(s): State<AppState>, auth: Auth, Path(id): Path<String>, ApiJson(req): ApiJson<SharingRequest>) -> ApiResult<Device> {
    ok(service::update_sharing(&s, &auth, &id, req).await?)
}

/// Set (`{lat, lng}`) or clear (`{lat: null, lng: null}`) a device's location.
#[utoipa::path(put, path = "/api/ebs/v2/devices/{id}/location", tag = "devices", params(("id" = String, Path)),
    request_body = LocationRequest, responses((status = 200, body = Envelope<Device>)))]
async fn update_location(State(s): State<AppState>, auth: Auth, Path(id): Path<String>, ApiJson(req): ApiJson<LocationRequest>) -> ApiResult<Device> {
    ok(service::update_location(&s, &auth, &id, req).await?)
}

/// Create a Z-CLOUD machine on a server-group host with free capacity (409 when none fits).
#[utoipa::path(post, path = "/api/ebs/v2/zcloud", tag = "devices", request_body = ZcloudRequest,
    responses((status = 200, body = Envelope<Device>), (status = 409)))]
async fn create_zcloud(State(s): State<AppState>, auth: Auth, ApiJson(req): ApiJson<ZcloudRequest>) -> ApiResult<Device> {
    ok(service::create_zcloud(&s, &auth, req).await?)
}

/// What each usable server-group host has left for Z-CLOUD machines.
#[utoipa::path(get, path = "/api/ebs/v2/zcloud/capacity", tag = "devices",
    responses((status = 200, body = Envelope<Vec<HostFree>>)))]
async fn zcloud_capacity(State(s): State<AppState>, auth: Auth) -> ApiResult<Vec<HostFree>> {
    ok(service::capacity(&s, &auth).await?)
}

/// An agent registers its machine; the answer's secret authenticates its heartbeats.
#[utoipa::path(post, path = "/api/agent/v1/register", tag = "agent", request_body = RegisterRequest,
    responses((status = 200, body = Envelope<RegisterResponse>)))]
async fn register(State(s): State<AppState>, ApiJson(req): ApiJson<RegisterRequest>) -> ApiResult<RegisterResponse> {
    ok(service::register(&s, req).await?)
}

/// Heartbeat (Bearer device secret): report spec and metrics, acknowledge commands; answers the
/// settings and the pending commands.
#[utoipa::path(post, path = "/api/agent/v1/heartbeat", tag = "agent", request_body = HeartbeatRequest,
    responses((status = 200, body = Envelope<HeartbeatResponse>), (status = 401)))]
async fn heartbeat(State(s): State<AppState>, parts: Parts, ApiJson(req): ApiJson<HeartbeatRequest>) -> ApiResult<HeartbeatResponse> {
    ok(service::heartbeat(&s, crate::iam::auth::bearer(&parts), req).await?)
}

/// Shared, rentable devices near a point (default: the configured map centre), nearest first.
/// Coordinates are coarsened to about 1 km.
#[utoipa::path(get, path = "/api/ebs/v2/nearby", tag = "nearby", params(NearbyQuery),
    responses((status = 200, body = Envelope<List<NearbyDevice>>)))]
async fn nearby(State(s): State<AppState>, ApiQuery(q): ApiQuery<NearbyQuery>) -> ApiResult<List<NearbyDevice>> {
    ok(service::nearby(&s, q).await?)
}

/// One shared device with the apps on it.
#[utoipa::path(get, path = "/api/ebs/v2/nearby/{id}", tag = "nearby", params(("id" = String, Path), NearbyPoint),
    responses((status = 200, body = Envelope<NearbyDevice>), (status = 404)))]
async fn nearby_one(State(s): State<AppState>, Path(id): Path<String>, ApiQuery(q): ApiQuery<NearbyPoint>) -> ApiResult<NearbyDevice> {
    ok(service::nearby_one(&s, &id, q).await?)
}
