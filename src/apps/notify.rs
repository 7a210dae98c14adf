//! What an installation's owners are told (install finished or failed, rentals), in both
//! languages. No HTTP types here.

use sea_orm::{ConnectionTrait, EntityTrait};
use serde_json::json;

use crate::apps::access::reason_text;
use crate::apps::model::AppStatus;
use crate::db::entity::{apps, devices, installations};
use crate::db::enums::NotificationKind;
use crate::devices::access::Owner;
use crate::devices::notify::owner_recipients;
use crate::error::AppError;
use crate::lang::Lang;

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
    let (name_en, name_zh) = app.map(|a| (a.name_en, a.name_zh)).unwrap_or_else(|| (r.app_id.clone(), r.app_id.clone()));
    let dev = device.map(|d| d.name).unwrap_or_else(|| r.device_id.clone());
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
        other => return Err(AppError::Internal(anyhow::anyhow!("{other:?} is not an app notification"))),
    };
    let params = json!({"installation_id": r.id, "app_id": r.app_id, "device_id": r.device_id, "status": r.status,
        "title_zh": title_zh, "body_zh": body_zh});
    for user in owner_recipients(conn, owner_of(r)).await? {
        crate::notifications::service::notify(conn, &user, kind, &title, &body, &params).await?;
    }
    Ok(())
}
