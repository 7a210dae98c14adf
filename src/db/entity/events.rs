use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What an event of the live stream is about; its SSE `event:` name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    #[sea_orm(string_value = "message")]
    Message,
    #[sea_orm(string_value = "friend_request")]
    FriendRequest,
    #[sea_orm(string_value = "friend")]
    Friend,
    #[sea_orm(string_value = "read")]
    Read,
    #[sea_orm(string_value = "notification")]
    Notification,
}

/// One event for one person; `seq` is its SSE id (one sequence per person).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub user_id: String,
    pub seq: i64,
    pub kind: EventKind,
    /// JSON.
    pub payload: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
