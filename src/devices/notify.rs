//! What a device's owners are told about it (online, offline, Z-CLOUD results), in both
//! languages. No HTTP types here.

use sea_orm::ConnectionTrait;
use serde_json::json;

use crate::db::entity::devices;
use crate::db::enums::NotificationKind;
use crate::devices::access::{Owner, owner_of};
use crate::error::AppError;
use crate::ids::UserId;

/// The people told about a device: its owner, or every administrator of the owning company.
pub(crate) async fn recipients(conn: &impl ConnectionTrait, d: &devices::Model) -> Result<Vec<UserId>, AppError> {
    owner_recipients(conn, owner_of(d)).await
}

/// The people who speak for an owner: the person, or every administrator of the company.
pub async fn owner_recipients(conn: &impl ConnectionTrait, owner: Option<Owner>) -> Result<Vec<UserId>, AppError> {
    Ok(match owner {
        None => Vec::new(),
        Some(Owner::User(u)) => vec![u],
        Some(Owner::Company(c)) => crate::companies::company::admins(conn, &c).await?,
    })
}

/// One notification per recipient, with English text and the Chinese text in `params`.
pub(crate) async fn notify(conn: &impl ConnectionTrait, d: &devices::Model, kind: NotificationKind, reason: Option<&str>) -> Result<(), AppError> {
    let name = &d.name;
    let id = &d.id;
    let reason_en = reason.unwrap_or("unknown reason");
    let reason_zh = reason.unwrap_or("未知原因");
    let (title, body, title_zh, body_zh) = match kind {
        NotificationKind::DeviceOnline => ("Device online".to_string(), format!("{name} ({id}) is online."), "设备上线".to_string(), format!("{name}（{id}）已上线。")),
        NotificationKind::DeviceOffline => (
            "Device offline".to_string(),
            format!("{name} ({id}) is offline: no heartbeat received."),
            "设备离线".to_string(),
            format!("{name}（{id}）已离线：未收到心跳。"),
        ),
        NotificationKind::ZcloudReady => (
            "Z-CLOUD machine ready".to_string(),
            format!("{name} ({id}) has been created and is online."),
            "Z-CLOUD 云主机已就绪".to_string(),
            format!("{name}（{id}）已创建并上线。"),
        ),
        NotificationKind::ZcloudFailed => (
            "Z-CLOUD machine failed".to_string(),
            format!("{name} ({id}) could not be created: {reason_en}"),
            "Z-CLOUD 云主机创建失败".to_string(),
            format!("{name}（{id}）创建失败：{reason_zh}"),
        ),
        NotificationKind::ZcloudEnding => (
            "Z-CLOUD machine ending".to_string(),
            format!("The server's owner ended {name} ({id}): it stops at {reason_en} UTC. Save your work."),
            "Z-CLOUD 云主机即将停止".to_string(),
            format!("服务器所有者结束了 {name}（{id}）：它将于 {reason_zh}（世界标准时间）停止，请保存您的工作。"),
        ),
        NotificationKind::ZcloudEnded => (
            "Z-CLOUD machine stopped".to_string(),
            format!("{name} ({id}) was stopped and removed; its rental is settled and the rest of its held coins released."),
            "Z-CLOUD 云主机已停止".to_string(),
            format!("{name}（{id}）已停止并移除；租用已结算，剩余冻结的币已释放。"),
        ),
        // Kinds of other domains (the wallet's runway notices …) are not about a device.
        other => return Err(AppError::Internal(anyhow::anyhow!("{other:?} is not a device notification"))),
    };
    let params = json!({"device_id": id, "name": name, "status": d.status, "reason": reason, "title_zh": title_zh, "body_zh": body_zh});
    for user in recipients(conn, d).await? {
        crate::notifications::service::notify(conn, &user, kind, &title, &body, &params).await?;
    }
    Ok(())
}

