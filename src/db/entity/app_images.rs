//! Owner: apps.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "app_images")]
pub struct Model {
    /// sha256 of the archive, hex.
    #[sea_orm(primary_key, auto_increment = false)]
    pub sha256: String,
    /// JSON list of "repo:tag".
    pub tags: String,
    pub size_bytes: i64,
    /// File name inside `<data_dir>/images`.
    pub file: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
