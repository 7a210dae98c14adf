//! Owner: billing.

use sea_orm::entity::prelude::*;

use crate::ids::HoldId;

/// One growth of a pending hold (a rental extended), kept once per key: a retried extend grows
/// the hold once.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_hold_growths")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    pub fingerprint: String,
    pub hold_id: HoldId,
    pub amount: i64,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
