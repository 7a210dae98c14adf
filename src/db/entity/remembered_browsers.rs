//! Owner: iam.

use sea_orm::entity::prelude::*;

use crate::ids::UserId;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "remembered_browsers")]
pub struct Model {
    /// SHA-256 of the token of the browser's HttpOnly cookie.
    #[sea_orm(primary_key, auto_increment = false)]
    pub token_hash: String,
    pub user_id: UserId,
    pub created_at: DateTimeUtc,
    pub expires_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
