//! Owner: events.

use sea_orm::entity::prelude::*;

use crate::ids::UserId;
pub use crate::db::enums::EventKind;

/// One event for one person; `seq` is its SSE id (one sequence per person).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub user_id: UserId,
    pub seq: i64,
    pub kind: EventKind,
    /// JSON.
    pub payload: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
