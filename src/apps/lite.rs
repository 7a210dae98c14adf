//! The Lite App rules (docs/product.md §8): Lite Apps share a GPU device's "lite app space", which its
//! owner edits through the device's sharing settings and powers off (for the market) by
//! unlinking it. Registered with the devices domain as a `DeviceGuard`:
//! - while any Lite App on the device is rented (by someone else), its sharing cannot be edited
//!   and it cannot be unlinked; nor can it be unlinked while it is offered for rent with a Lite
//!   App on it: "A lite app space cannot be edited or powered off while any lite app is rentable";
//! - while any of the owner's Lite Apps on it is not stopped, its sharing cannot be edited:
//!   "Stop all LiteApps before editing";
//! - installing a Lite App needs a GPU on the device (install.rs, `unfit`).

use sea_orm::{ColumnTrait, DatabaseTransaction, EntityTrait, QueryFilter};

use crate::db::enums::DisplayType;
use crate::apps::model::{AppStatus, InstallKind};
use crate::db::entity::{apps, devices, installations};
use crate::devices::guards::{DeviceChange, DeviceGuard};
use crate::error::{AppError, Msg};
use crate::ids::AppId;

pub struct LiteAppRules;

/// States a Lite App counts as stopped in (nothing of it runs on the box).
fn at_rest(s: AppStatus) -> bool {
    matches!(s, AppStatus::Stopped | AppStatus::Failed | AppStatus::InstallFailed | AppStatus::RentFailed | AppStatus::UninstallFailed)
}

/// Why `change` is refused for `device`, if it is: the rule on the installed Lite Apps.
pub fn refusal(device: &devices::Model, lite: &[installations::Model], change: DeviceChange) -> Option<Msg> {
    if lite.is_empty() {
        return None;
    }
    let rented = lite.iter().any(|i| i.kind == InstallKind::Rent);
    match change {
        DeviceChange::Unlink if rented || device.rentable => Some(Msg::LiteAppRentable),
        DeviceChange::Sharing if rented => Some(Msg::LiteAppRentable),
        DeviceChange::Sharing if lite.iter().any(|i| !at_rest(i.status)) => Some(Msg::StopLiteApps),
        _ => None,
    }
}

#[async_trait::async_trait]
impl DeviceGuard for LiteAppRules {
    async fn check(&self, txn: &DatabaseTransaction, device: &devices::Model, change: DeviceChange) -> Result<(), AppError> {
        let on_device = installations::Entity::find()
            .filter(installations::Column::DeviceId.eq(device.id.clone()))
            .filter(installations::Column::ActiveKey.is_not_null())
            .all(txn)
            .await?;
        if on_device.is_empty() {
            return Ok(());
        }
        let lite_ids: Vec<AppId> = apps::Entity::find()
            .filter(apps::Column::DisplayType.eq(DisplayType::LiteApp))
            .filter(apps::Column::Id.is_in(on_device.iter().map(|i| i.app_id.clone())))
            .all(txn)
            .await?
            .into_iter()
            .map(|a| a.id)
            .collect();
        let lite: Vec<installations::Model> = on_device.into_iter().filter(|i| lite_ids.contains(&i.app_id)).collect();
        match refusal(device, &lite, change) {
            Some(msg) => Err(AppError::Refused(msg)),
            None => Ok(()),
        }
    }
}
