//! Owner: devices.

use sea_orm::entity::prelude::*;

use crate::ids::{CommandId, DeviceId};

use crate::db::enums::{CommandKind, CommandStatus};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "device_commands")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: CommandId,
    /// The device whose agent carries the command out.
    pub device_id: DeviceId,
    /// What the command is about (a Z-CLOUD machine), when not the device itself.
    pub subject_id: Option<String>,
    pub kind: CommandKind,
    /// JSON object.
    pub payload: String,
    /// pending | done | failed
    pub status: CommandStatus,
    pub error: Option<String>,
    pub created_at: DateTimeUtc,
    pub acked_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
