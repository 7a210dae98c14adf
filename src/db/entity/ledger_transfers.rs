//! Owner: billing.

use sea_orm::entity::prelude::*;

use crate::ids::HoldId;

use crate::db::enums::TransferKind;

/// One immutable movement of coins: its entries sum to zero. `key` is unique (the idempotency
/// key); `fingerprint` identifies what was asked, so the same key with another request is refused.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_transfers")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    #[sea_orm(unique)]
    pub key: String,
    pub fingerprint: String,
    pub kind: TransferKind,
    /// The total moved (the sum of the credits).
    pub amount: i64,
    pub hold_id: Option<HoldId>,
    /// The bill the payer's debit counts towards (metered usage).
    pub bill_id: Option<String>,
    pub ref_type: String,
    pub ref_id: Option<String>,
    pub memo: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
