//! Several instances: a device's channel is held by one instance (`devices.channel_instance`:
//! `<instance>:<connection> <internal url>`); a stream asked for on another instance is carried
//! to the holder as it came (WebSocket upgrades included), marked so it is never carried again.
//! Commands need none of this: they reach the holder through the database (channel.rs).

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use sea_orm::EntityTrait;

use crate::connect::ConnectCtx;
use crate::db::entity::{devices, installations};
use crate::db::enums::DeviceStatus;
use crate::error::{AppError, Msg};
use crate::ids::DeviceId;

/// Marks a request one instance carried to another.
pub const FORWARDED: &str = "x-zmarket-forwarded";

/// The instance and internal address a `channel_instance` value names.
pub fn holder(channel_instance: &str) -> Option<(&str, &str)> {
    let (token, url) = channel_instance.split_once(' ')?;
    let (instance, _) = token.split_once(':')?;
    Some((instance, url))
}

/// Where to carry a request about `device_id`: the holder's address when another instance holds
/// its channel (and this request was not carried here already).
pub async fn elsewhere(cx: &ConnectCtx, forwarded: bool, device_id: &DeviceId) -> Option<String> {
    if forwarded || cx.channels.get(device_id.as_str()).is_some() {
        return None;
    }
    let d = devices::Entity::find_by_id(device_id.to_string()).one(&cx.db).await.ok()??;
    if d.status != DeviceStatus::Online {
        return None;
    }
    let (instance, url) = holder(d.channel_instance.as_deref()?)?;
    (instance != cx.channels.instance()).then(|| url.to_string())
}

/// The device a stream path of the API is about: `/api/rmp/v1/apps/{id}/(logs|terminal|tcp|api…)`
/// or `/api/ebs/v2/devices/{id}/tcp`.
pub async fn device_of_path(cx: &ConnectCtx, path: &str) -> Option<DeviceId> {
    if let Some(rest) = path.strip_prefix("/api/rmp/v1/apps/") {
        let (id, door) = rest.split_once('/')?;
        if !matches!(door.split('/').next()?, "logs" | "terminal" | "tcp" | "api") {
            return None;
        }
        return installations::Entity::find_by_id(id.to_string()).one(&cx.db).await.ok()?.map(|i| i.device_id);
    }
    let rest = path.strip_prefix("/api/ebs/v2/devices/")?;
    let (id, door) = rest.split_once('/')?;
    (door == "tcp").then(|| DeviceId::from(id))
}

/// Whether another instance carried this request here.
pub fn was_forwarded(req: &Request) -> bool {
    req.headers().contains_key(FORWARDED)
}

/// Carries the request to the instance at `url` and answers what it answered.
pub async fn carry(url: &str, mut req: Request, proto: &str) -> Response {
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_string();
    let Ok(stream) = tokio::net::TcpStream::connect(&addr).await else {
        return AppError::Refused(Msg::InstanceUnreachable).into_response();
    };
    let _ = stream.set_nodelay(true);
    req.headers_mut().insert(FORWARDED, HeaderValue::from_static("1"));
    let host = req.headers().get(axum::http::header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("").to_string();
    // A terminal or tunnel carried to the holder keeps its place here too (issue 43, item 1).
    let kind = if req.uri().path().starts_with("/api/") { crate::sockets::Kind::Stream } else { crate::sockets::Kind::App };
    let hop = crate::connect::proxy::Hop { strip_cookie: None, forwarded_host: &host, proto, socket: (kind, None), watched: None };
    crate::connect::proxy::forward(stream, req, hop).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn holders_parse() {
        assert_eq!(super::holder("abc:3 http://127.0.0.1:9000"), Some(("abc", "http://127.0.0.1:9000")));
        assert_eq!(super::holder("abc:3"), None);
    }
}
