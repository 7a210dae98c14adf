//! The market's offers: for each listed app, the online devices their owners share for rent on
//! which it fits now (src/market/fit.rs, the rule the rent flow uses), cheapest first. Read
//! with the catalogue (src/market/index.rs) so the cards, the details and the cached answers
//! show the price the Rent dialog charges (docs/api.md "Money, shown as it is charged").

use std::collections::{HashMap, HashSet};

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use crate::db::entity::{apps, devices, installations, orders};
use crate::db::enums::{DeviceStatus, SharingMode};
use crate::market::fit::{Room, unfit};
use crate::market::model::Offer;

/// The offers of each app (by id), cheapest first; an app without offers has no entry.
pub async fn load(db: &impl ConnectionTrait, rows: &[apps::Model]) -> Result<HashMap<String, Vec<Offer>>, DbErr> {
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
    let ids: Vec<String> = offered.iter().map(|d| d.id.clone()).collect();
    // A device taken for an order is not rented meanwhile (src/apps/rental.rs refuses it).
    let reserved: HashSet<String> = orders::Entity::find()
        .filter(orders::Column::ReservedDeviceId.is_in(ids.clone()))
        .all(db)
        .await?
        .into_iter()
        .filter_map(|o| o.reserved_device_id)
        .collect();
    let held = installations::Entity::find()
        .filter(installations::Column::ActiveKey.is_not_null())
        .filter(installations::Column::DeviceId.is_in(ids))
        .all(db)
        .await?;
    let mut holds: HashMap<&str, Vec<Room>> = HashMap::new();
    let mut installed: HashSet<(&str, &str)> = HashSet::new();
    for h in &held {
        holds.entry(h.device_id.as_str()).or_default().push(Room::held_by(h));
        installed.insert((h.device_id.as_str(), h.app_id.as_str()));
    }
    let gpus_held = crate::devices::gpus::held_on(db, &offered.iter().map(|d| d.id.clone()).collect::<Vec<_>>()).await?;
    let devices: Vec<(&devices::Model, Room)> = offered
        .iter()
        .filter(|d| !reserved.contains(&d.id))
        .map(|d| {
            let usable = crate::devices::gpus::usable_count(d, gpus_held.get(&d.id));
            (d, Room::free_on(d, holds.get(d.id.as_str()).into_iter().flatten().copied(), usable))
        })
        .collect();
    let mut out = HashMap::new();
    for app in rows {
        let mut list: Vec<Offer> = devices
            .iter()
            .filter(|(d, free)| unfit(app, d, *free, installed.contains(&(d.id.as_str(), app.id.as_str()))).is_none())
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
