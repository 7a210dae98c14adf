//! Owner: orders.

use sea_orm::entity::prelude::*;

use crate::ids::{OrderId, UserId};

use crate::db::enums::OrderStatus;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "order_events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub order_id: OrderId,
    pub status: OrderStatus,
    pub reason: Option<String>,
    pub actor_id: Option<UserId>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
