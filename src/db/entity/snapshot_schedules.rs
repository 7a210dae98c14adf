//! Owner: apps.
//! An installation's daily backup (docs/data.md).

use sea_orm::entity::prelude::*;

use crate::ids::InstallationId;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "snapshot_schedules")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub installation_id: InstallationId,
    pub enabled: bool,
    /// How many of its backups are kept (the oldest go).
    pub keep: i32,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
