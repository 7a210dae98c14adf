//! Apps on devices: the installation as the API answers it, the request bodies and their
//! checked forms, and the agent-protocol shapes of app commands and reports (shared with the
//! agent program, src/agent/).



use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::devices::model::DeviceId;
use crate::ids::{self, AppId};
use crate::devices::model::HeldGpu;
use crate::error::{AppError, Msg};
use crate::lang::Words;
use crate::http::Checked;

pub use crate::db::enums::{AppStatus, Desired, InstallKind, SnapshotKind, SnapshotStatus};

pub use zmarket_protocol::apps::*;

// ---- the API ----

/// Rental terms and meter of a rented installation.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Rental {
    pub price_per_hour: i64,
    pub started_at: Option<DateTime<Utc>>,
    pub ends_at: Option<DateTime<Utc>>,
    pub billed: i64,
    pub unbilled: i64,
    /// Whether the reader may extend it now (`POST /apps/{id}/extend`): the renter's rental under
    /// way whose paid time is not up.
    pub extendable: bool,
}

/// One app on one device.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Installation {
    pub id: String,
    pub app_id: String,
    pub app_name: String,
    pub icon_url: String,
    pub display_type: String,
    pub device_id: String,
    pub device_name: String,
    /// online, offline, …: the device's status (an offline device's apps cannot be launched).
    pub device_status: String,
    pub kind: InstallKind,
    pub status: AppStatus,
    /// What was asked for.
    pub desired: Desired,
    pub progress: Option<i32>,
    pub status_reason: Option<String>,
    /// The stable name of the reason (`exited`, `container_gone`, `device_offline`, …).
    pub status_reason_code: Option<String>,
    /// Whether its device is online now (an offline box's apps cannot be run or stopped).
    pub device_online: bool,
    /// The catalogue version it runs.
    pub version: String,
    /// The catalogue's newer version, when there is one.
    pub update_available: Option<String>,
    /// The address the box reports for the app's web page, on the box's own network: its owner's
    /// only (a renter never gets it; they open the app through the market, `openable`).
    pub open_url: Option<String>,
    /// Whether its web page can be opened now (`POST /apps/{id}/open`): running, with a web port
    /// the box reported.
    pub openable: bool,
    /// The actions the current state allows the caller.
    pub actions: Vec<Action>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub rental: Option<Rental>,
    /// The GPUs it holds on its device (by UUID), empty when none.
    pub gpus: Vec<HeldGpu>,
}

/// A state the installation went through.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StateEvent {
    pub status: AppStatus,
    pub reason_code: Option<String>,
    /// In the reader's language.
    pub reason: Option<String>,
    /// The version it ran then.
    pub version: Option<String>,
    pub at: DateTime<Utc>,
}

/// An installation with its history (`GET /apps/{id}`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InstallationDetails {
    #[serde(flatten)]
    pub installation: Installation,
    pub history: Vec<StateEvent>,
    /// What it holds on its device.
    pub holds: Capacity,
}

/// An AI compute or AI server installation.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AiCompute {
    #[serde(flatten)]
    pub installation: Installation,
    /// Where its API answers (its web port), when running.
    pub endpoint: Option<String>,
    /// The GPUs it holds.
    pub gpus: Vec<HeldGpu>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq, Eq, Default)]
pub struct Capacity {
    pub cpu_cores: i64,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    pub gpu_count: i64,
}

/// What a device lacks for an app.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct Gap {
    /// cpu_cores, memory_bytes, disk_bytes, gpu_count (numbers) or cuda (versions, "12.4")
    pub field: String,
    #[schema(value_type = Object)]
    pub need: serde_json::Value,
    #[schema(value_type = Object)]
    pub have: serde_json::Value,
}

/// How one device fits an app (the install and rent dialogs).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeviceFit {
    pub device_id: String,
    pub device_name: String,
    pub device_status: String,
    pub fits: bool,
    /// Why it cannot take the app: `offline`, `installed`, `no_gpu_for_lite_app`,
    /// `sharing_mode`, or `resources` (then `gaps` names what is short).
    pub reason: Option<String>,
    pub gaps: Vec<Gap>,
    pub free: Capacity,
    /// The device's GPUs (their names), empty when it has none.
    pub gpus: Vec<String>,
    /// How many of its GPUs no installation or machine holds.
    pub gpus_free: i64,
    /// Whether its GPUs passed their last verification (null: never verified).
    pub verified: Option<bool>,
    /// The CUDA version its driver runs, when it says.
    pub cuda: Option<String>,
    /// Rent dialog: the owner's price per hour.
    pub price_per_hour: Option<i64>,
    /// What the box has: cores, bytes, and its GPUs with their memory and CUDA (no UUIDs).
    pub spec: zmarket_protocol::heartbeat::Spec,
    /// How often the market heard from the box, measured from its beats.
    pub reliability: Reliability,
    /// Kilometres from the point given as `lat`/`lng` to the box's listed place (null without).
    pub distance_km: Option<i64>,
    /// The box's place as visitors see it (coarsened, as on the nearby map); null when unset.
    pub location: Option<crate::devices::model::Location>,
}

/// The share (0-1) of the last 7 and 30 days the market heard from a box since it was bound
/// (its beats, one mark an hour); null for its first day.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Reliability {
    pub uptime_7d: Option<f64>,
    pub uptime_30d: Option<f64>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AppsFilter {
    /// A label of docs/product.md §4.
    #[param(inline, value_type = Option<crate::db::enums::AppStatus>)]
    pub status: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FitQuery {
    pub app_id: Option<String>,
}

/// The Rent dialog's offers: the app, the renter's point, a sort and filters (docs/api.md
/// §Offers and the meter). Numbers are read here so a bad one is refused naming its filter.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OffersQuery {
    pub app_id: Option<String>,
    /// The renter's point: each offer's `distance_km` is measured from it.
    #[param(value_type = Option<f64>)]
    pub lat: Option<String>,
    #[param(value_type = Option<f64>)]
    pub lng: Option<String>,
    /// `price` (cheapest first, the default), `reliability` (most heard first), `distance`
    /// (nearest first; needs `lat` and `lng`) or `vram` (largest GPU first).
    pub sort: Option<String>,
    /// Boxes with a GPU whose name holds this (any case), e.g. `H200`.
    pub gpu_model: Option<String>,
    /// Boxes with a GPU of at least this memory (bytes).
    #[param(value_type = Option<i64>)]
    pub min_vram: Option<String>,
    /// Boxes whose driver runs at least this CUDA, e.g. `12.4`.
    pub min_cuda: Option<String>,
    /// Boxes heard from at least this share (0-1) of the last 30 days.
    #[param(value_type = Option<f64>)]
    pub min_reliability: Option<String>,
}

/// How offers are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OfferSort {
    #[default]
    Price,
    Reliability,
    Distance,
    Vram,
}

/// An offers query, checked.
#[derive(Debug)]
pub struct OffersAsk {
    pub app_id: AppId,
    pub at: Option<crate::devices::model::Location>,
    pub sort: OfferSort,
    pub gpu_model: Option<String>,
    pub min_vram: Option<i64>,
    pub min_cuda: Option<zmarket_protocol::gpus::CudaVersion>,
    pub min_reliability: Option<f64>,
}

impl OffersQuery {
    pub fn checked(self) -> Result<OffersAsk, AppError> {
        fn bad(field: &'static str) -> AppError {
            AppError::invalid(field, Msg::InvalidField(field))
        }
        fn given(v: Option<String>) -> Option<String> {
            v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
        }
        let number = |v: Option<String>, field: &'static str| -> Result<Option<f64>, AppError> {
            given(v).map(|s| s.parse::<f64>().ok().filter(|f| f.is_finite()).ok_or_else(|| bad(field))).transpose()
        };
        let app_id = ids::required(self.app_id, "app_id", Msg::InvalidField("app_id"))?;
        let (lat, lng) = (number(self.lat, "lat")?, number(self.lng, "lng")?);
        let at = match (lat, lng) {
            (None, None) => None,
            (lat, lng) => Some(crate::devices::model::Location::check(lat, lng)?),
        };
        let sort = match given(self.sort).as_deref() {
            None | Some("price") => OfferSort::Price,
            Some("reliability") => OfferSort::Reliability,
            Some("distance") if at.is_some() => OfferSort::Distance,
            Some("distance") => return Err(bad("lat")),
            Some("vram") => OfferSort::Vram,
            Some(_) => return Err(bad("sort")),
        };
        let gpu_model = given(self.gpu_model);
        if gpu_model.as_ref().is_some_and(|m| m.chars().count() > 64) {
            return Err(bad("gpu_model"));
        }
        let min_vram = given(self.min_vram).map(|s| s.parse::<i64>().ok().filter(|v| *v >= 0).ok_or_else(|| bad("min_vram"))).transpose()?;
        let min_cuda = given(self.min_cuda)
            .map(|s| zmarket_protocol::gpus::CudaVersion::parse(&s).ok_or_else(|| bad("min_cuda")))
            .transpose()?;
        let min_reliability = number(self.min_reliability, "min_reliability")?;
        if min_reliability.is_some_and(|r| !(0.0..=1.0).contains(&r)) {
            return Err(bad("min_reliability"));
        }
        Ok(OffersAsk { app_id, at, sort, gpu_model, min_vram, min_cuda, min_reliability })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct InstallRequest {
    pub app_id: Option<String>,
    pub device_id: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct RentRequest {
    pub app_id: Option<String>,
    pub device_id: Option<String>,
    pub hours: Option<i64>,
    /// The offer's price per hour (cents) the person was shown: when given and the offer now
    /// asks another, the rent is refused (409) and nothing is held. The Rent dialog always sends it.
    pub price_per_hour: Option<i64>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ActionRequest {
    #[schema(value_type = Option<Action>)]
    pub action: Option<String>,
}

// ---- checked requests ----

pub struct InstallAsk {
    pub app_id: AppId,
    pub device_id: DeviceId,
}

impl Checked for InstallAsk {
    type Body = InstallRequest;
    fn check(req: InstallRequest) -> Result<Self, AppError> {
        let app_id = ids::required(req.app_id, "app_id", Msg::InvalidField("app_id"))?;
        Ok(InstallAsk { app_id, device_id: ids::required(req.device_id, "device_id", Msg::InvalidField("device_id"))? })
    }
}

/// Longest rental asked for at once: 30 days.
pub const MAX_RENT_HOURS: i64 = 720;

pub struct RentAsk {
    pub app_id: AppId,
    pub device_id: DeviceId,
    pub hours: i64,
    /// The price per hour the person saw (cents), never negative.
    pub seen_price: Option<i64>,
}

impl Checked for RentAsk {
    type Body = RentRequest;
    fn check(req: RentRequest) -> Result<Self, AppError> {
        let InstallAsk { app_id, device_id } = InstallAsk::check(InstallRequest { app_id: req.app_id, device_id: req.device_id })?;
        let hours = req.hours.filter(|h| (1..=MAX_RENT_HOURS).contains(h)).ok_or(AppError::invalid("hours", Msg::InvalidField("hours")))?;
        let seen_price = match req.price_per_hour {
            Some(p) if p < 0 => return Err(AppError::invalid("price_per_hour", Msg::InvalidField("price_per_hour"))),
            p => p,
        };
        Ok(RentAsk { app_id, device_id, hours, seen_price })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ExtendRequest {
    /// 1 to 720.
    pub hours: Option<i64>,
}

pub struct ExtendAsk {
    pub hours: i64,
}

impl Checked for ExtendAsk {
    type Body = ExtendRequest;
    fn check(req: ExtendRequest) -> Result<Self, AppError> {
        let hours = req.hours.filter(|h| (1..=MAX_RENT_HOURS).contains(h)).ok_or(AppError::invalid("hours", Msg::InvalidField("hours")))?;
        Ok(ExtendAsk { hours })
    }
}

/// What a person asks of an installation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Start,
    Stop,
    Restart,
    Suspend,
    Resume,
    Snapshot,
    Retry,
    Uninstall,
    /// To the catalogue's newer version, rolled back if it does not start.
    Update,
    /// Gives up what is under way on a box that is offline.
    Cancel,
}

impl Action {
    pub const ALL: [Action; 10] = [
        Action::Start,
        Action::Stop,
        Action::Restart,
        Action::Suspend,
        Action::Resume,
        Action::Snapshot,
        Action::Retry,
        Action::Uninstall,
        Action::Update,
        Action::Cancel,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Start => "start",
            Action::Stop => "stop",
            Action::Restart => "restart",
            Action::Suspend => "suspend",
            Action::Resume => "resume",
            Action::Snapshot => "snapshot",
            Action::Retry => "retry",
            Action::Uninstall => "uninstall",
            Action::Update => "update",
            Action::Cancel => "cancel",
        }
    }
    pub fn parse(raw: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == raw.trim())
    }
    /// The action's verb in both languages (the refusal that names it).
    pub fn words(self) -> Words {
        let zh = match self {
            Action::Start => "启动",
            Action::Stop => "停止",
            Action::Restart => "重启",
            Action::Suspend => "暂停",
            Action::Resume => "恢复",
            Action::Snapshot => "快照",
            Action::Retry => "重试",
            Action::Uninstall => "卸载",
            Action::Update => "更新",
            Action::Cancel => "取消",
        };
        Words::new(self.as_str(), zh)
    }
}

impl Checked for Action {
    type Body = ActionRequest;
    fn check(req: ActionRequest) -> Result<Self, AppError> {
        req.action.as_deref().and_then(Action::parse).ok_or(AppError::invalid("action", Msg::InvalidField("action")))
    }
}

#[cfg(test)]
mod tests {
    use super::Action;

    #[test]
    fn an_action_is_answered_and_read_by_its_name() {
        for a in Action::ALL {
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str(), "{a:?}");
            assert_eq!(Action::parse(&format!(" {} ", a.as_str())), Some(a));
        }
        assert_eq!(Action::parse("fly"), None);
    }
}

// ---- snapshots (docs/data.md) ----

/// Where a snapshot is kept: on the box that made it, or (also) in the market's store.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotPlace {
    Box,
    Market,
}

/// A snapshot of an installation's data.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Snapshot {
    pub id: String,
    /// The installation it was taken of (it may be removed by now).
    pub installation_id: String,
    /// Whether that installation is still there.
    pub installation_present: bool,
    pub app_id: String,
    pub app_name: String,
    pub icon_url: Option<String>,
    /// The app's version it holds: a restore runs this version.
    pub version: String,
    /// The box it was taken on (where its box copy is).
    pub device_id: String,
    pub device_name: Option<String>,
    pub created_at: DateTime<Utc>,
    /// Bytes of the archive (0 while it is made).
    pub size: i64,
    pub status: SnapshotStatus,
    /// 0-100 while it is made.
    pub progress: Option<i32>,
    /// `market` once a copy is in the market's store (it may also still be on the box).
    #[serde(rename = "where")]
    pub place: SnapshotPlace,
    pub on_box: bool,
    /// Being copied to the market now.
    pub uploading: bool,
    pub kind: SnapshotKind,
    /// An ended rental's kept data is removed then.
    pub expires_at: Option<DateTime<Utc>>,
    /// A restore from it is under way (it cannot be deleted meanwhile).
    pub restoring: bool,
    pub sha256: Option<String>,
    /// Why it (or its copy to the market) failed, in the reader's language.
    pub reason: Option<String>,
    pub reason_code: Option<String>,
}

/// A browser's download link of a snapshot (`GET /api/rmp/v1/snapshots/{id}/file?ticket=…`).
#[derive(Debug, Serialize, ToSchema)]
pub struct DownloadLink {
    /// Same-site path; no credentials needed with it until `expires_at`.
    pub url: String,
    pub expires_at: DateTime<Utc>,
}

/// An installation's snapshots and its daily backup.
#[derive(Debug, Serialize, ToSchema)]
pub struct SnapshotList {
    pub items: Vec<Snapshot>,
    pub total: u64,
    pub backups: Backups,
}

/// An installation's daily backup: on or off, and how many are kept (1-30).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct Backups {
    pub enabled: bool,
    pub keep: i32,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct RestoreRequest {
    /// One of the caller's devices; with `hours`, another owner's rentable device (a rental).
    pub device_id: Option<String>,
    pub hours: Option<i64>,
}

impl Checked for RestoreAsk {
    type Body = RestoreRequest;
    fn check(req: RestoreRequest) -> Result<Self, AppError> {
        let device_id = ids::required(req.device_id, "device_id", Msg::InvalidField("device_id"))?;
        let hours = match req.hours {
            None => None,
            Some(h) if (1..=MAX_RENT_HOURS).contains(&h) => Some(h),
            Some(_) => return Err(AppError::invalid("hours", Msg::InvalidField("hours"))),
        };
        Ok(RestoreAsk { device_id, hours })
    }
}

/// What a restore gives the install: the archive to start from, its version and manifest.
pub struct Restore {
    pub refs: RestoreRef,
    pub version: String,
    pub manifest: Manifest,
}

/// The request of a restore, checked.
pub struct RestoreAsk {
    pub device_id: DeviceId,
    pub hours: Option<i64>,
}
