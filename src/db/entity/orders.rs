//! Owner: orders.

use sea_orm::entity::prelude::*;

use crate::ids::{AppId, DeviceId, HoldId, InstallationId, OrderId, UserId};

use crate::db::enums::OrderStatus;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "orders")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: OrderId,
    pub name: String,
    pub app_id: AppId,
    pub gpu_count: i64,
    pub gpu_models: String,
    pub distance_km: Option<i64>,
    pub lat: Option<f64>,
    pub lng: Option<f64>,
    /// The lowest CUDA version the device must run ("12.4"); null = any.
    pub min_cuda: Option<String>,
    /// Bytes of VRAM each GPU must have; 0 = any.
    pub min_vram: i64,
    pub hours: i64,
    pub price_per_hour: i64,
    pub status: OrderStatus,
    pub status_reason: Option<String>,
    pub demander_id: UserId,
    pub provider_id: Option<UserId>,
    pub device_id: Option<DeviceId>,
    pub reserved_device_id: Option<DeviceId>,
    pub installation_id: Option<InstallationId>,
    pub installation_released: bool,
    pub hold_id: HoldId,
    pub fee_percent: i32,
    /// Seconds charged so far.
    pub billed_seconds: i64,
    pub billed: i64,
    /// The seconds its app had been seen running when the demander confirmed (its installation's
    /// count, `apps::seen::running_secs`): the order is charged those seen after.
    pub seen_base: i64,
    pub expires_at: DateTimeUtc,
    pub confirmed_at: Option<DateTimeUtc>,
    pub ends_at: Option<DateTimeUtc>,
    pub state_since: DateTimeUtc,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
