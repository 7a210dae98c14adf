//! The owner's ask that a box measure its GPUs (docs/gpus.md "Verification"). No HTTP types here.

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::db::entity::device_commands;
use crate::db::enums::{CommandKind, CommandStatus, DeviceStatus};
use crate::devices::DevicesCtx;
use crate::devices::access::{device_view, managed};
use crate::devices::model::Device;
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::ids::{CommandId, DeviceId};
use zmarket_protocol::heartbeat::CommandBody;

/// The owner asks the box to measure its GPUs: a `gpu_verify` command (409 when the box is
/// offline; one waiting already is not queued twice).
pub async fn request_verify(cx: &DevicesCtx, auth: &Auth, id: &DeviceId) -> Result<Device, AppError> {
    let txn = crate::db::write_txn(&cx.db).await?;
    let (d, _) = managed(&txn, auth, id).await?;
    if d.status != DeviceStatus::Online {
        return Err(AppError::Refused(Msg::DeviceOffline));
    }
    let waiting = device_commands::Entity::find()
        .filter(device_commands::Column::DeviceId.eq(d.id.clone()))
        .filter(device_commands::Column::Kind.eq(CommandKind::GpuVerify))
        .filter(device_commands::Column::Status.eq(CommandStatus::Pending))
        .one(&txn)
        .await?;
    if waiting.is_none() {
        let body = CommandBody::GpuVerify(zmarket_protocol::gpus::VerifyPayload {});
        crate::devices::commands::queue(&txn, &CommandId::new(), &d.id, d.id.as_str(), &body).await?;
    }
    let view = device_view(&txn, &d).await?;
    txn.commit().await?;
    Ok(view)
}
