//! Owner: billing.

use sea_orm::entity::prelude::*;

use crate::db::enums::AccountKind;

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
