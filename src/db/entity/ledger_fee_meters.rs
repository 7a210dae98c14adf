//! Owner: billing.

use sea_orm::entity::prelude::*;

/// The fee meter of one rental or order: everything captured for it and the market's fee
/// credited for it so far (`fee = floor(captured × fee_percent / 100)` after every capture).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_fee_meters")]
pub struct Model {
    /// `<ref_type>:<ref_id>`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub ref_type: String,
    pub ref_id: String,
    pub fee_percent: i32,
    pub captured: i64,
    pub fee: i64,
    /// The fraction of a cent the metered seconds captured so far left over, in 1/3600 of a
    /// cent (`price × seconds mod 3600`): added to the next capture (`ledger::capture_seconds`).
    pub carry: i64,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
