//! What the connect API answers and the queries it takes.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::{AppError, Msg};
use zmarket_protocol::frames::LogLine;

/// What the caller may open of an installation; each door is present only when it works.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConnectInfo {
    pub device_online: bool,
    pub web: Option<WebDoor>,
    pub terminal: bool,
    pub logs: bool,
    pub tcp: Vec<TcpDoor>,
    pub api: Option<ApiDoor>,
    pub ssh: Option<SshDoor>,
    pub ai: Option<AiDoor>,
    /// The app's protocol needs a native client (a remote desktop app with ports besides its web
    /// one, doors::needs_native_client): the page shows its tunnels and where the operator's
    /// client downloads are.
    pub native_client: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebDoor {
    /// `GET` it (with the caller's token) for a one-time link to the app's own origin.
    pub url: String,
    /// The app's origin.
    pub origin: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TcpDoor {
    pub port: u16,
    pub name: String,
    /// The command that opens a local port carrying it.
    pub tunnel: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ApiDoor {
    pub base_url: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SshDoor {
    pub tunnel: String,
    pub command: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AiDoor {
    pub endpoint: String,
    pub gpus: Vec<String>,
}

/// What the owner may open of a device.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeviceConnect {
    pub device_online: bool,
    pub ssh: Option<SshDoor>,
}

/// A one-time link to the app's own origin.
#[derive(Debug, Serialize, ToSchema)]
pub struct OpenLink {
    pub url: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LogLines {
    #[schema(value_type = Vec<Object>)]
    pub lines: Vec<LogLine>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LogsQuery {
    /// Lines from the end (default 200, at most 5,000).
    pub tail: Option<u32>,
    /// `1`: go on sending new lines as Server-Sent Events.
    pub follow: Option<String>,
}

impl LogsQuery {
    pub fn tail(&self) -> Result<u32, AppError> {
        match self.tail {
            None => Ok(200),
            Some(n) if n <= 5000 => Ok(n),
            Some(_) => Err(AppError::invalid("tail", Msg::InvalidField("tail"))),
        }
    }
    pub fn follow(&self) -> bool {
        matches!(self.follow.as_deref(), Some("1" | "true"))
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PortQuery {
    pub port: Option<String>,
}

impl PortQuery {
    pub fn port(&self) -> Result<u16, AppError> {
        self.port
            .as_deref()
            .and_then(|p| p.trim().parse::<u16>().ok())
            .filter(|p| *p > 0)
            .ok_or(AppError::invalid("port", Msg::InvalidField("port")))
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TerminalQuery {
    pub cols: Option<u16>,
    pub rows: Option<u16>,
}

impl TerminalQuery {
    pub fn size(&self) -> (u16, u16) {
        (self.cols.unwrap_or(80).clamp(10, 500), self.rows.unwrap_or(24).clamp(4, 200))
    }
}
