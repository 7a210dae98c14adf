//! Connect endpoints: the agent channel (`/api/agent/v1/channel`) and the doors of an
//! installation or a box (`/api/rmp/v1/apps/{id}/…`, `/api/ebs/v2/devices/{id}/…`).

use axum::extract::ws::{WebSocketUpgrade, rejection::WebSocketUpgradeRejection};
use axum::extract::{FromRef, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::devices::model::DeviceId;
use crate::ids::InstallationId;
use crate::connect::access::{self, device_link, door, owned_device};
use crate::connect::model::*;
use crate::connect::{ConnectCtx, channel, doors, logs, terminal, web};
use crate::error::{ApiResult, AppError, Envelope, Msg, ok};
use crate::http::{ApiPath, ApiQuery};
use crate::iam::auth::{Auth, Sessions};
use crate::lang::Lang;
use zmarket_protocol::frames::Target;
use crate::connect::rights::{Reach, Watched};
use crate::sockets::{Kind, SocketPlace};

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    ConnectCtx: FromRef<S>,
    Sessions: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(agent_channel))
        .routes(routes!(app_connect))
        .routes(routes!(app_open))
        .routes(routes!(app_logs))
        .routes(routes!(app_terminal))
        .routes(routes!(app_tcp))
        .routes(routes!(device_connect))
        .routes(routes!(device_tcp))
        .route("/api/rmp/v1/apps/{id}/api", axum::routing::any(app_api))
        // The root with a trailing slash, as the API block's example writes it (issue 44).
        .route("/api/rmp/v1/apps/{id}/api/", axum::routing::any(app_api))
        .route("/api/rmp/v1/apps/{id}/api/{*path}", axum::routing::any(app_api))
}

fn upgrade(ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>) -> Result<WebSocketUpgrade, AppError> {
    ws.map_err(|_| AppError::invalid("upgrade", Msg::WebSocketRequired))
}

/// Opens `target` on the box, then bridges it to the socket once upgraded (`terminal`: text
/// frames are keystrokes and resizes). A stream the box refuses is an HTTP answer, not a socket.
async fn bridged(ws: WebSocketUpgrade, place: SocketPlace, watched: Watched, link: &std::sync::Arc<crate::connect::hub::Link>, target: Target, terminal: bool, lang: Lang) -> Result<Response, AppError> {
    let stream = link.open(target).await.map_err(access::stream_refused)?;
    Ok(ws.protocols(["zmarket"]).on_upgrade(move |socket| async move {
        let _place = place;
        terminal::bridge(socket, stream, terminal, lang, watched).await
    }))
}

/// A terminal's or tunnel's place (issue 43, item 1): counted per kind, address and account.
fn stream_place(parts: &Parts, auth: &Auth) -> Result<SocketPlace, AppError> {
    crate::http::socket_place(&parts.extensions, &parts.headers, Kind::Stream, Some(auth.user_id.as_str()))
}

/// The agent's channel (Bearer device secret): a WebSocket carrying commands at once and the
/// streams of logs, terminals, tunnels and web interfaces (docs/connect.md).
#[utoipa::path(get, path = "/api/agent/v1/channel", tag = "agent",
    responses((status = 101), (status = 400), (status = 401)))]
async fn agent_channel(State(cx): State<ConnectCtx>, _: crate::devices::routes::AgentProtocol, parts: Parts, ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>) -> Result<Response, AppError> {
    // A restarted market meets its boxes all at once: beyond the rate they come back later.
    if let Some(opens) = &cx.channel_opens
        && opens.check().is_err()
    {
        return Err(AppError::TooManyRequests { retry_after_secs: channel::RETRY_OPEN_SECS });
    }
    let device = crate::devices::agent_api::device_by_secret(&cx.devices, crate::iam::auth::bearer(&parts)).await?;
    let ws = upgrade(ws)?;
    // One channel per box: a new one closes the older (src/connect/hub.rs), so the box is not
    // the owner counted here; the kind and the address are.
    let place = crate::http::socket_place(&parts.extensions, &parts.headers, Kind::Channel, None)?;
    Ok(channel::configured(ws).on_upgrade(move |socket| async move {
        let _place = place;
        channel::serve(cx, device, socket).await
    }))
}

/// What the caller may open of an installation (its owner or renter, the company's admin, or
/// a member it is assigned to): each door only when it works.
#[utoipa::path(get, path = "/api/rmp/v1/apps/{id}/connect", tag = "connect", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<ConnectInfo>), (status = 403), (status = 404)))]
async fn app_connect(State(cx): State<ConnectCtx>, auth: Auth, ApiPath(id): ApiPath<InstallationId>) -> ApiResult<ConnectInfo> {
    let d = door(&cx, &auth, &id).await?;
    ok(doors::of_installation(&cx, &d).await?)
}

/// The installation's web interface through the market: 302 to a one-time link on the app's
/// own origin; with `Accept: application/json`, that link as `{url}`.
#[utoipa::path(get, path = "/api/rmp/v1/apps/{id}/open", tag = "connect", params(("id" = String, Path)),
    responses((status = 302), (status = 200, body = Envelope<OpenLink>), (status = 404), (status = 409)))]
async fn app_open(State(cx): State<ConnectCtx>, auth: Auth, headers: HeaderMap, ApiPath(id): ApiPath<InstallationId>) -> Result<Response, AppError> {
    let d = door(&cx, &auth, &id).await?;
    d.web_port().ok_or(AppError::Refused(Msg::AppHasNoWeb))?;
    d.running()?;
    if !d.device_online() {
        return Err(AppError::Refused(Msg::DeviceOffline));
    }
    let url = web::open_link(&cx, &auth, &d.row.id).await?;
    let json = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|v| v.contains("application/json"));
    if json {
        return Ok(ok(OpenLink { url })?.into_response());
    }
    Ok((StatusCode::FOUND, [(header::LOCATION, url), (header::CACHE_CONTROL, "no-store".to_string())]).into_response())
}

/// The app's log: `?tail=200` as JSON lines; with `follow=1` the same, then new lines, as
/// Server-Sent Events (`line`, and `end` with the reason).
#[utoipa::path(get, path = "/api/rmp/v1/apps/{id}/logs", tag = "connect", params(("id" = String, Path), LogsQuery),
    responses((status = 200, body = Envelope<LogLines>), (status = 404), (status = 409)))]
async fn app_logs(
    State(cx): State<ConnectCtx>,
    auth: Auth,
    lang: Lang,
    conn: Option<axum::Extension<crate::http::Conn>>,
    ApiPath(id): ApiPath<InstallationId>,
    ApiQuery(q): ApiQuery<LogsQuery>,
) -> Result<Response, AppError> {
    let tail = q.tail()?;
    let d = door(&cx, &auth, &id).await?;
    if q.follow() {
        // Counted among event streams, not request connections (issue 29, finding 7).
        let place = crate::http::EventStreamPlace::take(conn.as_deref())?;
        let watched = cx.rights.watch(&auth, Reach::Log(id.clone()));
        return Ok(place.hold(logs::follow(&cx, &d, tail, lang, watched).await?.into_response()));
    }
    Ok(ok(logs::tail(&cx, &d, tail).await?)?.into_response())
}

/// A shell in the app's container (WebSocket; a browser passes its token as the subprotocol
/// `zmarket.bearer.<token>` beside `zmarket`): text frames are keystrokes, `{"resize":[c,r]}`
/// resizes, binary frames carry the output.
#[utoipa::path(get, path = "/api/rmp/v1/apps/{id}/terminal", tag = "connect", params(("id" = String, Path), TerminalQuery),
    responses((status = 101), (status = 404), (status = 409)))]
async fn app_terminal(
    State(cx): State<ConnectCtx>,
    auth: Auth,
    lang: Lang,
    parts: Parts,
    ApiPath(id): ApiPath<InstallationId>,
    ApiQuery(q): ApiQuery<TerminalQuery>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, AppError> {
    let d = door(&cx, &auth, &id).await?;
    d.running()?;
    let link = d.link(&cx)?;
    let (cols, rows) = q.size();
    let ws = upgrade(ws)?;
    let watched = cx.rights.watch(&auth, Reach::Running(id.clone()));
    bridged(ws, stream_place(&parts, &auth)?, watched, &link, Target::Exec { installation: d.row.id.clone().into(), cols, rows }, true, lang).await
}

/// One TCP connection to a port the app declares, carried by a WebSocket's binary frames
/// (`zmarket tunnel --app`).
#[utoipa::path(get, path = "/api/rmp/v1/apps/{id}/tcp", tag = "connect", params(("id" = String, Path), PortQuery),
    responses((status = 101), (status = 400), (status = 404), (status = 409)))]
async fn app_tcp(
    State(cx): State<ConnectCtx>,
    auth: Auth,
    lang: Lang,
    parts: Parts,
    ApiPath(id): ApiPath<InstallationId>,
    ApiQuery(q): ApiQuery<PortQuery>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, AppError> {
    let port = q.port()?;
    let d = door(&cx, &auth, &id).await?;
    if !d.tcp_ports().contains(&port) {
        return Err(AppError::invalid("port", Msg::PortNotDeclared));
    }
    d.running()?;
    let link = d.link(&cx)?;
    let ws = upgrade(ws)?;
    let watched = cx.rights.watch(&auth, Reach::Running(id.clone()));
    bridged(ws, stream_place(&parts, &auth)?, watched, &link, Target::App { installation: d.row.id.clone().into(), port }, false, lang).await
}

/// What the owner may open of the box itself.
#[utoipa::path(get, path = "/api/ebs/v2/devices/{id}/connect", tag = "connect", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<DeviceConnect>), (status = 403), (status = 404)))]
async fn device_connect(State(cx): State<ConnectCtx>, auth: Auth, ApiPath(id): ApiPath<DeviceId>) -> ApiResult<DeviceConnect> {
    let d = owned_device(&cx, &auth, &id).await?;
    ok(doors::of_device(&cx, &d))
}

/// One TCP connection to a port of the owner's own box (its agent allows `[agent] tcp_ports`,
/// default 22), carried by a WebSocket's binary frames (`zmarket tunnel --device`).
#[utoipa::path(get, path = "/api/ebs/v2/devices/{id}/tcp", tag = "connect", params(("id" = String, Path), PortQuery),
    responses((status = 101), (status = 400), (status = 404), (status = 409)))]
async fn device_tcp(
    State(cx): State<ConnectCtx>,
    auth: Auth,
    lang: Lang,
    parts: Parts,
    ApiPath(id): ApiPath<DeviceId>,
    ApiQuery(q): ApiQuery<PortQuery>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, AppError> {
    let port = q.port()?;
    let d = owned_device(&cx, &auth, &id).await?;
    let link = device_link(&cx, &d)?;
    let ws = upgrade(ws)?;
    let watched = cx.rights.watch(&auth, Reach::Device(id.clone()));
    bridged(ws, stream_place(&parts, &auth)?, watched, &link, Target::Host { port }, false, lang).await
}

/// The app's HTTP API through the market (the `api` door): `…/apps/{id}/api/<path>` goes to
/// `/<path>` on the app's web port, for scripts with an API key (`Authorization: Bearer zk_…`).
async fn app_api(State(cx): State<ConnectCtx>, auth: Auth, req: axum::extract::Request) -> Result<Response, AppError> {
    let path = req.uri().path().to_string();
    let rest = path.strip_prefix("/api/rmp/v1/apps/").unwrap_or("");
    let (id, tail) = rest.split_once('/').map_or((rest, ""), |(id, t)| (id, t.strip_prefix("api").unwrap_or(t)));
    let d = door(&cx, &auth, &InstallationId::from(id)).await?;
    let port = d.web_port().ok_or(AppError::Refused(Msg::AppHasNoWeb))?;
    d.running()?;
    let link = d.link(&cx)?;
    let (mut parts, body) = req.into_parts();
    let target = if tail.is_empty() { "/".to_string() } else { tail.to_string() };
    let target = match parts.uri.query() {
        Some(q) => format!("{target}?{q}"),
        None => target,
    };
    parts.uri = target.parse().map_err(|_| AppError::invalid("path", Msg::InvalidField("path")))?;
    // The market's credentials are the market's: the app does not see them (issue 43, item 5).
    crate::connect::proxy::strip_market_credentials(&mut parts.headers);
    let host = parts.headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("").to_string();
    let proto = if cx.public_url.starts_with("https:") { "https" } else { "http" };
    let watched = crate::connect::proxy::is_upgrade(&parts.headers).then(|| cx.rights.watch(&auth, Reach::Running(InstallationId::from(id))));
    let req = axum::extract::Request::from_parts(parts, body);
    let socket = (Kind::App, Some(d.row.device_id.as_str()));
    let mut res = crate::connect::proxy::forward_kept(&link, &d.row.id, port, req, crate::connect::proxy::Hop { strip_cookie: None, forwarded_host: &host, proto, socket, watched }).await.map_err(access::stream_refused)?;
    crate::connect::proxy::on_market_origin(&mut res);
    Ok(res)
}
