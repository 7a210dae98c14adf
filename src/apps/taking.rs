//! Taking a snapshot (docs/data.md): the row in `creating` and the command that has the box make
//! it, for a person's snapshot, a daily backup and an ended rental's kept data. Below the rules that
//! take them (install, rental, snapshots): it names none of them.

use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, Set};

use crate::apps::AppsCtx;
use crate::apps::model::*;
use crate::db::entity::{apps, installations, snapshots};
use crate::db::enums::{SnapshotKind, SnapshotStatus};
use crate::db::{new_id, now};
use crate::error::{AppError, Msg};
use zmarket_protocol::heartbeat::CommandBody;
use crate::ids::{SnapshotId, UserId};

/// A new snapshot of `row` in `creating`, and the `app_snapshot` command that makes it. 413 when
/// the installation's snapshots on its box already use `[apps] snapshot_box_quota_bytes`.
pub async fn begin(cx: &AppsCtx, conn: &impl ConnectionTrait, row: &installations::Model, kind: SnapshotKind, by: &UserId) -> Result<CommandBody, AppError> {
    let quota = cx.settings.snapshot_box_quota_bytes;
    let used = bytes(conn, Condition::all().add(snapshots::Column::InstallationId.eq(row.id.clone())).add(snapshots::Column::OnBox.eq(true))).await?;
    if used as u64 >= quota {
        return Err(AppError::Refused(Msg::SnapshotBoxQuota(quota)));
    }
    let id = insert(cx, conn, row, kind, by).await?;
    Ok(CommandBody::AppSnapshot(AppCommandPayload { installation_id: row.id.clone().into(), snapshot_id: Some(id) }))
}

/// The bytes of the snapshots `filter` selects, summed by the database.
pub async fn bytes(conn: &impl ConnectionTrait, filter: Condition) -> Result<i64, AppError> {
    let sum: Option<i64> = snapshots::Entity::find()
        .select_only()
        .column_as(Expr::cust("CAST(COALESCE(SUM(size), 0) AS BIGINT)"), "bytes")
        .filter(filter)
        .into_tuple()
        .one(conn)
        .await?;
    Ok(sum.unwrap_or(0))
}

async fn insert(cx: &AppsCtx, conn: &impl ConnectionTrait, row: &installations::Model, kind: SnapshotKind, by: &UserId) -> Result<String, AppError> {
    let app = apps::Entity::find_by_id(row.app_id.clone()).one(conn).await?;
    let manifest = app.as_ref().and_then(|a| cx.manifests.of(a)).map(|m| serde_json::to_string(&m).unwrap_or_default()).unwrap_or_default();
    let id = new_id();
    new_row(&id, row, kind, by, manifest).insert(conn).await?;
    Ok(id)
}

/// A snapshot row in `creating`: `manifest` empty when unknown (a restore then runs the app as
/// the catalogue says).
fn new_row(id: &str, row: &installations::Model, kind: SnapshotKind, by: &UserId, manifest: String) -> snapshots::ActiveModel {
    let t = now();
    snapshots::ActiveModel {
        id: Set(SnapshotId::from(id)),
        installation_id: Set(row.id.clone()),
        app_id: Set(row.app_id.clone()),
        version: Set(row.version.clone()),
        manifest: Set(manifest),
        device_id: Set(row.device_id.clone()),
        owner_user_id: Set(row.owner_user_id.clone()),
        owner_company_id: Set(row.owner_company_id.clone()),
        created_by: Set(UserId::from(by)),
        kind: Set(kind),
        status: Set(SnapshotStatus::Creating),
        progress: Set(Some(0)),
        size: Set(0),
        sha256: Set(None),
        reason: Set(None),
        on_box: Set(true),
        on_market: Set(false),
        upload_command_id: Set(None),
        upload_reason: Set(None),
        restoring_id: Set(None),
        expires_at: Set(None),
        download_ticket: Set(None),
        download_ticket_expires_at: Set(None),
        expiry_noticed: Set(false),
        created_at: Set(t),
        updated_at: Set(t),
    }
}

/// An ended rental's removal: its data is kept first, as a snapshot its renter may restore for
/// `[apps] keep_ended_days` (counted from when it is made). Only an app whose container ran.
pub async fn keep_ended(conn: &impl ConnectionTrait, r: &installations::Model) -> Result<Option<String>, AppError> {
    if !matches!(r.status, AppStatus::Running | AppStatus::Stopped | AppStatus::Suspended) {
        return Ok(None);
    }
    let id = new_id();
    new_row(&id, r, SnapshotKind::Ended, &r.created_by, String::new()).insert(conn).await?;
    Ok(Some(id))
}
