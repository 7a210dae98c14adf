//! An owner's settings of a device: sharing (mode, rentable, price), location and name. No
//! HTTP types here.

use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};

use crate::db::entity::devices;
use crate::db::{now, write_txn};
use crate::devices::{DevicesCtx, rental};
use crate::devices::access::{device_view, managed};
use crate::devices::guards::DeviceChange;
use crate::devices::model::*;
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::ids::{DeviceId, UserId};

pub async fn update_sharing(cx: &DevicesCtx, auth: &Auth, id: &DeviceId, req: Sharing) -> Result<Device, AppError> {
    let Sharing { mode, rentable, price_per_hour } = req;
    let txn = write_txn(&cx.db).await?;
    let (d, _) = managed(&txn, auth, id).await?;
    cx.guards.check(&txn, &d, DeviceChange::Sharing).await?;
    let price = price_per_hour.unwrap_or(d.price_per_hour);
    // dedicated = self-used: never rented; autopilot = rented out whenever idle for max profit.
    if (mode == SharingMode::Dedicated && rentable) || (mode == SharingMode::Autopilot && !rentable) {
        return Err(AppError::Refused(Msg::SharingModeForbids));
    }
    if rentable && d.status != DeviceStatus::Online && !(d.rentable && d.sharing_mode == mode) {
        // Offering a stopped or offline machine for rent is refused; withdrawing it is not.
        return Err(AppError::Refused(Msg::DeviceNotRunning));
    }
    let mut a: devices::ActiveModel = d.into();
    a.sharing_mode = Set(mode);
    a.rentable = Set(rentable);
    a.price_per_hour = Set(price);
    a.updated_at = Set(now());
    let d = a.update(&txn).await?;
    // Withdrawn from rent: no new Z-CLOUD machines of other owners (placement asks for a shared,
    // rentable host) and the running ones get the notice, then stop (src/devices/rental.rs).
    if d.device_type == DeviceType::ServerGroup && !(d.rentable && d.sharing_mode != SharingMode::Dedicated) {
        rental::withdrawn(cx, &txn, &d).await?;
    }
    txn.commit().await?;
    cx.public.changed();
    device_view(&cx.db, &d).await
}

/// Withdraws from rent every box person `user_id` offers (their suspension), as an owner's own
/// withdrawal does (`update_sharing`): the Z-CLOUD machines others rent on their server-group
/// hosts get the notice. Answers the boxes withdrawn; the caller tells the market
/// (`public.changed()`) once it has committed.
pub async fn withdraw_all_of(cx: &DevicesCtx, conn: &impl ConnectionTrait, user_id: &UserId) -> Result<Vec<DeviceId>, AppError> {
    let offered = devices::Entity::find().filter(devices::Column::OwnerUserId.eq(user_id)).filter(devices::Column::Rentable.eq(true)).all(conn).await?;
    let ids: Vec<DeviceId> = offered.iter().map(|d| d.id.clone()).collect();
    if ids.is_empty() {
        return Ok(ids);
    }
    devices::Entity::update_many()
        .col_expr(devices::Column::Rentable, false.into())
        .col_expr(devices::Column::UpdatedAt, now().into())
        .filter(devices::Column::Id.is_in(ids.clone()))
        .exec(conn)
        .await?;
    for host in offered.iter().filter(|d| d.device_type == DeviceType::ServerGroup) {
        rental::withdrawn(cx, conn, host).await?;
    }
    Ok(ids)
}

pub async fn update_location(cx: &DevicesCtx, auth: &Auth, id: &DeviceId, NewLocation(loc): NewLocation) -> Result<Device, AppError> {
    let txn = write_txn(&cx.db).await?;
    let (d, _) = managed(&txn, auth, id).await?;
    let mut a: devices::ActiveModel = d.into();
    a.lat = Set(loc.as_ref().map(|l| l.lat));
    a.lng = Set(loc.as_ref().map(|l| l.lng));
    a.updated_at = Set(now());
    let d = a.update(&txn).await?;
    txn.commit().await?;
    cx.public.changed();
    device_view(&cx.db, &d).await
}

pub async fn rename(cx: &DevicesCtx, auth: &Auth, id: &DeviceId, DeviceName(name): DeviceName) -> Result<Device, AppError> {
    let txn = write_txn(&cx.db).await?;
    let (d, _) = managed(&txn, auth, id).await?;
    let mut a: devices::ActiveModel = d.into();
    a.name = Set(name);
    a.updated_at = Set(now());
    let d = a.update(&txn).await?;
    txn.commit().await?;
    cx.public.changed();
    device_view(&cx.db, &d).await
}

