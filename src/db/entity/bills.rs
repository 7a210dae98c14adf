//! Owner: billing.

use sea_orm::entity::prelude::*;

use crate::db::enums::BillStatus;

/// Metered usage of one account for one reference (e.g. a rental) in one period. The id is
/// derived from (account, reference, period start), so concurrent postings add to one row.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "bills")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub account_id: String,
    pub status: BillStatus,
    pub ref_type: String,
    pub ref_id: String,
    pub period_start: DateTimeUtc,
    pub period_end: DateTimeUtc,
    pub amount: i64,
    pub created_at: DateTimeUtc,
    pub billed_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
