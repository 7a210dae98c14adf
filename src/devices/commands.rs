//! The commands waiting for a device's agent. Every domain queues through `queue` (an app's
//! install or stop, a Z-CLOUD machine's create or delete): the command is sent with each heartbeat
//! until acknowledged, and over the agent's channel as soon as it is queued (docs/connect.md).

use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};

use crate::db::entity::device_commands;
use crate::db::enums::CommandStatus;
use crate::db::now;
use crate::error::AppError;
use zmarket_protocol::heartbeat::CommandBody;
use crate::ids::{CommandId, DeviceId};

/// A command as the queue keeps it (what an acknowledgement hands to the listeners).
pub type Queued = device_commands::Model;

/// Queues `body` (command `id`, about `subject_id`: an installation, a machine) for the agent of
/// `device_id`, and wakes the channel's watcher: on SQLite nothing else would (PostgreSQL also
/// has the `zm_command_queued` trigger for other instances).
pub async fn queue(conn: &impl ConnectionTrait, id: &CommandId, device_id: &DeviceId, subject_id: &str, body: &CommandBody) -> Result<(), AppError> {
    device_commands::ActiveModel {
        id: Set(id.clone()),
        device_id: Set(device_id.clone()),
        subject_id: Set(Some(subject_id.to_string())),
        kind: Set(body.kind().into()),
        payload: Set(body.payload_text()),
        status: Set(CommandStatus::Pending),
        error: Set(None),
        created_at: Set(now()),
        acked_at: Set(None),
    }
    .insert(conn)
    .await?;
    command_queued(device_id);
    Ok(())
}

/// This process queued a command for a device: each connect watcher of the process hears the
/// device's id and looks at its channel at once rather than at its next poll (its transaction may
/// commit a moment later, so the watcher looks again). A watcher that fell behind by more than
/// [`QUEUED_BACKLOG`] ids looks at every channel it holds.
static QUEUED: std::sync::LazyLock<tokio::sync::broadcast::Sender<std::sync::Arc<str>>> =
    std::sync::LazyLock::new(|| tokio::sync::broadcast::channel(QUEUED_BACKLOG).0);
const QUEUED_BACKLOG: usize = 1024;

fn command_queued(device_id: &DeviceId) {
    let _ = QUEUED.send(device_id.as_str().into());
}

/// The ids of the devices a command is queued for from now on, in this process.
pub fn queued() -> tokio::sync::broadcast::Receiver<std::sync::Arc<str>> {
    QUEUED.subscribe()
}

/// A pending command that will not be carried out any more (the watchdog gave up on it): the
/// agent stops receiving it.
pub async fn withdraw(conn: &impl ConnectionTrait, command_id: &CommandId, reason: &str) -> Result<(), AppError> {
    device_commands::Entity::update_many()
        .col_expr(device_commands::Column::Status, Expr::value(CommandStatus::Failed))
        .col_expr(device_commands::Column::Error, Expr::value(reason))
        .col_expr(device_commands::Column::AckedAt, Expr::value(now()))
        .filter(device_commands::Column::Id.eq(command_id))
        .filter(device_commands::Column::Status.eq(CommandStatus::Pending))
        .exec(conn)
        .await?;
    Ok(())
}
