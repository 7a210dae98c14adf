//! Owner: ops.

use sea_orm::entity::prelude::*;

use crate::ids::UserId;

/// One operator write: who, when, what (action on target) and the detail (JSON, before/after).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ops_audit")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub at: DateTimeUtc,
    pub operator_id: UserId,
    pub operator_email: String,
    pub action: String,
    pub target: String,
    pub detail: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
