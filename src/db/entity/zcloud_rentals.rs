//! Owner: devices.

use sea_orm::entity::prelude::*;

use crate::ids::{DeviceId, HoldId, UserId};

use crate::db::enums::{ZcloudEndReason, ZcloudRentalStatus};

/// A Z-CLOUD machine on another owner's server-group host: a rental (src/devices/rental.rs).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "zcloud_rentals")]
pub struct Model {
    /// The machine's device id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: DeviceId,
    pub name: String,
    pub host_id: DeviceId,
    /// The paying wallet, `user:<id>` or `company:<id>`.
    pub renter: String,
    /// The host owner's wallet, credited each capture less the market fee.
    pub provider: String,
    /// The person who created the machine.
    pub created_by: UserId,
    pub price_per_hour: i64,
    pub hours: i64,
    pub fee_percent: i32,
    pub hold_id: Option<HoldId>,
    pub status: ZcloudRentalStatus,
    pub started_at: DateTimeUtc,
    /// The paid time's end (`started_at + hours`).
    pub ends_at: DateTimeUtc,
    /// Charged up to here.
    pub metered_until: DateTimeUtc,
    /// Seconds charged so far.
    pub seconds: i64,
    pub billed: i64,
    /// `ending`: when the machine is stopped.
    pub stop_at: Option<DateTimeUtc>,
    pub end_reason: Option<ZcloudEndReason>,
    pub ended_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
