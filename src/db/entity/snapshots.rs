//! Owner: apps.
//! Snapshots of installations' data (docs/data.md).

use sea_orm::entity::prelude::*;

use crate::ids::{AppId, CommandId, CompanyId, DeviceId, InstallationId, SnapshotId, UserId};

use crate::db::enums::{SnapshotKind, SnapshotStatus};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "snapshots")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: SnapshotId,
    pub installation_id: InstallationId,
    pub app_id: AppId,
    pub version: String,
    /// The install manifest it ran with (JSON).
    pub manifest: String,
    pub device_id: DeviceId,
    pub owner_user_id: Option<UserId>,
    pub owner_company_id: Option<CompanyId>,
    pub created_by: UserId,
    pub kind: SnapshotKind,
    pub status: SnapshotStatus,
    pub progress: Option<i32>,
    pub size: i64,
    pub sha256: Option<String>,
    pub reason: Option<String>,
    pub on_box: bool,
    pub on_market: bool,
    pub upload_command_id: Option<CommandId>,
    pub upload_reason: Option<String>,
    pub restoring_id: Option<InstallationId>,
    pub expires_at: Option<DateTimeUtc>,
    /// SHA-256 of the ticket of the last download link made, and until when it works.
    pub download_ticket: Option<String>,
    pub download_ticket_expires_at: Option<DateTimeUtc>,
    pub expiry_noticed: bool,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
