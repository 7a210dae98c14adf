//! The apps part of the agent protocol: how an app runs (its install manifest), the payloads of
//! the `app_*` commands and the installation reports of a heartbeat.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

// ---- the install manifest (assets/catalogue/manifests.json) ----

/// How an app runs as a container: like the compose file of an app store entry.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct VolumeSpec {
    pub name: String,
    /// Absolute path inside the container.
    pub path: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Health {
    pub path: String,
}

// ---- the agent protocol of apps ----

/// Payload of an `app_install` command.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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
    pub restore: Option<RestoreRef>,
}

/// In an `app_install`: the new installation starts from this snapshot's data. The agent uses its
/// own copy when it has one, else downloads `path` from the market (waiting while the market is
/// still receiving it from the box that made it), and checks the sha256 either way.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct RestoreRef {
    pub snapshot_id: String,
    pub sha256: String,
    pub size: i64,
    /// e.g. `/api/agent/v1/snapshots/<id>/data`.
    pub path: String,
}

/// Where the agent downloads an image archive (resumable ranges) and what it must hash to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ArchiveRef {
    pub sha256: String,
    pub size: i64,
    /// Path on the market server, e.g. `/api/agent/v1/images/<sha256>`.
    pub path: String,
}

/// Payload of an `app_update` command: the new way the app runs; the agent starts it beside the
/// old container (same data), switches once it is healthy, and otherwise keeps the old one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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
    #[cfg_attr(feature = "schema", schema(no_recursion))]
    pub cause: Option<Box<Reason>>,
}

/// The stable names of `Reason` (docs/api.md `status_reason_code`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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

// ---- an installation's state ----

/// An installation's status: every label of docs/product.md §4. Transitions: `apps::lifecycle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AppStatus {
    Preparing,
    Downloading,
    Installing,
    Installed,
    Starting,
    Running,
    Stopping,
    Stopped,
    Restarting,
    Suspending,
    Suspended,
    Resuming,
    Snapshotting,
    Uninstalling,
    Deleting,
    ShuttingDown,
    /// A new version starting beside the old one (which keeps running until the switch).
    Updating,
    Failed,
    InstallFailed,
    UninstallFailed,
    RentFailed,
    NotInstall,
}

impl AppStatus {
    pub const ALL: [AppStatus; 22] = {
        use AppStatus as S;
        [
            S::Preparing, S::Downloading, S::Installing, S::Installed, S::Starting, S::Running, S::Stopping, S::Stopped,
            S::Restarting, S::Suspending, S::Suspended, S::Resuming, S::Snapshotting, S::Uninstalling, S::Deleting,
            S::ShuttingDown, S::Updating, S::Failed, S::InstallFailed, S::UninstallFailed, S::RentFailed, S::NotInstall,
        ]
    };

    /// Its name on the wire (and in `installations.status`).
    pub fn as_str(self) -> &'static str {
        self.row().0
    }
    pub fn parse(raw: &str) -> Option<AppStatus> {
        AppStatus::ALL.into_iter().find(|s| s.as_str() == raw)
    }
    /// The status as a sentence names it, in English and in Chinese (docs/product.md §4): the
    /// market's labels (`db::enums::AppStatus::words`) and the reasons' texts (`reasons.rs`).
    pub fn words(self) -> (&'static str, &'static str) {
        let (_, en, zh) = self.row();
        (en, zh)
    }
    fn row(self) -> (&'static str, &'static str, &'static str) {
        use AppStatus as S;
        match self {
            S::Preparing => ("preparing", "preparing", "准备中"),
            S::Downloading => ("downloading", "downloading", "下载中"),
            S::Installing => ("installing", "installing", "安装中"),
            S::Installed => ("installed", "installed", "已安装"),
            S::Starting => ("starting", "starting", "启动中"),
            S::Running => ("running", "running", "运行中"),
            S::Stopping => ("stopping", "stopping", "停止中"),
            S::Stopped => ("stopped", "stopped", "已停止"),
            S::Restarting => ("restarting", "restarting", "重启中"),
            S::Suspending => ("suspending", "suspending", "暂停中"),
            S::Suspended => ("suspended", "suspended", "已暂停"),
            S::Resuming => ("resuming", "resuming", "恢复中"),
            S::Snapshotting => ("snapshotting", "snapshotting", "快照中"),
            S::Uninstalling => ("uninstalling", "uninstalling", "卸载中"),
            S::Deleting => ("deleting", "deleting", "删除中"),
            S::ShuttingDown => ("shutting_down", "shutting down", "关闭中"),
            S::Updating => ("updating", "updating", "更新中"),
            S::Failed => ("failed", "failed", "失败"),
            S::InstallFailed => ("install_failed", "install failed", "安装失败"),
            S::UninstallFailed => ("uninstall_failed", "uninstall failed", "卸载失败"),
            S::RentFailed => ("rent_failed", "rent failed", "租用失败"),
            S::NotInstall => ("not_install", "not install", "未安装"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_named_as_serde_names_them() {
        for st in AppStatus::ALL {
            assert_eq!(serde_json::to_value(st).unwrap(), serde_json::Value::String(st.as_str().into()));
            assert_eq!(AppStatus::parse(st.as_str()), Some(st));
        }
        assert_eq!(AppStatus::parse("teleporting"), None);
    }

    #[test]
    fn stored_reasons_of_every_age_are_read() {
        let r = Reason::exited(ReasonCode::Exited, 137);
        assert_eq!(Reason::from_stored(&r.stored()), r);
        let t = Reason::from_stored("zm:timeout:installing:600");
        assert_eq!((t.code, t.state, t.secs), (ReasonCode::TimedOut, Some(AppStatus::Installing), Some(600)));
        assert_eq!(Reason::from_stored("Docker is not available on this device").code, ReasonCode::DockerUnavailable);
        assert_eq!(Reason::from_stored("it broke").detail.as_deref(), Some("it broke"));
        let newer: Reason = serde_json::from_str(r#"{"code":"quantum_flux","detail":"x"}"#).unwrap();
        assert_eq!(newer.code, ReasonCode::Other);
    }
}
