//! Owner: devices.

use sea_orm::entity::prelude::*;

use crate::ids::{CompanyId, DeviceId, UserId};

use crate::db::enums::{DeviceStatus, DeviceType, SharingMode};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "devices")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: DeviceId,
    pub name: String,
    /// Z-BOX | P-BOX | Z-CLOUD | server group
    pub device_type: DeviceType,
    /// online | offline | creating | failed
    pub status: DeviceStatus,
    pub status_reason: Option<String>,
    pub secret_hash: Option<String>,
    pub pairing_hash: Option<String>,
    pub owner_user_id: Option<UserId>,
    pub owner_company_id: Option<CompanyId>,
    pub bound_by: Option<UserId>,
    pub bound_at: Option<DateTimeUtc>,
    /// manual | autopilot | dedicated
    pub sharing_mode: SharingMode,
    pub rentable: bool,
    pub price_per_hour: i64,
    pub cpu_cores: i64,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    /// JSON list of {name, passthrough, vram}
    pub gpus: String,
    /// Whether its Docker can hand GPUs to containers (null: not said).
    pub gpu_runtime: Option<bool>,
    pub cpu_percent: Option<f64>,
    pub memory_used_bytes: Option<i64>,
    pub disk_used_bytes: Option<i64>,
    pub lat: Option<f64>,
    pub lng: Option<f64>,
    pub host_id: Option<DeviceId>,
    pub gpu_count: i64,
    pub gpu_model: String,
    pub passthrough: bool,
    pub last_seen_at: Option<DateTimeUtc>,
    /// `<instance>:<connection>` of the agent channel it holds, if any (issue 22).
    pub channel_instance: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    /// JSON {at, gpus: [GpuCheck]} of the last GPU verification (docs/gpus.md).
    pub verification: Option<String>,
    /// JSON list of GpuUse: how busy each GPU was at the latest beat.
    pub gpu_use: Option<String>,
    /// The hours of the last 30 days a beat arrived in: 720 bits, bit (hour % 720) (docs/market.md).
    pub presence: Option<Vec<u8>>,
    /// Hours since the Unix epoch of the last hour marked in `presence`.
    pub presence_hour: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
