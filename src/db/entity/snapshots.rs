//! Owner: apps.
//! Snapshots of installations' data (docs/data.md).

use sea_orm::entity::prelude::*;

use crate::db::enums::{SnapshotKind, SnapshotStatus};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "snapshots")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub installation_id: String,
    pub app_id: String,
    pub version: String,
    /// The install manifest it ran with (JSON).
    pub manifest: String,
    pub device_id: String,
    pub owner_user_id: Option<String>,
    pub owner_company_id: Option<String>,
    pub created_by: String,
    pub kind: SnapshotKind,
    pub status: SnapshotStatus,
    pub progress: Option<i32>,
    pub size: i64,
    pub sha256: Option<String>,
    pub reason: Option<String>,
    pub on_box: bool,
    pub on_market: bool,
    pub upload_command_id: Option<String>,
    pub upload_reason: Option<String>,
    pub restoring_id: Option<String>,
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
