//! Device request/response types and the validated newtypes built at the edge.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::{AppError, Msg};
use crate::http::Checked;

pub use crate::ids::{ALPHABET, DeviceId};
use crate::ids::random_chars;

/// A pairing code: 8 characters of [`ALPHABET`]; typed codes are trimmed, upper-cased, and may
/// contain spaces or dashes.
pub struct PairingCode(String);

impl PairingCode {
    pub const LEN: usize = 8;
    pub fn new_random() -> PairingCode {
        PairingCode(random_chars(Self::LEN))
    }
    /// `None` for anything that cannot be a code (answered like a wrong code).
    pub fn parse(raw: Option<&str>) -> Option<PairingCode> {
        let code: String =
            raw.unwrap_or("").chars().filter(|c| !c.is_whitespace() && *c != '-').collect::<String>().to_ascii_uppercase();
        (code.len() == Self::LEN && code.bytes().all(|b| ALPHABET.contains(&b))).then_some(PairingCode(code))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

pub use crate::db::enums::{CommandKind, CommandStatus, DeviceStatus, DeviceType, SharingMode, ZcloudEndReason, ZcloudRentalStatus};

/// Largest price an owner may ask: 1,000,000 coins an hour.
pub const MAX_PRICE: i64 = 100_000_000;

pub use zmarket_protocol::heartbeat::*;

/// Largest heartbeat body (`POST /api/agent/v1/heartbeat`): a beat carrying every cap below is
/// well under it; the general body limit (megabytes) is for people's uploads, not agents.
pub const HEARTBEAT_BODY_LIMIT: usize = 256 * 1024;
/// At most this many acknowledgements are read from one beat (duplicates counted once); the
/// agent acknowledges again a command it is sent again, so the rest wait for the next beat.
pub const MAX_ACKS: usize = 256;
/// At most this many installation reports are read from one beat (duplicates counted once).
pub const MAX_INSTALLATIONS: usize = 256;
/// At most this many passed phases are read from one installation report.
pub const MAX_PASSED: usize = 8;
/// Heartbeat write transactions one instance runs at once: agents never hold more than this
/// many of the database's writers (SQLite has one), so people's writes always get their turn.
pub const AGENT_WRITERS: usize = 1;
/// Longest pause after a beat before the next one writes (the pause is as long as the beat).
pub const MAX_AGENT_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);


#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Location {
    pub lat: f64,
    pub lng: f64,
}

impl Location {
    pub fn check(lat: Option<f64>, lng: Option<f64>) -> Result<Location, AppError> {
        let lat = lat.filter(|v| v.is_finite() && (-90.0..=90.0).contains(v)).ok_or(AppError::invalid("lat", Msg::InvalidField("lat")))?;
        let lng =
            lng.filter(|v| v.is_finite() && (-180.0..=180.0).contains(v)).ok_or(AppError::invalid("lng", Msg::InvalidField("lng")))?;
        Ok(Location { lat, lng })
    }
}

/// A device as its owner sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Device {
    pub id: String,
    pub name: String,
    /// Z-BOX, P-BOX, Z-CLOUD or server group
    #[serde(rename = "type")]
    pub device_type: DeviceType,
    /// online, offline, creating or failed
    pub status: DeviceStatus,
    /// Why a Z-CLOUD machine failed.
    pub status_reason: Option<String>,
    pub sharing_mode: SharingMode,
    pub rentable: bool,
    /// coin cents per hour
    pub price_per_hour: i64,
    pub spec: Spec,
    pub metrics: Option<Metrics>,
    pub location: Option<Location>,
    /// "user" or "company"
    pub owner_kind: String,
    /// Z-CLOUD: the server-group device it runs on.
    pub host_id: Option<String>,
    pub last_seen_at: Option<chrono::DateTime<chrono::Utc>>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// How many of its GPUs no installation or Z-CLOUD machine holds.
    pub gpus_free: i64,
    /// The last verification of its GPUs (null: never verified).
    pub verification: Option<Verification>,
}

// ---- GPUs (docs/gpus.md) ----

/// A GPU an installation holds, as its page shows it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct HeldGpu {
    /// The GPU's UUID (an older agent's GPU: its index).
    pub uuid: String,
    pub name: String,
    /// bytes
    pub vram: i64,
}

/// The last verification of a box's GPUs.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Verification {
    pub at: chrono::DateTime<chrono::Utc>,
    pub gpus: Vec<zmarket_protocol::gpus::GpuCheck>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeviceFilter {
    /// Z-BOX, P-BOX, Z-CLOUD or server group
    #[serde(rename = "type")]
    #[param(inline, value_type = Option<DeviceType>)]
    pub device_type: Option<String>,
    /// online, offline (also lists unknown), creating or failed
    #[param(inline, value_type = Option<DeviceStatusFilter>)]
    pub status: Option<String>,
}

/// The values of the device list's `status` filter, for the OpenAPI document (`unknown` is
/// listed as offline, so it is not one); `DeviceStatus::parse_filter` reads them.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum DeviceStatusFilter {
    Online,
    Offline,
    Creating,
    Failed,
}

/// `GET /install.sh?code=`: the pairing code the bind page made (issue 41).
#[derive(Debug, Deserialize)]
pub struct InstallQuery {
    pub code: Option<String>,
}

/// `GET /api/ebs/v2/devices/pending?pairing_code=`: the bind page waiting for the box it gave
/// a code to (issue 41).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PendingQuery {
    pub pairing_code: Option<String>,
}

/// A box registered with that code in the last hour and bound to nobody yet.
#[derive(Debug, Serialize, ToSchema)]
pub struct PendingDevice {
    pub device_id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub device_type: DeviceType,
    pub registered_at: chrono::DateTime<chrono::Utc>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct LinkRequest {
    pub device_id: Option<String>,
    pub pairing_code: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct SharingRequest {
    /// manual, autopilot or dedicated
    pub mode: Option<String>,
    pub rentable: Option<bool>,
    /// coin cents per hour
    pub price_per_hour: Option<i64>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct LocationRequest {
    pub lat: Option<f64>,
    pub lng: Option<f64>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct RenameRequest {
    pub name: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ZcloudRequest {
    pub name: Option<String>,
    pub cpu_cores: Option<i64>,
    pub memory_bytes: Option<i64>,
    pub disk_bytes: Option<i64>,
    #[serde(default)]
    pub gpu_count: Option<i64>,
    #[serde(default)]
    pub gpu_model: Option<String>,
    #[serde(default)]
    pub passthrough: Option<bool>,
    /// On another owner's host (a rental): the hours held from the wallet, 1-720 (default 24).
    /// On an own host it is free and this is ignored.
    #[serde(default)]
    pub hours: Option<i64>,
}

/// A Z-CLOUD machine another owner runs on this host, as the host's owner sees it
/// (`GET /api/ebs/v2/devices/{id}/zcloud-rentals`).
#[derive(Debug, Serialize, ToSchema)]
pub struct ZcloudRental {
    /// The machine's device id.
    pub machine_id: String,
    pub name: String,
    /// `user` or `company`: who rents it.
    pub renter_kind: String,
    pub status: ZcloudRentalStatus,
    /// Coin cents an hour: the host's price scaled by the largest share of it the machine takes.
    pub price_per_hour: i64,
    pub hours: i64,
    pub billed: i64,
    pub cpu_cores: i64,
    pub memory_bytes: i64,
    pub gpu_count: i64,
    pub gpu_model: String,
    pub started_at: chrono::DateTime<chrono::Utc>,
    pub ends_at: chrono::DateTime<chrono::Utc>,
    /// `ending`: when the machine is stopped.
    pub stop_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// What one server-group host has left for Z-CLOUD machines.
#[derive(Debug, Serialize, ToSchema)]
pub struct HostFree {
    pub cpu_cores: i64,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    /// Free GPUs by model (passthrough-capable ones counted separately).
    pub gpus: Vec<GpuFree>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct GpuFree {
    pub name: String,
    pub passthrough: bool,
    pub count: i64,
}

/// Device names: trimmed, 1-64 characters.
pub fn device_name(field: &'static str, raw: Option<&str>) -> Result<String, AppError> {
    let name = raw.map(str::trim).unwrap_or("");
    let n = name.chars().count();
    if n == 0 || n > 64 || name.chars().any(char::is_control) {
        return Err(AppError::invalid(field, Msg::InvalidField(field)));
    }
    Ok(name.to_string())
}

// ---- nearby ----

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct NearbyQuery {
    pub lat: Option<f64>,
    pub lng: Option<f64>,
    pub radius_km: Option<f64>,
    pub offset: Option<i64>,
    pub limit: Option<i64>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct NearbyPoint {
    pub lat: Option<f64>,
    pub lng: Option<f64>,
}

/// A shared device as a visitor sees it: coordinates coarsened to about 1 km.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct NearbyDevice {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub device_type: DeviceType,
    pub status: DeviceStatus,
    pub distance_km: i64,
    pub lat: f64,
    pub lng: f64,
    pub price_per_hour: i64,
    /// What the box has (as its agent last reported): cores and bytes.
    pub cpu_cores: i64,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    pub gpus: Vec<Gpu>,
    /// How many of its GPUs nobody holds now.
    pub gpus_free: i64,
    /// Whether its GPUs passed their last verification (null: never verified).
    pub verified: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub apps: Option<Vec<serde_json::Value>>,
}

// ---- checked requests (built at the edge by `http::Valid`) ----

/// An agent's registration: a type an agent may register as, a name, a sane spec.
pub struct AgentRegistration {
    pub device_type: DeviceType,
    pub name: String,
    pub spec: Spec,
    pub registration_token: Option<String>,
    /// The code the box proposes, checked (issue 41).
    pub pairing_code: Option<PairingCode>,
}

impl Checked for AgentRegistration {
    type Body = RegisterRequest;
    fn check(req: RegisterRequest) -> Result<Self, AppError> {
        // The types the protocol lets an agent register as (stored as the market's DeviceType).
        let device_type = zmarket_protocol::heartbeat::agent_type(req.device_type.as_deref().unwrap_or(""))
            .and_then(DeviceType::parse)
            .ok_or(AppError::invalid("type", Msg::InvalidField("type")))?;
        let name = device_name("name", req.name.as_deref())?;
        let spec = req.spec.ok_or(AppError::invalid("spec", Msg::InvalidField("spec")))?;
        spec.check()?;
        let pairing_code = match req.pairing_code.as_deref().filter(|c| !c.trim().is_empty()) {
            Some(c) => Some(PairingCode::parse(Some(c)).ok_or(AppError::invalid("pairing_code", Msg::PairingCodeIncorrect))?),
            None => None,
        };
        Ok(AgentRegistration { device_type, name, spec, registration_token: req.registration_token, pairing_code })
    }
}

/// Sharing settings: a mode, rentable or not, and a price within bounds (None keeps the price).
pub struct Sharing {
    pub mode: SharingMode,
    pub rentable: bool,
    pub price_per_hour: Option<i64>,
}

impl Checked for Sharing {
    type Body = SharingRequest;
    fn check(req: SharingRequest) -> Result<Self, AppError> {
        let mode = SharingMode::parse(req.mode.as_deref().map(str::trim).unwrap_or("")).ok_or(AppError::invalid("mode", Msg::InvalidField("mode")))?;
        let rentable = req.rentable.ok_or(AppError::invalid("rentable", Msg::InvalidField("rentable")))?;
        let price_per_hour = match req.price_per_hour {
            Some(p) if !(0..=MAX_PRICE).contains(&p) => return Err(AppError::invalid("price_per_hour", Msg::InvalidField("price_per_hour"))),
            p => p,
        };
        Ok(Sharing { mode, rentable, price_per_hour })
    }
}

/// A location to set, or none to clear it.
pub struct NewLocation(pub Option<Location>);

impl Checked for NewLocation {
    type Body = LocationRequest;
    fn check(req: LocationRequest) -> Result<Self, AppError> {
        Ok(NewLocation(match (req.lat, req.lng) {
            (None, None) => None,
            (lat, lng) => Some(Location::check(lat, lng)?),
        }))
    }
}

/// A device's new name.
pub struct DeviceName(pub String);

impl Checked for DeviceName {
    type Body = RenameRequest;
    fn check(req: RenameRequest) -> Result<Self, AppError> {
        Ok(DeviceName(device_name("name", req.name.as_deref())?))
    }
}

/// A Z-CLOUD machine asked for: every size within bounds.
pub struct ZcloudAsk {
    pub name: String,
    pub cpu_cores: i64,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    pub gpu_count: i64,
    pub gpu_model: String,
    pub passthrough: bool,
    pub hours: i64,
}

impl Checked for ZcloudAsk {
    type Body = ZcloudRequest;
    fn check(req: ZcloudRequest) -> Result<ZcloudAsk, AppError> {
        let name = device_name("name", req.name.as_deref())?;
        let bad = |f: &'static str| AppError::invalid(f, Msg::InvalidField(f));
        let cpu_cores = req.cpu_cores.filter(|v| (1..=1024).contains(v)).ok_or(bad("cpu_cores"))?;
        let memory_bytes = req.memory_bytes.filter(|v| (1..=(1i64 << 50)).contains(v)).ok_or(bad("memory_bytes"))?;
        let disk_bytes = req.disk_bytes.filter(|v| (1..=(1i64 << 55)).contains(v)).ok_or(bad("disk_bytes"))?;
        let gpu_count = req.gpu_count.unwrap_or(0);
        if !(0..=16).contains(&gpu_count) {
            return Err(bad("gpu_count"));
        }
        // docs/product.md §5: GPU models are entered as a comma-separated list; the first a host has free is used.
        let gpu_model = req.gpu_model.unwrap_or_default().trim().to_string();
        if gpu_model.chars().count() > 200 {
            return Err(bad("gpu_model"));
        }
        let hours = req.hours.unwrap_or(24);
        if !(1..=720).contains(&hours) {
            return Err(bad("hours"));
        }
        Ok(ZcloudAsk { name, cpu_cores, memory_bytes, disk_bytes, gpu_count, gpu_model, passthrough: req.passthrough.unwrap_or(false), hours })
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_ids_round_trip_and_refuse_lookalikes() {
        let id = DeviceId::new_random();
        assert_eq!(DeviceId::parse(Some(&format!(" {} ", id.as_str().to_lowercase()))).unwrap(), id);
        // Spaces as well as dashes between the groups (issue 26).
        let spaced = id.as_str().replace('-', " ");
        assert_eq!(DeviceId::parse(Some(&spaced)).unwrap(), id);
        assert_eq!(DeviceId::parse(Some(&id.as_str().replace('-', " - "))).unwrap(), id);
        assert_eq!(DeviceId::parse(Some(&format!("\t{}\n", spaced.to_lowercase()))).unwrap(), id);
        for bad in ["", "ABCD-EFGH", "ABCD-EFGH-JKM0", "ABCD-EFGH-JKMN-PQRS", "ABCDEFGHJKMN", "ABC1-EFGH-JKMN", "ABCD--EFGH-JKMN", "-ABCD-EFGH-JKMN", "AB CD-EFGH-JKMN"] {
            assert!(DeviceId::parse(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn pairing_codes_accept_spacing() {
        let c = PairingCode::new_random();
        let spaced = format!("{} {}", &c.as_str()[..4], &c.as_str()[4..]).to_lowercase();
        assert_eq!(PairingCode::parse(Some(&spaced)).unwrap().as_str(), c.as_str());
        assert!(PairingCode::parse(Some("ABC")).is_none());
        assert!(PairingCode::parse(Some("ABCDEFG0")).is_none());
    }
}
