//! The heartbeat protocol between the agent and the market: registration, heartbeats, commands
//! and their acknowledgements. Shared by the server (src/devices/protocol.rs) and the agent
//! program (src/agent/); both name these types, never their JSON.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::db::enums::{CommandKind, SharingMode};
use crate::error::{AppError, Msg};
use crate::protocol::apps::{AppCommandPayload, InstallPayload, InstallationReport, UpdatePayload};

pub use crate::protocol::gpus::{Gpu, GpuUse, MAX_GPU_NAME, MAX_GPUS, VerificationReport};
/// Largest agent registration body.
pub const AGENT_REGISTER_BODY_LIMIT: usize = 8 * 1024;

/// What a machine has.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, Default, PartialEq)]
pub struct Spec {
    pub cpu_cores: i64,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    #[serde(default)]
    pub gpus: Vec<Gpu>,
    /// Whether the box's Docker can hand GPUs to containers (the NVIDIA runtime); `None` from an
    /// agent that does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_runtime: Option<bool>,
}

impl Spec {
    /// Sane bounds for what an agent reports (a value outside is refused as invalid input).
    pub fn check(&self) -> Result<(), AppError> {
        if !(0..=65_536).contains(&self.cpu_cores) {
            return Err(AppError::invalid("spec.cpu_cores", Msg::InvalidField("spec.cpu_cores")));
        }
        if self.memory_bytes < 0 || self.disk_bytes < 0 {
            return Err(AppError::invalid("spec", Msg::InvalidField("spec")));
        }
        crate::protocol::gpus::check_spec(&self.gpus)
    }
}

/// How busy a machine is now. An agent older or newer than this server may leave a field out
/// (it reads as 0) or send fields this server does not know (ignored).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, Default, PartialEq)]
#[serde(default)]
pub struct Metrics {
    pub cpu_percent: f64,
    pub memory_used_bytes: i64,
    pub disk_used_bytes: i64,
    /// How busy each GPU is (by UUID); empty from a box without GPUs or an older agent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<GpuUse>,
}

impl Metrics {
    /// The GPU figures' bounds (crate::protocol::gpus::check_use); the others are clamped.
    pub fn check(&self) -> Result<(), AppError> {
        crate::protocol::gpus::check_use(&self.gpus)
    }
}

// ---- the agent protocol ----

#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = AgentRegisterRequest)]
pub struct RegisterRequest {
    /// Z-BOX, P-BOX or server group
    #[serde(rename = "type")]
    pub device_type: Option<String>,
    pub name: Option<String>,
    pub spec: Option<Spec>,
    /// Required when the server sets `devices.registration_token` (a closed market).
    pub registration_token: Option<String>,
    /// The pairing code the box proposes (8 characters of the device-id alphabet): the bind
    /// page that made it for `/install.sh?code=` then finds the box by it (issue 41). Absent:
    /// the market makes one.
    pub pairing_code: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = AgentRegisterResponse)]
pub struct RegisterResponse {
    pub device_id: String,
    /// Shown once: keep it; it authenticates every heartbeat.
    pub device_secret: String,
    /// Typed by a person at /devices/link.
    pub pairing_code: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Ack {
    pub id: String,
    pub ok: bool,
    /// A failure in English (logs; Z-CLOUD provisioners).
    #[serde(default)]
    pub error: Option<String>,
    /// An app command's failure as a code with its figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<super::apps::Reason>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct HeartbeatRequest {
    pub spec: Option<Spec>,
    pub metrics: Option<Metrics>,
    /// Apps installed on the device, as the agent sees them.
    #[serde(default)]
    pub installations: Vec<InstallationReport>,
    #[serde(default)]
    pub acks: Vec<Ack>,
    /// What a `gpu_verify` command measured, sent once with the beat after it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<VerificationReport>,
    /// Snapshots that moved on since the last beat the market accepted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshots: Vec<crate::protocol::snapshots::SnapshotReport>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Settings {
    pub name: String,
    pub sharing_mode: SharingMode,
    pub rentable: bool,
    pub price_per_hour: i64,
    /// Whether a person has bound the device yet.
    pub bound: bool,
    /// Seconds until the next heartbeat.
    pub heartbeat_secs: u64,
}

/// A command as it travels: `{id, kind, payload}`. The kind stays a string on the wire, so an
/// agent meets a kind it does not know as a failed command, not as a heartbeat it cannot read;
/// both sides build and read it through [`CommandBody`].
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Command {
    pub id: String,
    /// A [`CommandKind`].
    pub kind: String,
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
}

/// What a command asks, typed: the kind with its payload.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", content = "payload", rename_all = "snake_case")]
pub enum CommandBody {
    ZcloudCreate(ZcloudMachine),
    ZcloudDelete(ZcloudRef),
    AppInstall(InstallPayload),
    AppStart(AppCommandPayload),
    AppStop(AppCommandPayload),
    AppRestart(AppCommandPayload),
    AppSuspend(AppCommandPayload),
    AppResume(AppCommandPayload),
    AppSnapshot(AppCommandPayload),
    AppUninstall(AppCommandPayload),
    AppUpdate(UpdatePayload),
    GpuVerify(crate::protocol::gpus::VerifyPayload),
    SnapshotUpload(crate::protocol::snapshots::SnapshotRef),
    SnapshotDelete(crate::protocol::snapshots::SnapshotRef),
}

/// A Z-CLOUD machine to create on a host (given to the host's provisioner on its stdin).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ZcloudMachine {
    pub machine_id: String,
    pub name: String,
    pub cpu_cores: i64,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    pub gpu_count: i64,
    pub gpu_model: String,
    pub passthrough: bool,
    /// The host's GPUs (their keys: UUIDs) the machine is given, one holder each.
    #[serde(default)]
    pub gpus: Vec<String>,
}

/// The Z-CLOUD machine a delete names.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ZcloudRef {
    pub machine_id: String,
}

impl CommandBody {
    pub fn kind(&self) -> CommandKind {
        match self {
            CommandBody::ZcloudCreate(_) => CommandKind::ZcloudCreate,
            CommandBody::ZcloudDelete(_) => CommandKind::ZcloudDelete,
            CommandBody::AppInstall(_) => CommandKind::AppInstall,
            CommandBody::AppStart(_) => CommandKind::AppStart,
            CommandBody::AppStop(_) => CommandKind::AppStop,
            CommandBody::AppRestart(_) => CommandKind::AppRestart,
            CommandBody::AppSuspend(_) => CommandKind::AppSuspend,
            CommandBody::AppResume(_) => CommandKind::AppResume,
            CommandBody::AppSnapshot(_) => CommandKind::AppSnapshot,
            CommandBody::AppUninstall(_) => CommandKind::AppUninstall,
            CommandBody::AppUpdate(_) => CommandKind::AppUpdate,
            CommandBody::GpuVerify(_) => CommandKind::GpuVerify,
            CommandBody::SnapshotUpload(_) => CommandKind::SnapshotUpload,
            CommandBody::SnapshotDelete(_) => CommandKind::SnapshotDelete,
        }
    }

    /// An `app_*` command other than an install, about `installation`.
    pub fn app(kind: CommandKind, installation: &str) -> Option<CommandBody> {
        let p = AppCommandPayload::new(installation);
        Some(match kind {
            CommandKind::AppStart => CommandBody::AppStart(p),
            CommandKind::AppStop => CommandBody::AppStop(p),
            CommandKind::AppRestart => CommandBody::AppRestart(p),
            CommandKind::AppSuspend => CommandBody::AppSuspend(p),
            CommandKind::AppResume => CommandBody::AppResume(p),
            CommandKind::AppSnapshot => CommandBody::AppSnapshot(p),
            CommandKind::AppUninstall => CommandBody::AppUninstall(p),
            CommandKind::AppInstall
            | CommandKind::AppUpdate
            | CommandKind::ZcloudCreate
            | CommandKind::ZcloudDelete
            | CommandKind::GpuVerify
            | CommandKind::SnapshotUpload
            | CommandKind::SnapshotDelete => return None,
        })
    }

    /// The payload as stored with the queued command (`device_commands.payload`).
    pub fn payload_text(&self) -> String {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(mut m)) => m.remove("payload").map(|p| p.to_string()).unwrap_or_else(|| "{}".into()),
            _ => "{}".into(),
        }
    }

    /// The installation an `app_*` command is about.
    pub fn installation(&self) -> Option<&str> {
        match self {
            CommandBody::AppInstall(p) => Some(&p.installation_id),
            CommandBody::AppUpdate(p) => Some(&p.installation_id),
            CommandBody::AppStart(p)
            | CommandBody::AppStop(p)
            | CommandBody::AppRestart(p)
            | CommandBody::AppSuspend(p)
            | CommandBody::AppResume(p)
            | CommandBody::AppSnapshot(p)
            | CommandBody::AppUninstall(p) => Some(&p.installation_id),
            CommandBody::ZcloudCreate(_)
            | CommandBody::ZcloudDelete(_)
            | CommandBody::GpuVerify(_)
            | CommandBody::SnapshotUpload(_)
            | CommandBody::SnapshotDelete(_) => None,
        }
    }
}

impl CommandBody {
    /// A queued command's body from its stored kind and payload (`None` when unreadable).
    pub fn from_stored(kind: CommandKind, payload: &str) -> Option<CommandBody> {
        Command::stored(String::new(), kind, payload).body().ok()
    }
}

impl Command {
    /// A queued command as sent: its stored kind and payload text.
    pub fn stored(id: String, kind: CommandKind, payload: &str) -> Command {
        use sea_orm::ActiveEnum;
        Command { id, kind: kind.to_value(), payload: serde_json::from_str(payload).unwrap_or(serde_json::json!({})) }
    }

    /// What it asks; an error names a kind or payload this agent cannot read.
    pub fn body(&self) -> Result<CommandBody, String> {
        serde_json::from_value(serde_json::json!({"kind": self.kind, "payload": self.payload}))
            .map_err(|e| format!("this agent does not support the command {} ({e})", self.kind))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct HeartbeatResponse {
    pub settings: Settings,
    pub commands: Vec<Command>,
}

