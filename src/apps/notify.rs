//! What an installation's owners are told (install finished or failed, rentals: started, ending,
//! its box offline and back, suspended, ended), and what a rented box's owner is told (rented, a
//! rental ended with what it earned), in both languages. No HTTP types here.

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};
use serde_json::json;

use crate::apps::access::reason_text;
use crate::apps::model::{AppStatus, InstallKind};
use crate::billing::ledger::AccountRef;
use crate::coins::format_coins;
use crate::db::entity::{apps, devices, installations};
use crate::db::enums::NotificationKind;
use crate::devices::access::Owner;
use crate::devices::notify::owner_recipients;
use crate::error::AppError;
use crate::lang::Lang;
use crate::ids::DeviceId;

pub fn owner_of(r: &installations::Model) -> Option<Owner> {
    match (&r.owner_company_id, &r.owner_user_id) {
        (Some(c), _) => Some(Owner::Company(c.clone())),
        (None, Some(u)) => Some(Owner::User(u.clone().into())),
        _ => None,
    }
}

/// Tells the owners when an install finishes or anything fails.
pub async fn on_transition(conn: &impl ConnectionTrait, from: AppStatus, r: &installations::Model) -> Result<(), AppError> {
    use AppStatus::*;
    let kind = match (from, r.status) {
        (Preparing | Downloading | Installing | Installed, Running) => NotificationKind::AppInstalled,
        (_, Failed | InstallFailed | RentFailed | UninstallFailed) => NotificationKind::AppFailed,
        _ => return Ok(()),
    };
    send(conn, r, kind).await
}

/// One notification per owner, English text with the Chinese in `params`.
pub async fn send(conn: &impl ConnectionTrait, r: &installations::Model, kind: NotificationKind) -> Result<(), AppError> {
    let app = apps::Entity::find_by_id(r.app_id.clone()).one(conn).await?;
    let device = devices::Entity::find_by_id(r.device_id.clone()).one(conn).await?;
    let (name_en, name_zh) = app.map(|a| (a.name_en, a.name_zh)).unwrap_or_else(|| (r.app_id.clone().into(), r.app_id.clone().into()));
    let dev = device.map(|d| d.name).unwrap_or_else(|| r.device_id.clone().into());
    let reason_en = reason_text(r.status_reason.as_deref(), Lang::En).unwrap_or_else(|| "unknown reason".into());
    let reason_zh = reason_text(r.status_reason.as_deref(), Lang::Zh).unwrap_or_else(|| "未知原因".into());
    let (st_en, st_zh) = (r.status.label(Lang::En), r.status.label(Lang::Zh));
    let (title, body, title_zh, body_zh) = match kind {
        NotificationKind::AppInstalled => (
            "App installed".to_string(),
            format!("{name_en} is installed and running on {dev}."),
            "应用已安装".to_string(),
            format!("{name_zh} 已安装并在 {dev} 上运行。"),
        ),
        NotificationKind::AppFailed => (
            format!("App {st_en}"),
            format!("{name_en} on {dev}: {reason_en}"),
            format!("应用{st_zh}"),
            format!("{dev} 上的 {name_zh}：{reason_zh}"),
        ),
        NotificationKind::RentalStarted => (
            "Rental started".to_string(),
            format!("Your rental of {name_en} on {dev} has started."),
            "租用已开始".to_string(),
            format!("您在 {dev} 上租用的 {name_zh} 已开始。"),
        ),
        NotificationKind::RentalEnded => (
            "Rental ended".to_string(),
            format!("Your rental of {name_en} on {dev} has ended."),
            "租用已结束".to_string(),
            format!("您在 {dev} 上租用的 {name_zh} 已结束。"),
        ),
        NotificationKind::RentalSuspended => (
            "Rental suspended".to_string(),
            format!("Your rental of {name_en} on {dev} is suspended: your wallet has no coins left for it."),
            "租用已暂停".to_string(),
            format!("您在 {dev} 上租用的 {name_zh} 已暂停：钱包余额不足。"),
        ),
        NotificationKind::RentalEnding => {
            let at = r.rent_ends_at.map(|e| e.format("%Y-%m-%d %H:%M").to_string()).unwrap_or_default();
            (
                "Rental ending soon".to_string(),
                format!("Your rental of {name_en} on {dev} ends at {at} UTC, in about 10 minutes: extend it on its page to keep it running."),
                "租用即将结束".to_string(),
                format!("您在 {dev} 上租用的 {name_zh} 将于 {at}（世界标准时间）结束，约 10 分钟后：可在其页面续租以继续运行。"),
            )
        }
        NotificationKind::RentalDeviceOffline => (
            "Rented device offline".to_string(),
            format!("{dev}, where your rental of {name_en} runs, went offline; the time it is offline is not charged."),
            "租用的设备离线".to_string(),
            format!("运行您租用的 {name_zh} 的设备 {dev} 已离线；离线期间不计费。"),
        ),
        NotificationKind::RentalDeviceBack => (
            "Rented device back online".to_string(),
            format!("{dev}, where your rental of {name_en} runs, is back online."),
            "租用的设备已恢复在线".to_string(),
            format!("运行您租用的 {name_zh} 的设备 {dev} 已恢复在线。"),
        ),
        other => return Err(AppError::Internal(anyhow::anyhow!("{other:?} is not an app notification"))),
    };
    let mut params = json!({"installation_id": r.id, "app_id": r.app_id, "device_id": r.device_id, "status": r.status,
        "title_zh": title_zh, "body_zh": body_zh});
    if kind == NotificationKind::RentalEnding {
        // The notice opens the page with its Extend form.
        params["path"] = json!(format!("/app/details?id={}&extend=1", r.id));
    }
    for user in owner_recipients(conn, owner_of(r)).await? {
        crate::notifications::service::notify(conn, &user, kind, &title, &body, &params).await?;
    }
    Ok(())
}

/// Tells the renters of the running rentals on `device_id` that its box went offline or is back
/// (`rental_device_offline`, `rental_device_back`).
pub async fn rented_box(conn: &impl ConnectionTrait, device_id: &DeviceId, kind: NotificationKind) -> Result<(), AppError> {
    let running = installations::Entity::find()
        .filter(installations::Column::DeviceId.eq(device_id))
        .filter(installations::Column::Kind.eq(InstallKind::Rent))
        .filter(installations::Column::ActiveKey.is_not_null())
        .filter(installations::Column::Status.eq(AppStatus::Running))
        .all(conn)
        .await?;
    for r in running {
        send(conn, &r, kind).await?;
    }
    Ok(())
}

/// What the owner of a rented box is told, one notification per person who speaks for them:
/// `device_rented` when the rental starts, `rental_ended` with what it earned them (the captures
/// less the market's fee); each opens the box's page.
pub async fn send_provider(conn: &impl ConnectionTrait, r: &installations::Model, kind: NotificationKind) -> Result<(), AppError> {
    let Some(provider) = r.rent_provider.as_deref() else { return Ok(()) };
    let owner = match AccountRef::parse(provider)? {
        AccountRef::User(u) => Owner::User(u),
        AccountRef::Company(c) => Owner::Company(c.into()),
        _ => return Ok(()),
    };
    let app = apps::Entity::find_by_id(r.app_id.clone()).one(conn).await?;
    let device = devices::Entity::find_by_id(r.device_id.clone()).one(conn).await?;
    let (name_en, name_zh) = app.map(|a| (a.name_en, a.name_zh)).unwrap_or_else(|| (r.app_id.clone().into(), r.app_id.clone().into()));
    let dev = device.map(|d| d.name).unwrap_or_else(|| r.device_id.clone().into());
    let earned = r.billed - crate::billing::fees::fee_of(r.billed, r.rent_fee_percent.unwrap_or(0).clamp(0, 100) as u8);
    let coins = format_coins(earned);
    let (title, body, title_zh, body_zh) = match kind {
        NotificationKind::DeviceRented => {
            let hours = r.rent_hours.unwrap_or(0);
            let price = format_coins(r.rent_price_per_hour.unwrap_or(0));
            (
                "Device rented".to_string(),
                format!("{dev} was rented for {name_en}: {hours} h at {price} coins an hour."),
                "设备已被租用".to_string(),
                format!("{dev} 已被租用运行 {name_zh}：{hours} 小时，每小时 {price} 币。"),
            )
        }
        NotificationKind::RentalEnded => (
            "Rental ended".to_string(),
            format!("The rental of {name_en} on {dev} has ended: it earned you {coins} coins."),
            "租用已结束".to_string(),
            format!("{dev} 上 {name_zh} 的租用已结束：您获得 {coins} 币。"),
        ),
        other => return Err(AppError::Internal(anyhow::anyhow!("{other:?} is not a provider's notification"))),
    };
    let params = json!({"installation_id": r.id, "app_id": r.app_id, "device_id": r.device_id, "earned": earned,
        "path": format!("/devices/details?id={}", r.device_id), "title_zh": title_zh, "body_zh": body_zh});
    for user in owner_recipients(conn, Some(owner)).await? {
        crate::notifications::service::notify(conn, &user, kind, &title, &body, &params).await?;
    }
    Ok(())
}
