//! Owner: notifications.

use sea_orm::entity::prelude::*;

use crate::ids::UserId;

/// One row per person who has had a notification: how many, and how many unread.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "notification_counters")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: UserId,
    pub total: i64,
    pub unread: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
