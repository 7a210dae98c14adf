//! The apps part of the agent protocol: how an app runs (its install manifest), the payloads of
//! the `app_*` commands and the installation reports of a heartbeat.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use crate::db::enums::AppStatus;

// ---- the install manifest (assets/catalogue/manifests.json) ----

/// How an app runs as a container: like the compose file of an app store entry.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Image reference with its tag, e.g. `grafana/grafana:11.5.0`.
    pub image: String,
    #[serde(default)]
    pub ports: Vec<PortSpec>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Kept under the agent's state directory, removed with the app.
    #[serde(default)]
    pub volumes: Vec<VolumeSpec>,
    /// Whether the app asks for the box's GPUs (given when the box has them).
    #[serde(default)]
    pub gpu: bool,
    /// An HTTP path on the web port that answers once the app is up.
    #[serde(default)]
    pub health: Option<Health>,
    /// Replaces the image's command.
    #[serde(default)]
    pub command: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PortSpec {
    pub container: u16,
    /// tcp or udp
    #[serde(default = "tcp")]
    pub protocol: String,
    /// The port that serves the app's web interface (at most one).
    #[serde(default)]
    pub web: bool,
    /// http (default) or https, for the web port.
    #[serde(default)]
    pub scheme: Option<String>,
}

fn tcp() -> String {
    "tcp".into()
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VolumeSpec {
    pub name: String,
    /// Absolute path inside the container.
    pub path: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Health {
    pub path: String,
}

// ---- the agent protocol of apps ----

/// Payload of an `app_install` command.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct InstallPayload {
    pub installation_id: String,
    pub app_id: String,
    pub manifest: Manifest,
    /// An archive of the image held by the market server, when it has one.
    pub archive: Option<ArchiveRef>,
}

/// Where the agent downloads an image archive (resumable ranges) and what it must hash to.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct ArchiveRef {
    pub sha256: String,
    pub size: i64,
    /// Path on the market server, e.g. `/api/agent/v1/images/<sha256>`.
    pub path: String,
}

/// Payload of the other `app_*` commands.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct AppCommandPayload {
    pub installation_id: String,
}

/// One installation as the agent reports it in a heartbeat.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct InstallationReport {
    pub id: String,
    pub status: AppStatus,
    #[serde(default)]
    pub progress: Option<i32>,
    #[serde(default)]
    pub error: Option<String>,
    /// Where the app's web interface answers (running apps with a web port).
    #[serde(default)]
    pub url: Option<String>,
    /// Install phases (downloading, installing, installed) the installation went through since
    /// the last report, oldest first: a phase shorter than a heartbeat still shows in its history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passed: Vec<AppStatus>,
}
