//! Installations as other domains see them: orders follows the app an order runs, its matcher
//! asks whether an app is on a box, and releases the app once the order is over. They ask here
//! rather than read `installations`, which this domain owns
//! (docs/architecture.md "Who owns which table").

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait, QueryFilter};

use crate::apps::install::active_key;
use crate::apps::meter::unmetered_secs;
use crate::apps::model::AppStatus;
use crate::billing::ledger;
use crate::db::entity::{devices, installations};
use crate::error::AppError;
use crate::ids::{AppId, DeviceId, InstallationId};

/// What another domain reads of an installation: its state, the reason it failed, its open link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub status: AppStatus,
    pub status_reason: Option<String>,
    pub open_url: Option<String>,
}

impl Seen {
    fn of(i: installations::Model) -> Seen {
        Seen { status: i.status, status_reason: i.status_reason, open_url: i.open_url }
    }
}

/// The installation `id`, if it exists.
pub async fn one(conn: &impl ConnectionTrait, id: &InstallationId) -> Result<Option<Seen>, DbErr> {
    Ok(installations::Entity::find_by_id(id.to_string()).one(conn).await?.map(Seen::of))
}

/// The installations of `ids` that exist, by id.
pub async fn many(conn: &impl ConnectionTrait, ids: impl IntoIterator<Item = InstallationId>) -> Result<HashMap<InstallationId, Seen>, DbErr> {
    let rows = installations::Entity::find().filter(installations::Column::Id.is_in(ids)).all(conn).await?;
    Ok(rows.into_iter().map(|i| (i.id.clone(), Seen::of(i))).collect())
}

/// The seconds the installation `id` was seen running under its meter up to `at` (between two
/// reports of its box, never past the last one; silences not counted): its count so far and what
/// its running meter has not counted yet. What an order charges. `None` when it does not exist.
pub async fn running_secs(conn: &impl ConnectionTrait, id: &InstallationId, at: DateTime<Utc>) -> Result<Option<i64>, DbErr> {
    let Some(i) = installations::Entity::find_by_id(id.clone()).one(conn).await? else { return Ok(None) };
    let seen = devices::Entity::find_by_id(i.device_id.clone()).one(conn).await?.and_then(|d| d.last_seen_at);
    Ok(Some(i.rent_seconds + unmetered_secs(&i, at, seen)))
}

/// Whether `app_id` is on the box `device_id` (installed, installing or rented, not yet removed).
pub async fn installed(conn: &impl ConnectionTrait, device_id: &DeviceId, app_id: &AppId) -> Result<bool, DbErr> {
    Ok(installations::Entity::find().filter(installations::Column::ActiveKey.eq(active_key(device_id, app_id))).count(conn).await? > 0)
}

/// Removes the app an order ran from the provider's box, if its state allows it now. True once
/// it is gone or going (no such installation, not installed, shutting down, deleting,
/// uninstalling, or ended now); false while it cannot be ended yet (a command is pending, or it
/// is still installing): asked again later.
pub async fn release(conn: &impl ledger::Conn, id: &InstallationId) -> Result<bool, AppError> {
    let inst = installations::Entity::find_by_id(id.to_string()).one(conn).await?;
    Ok(match &inst {
        None => true,
        Some(i) if i.status == AppStatus::NotInstall => true,
        Some(i) if matches!(i.status, AppStatus::ShuttingDown | AppStatus::Deleting | AppStatus::Uninstalling) => true,
        Some(i) if i.command_id.is_some() => false,
        Some(i) => crate::apps::rental::end(conn, i).await?.is_some(),
    })
}
