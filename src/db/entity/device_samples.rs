//! Owner: devices.

use sea_orm::entity::prelude::*;

use crate::ids::DeviceId;

/// A box's figures at one beat (docs/gpus.md "Telemetry"): kept at beat resolution for an hour,
/// one a minute for a day.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "device_samples")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub device_id: DeviceId,
    /// 0: every beat (kept an hour); 1: the first beat of each minute, `at` its minute (a day).
    #[sea_orm(primary_key, auto_increment = false)]
    pub tier: i16,
    #[sea_orm(primary_key, auto_increment = false)]
    pub at: DateTimeUtc,
    pub cpu_percent: Option<f64>,
    pub memory_used: Option<i64>,
    /// JSON list of zmarket_protocol::gpus::GpuUse.
    pub gpus: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
