//! Owner: social.

use sea_orm::entity::prelude::*;

use crate::ids::{FriendRequestId, UserId};
pub use crate::db::enums::RequestStatus;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "friend_requests")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: FriendRequestId,
    pub from_user_id: UserId,
    pub from_email: String,
    /// As typed (normalized); the account with this email, if any, is the recipient.
    pub to_email: String,
    /// The two emails sorted and joined: unique among pending requests.
    pub pair_key: String,
    pub status: RequestStatus,
    pub created_at: DateTimeUtc,
    pub decided_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
