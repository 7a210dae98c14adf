//! Owner: apps.

use sea_orm::entity::prelude::*;

use crate::ids::{AppId, CommandId, CompanyId, DeviceId, HoldId, InstallationId, UserId};

use crate::db::enums::{AppStatus, Desired, InstallKind};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "installations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: InstallationId,
    pub app_id: AppId,
    pub device_id: DeviceId,
    pub owner_user_id: Option<UserId>,
    pub owner_company_id: Option<CompanyId>,
    pub created_by: UserId,
    pub kind: InstallKind,
    pub status: AppStatus,
    pub desired: Desired,
    pub progress: Option<i32>,
    pub status_reason: Option<String>,
    /// The catalogue version it runs.
    pub version: String,
    pub open_url: Option<String>,
    pub command_id: Option<CommandId>,
    pub state_since: DateTimeUtc,
    pub active_key: Option<String>,
    pub cpu_cores: i64,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    pub gpu_count: i64,
    pub rent_price_per_hour: Option<i64>,
    pub rent_hours: Option<i64>,
    pub rent_started_at: Option<DateTimeUtc>,
    pub rent_ends_at: Option<DateTimeUtc>,
    /// The end whose ending notice went out (once per end: an extended rental is told again).
    pub rent_end_noticed: Option<DateTimeUtc>,
    pub hold_id: Option<HoldId>,
    pub rent_provider: Option<String>,
    pub rent_fee_percent: Option<i32>,
    /// Seconds of the rental charged so far (the meter's position; its captures' keys name them).
    pub rent_seconds: i64,
    pub billed: i64,
    pub metered_until: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
