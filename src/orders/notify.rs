//! What both sides of an order are told at each step, in both languages (English text, the
//! Chinese in `params` like every notification). No HTTP types here.

use sea_orm::{ConnectionTrait, EntityTrait};
use serde_json::json;

use crate::db::entity::{apps, orders};
use crate::db::enums::{NotificationKind, OrderStatus};
use crate::error::AppError;
use crate::lang::Lang;
use crate::orders::view::reason_text;

/// Tells the demander and the provider (if any) that `o` is now in its status.
pub async fn moved(conn: &impl ConnectionTrait, o: &orders::Model) -> Result<(), AppError> {
    let app = apps::Entity::find_by_id(o.app_id.clone()).one(conn).await?;
    let (app_en, app_zh) = app.map(|a| (a.name_en, a.name_zh)).unwrap_or_else(|| (o.app_id.clone().into(), o.app_id.clone().into()));
    let name = &o.name;
    let why = |lang| reason_text(o.status_reason.as_deref(), lang).unwrap_or_default();
    let (kind, title, body, title_zh, body_zh) = match o.status {
        OrderStatus::OrderProcessing => (
            NotificationKind::OrderTaken,
            "Order taken".to_string(),
            format!("“{name}” was taken: {app_en} is being installed on the provider's device."),
            "订单已被接单".to_string(),
            format!("“{name}”已被接单：正在接单方的设备上安装 {app_zh}。"),
        ),
        OrderStatus::OrderAccepted => (
            NotificationKind::OrderAccepted,
            "Order ready".to_string(),
            format!("{app_en} is running for “{name}”: the demander can confirm it works."),
            "订单已就绪".to_string(),
            format!("“{name}”的 {app_zh} 已运行：需求方可确认其可用。"),
        ),
        OrderStatus::OrderConfirmed => (
            NotificationKind::OrderConfirmed,
            "Order confirmed".to_string(),
            format!("“{name}” is confirmed: billing by the minute has started."),
            "订单已确认".to_string(),
            format!("“{name}”已确认：开始按分钟计费。"),
        ),
        OrderStatus::OrderFinished => (
            NotificationKind::OrderFinished,
            "Order finished".to_string(),
            format!("“{name}” finished: {}", why(Lang::En)),
            "订单已完成".to_string(),
            format!("“{name}”已完成：{}", why(Lang::Zh)),
        ),
        OrderStatus::OrderFailed => (
            NotificationKind::OrderFailed,
            "Order failed".to_string(),
            format!("“{name}” failed: {}. The hold was released.", why(Lang::En)),
            "订单失败".to_string(),
            format!("“{name}”失败：{}。冻结的金额已释放。", why(Lang::Zh)),
        ),
        OrderStatus::OrderPending => return Ok(()),
    };
    let params = json!({"order_id": o.id, "status": o.status, "title_zh": title_zh, "body_zh": body_zh});
    for user in std::iter::once(&o.demander_id).chain(o.provider_id.as_ref()) {
        crate::notifications::service::notify(conn, user, kind, &title, &body, &params).await?;
    }
    Ok(())
}
