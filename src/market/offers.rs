//! The market's offers: for each listed app, the online devices their owners share for rent on
//! which it fits now (src/market/fit.rs, the rule the rent flow uses), cheapest first. Read
//! with the catalogue (src/market/index.rs) so the cards, the details and the cached answers
//! show the price the Rent dialog charges (docs/api.md "Money, shown as it is charged").

use std::collections::{HashMap, HashSet};

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use crate::db::entity::{apps, devices, orders};
use crate::db::enums::{DeviceStatus, SharingMode};
use crate::market::fit::{Standing, unfit};
use crate::market::model::Offer;
use crate::ids::{AppId, DeviceId};

/// The offers of each app (by id), cheapest first; an app without offers has no entry.
pub async fn load(db: &impl ConnectionTrait, rows: &[apps::Model]) -> Result<HashMap<AppId, Vec<Offer>>, DbErr> {
    let offered: Vec<devices::Model> = devices::Entity::find()
        .filter(devices::Column::Rentable.eq(true))
        .filter(devices::Column::Status.eq(DeviceStatus::Online))
        .filter(devices::Column::SharingMode.ne(SharingMode::Dedicated))
        .all(db)
        .await?
        .into_iter()
        // A device nobody owns is rented by no one (the rent flow refuses it).
        .filter(|d| d.owner_user_id.is_some() || d.owner_company_id.is_some())
        .collect();
    if offered.is_empty() {
        return Ok(HashMap::new());
    }
    let ids: Vec<DeviceId> = offered.iter().map(|d| d.id.clone()).collect();
    // A device taken for an order is not rented meanwhile (src/apps/rental.rs refuses it).
    let reserved: HashSet<DeviceId> = orders::Entity::find()
        .filter(orders::Column::ReservedDeviceId.is_in(ids.clone()))
        .all(db)
        .await?
        .into_iter()
        .filter_map(|o| o.reserved_device_id)
        .collect();
    let standing = Standing::load(db, &offered).await?;
    let devices: Vec<(&devices::Model, &Standing)> =
        offered.iter().filter(|d| !reserved.contains(&d.id)).filter_map(|d| Some((d, standing.get(&d.id)?))).collect();
    let mut out = HashMap::new();
    for app in rows {
        let mut list: Vec<Offer> = devices
            .iter()
            .filter(|(d, st)| unfit(app, d, st).is_none())
            .map(|(d, _)| Offer::of(d))
            .collect();
        if list.is_empty() {
            continue;
        }
        list.sort_by(|a, b| (a.price_per_hour, &a.device_name, &a.device_id).cmp(&(b.price_per_hour, &b.device_name, &b.device_id)));
        out.insert(app.id.clone(), list);
    }
    Ok(out)
}
