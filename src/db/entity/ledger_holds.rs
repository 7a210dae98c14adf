use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A hold is `pending` until it resolves, exactly once, into one of the other states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum HoldStatus {
    #[sea_orm(string_value = "pending")]
    Pending,
    /// Captured to the last cent.
    #[sea_orm(string_value = "captured")]
    Captured,
    /// Released by its owner domain; `released` says how much went back to available.
    #[sea_orm(string_value = "released")]
    Released,
    /// Released by the expiry job after `expires_at`.
    #[sea_orm(string_value = "expired")]
    Expired,
}

/// Coins reserved on an account (two-phase: captured in parts, then released or expired).
/// `amount - captured` counts in the account's `held` while pending.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_holds")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
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
    pub created_at: DateTimeUtc,
    pub resolved_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
