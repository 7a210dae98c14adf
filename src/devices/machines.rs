//! Removing a Z-CLOUD machine: its host is told to delete it (a create still waiting is withdrawn),
//! its company allocations end and its row goes. Used by the owner's delete (binding.rs) and by a
//! rental's end (rental.rs). No HTTP types here.

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use crate::companies::model::ResourceType;
use crate::companies::resources::resource_released;
use crate::db::entity::{device_commands, devices};
use crate::devices::commands::queue;
use crate::devices::model::*;
use crate::error::AppError;
use crate::ids::CommandId;
use zmarket_protocol::heartbeat::{CommandBody, ZcloudRef};

/// Removes a device row; for a Z-CLOUD machine its host (when still there) gets a delete command.
pub(crate) async fn remove(conn: &impl ConnectionTrait, d: &devices::Model) -> Result<(), AppError> {
    if let Some(host) = &d.host_id {
        if devices::Entity::find_by_id(host.clone()).one(conn).await?.is_some() {
            let delete = CommandBody::ZcloudDelete(ZcloudRef { machine_id: d.id.clone().into() });
            queue(conn, &CommandId::new(), host, d.id.as_str(), &delete).await?;
        }
        // A create still waiting for the host is withdrawn.
        device_commands::Entity::delete_many()
            .filter(device_commands::Column::SubjectId.eq(d.id.clone()))
            .filter(device_commands::Column::Kind.eq(CommandKind::ZcloudCreate))
            .filter(device_commands::Column::Status.eq(CommandStatus::Pending))
            .exec(conn)
            .await?;
    }
    // Its allocations to company members end with it, and its GPUs are free again.
    resource_released(conn, ResourceType::Device, d.id.as_str()).await?;
    crate::devices::gpus::release(conn, crate::devices::gpus::Holder::Machine(&d.id)).await?;
    crate::devices::gpus::release_on(conn, &d.id).await?;
    devices::Entity::delete_by_id(d.id.clone()).exec(conn).await?;
    Ok(())
}
