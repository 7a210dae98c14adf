//! The doors of an installation or a box as the resource pages show them (docs/product.md §2: web,
//! API, SSH, AI; plus logs, terminal and tunnels): each present only when it works for that
//! app and that person.

use sea_orm::EntityTrait;

use crate::connect::ConnectCtx;
use crate::connect::access::Door;
use crate::connect::model::*;
use crate::connect::web::origin;
use crate::db::entity::{apps, devices};
use crate::db::enums::{DeviceStatus, DisplayType};
use crate::apps::model::Manifest;
use crate::error::AppError;

/// The local port a tunnel to `port` listens on by default.
pub fn local_port(port: u16) -> u16 {
    match port {
        22 => 2222,
        p if p < 1024 => 10000 + p,
        p => p,
    }
}

fn tunnel(cx: &ConnectCtx, what: &str, id: &str, port: u16) -> String {
    format!("zmarket tunnel --server {} --key <YOUR_API_KEY> --{what} {id} --port {port} --local 127.0.0.1:{}", cx.public_url, local_port(port))
}

fn ssh(cx: &ConnectCtx, what: &str, id: &str) -> SshDoor {
    SshDoor { tunnel: tunnel(cx, what, id, 22), command: format!("ssh -p {} root@127.0.0.1", local_port(22)) }
}

/// Whether an app's protocol needs a native client (docs/product.md §8 "{product} client not
/// installed, download now"): a remote desktop app whose manifest declares ports besides its web
/// interface (Sunshine's stream, RustDesk's relay), which a browser cannot speak. A remote desktop
/// reached in the browser (Guacamole, a web desktop) has its web port only.
pub fn needs_native_client(display_type: DisplayType, manifest: Option<&Manifest>) -> bool {
    display_type == DisplayType::RemoteDesktop && manifest.is_some_and(|m| m.ports.iter().any(|p| !p.web))
}

pub async fn of_installation(cx: &ConnectCtx, d: &Door) -> Result<ConnectInfo, AppError> {
    let online = d.device_online();
    let running = d.running().is_ok() && online;
    let id = &d.row.id;
    let web = d.web_port().filter(|_| running).map(|_| WebDoor {
        url: format!("{}/api/rmp/v1/apps/{id}/open", cx.public_url),
        origin: origin(cx, id),
    });
    let names: Vec<(u16, String)> = d
        .manifest
        .as_ref()
        .map(|m| m.ports.iter().filter(|p| p.protocol == "tcp").map(|p| (p.container, if p.web { "web".to_string() } else { format!("tcp {}", p.container) })).collect())
        .unwrap_or_default();
    let tcp = if running { names.iter().map(|(port, name)| TcpDoor { port: *port, name: name.clone(), tunnel: tunnel(cx, "app", id.as_str(), *port) }).collect() } else { vec![] };
    let ssh = (running && d.tcp_ports().contains(&22)).then(|| ssh(cx, "app", id.as_str()));
    let api = d.web_port().filter(|_| running).map(|_| ApiDoor { base_url: format!("{}/api/rmp/v1/apps/{id}/api/", cx.public_url) });
    let app = apps::Entity::find_by_id(d.row.app_id.clone()).one(&cx.db).await?;
    let ai = match (&app, &d.device) {
        (Some(a), Some(dev)) if running && a.display_type.is_ai() => Some(AiDoor {
            endpoint: origin(cx, id),
            gpus: crate::devices::gpus::gpus_of(dev).into_iter().take(d.row.gpu_count.max(0) as usize).map(|g| g.name).collect(),
        }),
        _ => None,
    };
    let native_client = app.as_ref().is_some_and(|a| needs_native_client(a.display_type, d.manifest.as_ref()));
    Ok(ConnectInfo { device_online: online, web, terminal: running, logs: online && d.has_container(), tcp, api, ssh, ai, native_client })
}

pub fn of_device(cx: &ConnectCtx, d: &devices::Model) -> DeviceConnect {
    let online = d.status == DeviceStatus::Online && d.channel_instance.is_some();
    DeviceConnect { device_online: online, ssh: online.then(|| ssh(cx, "device", d.id.as_str())) }
}
