//! Owner: iam.

use sea_orm::entity::prelude::*;

use crate::ids::UserId;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: UserId,
    #[sea_orm(unique)]
    pub email: String,
    pub name: String,
    pub password_hash: String,
    pub email_verified_at: Option<DateTimeUtc>,
    pub avatar: Option<Vec<u8>>,
    pub avatar_type: Option<String>,
    pub avatar_version: i32,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    /// Runs the market (`zmarket operator grant`): the `/operator` pages and `/api/ops/v1`.
    pub operator: bool,
    /// Set while the account is suspended: its sessions end and sign-in is refused with the reason.
    pub suspended_at: Option<DateTimeUtc>,
    pub suspended_reason: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
