//! Owner: apps (docs/data.md): an installation's daily backup.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "snapshot_schedules")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub installation_id: String,
    pub enabled: bool,
    /// How many of its backups are kept (the oldest go).
    pub keep: i32,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
