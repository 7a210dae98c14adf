//! Owner: billing.

use sea_orm::entity::prelude::*;

use crate::ids::HoldId;

use crate::db::enums::HoldStatus;

/// Coins reserved on an account (two-phase: captured in parts, then released or expired).
/// `amount - captured` counts in the account's `held` while pending.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_holds")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: HoldId,
    #[sea_orm(unique)]
    pub key: String,
    pub fingerprint: String,
    pub account_id: String,
    pub amount: i64,
    pub captured: i64,
    /// What went back to available when it resolved (0 while pending).
    pub released: i64,
    pub status: HoldStatus,
    /// Cents per hour this hold is being spent at (0: not metered); the runway divides by it.
    pub burn_per_hour: i64,
    pub ref_type: String,
    pub ref_id: Option<String>,
    pub memo: String,
    pub expires_at: DateTimeUtc,
    /// When the work it pays for is due to end (a rental's end); null when not known. The runway
    /// notice speaks of a hold only when its coins run out before then.
    pub ends_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub resolved_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
