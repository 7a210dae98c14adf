//! Demands and orders on the wire (docs/api.md §Demands and orders): request bags, the checked terms of
//! a demand, the order as answered, the gaps of the matcher. No database here.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use crate::ids::{self, AppId};
use crate::devices::model::DeviceId;
use crate::db::enums::OrderStatus;
use crate::devices::model::Location;
use crate::error::{AppError, Msg};
use crate::http::Checked;
use zmarket_protocol::gpus::{CudaVersion, MAX_GPU_MEMORY};

/// Longest order at once: 30 days.
pub const MAX_HOURS: i64 = 720;
/// Highest price offered: 1,000,000 coins an hour.
pub const MAX_PRICE: i64 = 100_000_000;
pub const MAX_GPUS: i64 = 64;
/// Half the Earth's circumference, rounded up: every distance is within it.
pub const MAX_DISTANCE_KM: i64 = 20_016;
/// Most VRAM per GPU a demand may ask (bytes): what a GPU may report, 16 TiB.
pub const MAX_MIN_VRAM: i64 = MAX_GPU_MEMORY;

#[derive(Debug, Deserialize, ToSchema)]
pub struct DemandRequest {
    pub name: Option<String>,
    pub app_id: Option<String>,
    pub gpu_count: Option<i64>,
    /// A comma-separated list, matched case-insensitively against the device's GPU names; empty = any.
    pub gpu_models: Option<String>,
    /// Kilometres from `lat`/`lng`; null = any distance.
    pub distance_km: Option<i64>,
    pub lat: Option<f64>,
    pub lng: Option<f64>,
    pub hours: Option<i64>,
    /// Cents of a coin.
    pub price_per_hour: Option<i64>,
    /// The lowest CUDA version the device's driver must run, `major.minor` ("12.4"); empty or null = any.
    pub min_cuda: Option<String>,
    /// Bytes of VRAM each GPU given must have, 0 to 16 TiB; null or 0 = any.
    pub min_vram: Option<i64>,
}

/// What a device must satisfy (the matcher's input), as posted or as asked by the live count.
#[derive(Debug, Clone)]
pub struct Terms {
    pub app_id: AppId,
    pub gpu_count: i64,
    pub gpu_models: Vec<String>,
    pub distance_km: Option<i64>,
    pub point: Option<Location>,
    /// The lowest CUDA the device's driver must run (with the app's own need, the higher counts).
    pub min_cuda: Option<CudaVersion>,
    /// Bytes of VRAM each needed GPU must have; 0 = any.
    pub min_vram: i64,
}

/// A checked demand: its terms, name, hours and price.
pub struct Demand {
    pub name: String,
    pub terms: Terms,
    pub hours: i64,
    pub price_per_hour: i64,
}


/// "A100, rtx 4090,," → ["A100", "rtx 4090"].
pub fn split_models(raw: &str) -> Vec<String> {
    raw.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

fn in_range(field: &'static str, v: Option<i64>, range: std::ops::RangeInclusive<i64>) -> Result<i64, AppError> {
    v.filter(|v| range.contains(v)).ok_or(AppError::invalid(field, Msg::InvalidField(field)))
}

/// "12.4" → 12.4 (also "12", read as 12.0); empty = any; anything else is not a CUDA version.
fn cuda_in(raw: Option<String>) -> Result<Option<CudaVersion>, AppError> {
    let raw = raw.unwrap_or_default();
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    let (major, minor) = raw.split_once('.').unwrap_or((raw, "0"));
    let digits = |p: &str| (1..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit());
    match CudaVersion::parse(raw) {
        Some(v) if digits(major) && digits(minor) => Ok(Some(v)),
        _ => Err(AppError::invalid("min_cuda", Msg::InvalidField("min_cuda"))),
    }
}

impl Terms {
    /// The terms of a demand or of the live count; the same rules either way.
    pub fn check(q: CountQuery) -> Result<Terms, AppError> {
        let app_id: AppId = ids::required(q.app_id, "app_id", Msg::InvalidField("app_id"))?;
        let gpu_count = in_range("gpu_count", Some(q.gpu_count.unwrap_or(0)), 0..=MAX_GPUS)?;
        let raw = q.gpu_models.unwrap_or_default();
        if raw.chars().count() > 200 {
            return Err(AppError::invalid("gpu_models", Msg::InvalidField("gpu_models")));
        }
        let gpu_models = split_models(&raw);
        let distance_km = match q.distance_km {
            None => None,
            v => Some(in_range("distance_km", v, 1..=MAX_DISTANCE_KM)?),
        };
        let point = match (q.lat, q.lng) {
            (None, None) if distance_km.is_some() => return Err(AppError::invalid("lat", Msg::DistanceNeedsLocation)),
            (None, None) => None,
            (lat, lng) => Some(Location::check(lat, lng)?),
        };
        let min_cuda = cuda_in(q.min_cuda)?;
        let min_vram = in_range("min_vram", Some(q.min_vram.unwrap_or(0)), 0..=MAX_MIN_VRAM)?;
        Ok(Terms { app_id, gpu_count, gpu_models, distance_km, point, min_cuda, min_vram })
    }
    pub fn models_text(&self) -> String {
        self.gpu_models.join(", ")
    }
}

impl Checked for Demand {
    type Body = DemandRequest;
    fn check(r: DemandRequest) -> Result<Self, AppError> {
        let name = r.name.map(|s| s.trim().to_string()).unwrap_or_default();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(AppError::invalid("name", Msg::InvalidField("name")));
        }
        let q = CountQuery { app_id: r.app_id, gpu_count: r.gpu_count, gpu_models: r.gpu_models, distance_km: r.distance_km, lat: r.lat, lng: r.lng, min_cuda: r.min_cuda, min_vram: r.min_vram };
        let terms = Terms::check(q)?;
        let hours = in_range("hours", r.hours, 1..=MAX_HOURS)?;
        let price_per_hour = in_range("price_per_hour", r.price_per_hour, 1..=MAX_PRICE)?;
        Ok(Demand { name, terms, hours, price_per_hour })
    }
}

/// The live count while composing: the demand's terms as query parameters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CountQuery {
    pub app_id: Option<String>,
    pub gpu_count: Option<i64>,
    pub gpu_models: Option<String>,
    pub distance_km: Option<i64>,
    pub lat: Option<f64>,
    pub lng: Option<f64>,
    /// The lowest CUDA version, "12.4"; empty = any.
    pub min_cuda: Option<String>,
    /// Bytes of VRAM per GPU; 0 = any.
    pub min_vram: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Qualifying {
    /// Online, rentable devices of individuals that satisfy the terms now.
    pub count: u64,
}

/// The board: `lat`/`lng` is the viewer's point (each demand then has `distance_from_you_km`).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BoardQuery {
    pub lat: Option<f64>,
    pub lng: Option<f64>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CheckQuery {
    pub device_id: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct TakeRequest {
    pub device_id: Option<String>,
}

pub struct Take {
    pub device_id: DeviceId,
}

impl Checked for Take {
    type Body = TakeRequest;
    fn check(r: TakeRequest) -> Result<Self, AppError> {
        // A device id of another shape names no device of the caller's (404, after the checks
        // of who may take at all); a missing one is 400.
        Ok(Take { device_id: ids::required(r.device_id, "device_id", Msg::InvalidDeviceId)? })
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OrdersQuery {
    /// demander or provider
    pub role: Option<String>,
    /// an order status
    #[param(inline, value_type = Option<crate::db::enums::OrderStatus>)]
    pub status: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Demander,
    Provider,
}

impl Role {
    pub fn parse(raw: Option<&str>) -> Result<Role, AppError> {
        match raw.map(str::trim) {
            None | Some("") | Some("demander") => Ok(Role::Demander),
            Some("provider") => Ok(Role::Provider),
            Some(_) => Err(AppError::invalid("role", Msg::InvalidField("role"))),
        }
    }
}

/// One unmet requirement: `{field: "gpu_count", need: 4, have: 2}`. Fields: status, rentable,
/// reserved, distance_km, gpu_count, gpu_models, cuda, min_vram, cpu_cores, memory_bytes,
/// disk_bytes, app.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = OrderGap)]
pub struct Gap {
    pub field: String,
    #[schema(value_type = Object)]
    pub need: Value,
    #[schema(value_type = Object)]
    pub have: Value,
}

impl Gap {
    pub fn new(field: &str, need: impl Into<Value>, have: impl Into<Value>) -> Gap {
        Gap { field: field.to_string(), need: need.into(), have: have.into() }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Check {
    pub ok: bool,
    pub gaps: Vec<Gap>,
}

/// One of the caller's devices against a demand (the board's "your devices").
#[derive(Debug, Serialize, ToSchema)]
pub struct DeviceCheck {
    pub device_id: String,
    pub device_name: String,
    pub ok: bool,
    pub gaps: Vec<Gap>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Party {
    pub user_id: String,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OrderEvent {
    pub status: OrderStatus,
    pub reason: Option<String>,
    pub at: DateTime<Utc>,
}

/// An order (a demand while `order_pending`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Order {
    pub id: String,
    pub name: String,
    pub app_id: String,
    pub app_name: String,
    pub gpu_count: i64,
    pub gpu_models: String,
    pub distance_km: Option<i64>,
    /// The lowest CUDA version the device must run ("12.4"); null = any.
    pub min_cuda: Option<String>,
    /// Bytes of VRAM each GPU must have; 0 = any.
    pub min_vram: i64,
    pub hours: i64,
    pub price_per_hour: i64,
    /// price_per_hour × hours, held on the demander's wallet while the order lasts.
    pub total: i64,
    pub status: OrderStatus,
    pub demander: Party,
    pub provider: Option<Party>,
    pub device_id: Option<String>,
    pub device_name: Option<String>,
    pub installation_id: Option<String>,
    /// Why it failed or finished, in the reader's language.
    pub status_reason: Option<String>,
    /// The demander cancelled it (an `order_failed` whose reason is the cancellation): shown as
    /// cancelled rather than failed (issue 26).
    pub cancelled: bool,
    /// Coins charged so far (after confirmation, by the minute).
    pub billed: i64,
    /// When the current state times out (pending, processing, accepted) or the hours end (confirmed).
    pub deadline_at: Option<DateTime<Utc>>,
    /// From the viewer's point, when the board was asked with one.
    pub distance_from_you_km: Option<i64>,
    /// The installation's status on the provider's device while taken.
    pub app_status: Option<String>,
    /// Whether the app's web page can be opened now (`POST /api/rmp/v1/apps/{installation_id}/open`);
    /// the address on the provider's network is never sent (issue 44 item 7).
    pub openable: bool,
    pub history: Vec<OrderEvent>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
