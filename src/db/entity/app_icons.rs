//! Owner: market.

use sea_orm::entity::prelude::*;

use crate::ids::AppId;

/// An icon uploaded from the operator's console (m0023), served by the market.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "app_icons")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub app_id: AppId,
    pub content_type: String,
    pub data: Vec<u8>,
    /// The first 16 hex digits of the SHA-256 of `data`.
    pub version: String,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
