use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Whose account it is. Only `issuance` (where the operator's coins come from) may go below zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum AccountKind {
    #[sea_orm(string_value = "user")]
    User,
    #[sea_orm(string_value = "company")]
    Company,
    #[sea_orm(string_value = "issuance")]
    Issuance,
    #[sea_orm(string_value = "market_fee")]
    MarketFee,
}

/// A ledger account. `balance`, `held`, `income_total` and `expense_total` are caches of the
/// entries and pending holds, changed in the same transaction as them (`zmarket ledger verify`
/// checks them). The id is derived from the owner (`user:<id>`, `company:<id>`, `system:<name>`).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_accounts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub kind: AccountKind,
    /// The user or company id; null for system accounts.
    pub owner_id: Option<String>,
    pub balance: i64,
    pub held: i64,
    pub income_total: i64,
    pub expense_total: i64,
    /// The last runway notice sent (hours: 24 or 1), 0 when none is due.
    pub runway_notice: i64,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
