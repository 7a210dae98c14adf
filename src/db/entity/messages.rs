//! Owner: social.

use sea_orm::entity::prelude::*;

use crate::ids::UserId;

/// A direct message.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "messages")]
pub struct Model {
    /// UUID v7: ordering by id orders by time.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub sender_id: UserId,
    pub recipient_id: UserId,
    /// The two user ids sorted and joined.
    pub pair_key: String,
    pub body: String,
    pub read: bool,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
