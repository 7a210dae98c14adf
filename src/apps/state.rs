//! Moving an installation from one state to the next (always through `lifecycle::next`, with a
//! conditional UPDATE so two writers cannot both move it), its history, and the commands sent to
//! its device. No HTTP types here.

use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};

use crate::apps::lifecycle::{Event, next};
use crate::apps::model::{AppStatus, Desired};
use crate::apps::money::{self, Happened};
use zmarket_protocol::heartbeat::CommandBody;
use crate::apps::notify;
use crate::db::entity::{installation_events, installations};
use crate::db::{new_id, now};
use crate::error::AppError;
use crate::ids::{CommandId, InstallationId};

/// What changes with a transition besides the status.
#[derive(Default)]
pub struct Change {
    pub reason: Option<String>,
    pub progress: Option<i32>,
    pub open_url: Option<String>,
    /// A command sent with the transition (its id becomes the pending one).
    pub command: Option<CommandBody>,
    pub desired: Option<Desired>,
    /// The version it runs from now on (an update carried out).
    pub version: Option<String>,
}

/// Applies `event` to `row` if the table allows it and nobody moved the row meanwhile. Returns
/// the row as it is now, or `None` when the event does not apply (refused or lost a race).
pub async fn apply(
    conn: &impl crate::billing::ledger::Conn,
    row: &installations::Model,
    event: Event,
    change: Change,
) -> Result<Option<installations::Model>, AppError> {
    let Some(to) = next(row.status, event, row.kind) else { return Ok(None) };
    let t = now();
    let command_id = match &change.command {
        Some(_) => Some(CommandId::new()),
        // a command carried out, failed or timed out is no longer pending
        None if matches!(event, Event::Done(_) | Event::Fail | Event::Timeout) => None,
        None => row.command_id.clone().map(String::from).map(CommandId::from),
    };
    let mut q = installations::Entity::update_many()
        .col_expr(installations::Column::Status, Expr::value(to))
        .col_expr(installations::Column::StateSince, Expr::value(t))
        .col_expr(installations::Column::UpdatedAt, Expr::value(t))
        .col_expr(installations::Column::CommandId, Expr::value(command_id.clone()))
        .col_expr(installations::Column::Progress, Expr::value(change.progress))
        .col_expr(installations::Column::StatusReason, Expr::value(change.reason.clone()))
        .col_expr(
            installations::Column::OpenUrl,
            // the running version keeps its address while an update is under way
            Expr::value(if matches!(to, AppStatus::Running | AppStatus::Updating) { change.open_url.clone().or(row.open_url.clone()) } else { None }),
        );
    if let Some(d) = change.desired {
        q = q.col_expr(installations::Column::Desired, Expr::value(d));
    }
    if let Some(v) = &change.version {
        q = q.col_expr(installations::Column::Version, Expr::value(v.clone()));
    }
    if to == AppStatus::NotInstall {
        q = q.col_expr(installations::Column::ActiveKey, Expr::value(Option::<String>::None));
    }
    let mut q = q.filter(installations::Column::Id.eq(row.id.clone())).filter(installations::Column::Status.eq(row.status));
    q = match &row.command_id {
        Some(c) => q.filter(installations::Column::CommandId.eq(c.clone())),
        None => q.filter(installations::Column::CommandId.is_null()),
    };
    if q.exec(conn).await?.rows_affected != 1 {
        return Ok(None);
    }
    if to == AppStatus::NotInstall {
        crate::versions::standing_changed();
        // Its GPUs are free for the next holder.
        crate::devices::gpus::release(conn, crate::devices::gpus::Holder::Installation(&row.id)).await?;
    }
    if let (Some(body), Some(id)) = (change.command, &command_id) {
        crate::devices::commands::queue(conn, id, &row.device_id, row.id.as_str(), &body).await?;
    }
    let version = change.version.as_deref().unwrap_or(&row.version);
    record(conn, &row.id, to, change.reason.as_deref(), version).await?;
    let now_row = installations::Entity::find_by_id(row.id.clone()).one(conn).await?;
    if let Some(r) = &now_row {
        notify::on_transition(conn, row.status, r).await?;
        money::settle(conn, r, money::plan(r, Happened::Moved { from: row.status, at: t })).await?;
    }
    Ok(now_row)
}

/// Updates an install's progress (a report of the state it is already in).
pub async fn progress(conn: &impl ConnectionTrait, row: &installations::Model, progress: Option<i32>) -> Result<(), AppError> {
    if row.progress == progress {
        return Ok(());
    }
    installations::Entity::update_many()
        .col_expr(installations::Column::Progress, Expr::value(progress))
        .col_expr(installations::Column::UpdatedAt, Expr::value(now()))
        .filter(installations::Column::Id.eq(row.id.clone()))
        .filter(installations::Column::Status.eq(row.status))
        .exec(conn)
        .await?;
    Ok(())
}

/// Keeps the reported web address of a running installation.
pub async fn open_url(conn: &impl ConnectionTrait, row: &installations::Model, url: Option<String>) -> Result<(), AppError> {
    if row.open_url == url || row.status != AppStatus::Running {
        return Ok(());
    }
    installations::Entity::update_many()
        .col_expr(installations::Column::OpenUrl, Expr::value(url))
        .filter(installations::Column::Id.eq(row.id.clone()))
        .filter(installations::Column::Status.eq(AppStatus::Running))
        .exec(conn)
        .await?;
    Ok(())
}

/// One line of the installation's history.
pub async fn record(conn: &impl ConnectionTrait, installation_id: &InstallationId, status: AppStatus, reason: Option<&str>, version: &str) -> Result<(), AppError> {
    installation_events::ActiveModel {
        id: Set(new_id()),
        installation_id: Set(InstallationId::from(installation_id)),
        status: Set(status),
        reason: Set(reason.map(str::to_string)),
        version: Set(Some(version.to_string()).filter(|v| !v.is_empty())),
        created_at: Set(now()),
    }
    .insert(conn)
    .await?;
    Ok(())
}

