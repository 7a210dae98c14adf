//! An order as the API answers it (names of the people, app and device, the app's state on the
//! device, the history, the reason in the reader's language), and the lists. No HTTP types here.

use std::collections::HashMap;

use chrono::Duration;
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::ids::{AppId, DeviceId, InstallationId, OrderId, UserId};
use crate::apps::access::reason_text as app_reason;
use crate::config::OrdersConfig;
use crate::apps::seen::{self, Seen};
use crate::db::entity::{apps, devices, order_events, orders};
use crate::db::enums::OrderStatus;
use crate::devices::model::Location;
use crate::devices::nearby::distance_km;
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::lang::Lang;
use crate::orders::model::*;
use zmarket_protocol::gpus::CudaVersion;

/// The terms a stored demand asks of a device.
pub fn terms_of(o: &orders::Model) -> Terms {
    Terms {
        app_id: o.app_id.clone().into(),
        gpu_count: o.gpu_count,
        gpu_models: split_models(&o.gpu_models),
        distance_km: o.distance_km,
        point: o.lat.zip(o.lng).map(|(lat, lng)| Location { lat, lng }),
        min_cuda: o.min_cuda.as_deref().and_then(CudaVersion::parse),
        min_vram: o.min_vram,
    }
}

/// The stored reason of an order its demander cancelled.
pub const CANCELLED: &str = "cancelled";

/// A stored reason code in a language: `expired`, `cancelled`, `install_failed:<the app's reason>`,
/// `start_timeout:<secs>`, `confirm_timeout:<secs>`, `finished_early`, `hours_used`.
pub fn reason_text(raw: Option<&str>, lang: Lang) -> Option<String> {
    let raw = raw?;
    let (code, rest) = raw.split_once(':').unwrap_or((raw, ""));
    let secs = || rest.parse::<u64>().unwrap_or(0);
    let minutes = || secs().div_ceil(60);
    let zh = lang == Lang::Zh;
    Some(match code {
        "expired" if zh => "该需求在有效期内无人接单".into(),
        "expired" => "Nobody took this demand in time".into(),
        CANCELLED if zh => "需求方已取消".into(),
        CANCELLED => "Cancelled by the demander".into(),
        "finished_early" if zh => "需求方提前结束".into(),
        "finished_early" => "Finished early by the demander".into(),
        "hours_used" if zh => "所订时长已用完".into(),
        "hours_used" => "The hours ordered are used up".into(),
        "start_timeout" if zh => format!("应用未在 {} 分钟内在接单方的设备上运行", minutes()),
        "start_timeout" => format!("The app was not running on the provider's device within {} minutes", minutes()),
        "confirm_timeout" if zh => format!("需求方未在 {} 分钟内确认", minutes()),
        "confirm_timeout" => format!("The demander did not confirm within {} minutes", minutes()),
        "install_failed" => {
            let why = app_reason(Some(rest).filter(|r| !r.is_empty()), lang).unwrap_or_else(|| "-".into());
            if zh { format!("应用未能在接单方的设备上启动：{why}") } else { format!("The app could not be started on the provider's device: {why}") }
        }
        _ => raw.to_string(),
    })
}

/// The people, apps, devices, installations and histories an answer names, read once.
pub struct Names {
    users: HashMap<UserId, String>,
    apps: HashMap<AppId, apps::Model>,
    devices: HashMap<DeviceId, String>,
    installations: HashMap<InstallationId, Seen>,
    history: HashMap<OrderId, Vec<order_events::Model>>,
}

impl Names {
    pub async fn load(conn: &impl ConnectionTrait, rows: &[orders::Model]) -> Result<Names, AppError> {
        let user_ids: Vec<UserId> = rows.iter().flat_map(|o| std::iter::once(o.demander_id.clone()).chain(o.provider_id.clone())).collect();
        let users = crate::iam::people::by_ids(conn, user_ids).await?;
        let apps = apps::Entity::find().filter(apps::Column::Id.is_in(rows.iter().map(|o| o.app_id.clone()))).all(conn).await?;
        let devices = devices::Entity::find().filter(devices::Column::Id.is_in(rows.iter().filter_map(|o| o.device_id.clone()))).all(conn).await?;
        let installations = seen::many(conn, rows.iter().filter_map(|o| o.installation_id.clone())).await?;
        let events = order_events::Entity::find()
            .filter(order_events::Column::OrderId.is_in(rows.iter().map(|o| o.id.clone())))
            .order_by_asc(order_events::Column::CreatedAt)
            .order_by_asc(order_events::Column::Id)
            .all(conn)
            .await?;
        let mut history: HashMap<OrderId, Vec<order_events::Model>> = HashMap::new();
        for e in events {
            history.entry(e.order_id.clone()).or_default().push(e);
        }
        Ok(Names {
            users: users.into_iter().map(|(id, u)| (id, u.name)).collect(),
            apps: apps.into_iter().map(|a| (a.id.clone(), a)).collect(),
            devices: devices.into_iter().map(|d| (d.id, d.name)).collect(),
            installations,
            history,
        })
    }

    fn party(&self, id: &UserId) -> Party {
        Party { user_id: id.to_string(), name: self.users.get(id).cloned().unwrap_or_default() }
    }
}

/// When the current state times out, or (confirmed) when the hours end.
fn deadline(o: &orders::Model, s: &OrdersConfig) -> Option<chrono::DateTime<chrono::Utc>> {
    let after = |secs: u64| Some(o.state_since + Duration::seconds(secs as i64));
    match o.status {
        OrderStatus::OrderPending => Some(o.expires_at),
        OrderStatus::OrderProcessing => after(s.start_timeout_secs),
        OrderStatus::OrderAccepted => after(s.confirm_timeout_secs),
        OrderStatus::OrderConfirmed => o.ends_at,
        _ => None,
    }
}

pub fn to_order(o: &orders::Model, n: &Names, s: &OrdersConfig, lang: Lang, viewer: Option<&Location>) -> Order {
    let app = n.apps.get(&o.app_id);
    let inst = o.installation_id.as_ref().and_then(|i| n.installations.get(i));
    let live = inst.filter(|_| o.status.holds_device());
    Order {
        id: o.id.clone().into(),
        name: o.name.clone(),
        app_id: o.app_id.clone().into(),
        app_name: app.map(|a| if lang == Lang::Zh { a.name_zh.clone() } else { a.name_en.clone() }).unwrap_or_else(|| o.app_id.clone().into()),
        gpu_count: o.gpu_count,
        gpu_models: o.gpu_models.clone(),
        distance_km: o.distance_km,
        min_cuda: o.min_cuda.clone(),
        min_vram: o.min_vram,
        hours: o.hours,
        price_per_hour: o.price_per_hour,
        total: o.price_per_hour * o.hours,
        status: o.status,
        demander: n.party(&o.demander_id),
        provider: o.provider_id.as_ref().map(|p| n.party(p)),
        device_id: o.device_id.clone().map(String::from),
        device_name: o.device_id.as_ref().and_then(|d| n.devices.get(d).cloned()),
        installation_id: o.installation_id.clone().map(String::from),
        status_reason: reason_text(o.status_reason.as_deref(), lang),
        cancelled: o.status == OrderStatus::OrderFailed && o.status_reason.as_deref() == Some(CANCELLED),
        billed: o.billed,
        deadline_at: deadline(o, s),
        distance_from_you_km: match (viewer, o.lat, o.lng) {
            (Some(v), Some(lat), Some(lng)) => Some(distance_km(v.lat, v.lng, lat, lng)),
            _ => None,
        },
        app_status: live.map(|i| sea_orm::ActiveEnum::to_value(&i.status)),
        openable: live.is_some_and(|i| i.status == crate::db::enums::AppStatus::Running && i.open_url.is_some()),
        history: n
            .history
            .get(&o.id)
            .map(|h| h.iter().map(|e| OrderEvent { status: e.status, reason: reason_text(e.reason.as_deref(), lang), at: e.created_at }).collect())
            .unwrap_or_default(),
        created_at: o.created_at,
        updated_at: o.updated_at,
    }
}

/// Answers rows as orders.
pub async fn answer(conn: &impl ConnectionTrait, rows: &[orders::Model], s: &OrdersConfig, lang: Lang, viewer: Option<&Location>) -> Result<Vec<Order>, AppError> {
    let n = Names::load(conn, rows).await?;
    Ok(rows.iter().map(|o| to_order(o, &n, s, lang, viewer)).collect())
}

pub async fn one(conn: &impl ConnectionTrait, row: &orders::Model, s: &OrdersConfig, lang: Lang) -> Result<Order, AppError> {
    Ok(answer(conn, std::slice::from_ref(row), s, lang, None).await?.remove(0))
}

/// An order the caller is a side of (demander or provider); 404 otherwise.
pub async fn mine(conn: &impl ConnectionTrait, me: &UserId, id: &OrderId) -> Result<orders::Model, AppError> {
    orders::Entity::find_by_id(id.to_string())
        .filter(Condition::any().add(orders::Column::DemanderId.eq(me)).add(orders::Column::ProviderId.eq(me)))
        .one(conn)
        .await?
        .ok_or(AppError::Refused(Msg::OrderNotFound))
}

/// The caller's orders by role, newest first.
pub async fn list(conn: &impl ConnectionTrait, s: &OrdersConfig, me: &UserId, role: Role, status: Option<OrderStatus>, (offset, limit): (u64, u64), lang: Lang) -> Result<List<Order>, AppError> {
    let mut q = orders::Entity::find().filter(match role {
        Role::Demander => orders::Column::DemanderId.eq(me),
        Role::Provider => orders::Column::ProviderId.eq(me),
    });
    if let Some(st) = status {
        q = q.filter(orders::Column::Status.eq(st));
    }
    let total = q.clone().count(conn).await?;
    let rows = q.order_by_desc(orders::Column::CreatedAt).order_by_desc(orders::Column::Id).offset(offset).limit(limit).all(conn).await?;
    Ok(List { items: answer(conn, &rows, s, lang, None).await?, total })
}
