//! Snapshots (issue 40, docs/data.md): an installation's data as one archive the box makes
//! (its volumes, the container's changes, how it ran), kept on the box and, on request, in the
//! market's store (`[apps] snapshot_store`); restored as a new installation on any of one's boxes
//! (or a rental on another owner's), downloaded, deleted; an ended rental's data kept for
//! `[apps] keep_ended_days`; an installation's daily backups. No HTTP types here.

use std::path::PathBuf;

use chrono::Duration;
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter, QueryOrder, Set};

use crate::apps::AppsCtx;
use crate::apps::copies::{market_file, part_file, store_dir};
use crate::apps::taking::{begin, bytes};
use crate::apps::access::{Names, installer, owned_by, reason_of, to_installation};
use crate::apps::lifecycle::install_phase;
use crate::apps::install::{NewInstallation, create, lock_device, unfit};
use crate::apps::model::*;
use crate::db::entity::{apps, devices, installations, snapshot_schedules, snapshots};
use crate::db::enums::{CommandKind, CommandStatus, DeviceStatus, NotificationKind, SnapshotKind, SnapshotStatus};
use crate::db::{now, write_txn};
use crate::devices::access::Owner;
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::ids::{AppId, CommandId, DeviceId, InstallationId, SnapshotId};
use crate::lang::Lang;
use zmarket_protocol::heartbeat::CommandBody;
use zmarket_protocol::snapshots::{RestoreRef, SnapshotRef, SnapshotReport};

/// The snapshots an owner has (columns of `snapshots`).
fn of_owner(owner: &Owner) -> Condition {
    match owner {
        Owner::User(u) => Condition::all().add(snapshots::Column::OwnerUserId.eq(u.as_str())).add(snapshots::Column::OwnerCompanyId.is_null()),
        Owner::Company(c) => Condition::all().add(snapshots::Column::OwnerCompanyId.eq(c.as_str())),
    }
}

/// Whose a snapshot is (a company's, else a person's).
fn owner_of(row: &snapshots::Model) -> Option<Owner> {
    match (&row.owner_company_id, &row.owner_user_id) {
        (Some(c), _) => Some(Owner::Company(c.clone())),
        (None, Some(u)) => Some(Owner::User(u.as_str().into())),
        (None, None) => None,
    }
}

/// A snapshot the caller manages: their own (or, as a company's administrator, the company's).
async fn visible(conn: &impl ConnectionTrait, auth: &Auth, id: &SnapshotId) -> Result<snapshots::Model, AppError> {
    let owner = installer(auth)?;
    snapshots::Entity::find_by_id(id.to_string()).filter(of_owner(&owner)).one(conn).await?.ok_or(AppError::Refused(Msg::SnapshotNotFound))
}

// ---- what people read ----

/// The installation's snapshots, newest first, with its backup schedule.
pub async fn of_installation(cx: &AppsCtx, auth: &Auth, id: &InstallationId, lang: Lang) -> Result<SnapshotList, AppError> {
    let owner = installer(auth)?;
    let row = installations::Entity::find_by_id(id.to_string()).filter(owned_by(&owner)).one(&cx.db).await?;
    let rows = snapshots::Entity::find()
        .filter(snapshots::Column::InstallationId.eq(id.to_string()))
        .filter(of_owner(&owner))
        .order_by_desc(snapshots::Column::CreatedAt)
        .all(&cx.db)
        .await?;
    if row.is_none() && rows.is_empty() {
        return Err(AppError::Refused(Msg::InstallationNotFound));
    }
    let backups = schedule_of(&cx.db, id).await?;
    let items = shown(&cx.db, rows, lang).await?;
    Ok(SnapshotList { total: items.len() as u64, items, backups })
}

/// Every snapshot of the caller's context, newest first.
pub async fn mine(cx: &AppsCtx, auth: &Auth, offset: u64, limit: u64, lang: Lang) -> Result<crate::http::List<Snapshot>, AppError> {
    use sea_orm::{PaginatorTrait, QuerySelect};
    let owner = installer(auth)?;
    let q = snapshots::Entity::find().filter(of_owner(&owner));
    let total = q.clone().count(&cx.db).await?;
    let rows = q.order_by_desc(snapshots::Column::CreatedAt).order_by_desc(snapshots::Column::Id).offset(offset).limit(limit).all(&cx.db).await?;
    Ok(crate::http::List { items: shown(&cx.db, rows, lang).await?, total })
}

async fn schedule_of(conn: &impl ConnectionTrait, installation: &InstallationId) -> Result<Backups, AppError> {
    Ok(snapshot_schedules::Entity::find_by_id(installation.to_string())
        .one(conn)
        .await?
        .map(|s| Backups { enabled: s.enabled, keep: s.keep })
        .unwrap_or(Backups { enabled: false, keep: DEFAULT_KEEP }))
}

/// The snapshots as people read them: names, the installations restoring from them.
async fn shown(conn: &impl ConnectionTrait, rows: Vec<snapshots::Model>, lang: Lang) -> Result<Vec<Snapshot>, AppError> {
    let app_ids: Vec<AppId> = rows.iter().map(|r| r.app_id.clone()).collect();
    let device_ids: Vec<DeviceId> = rows.iter().map(|r| r.device_id.clone()).collect();
    let restoring: Vec<InstallationId> = rows.iter().filter_map(|r| r.restoring_id.clone()).collect();
    let installs: Vec<InstallationId> = rows.iter().map(|r| r.installation_id.clone()).collect();
    let apps = apps::Entity::find().filter(apps::Column::Id.is_in(app_ids)).all(conn).await?;
    let devices = devices::Entity::find().filter(devices::Column::Id.is_in(device_ids)).all(conn).await?;
    let busy = installations::Entity::find().filter(installations::Column::Id.is_in(restoring)).all(conn).await?;
    let present: Vec<InstallationId> = installations::Entity::find()
        .filter(installations::Column::Id.is_in(installs))
        .filter(installations::Column::ActiveKey.is_not_null())
        .all(conn)
        .await?
        .into_iter()
        .map(|i| i.id)
        .collect();
    Ok(rows
        .into_iter()
        .map(|r| {
            let app = apps.iter().find(|a| a.id == r.app_id);
            let device = devices.iter().find(|d| d.id == r.device_id);
            let restoring = r.restoring_id.as_ref().is_some_and(|i| busy.iter().any(|b| &b.id == i && install_phase(b.status)));
            let (reason_code, reason) = reason_of(r.reason.as_deref().or(r.upload_reason.as_deref()), lang).unzip();
            Snapshot {
                app_name: app.map(|a| if lang == Lang::Zh { a.name_zh.clone() } else { a.name_en.clone() }).unwrap_or_else(|| r.app_id.clone().into()),
                icon_url: app.map(|a| crate::market::model::icon_url(&a.icon)),
                device_name: device.map(|d| d.name.clone()),
                place: if r.on_market { SnapshotPlace::Market } else { SnapshotPlace::Box },
                uploading: r.upload_command_id.is_some(),
                installation_present: present.contains(&r.installation_id),
                restoring,
                reason,
                reason_code,
                id: r.id.into(),
                installation_id: r.installation_id.into(),
                app_id: r.app_id.into(),
                version: r.version,
                device_id: r.device_id.into(),
                created_at: r.created_at,
                size: r.size,
                status: r.status,
                progress: r.progress,
                on_box: r.on_box,
                kind: r.kind,
                expires_at: r.expires_at,
                sha256: r.sha256,
            }
        })
        .collect())
}

pub async fn one(cx: &AppsCtx, auth: &Auth, id: &SnapshotId, lang: Lang) -> Result<Snapshot, AppError> {
    let row = visible(&cx.db, auth, id).await?;
    Ok(shown(&cx.db, vec![row], lang).await?.remove(0))
}

// ---- backups ----

/// Backups kept when a schedule does not say.
pub const DEFAULT_KEEP: i32 = 7;
pub const MAX_KEEP: i32 = 30;

/// Turns an installation's daily backup on or off, keeping its `keep` newest.
pub async fn set_backups(cx: &AppsCtx, auth: &Auth, id: &InstallationId, ask: Backups) -> Result<Backups, AppError> {
    if !(1..=MAX_KEEP).contains(&ask.keep) {
        return Err(AppError::invalid("keep", Msg::InvalidField("keep")));
    }
    let owner = installer(auth)?;
    let txn = write_txn(&cx.db).await?;
    installations::Entity::find_by_id(id.to_string())
        .filter(owned_by(&owner))
        .filter(installations::Column::ActiveKey.is_not_null())
        .one(&txn)
        .await?
        .ok_or(AppError::Refused(Msg::InstallationNotFound))?;
    let t = now();
    match snapshot_schedules::Entity::find_by_id(id.to_string()).one(&txn).await? {
        Some(s) => {
            let mut a: snapshot_schedules::ActiveModel = s.into();
            a.enabled = Set(ask.enabled);
            a.keep = Set(ask.keep);
            a.updated_at = Set(t);
            a.update(&txn).await?;
        }
        None => {
            snapshot_schedules::ActiveModel { installation_id: Set(InstallationId::from(id)), enabled: Set(ask.enabled), keep: Set(ask.keep), updated_at: Set(t) }.insert(&txn).await?;
        }
    }
    prune(&txn, id, ask.keep).await?;
    txn.commit().await?;
    Ok(ask)
}

/// Keeps an installation's `keep` newest backups; the older ones go (from the box and the market).
async fn prune(conn: &impl ConnectionTrait, installation: &InstallationId, keep: i32) -> Result<(), AppError> {
    let backups = snapshots::Entity::find()
        .filter(snapshots::Column::InstallationId.eq(installation))
        .filter(snapshots::Column::Kind.eq(SnapshotKind::Backup))
        .filter(snapshots::Column::Status.ne(SnapshotStatus::Creating))
        .order_by_desc(snapshots::Column::CreatedAt)
        .all(conn)
        .await?;
    for old in backups.into_iter().skip(keep.max(1) as usize) {
        remove(conn, &old).await?;
    }
    Ok(())
}

// ---- keeping one on the market, downloading it ----

/// "Keep on the market": the box copies the snapshot to the market's store. 413 over the owner's
/// `[apps] snapshot_market_limit_bytes`; 409 when its box is offline or it is not ready.
pub async fn keep_on_market(cx: &AppsCtx, auth: &Auth, id: &SnapshotId, lang: Lang) -> Result<Snapshot, AppError> {
    let txn = write_txn(&cx.db).await?;
    let row = visible(&txn, auth, id).await?;
    let row = request_upload(cx, &txn, row).await?;
    let shown = shown(&txn, vec![row], lang).await?.remove(0);
    txn.commit().await?;
    Ok(shown)
}

/// Queues the box's copy to the market unless it is there or on its way.
async fn request_upload(cx: &AppsCtx, conn: &impl ConnectionTrait, row: snapshots::Model) -> Result<snapshots::Model, AppError> {
    if row.status != SnapshotStatus::Ready {
        return Err(AppError::Refused(Msg::SnapshotNotReady));
    }
    if row.on_market || row.upload_command_id.is_some() {
        return Ok(row);
    }
    let limit = cx.settings.snapshot_market_limit_bytes;
    let owner = owner_of(&row).ok_or(AppError::Refused(Msg::SnapshotNotFound))?;
    let used = bytes(conn, of_owner(&owner).add(snapshots::Column::OnMarket.eq(true))).await?;
    if (used + row.size) as u64 > limit {
        return Err(AppError::Refused(Msg::SnapshotQuota(limit)));
    }
    let online = devices::Entity::find_by_id(row.device_id.clone()).one(conn).await?.is_some_and(|d| d.status == DeviceStatus::Online);
    if !online || !row.on_box {
        return Err(AppError::Refused(Msg::SnapshotBoxOffline));
    }
    let command = CommandId::new();
    let body = CommandBody::SnapshotUpload(SnapshotRef { snapshot_id: row.id.clone().into() });
    crate::devices::commands::queue(conn, &command, &row.device_id, row.id.as_str(), &body).await?;
    let mut a: snapshots::ActiveModel = row.into();
    a.upload_command_id = Set(Some(command.clone()));
    a.upload_reason = Set(None);
    a.updated_at = Set(now());
    Ok(a.update(conn).await?)
}

/// The file of a snapshot the market holds, and the name a download gets.
pub async fn download(cx: &AppsCtx, auth: &Auth, id: &SnapshotId) -> Result<(PathBuf, String), AppError> {
    let row = visible(&cx.db, auth, id).await?;
    if !row.on_market {
        return Err(AppError::Refused(Msg::SnapshotNotOnMarket));
    }
    Ok((market_file(&store_dir(cx), &row.id), file_name(&row)))
}

/// How long a download link works (a broken download resumes with it meanwhile).
const LINK_LIFE: Duration = Duration::minutes(30);

/// A link a browser downloads the snapshot with (its own download: the file goes to disk, never
/// through the page's memory): `GET …/file?ticket=…`, good for half an hour. 409 while the market
/// does not hold it.
pub async fn download_link(cx: &AppsCtx, auth: &Auth, id: &SnapshotId) -> Result<DownloadLink, AppError> {
    let txn = write_txn(&cx.db).await?;
    let row = visible(&txn, auth, id).await?;
    if !row.on_market {
        return Err(AppError::Refused(Msg::SnapshotNotOnMarket));
    }
    let ticket = crate::iam::tokens::random_token();
    let expires_at = now() + LINK_LIFE;
    snapshots::Entity::update_many()
        .col_expr(snapshots::Column::DownloadTicket, Expr::value(crate::iam::tokens::hash_token(&ticket)))
        .col_expr(snapshots::Column::DownloadTicketExpiresAt, Expr::value(expires_at))
        .filter(snapshots::Column::Id.eq(row.id.clone()))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(DownloadLink { url: format!("/api/rmp/v1/snapshots/{}/file?ticket={ticket}", row.id), expires_at })
}

/// The file and name of a download link's snapshot (404 for a wrong or old ticket).
pub async fn by_ticket(cx: &AppsCtx, id: &SnapshotId, ticket: &str) -> Result<(PathBuf, String), AppError> {
    let row = snapshots::Entity::find_by_id(id.to_string())
        .filter(snapshots::Column::DownloadTicket.eq(crate::iam::tokens::hash_token(ticket)))
        .filter(snapshots::Column::DownloadTicketExpiresAt.gt(now()))
        .filter(snapshots::Column::OnMarket.eq(true))
        .one(&cx.db)
        .await?
        .ok_or(AppError::Refused(Msg::SnapshotNotFound))?;
    Ok((market_file(&store_dir(cx), &row.id), file_name(&row)))
}

fn file_name(row: &snapshots::Model) -> String {
    let name = format!("{}-{}-{}.tar.zst", row.app_id, row.version, row.created_at.format("%Y%m%d-%H%M%S"));
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

// ---- deleting ----

/// Deletes a snapshot: from the market's store now, from its box by a command. 409 while a
/// restore from it is under way.
pub async fn delete(cx: &AppsCtx, auth: &Auth, id: &SnapshotId) -> Result<(), AppError> {
    let txn = write_txn(&cx.db).await?;
    lock(&txn, id).await?;
    let row = visible(&txn, auth, id).await?;
    if restoring(&txn, &row).await? {
        return Err(AppError::Refused(Msg::SnapshotRestoring));
    }
    remove(&txn, &row).await?;
    txn.commit().await?;
    let _ = std::fs::remove_file(market_file(&store_dir(cx), &row.id));
    let _ = std::fs::remove_file(part_file(&store_dir(cx), &row.id));
    Ok(())
}

/// Holds the snapshot's row until the transaction ends (a row lock on PostgreSQL; SQLite's writer
/// lock already serializes): a restore and a delete, or two restores, check and write one after
/// the other.
async fn lock(conn: &impl ConnectionTrait, id: &SnapshotId) -> Result<(), AppError> {
    snapshots::Entity::update_many()
        .col_expr(snapshots::Column::UpdatedAt, Expr::col(snapshots::Column::UpdatedAt))
        .filter(snapshots::Column::Id.eq(id))
        .exec(conn)
        .await?;
    Ok(())
}

async fn restoring(conn: &impl ConnectionTrait, row: &snapshots::Model) -> Result<bool, AppError> {
    let Some(i) = &row.restoring_id else { return Ok(false) };
    Ok(installations::Entity::find_by_id(i.clone()).one(conn).await?.is_some_and(|r| install_phase(r.status)))
}

/// The row goes; the box is told to remove its copy (the market's file goes with the caller).
async fn remove(conn: &impl ConnectionTrait, row: &snapshots::Model) -> Result<(), AppError> {
    // A box since unlinked and gone has nothing left to tell.
    let boxed = row.on_box && devices::Entity::find_by_id(row.device_id.clone()).one(conn).await?.is_some();
    if boxed {
        let body = CommandBody::SnapshotDelete(SnapshotRef { snapshot_id: row.id.clone().into() });
        crate::devices::commands::queue(conn, &CommandId::new(), &row.device_id, row.id.as_str(), &body).await?;
    }
    snapshots::Entity::delete_by_id(row.id.clone()).exec(conn).await?;
    Ok(())
}

// ---- restoring ----

/// A new installation from a snapshot on `device_id`: one of the caller's devices, or with
/// `hours` a rental on another owner's rentable device. The volumes come back as they were and
/// the version is the snapshot's. When the snapshot is only on another box, that box copies it
/// to the market first (the new box waits for it).
pub async fn restore(cx: &AppsCtx, auth: &Auth, id: &SnapshotId, ask: RestoreAsk, request_key: Option<String>, lang: Lang) -> Result<Installation, AppError> {
    let txn = write_txn(&cx.db).await?;
    lock(&txn, id).await?;
    let row = visible(&txn, auth, id).await?;
    if row.status != SnapshotStatus::Ready || row.sha256.is_none() {
        return Err(AppError::Refused(Msg::SnapshotNotReady));
    }
    if restoring(&txn, &row).await? {
        return Err(AppError::Refused(Msg::SnapshotRestoring));
    }
    let manifest: Manifest = match serde_json::from_str(&row.manifest) {
        Ok(m) => m,
        Err(_) => {
            let app = apps::Entity::find_by_id(row.app_id.clone()).one(&txn).await?.ok_or(AppError::Refused(Msg::AppNotFound))?;
            cx.manifests.of(&app).ok_or(AppError::Refused(Msg::AppNotInstallable))?
        }
    };
    let from = Restore {
        refs: RestoreRef {
            snapshot_id: row.id.clone().into(),
            sha256: row.sha256.clone().unwrap_or_default(),
            size: row.size,
            path: format!("/api/agent/v1/snapshots/{}/data", row.id),
        },
        version: row.version.clone(),
        manifest,
    };
    let device_id = ask.device_id.to_string();
    // Elsewhere than on the box that holds it: through the market.
    let row = if device_id != row.device_id && !row.on_market { request_upload(cx, &txn, row).await? } else { row };
    let installed = match ask.hours {
        Some(hours) => {
            txn.commit().await?;
            let rent = RentAsk { app_id: row.app_id.as_str().into(), device_id: ask.device_id.clone(), hours, seen_price: None };
            let inst = crate::apps::rental::rent_from(cx, auth, rent, request_key, lang, Some(from)).await?;
            let txn = write_txn(&cx.db).await?;
            mark_restoring(&txn, &row.id, &InstallationId::from(&inst.id)).await?;
            txn.commit().await?;
            return Ok(inst);
        }
        None => {
            let owner = installer(auth)?;
            let device = devices::Entity::find_by_id(device_id.clone()).filter(crate::devices::access::owned_by(&owner)).one(&txn).await?.ok_or(AppError::Refused(Msg::DeviceNotFound))?;
            let app = apps::Entity::find_by_id(row.app_id.clone()).one(&txn).await?.ok_or(AppError::Refused(Msg::AppNotFound))?;
            lock_device(&txn, &device.id).await?;
            if let Some((err, _)) = unfit(&txn, &app, &device).await? {
                return Err(err);
            }
            create(&txn, NewInstallation { owner: &owner, created_by: &auth.user_id, kind: InstallKind::Own, app: &app, manifest: &from.manifest, device: &device, from: Some(&from) }).await?
        }
    };
    mark_restoring(&txn, &row.id, &installed.id).await?;
    let names = Names::load(&txn, std::slice::from_ref(&installed)).await?;
    txn.commit().await?;
    Ok(to_installation(&installed, &names, lang))
}

async fn mark_restoring(conn: &impl ConnectionTrait, snapshot: &SnapshotId, installation: &InstallationId) -> Result<(), AppError> {
    snapshots::Entity::update_many()
        .col_expr(snapshots::Column::RestoringId, Expr::value(installation))
        .col_expr(snapshots::Column::UpdatedAt, Expr::value(now()))
        .filter(snapshots::Column::Id.eq(snapshot))
        .exec(conn)
        .await?;
    Ok(())
}


/// A beat's snapshot reports and the acknowledgements of the snapshot commands (inside the
/// heartbeat's transaction): answers whether something people see changed.
pub async fn on_beat(
    txn: &DatabaseTransaction,
    device: &devices::Model,
    reports: &[SnapshotReport],
    acked: &[crate::devices::commands::Queued],
    keep_ended_days: u32,
) -> Result<bool, AppError> {
    let mut changed = false;
    for r in reports {
        let r = r.clone().trimmed();
        let status = SnapshotStatus::from(r.status);
        let Some(row) = snapshots::Entity::find_by_id(r.id.clone()).filter(snapshots::Column::DeviceId.eq(device.id.clone())).one(txn).await? else { continue };
        if row.status != SnapshotStatus::Creating {
            continue; // a report of one already settled (sent again)
        }
        let mut a: snapshots::ActiveModel = row.clone().into();
        a.status = Set(status);
        a.progress = Set(if status == SnapshotStatus::Creating { r.progress } else { None });
        if status == SnapshotStatus::Ready {
            a.size = Set(r.size);
            a.sha256 = Set(r.sha256.clone());
        }
        if status == SnapshotStatus::Failed {
            a.reason = Set(Some(r.reason.clone().unwrap_or_default().stored()));
            a.on_box = Set(false);
        }
        if row.kind == SnapshotKind::Ended && status != SnapshotStatus::Creating {
            a.expires_at = Set(Some(now() + Duration::days(i64::from(keep_ended_days))));
        }
        a.updated_at = Set(now());
        a.update(txn).await?;
        changed |= status != SnapshotStatus::Creating;
        if status == SnapshotStatus::Ready && row.kind == SnapshotKind::Backup {
            let keep = schedule_of(txn, &row.installation_id).await?.keep;
            prune(txn, &row.installation_id, keep).await?;
        }
    }
    for cmd in acked.iter().filter(|c| c.kind == CommandKind::SnapshotUpload) {
        let Some(row) = snapshots::Entity::find().filter(snapshots::Column::UploadCommandId.eq(cmd.id.clone())).one(txn).await? else { continue };
        let mut a: snapshots::ActiveModel = row.into();
        a.upload_command_id = Set(None);
        if cmd.status != CommandStatus::Done {
            let why = cmd.error.as_deref().map(Reason::from_stored).unwrap_or_default();
            a.upload_reason = Set(Some(why.stored()));
        }
        a.updated_at = Set(now());
        a.update(txn).await?;
        changed = true;
    }
    Ok(changed)
}

// ---- the job ----

/// The snapshots job: tells renters their kept data goes tomorrow, removes what expired, takes
/// the daily backups that are due. Answers how many it changed.
pub async fn sweep(cx: &AppsCtx) -> Result<usize, AppError> {
    let t = now();
    let mut n = 0;
    let soon = snapshots::Entity::find()
        .filter(snapshots::Column::ExpiresAt.lte(t + Duration::days(1)))
        .filter(snapshots::Column::ExpiresAt.gt(t))
        .filter(snapshots::Column::ExpiryNoticed.eq(false))
        .all(&cx.db)
        .await?;
    for s in soon {
        let txn = write_txn(&cx.db).await?;
        notice(&txn, &s).await?;
        snapshots::Entity::update_many().col_expr(snapshots::Column::ExpiryNoticed, Expr::value(true)).filter(snapshots::Column::Id.eq(s.id.clone())).exec(&txn).await?;
        txn.commit().await?;
        n += 1;
    }
    let expired = snapshots::Entity::find().filter(snapshots::Column::ExpiresAt.lte(t)).all(&cx.db).await?;
    for s in expired {
        let txn = write_txn(&cx.db).await?;
        if !restoring(&txn, &s).await? {
            remove(&txn, &s).await?;
            txn.commit().await?;
            let _ = std::fs::remove_file(market_file(&store_dir(cx), &s.id));
            n += 1;
        }
    }
    n += backups_due(cx).await?;
    n += orphans(cx).await?;
    Ok(n)
}

/// Removes the store's files whose snapshot is gone (a pruned backup kept on the market, one
/// removed while the market was down): the rows are the truth, the folder follows.
async fn orphans(cx: &AppsCtx) -> Result<usize, AppError> {
    let dir = store_dir(cx);
    let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(0) };
    let files: Vec<(SnapshotId, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let id = SnapshotId::from(name.strip_suffix(".tar.zst").or_else(|| name.strip_suffix(".part"))?);
            Some((id, e.path()))
        })
        .collect();
    if files.is_empty() {
        return Ok(0);
    }
    let ids: Vec<SnapshotId> = files.iter().map(|(id, _)| id.clone()).collect();
    let known: std::collections::HashSet<SnapshotId> = snapshots::Entity::find().filter(snapshots::Column::Id.is_in(ids)).all(&cx.db).await?.into_iter().map(|r| r.id).collect();
    let mut n = 0;
    for (id, path) in files.into_iter().filter(|(id, _)| !known.contains(id)) {
        if std::fs::remove_file(&path).is_ok() {
            tracing::info!(snapshot = %id, "removed a stored snapshot whose record is gone");
            n += 1;
        }
    }
    Ok(n)
}

/// The installations whose daily backup is due (none in a day, none being made), online, running
/// or stopped: a backup each.
async fn backups_due(cx: &AppsCtx) -> Result<usize, AppError> {
    let schedules = snapshot_schedules::Entity::find().filter(snapshot_schedules::Column::Enabled.eq(true)).all(&cx.db).await?;
    let mut n = 0;
    for s in schedules {
        let last = snapshots::Entity::find()
            .filter(snapshots::Column::InstallationId.eq(s.installation_id.clone()))
            .filter(snapshots::Column::Kind.eq(SnapshotKind::Backup))
            .order_by_desc(snapshots::Column::CreatedAt)
            .one(&cx.db)
            .await?;
        // Daily; a backup that failed is tried again after an hour.
        let wait = |l: &snapshots::Model| if l.status == SnapshotStatus::Failed { Duration::hours(1) } else { Duration::days(1) };
        if last.is_some_and(|l| l.created_at > now() - wait(&l)) {
            continue;
        }
        // Due: the rest is read again under the write lock.
        let txn = write_txn(&cx.db).await?;
        let Some(row) = installations::Entity::find_by_id(s.installation_id.clone()).filter(installations::Column::ActiveKey.is_not_null()).one(&txn).await? else { continue };
        let online = devices::Entity::find_by_id(row.device_id.clone()).one(&txn).await?.is_some_and(|d| d.status == DeviceStatus::Online);
        if !online || !matches!(row.status, AppStatus::Running | AppStatus::Stopped) {
            continue;
        }
        let Ok(command) = begin(cx, &txn, &row, SnapshotKind::Backup, &row.created_by).await else { continue };
        let change = crate::apps::state::Change { command: Some(command), desired: Some(row.desired), ..Default::default() };
        if crate::apps::state::apply(&txn, &row, crate::apps::lifecycle::Event::Act(Action::Snapshot), change).await?.is_some() {
            txn.commit().await?;
            n += 1;
        }
    }
    Ok(n)
}

/// "The data of your ended rental goes tomorrow" to its owner.
async fn notice(conn: &impl ConnectionTrait, s: &snapshots::Model) -> Result<(), AppError> {
    let app = apps::Entity::find_by_id(s.app_id.clone()).one(conn).await?;
    let (en, zh) = app.map(|a| (a.name_en, a.name_zh)).unwrap_or_else(|| (s.app_id.clone().into(), s.app_id.clone().into()));
    let at = s.expires_at.map(|e| e.format("%Y-%m-%d %H:%M").to_string()).unwrap_or_default();
    let owner = owner_of(s);
    let title = "Kept data goes tomorrow".to_string();
    let body = format!("The data kept of your ended rental of {en} is removed at {at} UTC: restore or download it before then.");
    let params = serde_json::json!({"snapshot_id": s.id, "installation_id": s.installation_id, "app_id": s.app_id,
        "title_zh": "保留的数据明天删除", "body_zh": format!("您已结束的 {zh} 租用所保留的数据将于 {at}（世界标准时间）删除：请在此之前恢复或下载。"),
        "path": "/app"});
    for user in crate::devices::notify::owner_recipients(conn, owner).await? {
        crate::notifications::service::notify(conn, &user, NotificationKind::SnapshotExpiring, &title, &body, &params).await?;
    }
    Ok(())
}

/// The operator's overview: snapshots kept, their bytes on the market and on the boxes.
pub async fn storage(conn: &impl ConnectionTrait) -> Result<(u64, i64, i64), AppError> {
    use sea_orm::PaginatorTrait;
    let ready = || Condition::all().add(snapshots::Column::Status.eq(SnapshotStatus::Ready));
    let count = snapshots::Entity::find().filter(ready()).count(conn).await?;
    let market = bytes(conn, ready().add(snapshots::Column::OnMarket.eq(true))).await?;
    let boxes = bytes(conn, ready().add(snapshots::Column::OnBox.eq(true))).await?;
    Ok((count, market, boxes))
}

