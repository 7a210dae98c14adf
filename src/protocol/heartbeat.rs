//! The heartbeat protocol between the agent and the market: registration, heartbeats, commands
//! and their acknowledgements. Shared by the market (src/devices/agent_api.rs) and the agent
//! (src/agent/); both name these types, never their JSON.

use serde::{Deserialize, Serialize};

use crate::Invalid;
use crate::apps::{AppCommandPayload, InstallPayload, InstallationReport, UpdatePayload};

pub use crate::gpus::{Gpu, GpuUse, MAX_GPU_NAME, MAX_GPUS, VerificationReport};
/// Largest agent registration body.
pub const AGENT_REGISTER_BODY_LIMIT: usize = 8 * 1024;

/// What a machine has.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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
    pub fn check(&self) -> Result<(), Invalid> {
        if !(0..=65_536).contains(&self.cpu_cores) {
            return Err(Invalid::new("spec.cpu_cores", "outside 0-65536"));
        }
        if self.memory_bytes < 0 || self.disk_bytes < 0 {
            return Err(Invalid::new("spec", "negative memory or disk"));
        }
        crate::gpus::check_spec(&self.gpus)
    }
}

/// How busy a machine is now. An agent older or newer than this server may leave a field out
/// (it reads as 0) or send fields this server does not know (ignored).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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
    /// The GPU figures' bounds (crate::gpus::check_use); the others are clamped.
    pub fn check(&self) -> Result<(), Invalid> {
        crate::gpus::check_use(&self.gpus)
    }
}

// ---- the agent protocol ----

/// The types an agent may register as, as the market names them (Z-CLOUD machines are made by
/// the market); an agent may type them in any case.
pub const AGENT_TYPES: [&str; 3] = ["Z-BOX", "P-BOX", "server group"];

/// The type `raw` names among [`AGENT_TYPES`], whatever its case and surrounding spaces.
pub fn agent_type(raw: &str) -> Option<&'static str> {
    AGENT_TYPES.into_iter().find(|t| t.eq_ignore_ascii_case(raw.trim()))
}

// What an agent registers with (`POST /api/agent/v1/register`): written by the agent, read by
// the market. Every field is sent, `null` when the agent has nothing to say. (A plain comment:
// the OpenAPI document describes the type as it did before the agent wrote it.)
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", schema(as = AgentRegisterRequest))]
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

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", schema(as = AgentRegisterResponse))]
pub struct RegisterResponse {
    pub device_id: String,
    /// Shown once: keep it; it authenticates every heartbeat.
    pub device_secret: String,
    /// Typed by a person at /devices/link.
    pub pairing_code: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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
    pub snapshots: Vec<crate::snapshots::SnapshotReport>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Command {
    pub id: String,
    /// A [`CommandKind`].
    pub kind: String,
    #[cfg_attr(feature = "schema", schema(value_type = Object))]
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
    GpuVerify(crate::gpus::VerifyPayload),
    SnapshotUpload(crate::snapshots::SnapshotRef),
    SnapshotDelete(crate::snapshots::SnapshotRef),
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
        Command { id, kind: kind.as_str().to_string(), payload: serde_json::from_str(payload).unwrap_or(serde_json::json!({})) }
    }

    /// What it asks; an error names a kind or payload this agent cannot read.
    pub fn body(&self) -> Result<CommandBody, String> {
        serde_json::from_value(serde_json::json!({"kind": self.kind, "payload": self.payload}))
            .map_err(|e| format!("this agent does not support the command {} ({e})", self.kind))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct HeartbeatResponse {
    pub settings: Settings,
    pub commands: Vec<Command>,
}


// ---- the wire's states and kinds (the market stores its own, mapped in `db::enums::wire`) ----

/// How an owner shares a device: manual, autopilot (rented whenever idle, for max profit) or
/// dedicated (self-used, never rented).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SharingMode {
    Manual,
    Autopilot,
    Dedicated,
}

impl SharingMode {
    pub const ALL: [SharingMode; 3] = [SharingMode::Manual, SharingMode::Autopilot, SharingMode::Dedicated];
}

/// What a command asks a device's agent to do (a [`Command`]'s `kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandKind {
    ZcloudCreate,
    ZcloudDelete,
    AppInstall,
    AppStart,
    AppStop,
    AppRestart,
    AppSuspend,
    AppResume,
    AppSnapshot,
    AppUninstall,
    AppUpdate,
    /// Measure the box's GPUs (docs/gpus.md).
    GpuVerify,
    /// Copy a snapshot's archive to the market (docs/data.md).
    SnapshotUpload,
    /// Remove a snapshot's archive from the box.
    SnapshotDelete,
}

impl CommandKind {
    pub const ALL: [CommandKind; 14] = [
        CommandKind::ZcloudCreate,
        CommandKind::ZcloudDelete,
        CommandKind::AppInstall,
        CommandKind::AppStart,
        CommandKind::AppStop,
        CommandKind::AppRestart,
        CommandKind::AppSuspend,
        CommandKind::AppResume,
        CommandKind::AppSnapshot,
        CommandKind::AppUninstall,
        CommandKind::AppUpdate,
        CommandKind::GpuVerify,
        CommandKind::SnapshotUpload,
        CommandKind::SnapshotDelete,
    ];

    /// Its name on the wire (and in `device_commands.kind`).
    pub fn as_str(self) -> &'static str {
        match self {
            CommandKind::ZcloudCreate => "zcloud_create",
            CommandKind::ZcloudDelete => "zcloud_delete",
            CommandKind::AppInstall => "app_install",
            CommandKind::AppStart => "app_start",
            CommandKind::AppStop => "app_stop",
            CommandKind::AppRestart => "app_restart",
            CommandKind::AppSuspend => "app_suspend",
            CommandKind::AppResume => "app_resume",
            CommandKind::AppSnapshot => "app_snapshot",
            CommandKind::AppUninstall => "app_uninstall",
            CommandKind::AppUpdate => "app_update",
            CommandKind::GpuVerify => "gpu_verify",
            CommandKind::SnapshotUpload => "snapshot_upload",
            CommandKind::SnapshotDelete => "snapshot_delete",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_kinds_are_named_as_serde_names_them() {
        for k in CommandKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), serde_json::Value::String(k.as_str().into()));
        }
    }

    #[test]
    fn a_kind_this_agent_does_not_know_is_a_failed_command() {
        let c = Command { id: "c".into(), kind: "app_teleport".into(), payload: serde_json::json!({}) };
        assert!(c.body().unwrap_err().contains("app_teleport"));
        let stored = Command::stored("c".into(), CommandKind::AppStop, r#"{"installation_id":"i"}"#);
        assert_eq!(stored.body().unwrap(), CommandBody::AppStop(AppCommandPayload::new("i")));
    }
}
