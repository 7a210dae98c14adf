//! Snapshots kept on the market (docs/data.md): the store (`[apps] snapshot_store`), the pieces a
//! box copies there (resumable, checked against the sha256 when whole) and what a box restoring
//! one reads. The agent's side of it; people's rules are apps::snapshots.

use std::path::{Path, PathBuf};

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use crate::apps::AppsCtx;
use crate::db::entity::{devices, installations, snapshots};
use crate::db::enums::SnapshotStatus;
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::ids::SnapshotId;
use zmarket_protocol::snapshots::UploadOffset;

/// Where the market keeps the snapshots it holds.
pub fn store_dir(cx: &AppsCtx) -> PathBuf {
    match cx.settings.snapshot_store.trim() {
        "" => cx.data_dir.join("snapshots"),
        dir => PathBuf::from(dir),
    }
}

pub fn market_file(dir: &Path, id: &SnapshotId) -> PathBuf {
    dir.join(format!("{id}.tar.zst"))
}

pub fn part_file(dir: &Path, id: &SnapshotId) -> PathBuf {
    dir.join(format!("{id}.part"))
}

/// The box asking (Bearer device secret) may read snapshot `id`: the box that made it, or the
/// box of the installation restoring from it.
async fn agent_may(conn: &impl ConnectionTrait, id: &SnapshotId, device: &devices::Model, write: bool) -> Result<snapshots::Model, AppError> {
    let row = snapshots::Entity::find_by_id(id.to_string()).one(conn).await?.ok_or(AppError::Refused(Msg::SnapshotNotFound))?;
    if row.device_id == device.id {
        return Ok(row);
    }
    if !write
        && let Some(i) = &row.restoring_id
        && installations::Entity::find_by_id(i.clone()).one(conn).await?.is_some_and(|r| r.device_id == device.id)
    {
        return Ok(row);
    }
    Err(AppError::Refused(Msg::SnapshotNotFound))
}

/// How much of snapshot `id` the market holds (the next upload piece starts there).
pub async fn upload_offset(cx: &AppsCtx, device: &devices::Model, id: &SnapshotId) -> Result<UploadOffset, AppError> {
    let row = agent_may(&cx.db, id, device, false).await?;
    if row.on_market {
        return Ok(UploadOffset { offset: row.size, size: row.size });
    }
    let have = std::fs::metadata(part_file(&store_dir(cx), id)).map(|m| m.len() as i64).unwrap_or(0);
    Ok(UploadOffset { offset: have, size: row.size })
}

/// The file an agent restoring snapshot `id` downloads (409 while the market does not hold it).
pub async fn agent_file(cx: &AppsCtx, device: &devices::Model, id: &SnapshotId) -> Result<PathBuf, AppError> {
    let row = agent_may(&cx.db, id, device, false).await?;
    if !row.on_market {
        return Err(AppError::Refused(Msg::SnapshotNotOnMarket));
    }
    Ok(market_file(&store_dir(cx), id))
}

/// One upload piece from the box that made snapshot `id`: `start` must be where the market's copy
/// stands (409 otherwise) and `total` its size; `write` appends the body to the part file and
/// answers the bytes written. The last piece is checked against the sha256: a mismatch throws
/// the copy away (422, the box starts over once).
pub async fn receive<F, Fut>(cx: &AppsCtx, device: &devices::Model, id: &SnapshotId, start: u64, total: u64, write: F) -> Result<UploadOffset, AppError>
where
    F: FnOnce(PathBuf) -> Fut,
    Fut: std::future::Future<Output = Result<u64, AppError>>,
{
    let row = agent_may(&cx.db, id, device, true).await?;
    if row.status != SnapshotStatus::Ready || total != row.size as u64 {
        return Err(AppError::invalid("content-range", Msg::InvalidField("content-range")));
    }
    if row.on_market {
        return Ok(UploadOffset { offset: row.size, size: row.size });
    }
    let dir = store_dir(cx);
    std::fs::create_dir_all(&dir).map_err(|e| AppError::Internal(e.into()))?;
    let part = part_file(&dir, id);
    let _guard = UploadGuard::take(id).ok_or(AppError::Refused(Msg::SnapshotOffset))?;
    let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    if have != start {
        return Err(AppError::Explained { msg: Msg::SnapshotOffset, data: serde_json::json!({ "offset": have }) });
    }
    let wrote = write(part.clone()).await?;
    let now_have = have + wrote;
    if now_have > total {
        let _ = std::fs::remove_file(&part);
        return Err(AppError::invalid("content-range", Msg::InvalidField("content-range")));
    }
    if now_have < total {
        return Ok(UploadOffset { offset: now_have as i64, size: total as i64 });
    }
    let p2 = part.clone();
    let digest = tokio::task::spawn_blocking(move || zmarket_protocol::snapshots::sha256_file(&p2)).await.map_err(|e| AppError::Internal(e.into()))?.map_err(|e| AppError::Internal(e.into()))?;
    if Some(digest.as_str()) != row.sha256.as_deref() {
        let _ = std::fs::remove_file(&part);
        tracing::warn!(snapshot = %id, "a snapshot copied to the market did not match its sha256: thrown away");
        return Err(AppError::Refused(Msg::SnapshotChecksum));
    }
    std::fs::rename(&part, market_file(&dir, id)).map_err(|e| AppError::Internal(e.into()))?;
    let txn = write_txn(&cx.db).await?;
    snapshots::Entity::update_many()
        .col_expr(snapshots::Column::OnMarket, Expr::value(true))
        .col_expr(snapshots::Column::UpdatedAt, Expr::value(now()))
        .filter(snapshots::Column::Id.eq(id))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    tracing::info!(snapshot = %id, size = total, "snapshot kept on the market");
    Ok(UploadOffset { offset: total as i64, size: total as i64 })
}

/// One upload at a time per snapshot in this process.
struct UploadGuard(String);

static UPLOADING: std::sync::LazyLock<std::sync::Mutex<std::collections::HashSet<String>>> = std::sync::LazyLock::new(Default::default);

impl UploadGuard {
    fn take(id: &SnapshotId) -> Option<UploadGuard> {
        UPLOADING.lock().unwrap().insert(id.to_string()).then(|| UploadGuard(id.to_string()))
    }
}

impl Drop for UploadGuard {
    fn drop(&mut self) {
        UPLOADING.lock().unwrap().remove(&self.0);
    }
}
