//! Posting a demand, the board of open demands, the live count while composing, and the check of
//! a device against a demand (all through `orders::matcher`). No HTTP types here.

use chrono::Duration;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set};

use crate::devices::model::DeviceId;
use crate::ids::{AppId, OrderId, UserId};
use crate::apps::install::installable;
use crate::db::entity::{apps, devices, orders};
use crate::db::enums::OrderStatus;
use crate::db::{now, write_txn};
use crate::devices::access::{Owner, owned_by};
use crate::devices::model::Location;
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::iam::auth::Auth;
use crate::lang::Lang;
use crate::orders::model::*;
use crate::orders::view::{self, terms_of};
use crate::orders::{OrdersCtx, machine, matcher, money, personal};

/// Posts a demand: the app must be installable, and `price × hours` is held on the demander's
/// wallet (409 with `{available, needed}` when it cannot be).
pub async fn post(cx: &OrdersCtx, auth: &Auth, d: Demand, request_key: Option<String>, lang: Lang) -> Result<Order, AppError> {
    let me = personal(auth)?;
    let txn = write_txn(&cx.db).await?;
    installable(&cx.apps, &txn, &d.terms.app_id).await?;
    let (id, t) = (OrderId::new(), now());
    let hold_id = money::hold(&txn, &cx.settings, &me, &id, &d, request_key.as_deref()).await?;
    let row = orders::ActiveModel {
        id: Set(id.clone()),
        name: Set(d.name.clone()),
        app_id: Set(AppId::from(&d.terms.app_id)),
        gpu_count: Set(d.terms.gpu_count),
        gpu_models: Set(d.terms.models_text()),
        distance_km: Set(d.terms.distance_km),
        lat: Set(d.terms.point.as_ref().map(|p| p.lat)),
        lng: Set(d.terms.point.as_ref().map(|p| p.lng)),
        min_cuda: Set(d.terms.min_cuda.map(|c| c.to_string())),
        min_vram: Set(d.terms.min_vram),
        hours: Set(d.hours),
        price_per_hour: Set(d.price_per_hour),
        status: Set(OrderStatus::OrderPending),
        status_reason: Set(None),
        demander_id: Set(me.clone()),
        provider_id: Set(None),
        device_id: Set(None),
        reserved_device_id: Set(None),
        installation_id: Set(None),
        installation_released: Set(false),
        hold_id: Set(hold_id.into()),
        fee_percent: Set(i32::from(cx.market_settings.current().market_fee_percent)),
        billed_seconds: Set(0),
        seen_base: Set(0),
        billed: Set(0),
        expires_at: Set(t + Duration::seconds(cx.settings.pending_timeout_secs as i64)),
        confirmed_at: Set(None),
        ends_at: Set(None),
        state_since: Set(t),
        created_at: Set(t),
        updated_at: Set(t),
    }
    .insert(&txn)
    .await?;
    machine::record(&txn, &id, OrderStatus::OrderPending, None, Some(&me)).await?;
    let out = view::one(&txn, &row, &cx.settings, lang).await?;
    txn.commit().await?;
    cx.public.changed();
    Ok(out)
}

/// Open demands, newest first (public); with the viewer's point, each one's distance from it.
pub async fn board(cx: &OrdersCtx, q: BoardQuery, (offset, limit): (u64, u64), lang: Lang) -> Result<List<Order>, AppError> {
    let viewer = match (q.lat, q.lng) {
        (None, None) => None,
        (lat, lng) => Some(Location::check(lat, lng)?),
    };
    let open = orders::Entity::find().filter(orders::Column::Status.eq(OrderStatus::OrderPending));
    let total = open.clone().count(&cx.db).await?;
    let rows = open.order_by_desc(orders::Column::CreatedAt).order_by_desc(orders::Column::Id).offset(offset).limit(limit).all(&cx.db).await?;
    Ok(List { items: view::answer(&cx.db, &rows, &cx.settings, lang, viewer.as_ref()).await?, total })
}

async fn app_of(conn: &impl ConnectionTrait, id: &AppId) -> Result<apps::Model, AppError> {
    apps::Entity::find_by_id(id.to_string()).one(conn).await?.ok_or(AppError::Refused(Msg::AppNotFound))
}

/// How many devices satisfy the terms now (the form's live count; public).
pub async fn qualifying(cx: &OrdersCtx, terms: Terms) -> Result<Qualifying, AppError> {
    let app = app_of(&cx.db, &terms.app_id).await?;
    Ok(Qualifying { count: matcher::count(&cx.db, &terms, &app).await? })
}

/// An open demand (404 unknown, 409 taken or closed).
pub async fn open(conn: &impl ConnectionTrait, id: &OrderId) -> Result<orders::Model, AppError> {
    let o = orders::Entity::find_by_id(id.to_string()).one(conn).await?.ok_or(AppError::Refused(Msg::OrderNotFound))?;
    if o.status != OrderStatus::OrderPending {
        return Err(AppError::Refused(Msg::DemandNotOpen));
    }
    Ok(o)
}

/// One of the caller's own devices (personal context), 404 otherwise.
pub async fn my_device(conn: &impl ConnectionTrait, me: &UserId, device_id: &DeviceId) -> Result<devices::Model, AppError> {
    devices::Entity::find_by_id(device_id.to_string())
        .filter(owned_by(&Owner::User(me.clone())))
        .one(conn)
        .await?
        .ok_or(AppError::Refused(Msg::DeviceNotFound))
}

/// What one of the caller's devices lacks for a demand.
pub async fn check(cx: &OrdersCtx, auth: &Auth, id: &OrderId, device_id: &DeviceId) -> Result<Check, AppError> {
    let me = personal(auth)?;
    let o = open(&cx.db, id).await?;
    let d = my_device(&cx.db, &me, device_id).await?;
    let app = app_of(&cx.db, &o.app_id).await?;
    let gaps = matcher::gaps(&cx.db, &terms_of(&o), &app, &d).await?;
    Ok(Check { ok: gaps.is_empty(), gaps })
}

/// Every device of the caller against a demand (the board's "your devices").
pub async fn my_devices(cx: &OrdersCtx, auth: &Auth, id: &OrderId) -> Result<Vec<DeviceCheck>, AppError> {
    let me = personal(auth)?;
    let o = open(&cx.db, id).await?;
    let app = app_of(&cx.db, &o.app_id).await?;
    let terms = terms_of(&o);
    let mine = devices::Entity::find().filter(owned_by(&Owner::User(me))).order_by_asc(devices::Column::Name).all(&cx.db).await?;
    let mut out = Vec::new();
    for d in mine {
        let gaps = matcher::gaps(&cx.db, &terms, &app, &d).await?;
        out.push(DeviceCheck { device_id: d.id.into(), device_name: d.name, ok: gaps.is_empty(), gaps });
    }
    Ok(out)
}
