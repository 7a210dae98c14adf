//! Owner: apps.

use sea_orm::entity::prelude::*;

use crate::ids::InstallationId;

use crate::db::enums::AppStatus;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "installation_events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub installation_id: InstallationId,
    pub status: AppStatus,
    pub reason: Option<String>,
    pub version: Option<String>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
