//! A box's figures as its owner and its renters may read them (docs/gpus.md "Telemetry"): the
//! owner (or a member it is assigned to) reads the whole box; a person whose installation on it
//! holds GPUs reads those GPUs only; anyone else gets 404. The series themselves are the
//! devices domain's (src/devices/telemetry.rs). No HTTP types here.

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::apps::AppsCtx;
use crate::apps::access::{condition, scope};
use crate::db::entity::{devices, installations};
use crate::devices::telemetry::{self, DeviceMetrics};
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::ids::{DeviceId, InstallationId};

/// The figures of device `id` over the last `minutes` (1 to 1440, checked by the caller).
pub async fn device_metrics(cx: &AppsCtx, auth: &Auth, id: &DeviceId, minutes: i64) -> Result<DeviceMetrics, AppError> {
    let d = devices::Entity::find_by_id(id.to_string()).one(&cx.db).await?.ok_or(AppError::Refused(Msg::DeviceNotFound))?;
    if crate::devices::access::may_see(&cx.db, auth, &d).await? {
        return telemetry::series(&cx.db, &d, minutes, None, true).await;
    }
    // A renter (or an owner of an installation on another's box): the GPUs it holds.
    let s = scope(&cx.db, auth).await?;
    let mine: Vec<InstallationId> = installations::Entity::find()
        .filter(condition(&s))
        .filter(installations::Column::DeviceId.eq(d.id.clone()))
        .filter(installations::Column::ActiveKey.is_not_null())
        .filter(installations::Column::GpuCount.gt(0))
        .all(&cx.db)
        .await?
        .into_iter()
        .map(|r| r.id)
        .collect();
    let held: Vec<String> = crate::devices::gpus::held_by(&cx.db, &mine).await?.into_values().flatten().map(|g| g.uuid).collect();
    if held.is_empty() {
        return Err(AppError::Refused(Msg::DeviceNotFound));
    }
    telemetry::series(&cx.db, &d, minutes, Some(&held), false).await
}
