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
    /// A snapshot may be taken while the app runs (its data is consistent on disk at any moment);
    /// otherwise the app is stopped for the copy and started again. Written only when true: an
    /// older agent reads every other manifest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live_snapshot: bool,
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
    /// What the port is for, as the operator named it (shown only; agents ignore it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
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
    #[serde(default)]
    pub limits: Limits,
    /// The GPUs the market assigned (their keys: UUIDs, or an older box's indexes): the
    /// container gets exactly these, never a count, never all.
    #[serde(default)]
    pub gpus: Vec<String>,
    /// Start from a snapshot's data (its volumes and the container's changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<crate::protocol::snapshots::RestoreRef>,
}

/// Where the agent downloads an image archive (resumable ranges) and what it must hash to.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct ArchiveRef {
    pub sha256: String,
    pub size: i64,
    /// Path on the market server, e.g. `/api/agent/v1/images/<sha256>`.
    pub path: String,
}

/// Payload of an `app_update` command: the new way the app runs; the agent starts it beside the
/// old container (same data), switches once it is healthy, and otherwise keeps the old one.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct UpdatePayload {
    pub installation_id: String,
    pub manifest: Manifest,
    pub archive: Option<ArchiveRef>,
    /// The catalogue version being installed (and the one it replaces).
    pub version: String,
    pub from_version: String,
    #[serde(default)]
    pub limits: Limits,
    /// The GPUs the installation holds (as in [`InstallPayload::gpus`]).
    #[serde(default)]
    pub gpus: Vec<String>,
}

/// What the container may use on the box: the app's requirements, reserved by the install.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Limits {
    /// Whole CPU cores (0: no limit).
    #[serde(default)]
    pub cpu_cores: i64,
    /// Bytes of memory (0: no limit).
    #[serde(default)]
    pub memory_bytes: i64,
    /// GPUs handed to the container (Docker device requests).
    #[serde(default)]
    pub gpu_count: i64,
}

/// Payload of the other `app_*` commands.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct AppCommandPayload {
    pub installation_id: String,
    /// `app_snapshot`: the snapshot to make; `app_uninstall`: a snapshot to keep of the app's
    /// data before it is removed (an ended rental's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<String>,
}

impl AppCommandPayload {
    pub fn new(installation_id: &str) -> AppCommandPayload {
        AppCommandPayload { installation_id: installation_id.to_string(), snapshot_id: None }
    }
}

/// One installation as the agent reports it in a heartbeat.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct InstallationReport {
    pub id: String,
    pub status: AppStatus,
    #[serde(default)]
    pub progress: Option<i32>,
    /// Why it is in this state (a failure): a code with its figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    /// An older agent's reason in English prose (read as `other`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where the app's web interface answers (running apps with a web port).
    #[serde(default)]
    pub url: Option<String>,
    /// Install phases (downloading, installing, installed) the installation went through since
    /// the last report, oldest first: a phase shorter than a heartbeat still shows in its history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passed: Vec<AppStatus>,
}

// ---- why an installation is in its state ----

/// Why an installation is in its state, as the agent (or the server) saw it: a stable code with
/// its figures, never prose; the server words it in the reader's language
/// (`reasons.rs`, the one table of their texts). Stored as its JSON in `installations.status_reason`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct Reason {
    pub code: ReasonCode,
    /// The container's own exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Docker's HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// `rolled_back`: the version that failed to start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `timed_out`: the state that lasted too long, and for how many seconds it was allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<AppStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secs: Option<u64>,
    /// What Docker or the system said, verbatim (a figure, shown after the reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// `rolled_back`: why the new version failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(no_recursion)]
    pub cause: Option<Box<Reason>>,
}

/// The stable names of `Reason` (docs/api.md `status_reason_code`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    /// The app's container exited (`exit_code`).
    Exited,
    /// It exits again each time Docker restarts it.
    KeepsExiting,
    ContainerGone,
    /// The image is not on the box and could not be had (`image`).
    ImageMissing,
    /// Loading the market's image archive failed (`detail`).
    ArchiveFailed,
    DockerUnavailable,
    /// Docker refused (`status`, `detail`).
    DockerError,
    /// A port the app needs is taken on the box (`port`).
    PortInUse,
    NoSpace,
    /// The app needs GPUs and the box's Docker has no NVIDIA runtime.
    NoGpuRuntime,
    /// Running, but it did not answer its health check in time (`secs`).
    HealthFailed,
    /// An update failed and the previous version runs again (`version`, `cause`).
    RolledBack,
    DeviceOffline,
    /// The box did not finish (`state`) within `secs`.
    TimedOut,
    /// Cancelled by a person while the box was offline.
    Cancelled,
    /// The app's data folders could not be made or removed (`detail`).
    Storage,
    /// A GPU the installation holds is no longer on the box.
    GpuGone,
    /// A snapshot's archive did not hash to its sha256 on arrival, again after one retry.
    ChecksumMismatch,
    /// The snapshot's archive is not on the box (removed by hand, or a box set up again).
    SnapshotMissing,
    /// A reason this server does not know (an older or newer agent): `detail` as it came.
    #[default]
    #[serde(other)]
    Other,
}

impl ReasonCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::Exited => "exited",
            ReasonCode::KeepsExiting => "keeps_exiting",
            ReasonCode::ContainerGone => "container_gone",
            ReasonCode::ImageMissing => "image_missing",
            ReasonCode::ArchiveFailed => "archive_failed",
            ReasonCode::DockerUnavailable => "docker_unavailable",
            ReasonCode::DockerError => "docker_error",
            ReasonCode::PortInUse => "port_in_use",
            ReasonCode::NoSpace => "no_space",
            ReasonCode::NoGpuRuntime => "no_gpu_runtime",
            ReasonCode::HealthFailed => "health_failed",
            ReasonCode::RolledBack => "rolled_back",
            ReasonCode::DeviceOffline => "device_offline",
            ReasonCode::TimedOut => "timed_out",
            ReasonCode::Cancelled => "cancelled",
            ReasonCode::Storage => "storage",
            ReasonCode::GpuGone => "gpu_gone",
            ReasonCode::ChecksumMismatch => "checksum_mismatch",
            ReasonCode::SnapshotMissing => "snapshot_missing",
            ReasonCode::Other => "other",
        }
    }
}

impl Reason {
    pub fn new(code: ReasonCode) -> Reason {
        Reason { code, ..Default::default() }
    }
    pub fn exited(code: ReasonCode, exit_code: i64) -> Reason {
        Reason { code, exit_code: Some(exit_code), ..Default::default() }
    }
    pub fn with_detail(code: ReasonCode, detail: impl Into<String>) -> Reason {
        Reason { code, detail: Some(detail.into()), ..Default::default() }
    }
    /// As stored in a status reason or a failed command's error.
    pub fn stored(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
    /// A stored reason; older rows hold prose (`other` with the text as its detail) or the
    /// server's `zm:timeout:<status>:<secs>`.
    pub fn from_stored(raw: &str) -> Reason {
        if raw.starts_with('{')
            && let Ok(r) = serde_json::from_str::<Reason>(raw)
        {
            return r;
        }
        if let Some(rest) = raw.strip_prefix("zm:timeout:")
            && let Some((status, secs)) = rest.split_once(':')
        {
            return Reason { code: ReasonCode::TimedOut, state: AppStatus::parse(status), secs: secs.parse().ok(), ..Default::default() };
        }
        if raw == "Docker is not available on this device" {
            return Reason::new(ReasonCode::DockerUnavailable);
        }
        Reason::with_detail(ReasonCode::Other, raw.chars().take(1000).collect::<String>())
    }
    /// Sane sizes for what an agent sent.
    pub fn trimmed(mut self) -> Reason {
        let cut = |s: Option<String>, n: usize| s.map(|s| s.chars().take(n).collect::<String>());
        self.detail = cut(self.detail, 500);
        self.image = cut(self.image, 300);
        self.version = cut(self.version, 64);
        self.cause = self.cause.map(|c| Box::new(Reason { cause: None, ..c.trimmed() }));
        self
    }
}
