//! Taking a demand: exactly one provider wins. In one write transaction: the device row is locked
//! (a row lock on PostgreSQL; SQLite's writer lock already serializes), the matcher finds no gap,
//! the order moves from `order_pending` with a conditional UPDATE (racing takers after the winner
//! update nothing: 409) that also reserves the device (a unique column: one order per device),
//! and the demanded app's installation is started on the device through the apps service
//! (`apps::install::place`), owned by the demander. No HTTP types here.

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;

use crate::ids::OrderId;
use crate::apps::install::{installable, lock_device, place};
use crate::db::entity::orders;
use crate::db::enums::InstallKind;
use crate::db::write_txn;
use crate::devices::access::Owner;
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::lang::Lang;
use crate::orders::machine::{self, Actor, Change, Event};
use crate::orders::model::{Order, Take};
use crate::orders::view::{self, terms_of};
use crate::orders::{OrdersCtx, demands, matcher, notify, personal};

pub async fn take(cx: &OrdersCtx, auth: &Auth, id: &OrderId, ask: Take, lang: Lang) -> Result<Order, AppError> {
    let me = personal(auth)?;
    let txn = write_txn(&cx.db).await?;
    let o = demands::open(&txn, id).await?;
    if o.demander_id == me {
        return Err(AppError::Refused(Msg::OwnDemand));
    }
    let device = demands::my_device(&txn, &me, &ask.device_id).await?;
    lock_device(&txn, &device.id).await?;
    let (app, _) = installable(&cx.apps, &txn, &o.app_id).await?;
    let gaps = matcher::gaps(&txn, &terms_of(&o), &app, &device).await?;
    if !gaps.is_empty() {
        return Err(AppError::Explained { msg: Msg::OrderRequirementsNotSatisfied, data: json!({ "gaps": gaps }) });
    }
    let change = Change {
        actor_id: Some(me.clone()),
        set: vec![
            (orders::Column::ProviderId, Expr::value(me.clone())),
            (orders::Column::DeviceId, Expr::value(device.id.clone())),
            (orders::Column::ReservedDeviceId, Expr::value(device.id.clone())),
        ],
        ..Default::default()
    };
    let taken = machine::apply(&txn, &o, Event::Take, Actor::Provider, change).await?.ok_or(AppError::Refused(Msg::DemandNotOpen))?;
    let demander = Owner::User(o.demander_id.clone().into());
    let inst = place(&cx.apps, &txn, &demander, &me, InstallKind::Rent, &app.id, &device, None).await?;
    orders::Entity::update_many()
        .col_expr(orders::Column::InstallationId, Expr::value(inst.id.clone()))
        .filter(orders::Column::Id.eq(taken.id.clone()))
        .exec(&txn)
        .await?;
    let taken = orders::Entity::find_by_id(taken.id).one(&txn).await?.ok_or(AppError::Refused(Msg::OrderNotFound))?;
    notify::moved(&txn, &taken).await?;
    let out = view::one(&txn, &taken, &cx.settings, lang).await?;
    txn.commit().await?;
    cx.public.changed();
    Ok(out)
}
