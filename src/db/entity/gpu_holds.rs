//! Owner: devices.

use sea_orm::entity::prelude::*;

use crate::ids::DeviceId;

/// One GPU of a box held by one installation or Z-CLOUD machine (docs/gpus.md): the primary key
/// makes a second holder of the same GPU fail, whatever else went wrong.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "gpu_holds")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub device_id: DeviceId,
    /// The GPU's UUID (an older agent's GPU: its index).
    #[sea_orm(primary_key, auto_increment = false)]
    pub gpu_key: String,
    /// installation | machine
    pub holder_kind: String,
    pub holder_id: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
