//! The public nearby list: shared, rentable devices around a point, distances on a 6371 km
//! sphere rounded up, coordinates coarsened for visitors; and the nearby pages' first-paint
//! data. No HTTP types here.

use sea_orm::{ColumnTrait, Condition, EntityTrait, QueryFilter};

use crate::db::entity::devices;
use crate::devices::DevicesCtx;
use crate::devices::access::gpus_of;
use crate::devices::model::*;
use crate::error::{AppError, Msg};
use crate::lang::Lang;
use crate::ssr::data::PageData;
use serde_json::{Map, Value};

pub const EARTH_RADIUS_KM: f64 = 6371.0;

/// Great-circle distance on a 6371 km sphere, rounded up to whole kilometres.
pub fn distance_km(lat1: f64, lng1: f64, lat2: f64, lng2: f64) -> i64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = (lat2 - lat1).to_radians();
    let dl = (lng2 - lng1).to_radians();
    let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    let d = 2.0 * EARTH_RADIUS_KM * a.sqrt().min(1.0).asin();
    // guard against 1e-12 noise turning an exact 0 into 1 km
    let d = (d * 1e9).round() / 1e9;
    d.ceil() as i64
}

/// Coordinates shown to visitors: two decimals (about 1 km), so an address is not exposed.
pub fn coarse(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn visitor_point(cx: &DevicesCtx, lat: Option<f64>, lng: Option<f64>) -> Result<(f64, f64), AppError> {
    match (lat, lng) {
        (None, None) => Ok((cx.map_centre.0, cx.map_centre.1)),
        (lat, lng) => {
            let l = Location::check(lat, lng)?;
            Ok((l.lat, l.lng))
        }
    }
}

fn shared_condition() -> Condition {
    Condition::all()
        .add(devices::Column::SharingMode.ne(SharingMode::Dedicated))
        .add(devices::Column::Rentable.eq(true))
        .add(devices::Column::Lat.is_not_null())
        .add(devices::Column::Lng.is_not_null())
        .add(Condition::any().add(devices::Column::OwnerUserId.is_not_null()).add(devices::Column::OwnerCompanyId.is_not_null()))
}

fn nearby_of(d: &devices::Model, at: (f64, f64)) -> NearbyDevice {
    let (lat, lng) = (coarse(d.lat.unwrap_or(0.0)), coarse(d.lng.unwrap_or(0.0)));
    NearbyDevice {
        id: d.id.clone(),
        name: d.name.clone(),
        device_type: d.device_type,
        status: d.status.shown(),
        distance_km: distance_km(at.0, at.1, lat, lng),
        lat,
        lng,
        price_per_hour: d.price_per_hour,
        gpus: gpus_of(d),
        apps: None,
    }
}

pub async fn nearby(cx: &DevicesCtx, q: NearbyQuery) -> Result<crate::http::List<NearbyDevice>, AppError> {
    let at = visitor_point(cx, q.lat, q.lng)?;
    let (offset, limit) = crate::http::Page { offset: q.offset, limit: q.limit }.checked(24)?;
    let radius = match q.radius_km {
        None => None,
        Some(r) if r.is_finite() && r >= 0.0 => Some(r),
        Some(_) => return Err(AppError::invalid("radius_km", Msg::InvalidField("radius_km"))),
    };
    let rows = devices::Entity::find().filter(shared_condition()).all(&cx.db).await?;
    let mut items: Vec<NearbyDevice> =
        rows.iter().map(|d| nearby_of(d, at)).filter(|d| radius.is_none_or(|r| d.distance_km as f64 <= r)).collect();
    items.sort_by(|a, b| a.distance_km.cmp(&b.distance_km).then_with(|| a.id.cmp(&b.id)));
    let total = items.len() as u64;
    let items = items.into_iter().skip(offset as usize).take(limit as usize).collect();
    Ok(crate::http::List { items, total })
}

pub async fn nearby_one(cx: &DevicesCtx, id: &str, q: NearbyPoint) -> Result<NearbyDevice, AppError> {
    let at = visitor_point(cx, q.lat, q.lng)?;
    let d = devices::Entity::find_by_id(id.to_string())
        .filter(shared_condition())
        .one(&cx.db)
        .await?
        .ok_or(AppError::NotFound(Msg::DeviceNotFound))?;
    let mut n = nearby_of(&d, at);
    n.apps = Some(Vec::new());
    Ok(n)
}

/// Server-rendered data of the nearby pages (ui/README.md "state.data shapes"): `nearby` is the
/// first page at the configured map centre, `nearbyDetails` the device of `?id=` seen from it.
/// `page` is the desktop path of the page (src/ssr/data.rs normalizes it).
async fn page_data(cx: &DevicesCtx, page: &str, params: &[(String, String)]) -> Option<(&'static str, serde_json::Value)> {
    match page {
        "/nearby" => {
            let q = NearbyQuery { lat: None, lng: None, radius_km: None, offset: Some(0), limit: Some(24) };
            match nearby(cx, q).await {
                Ok(list) => serde_json::to_value(list).ok().map(|v| ("nearby", v)),
                Err(e) => {
                    tracing::warn!(error = %e, "nearby data for the page");
                    None
                }
            }
        }
        "/nearby/details" => {
            let id = params.iter().find(|(k, _)| k == "id").map(|(_, v)| v.clone())?;
            let one = nearby_one(cx, &id, NearbyPoint { lat: None, lng: None }).await.ok()?;
            serde_json::to_value(one).ok().map(|v| ("nearbyDetails", v))
        }
        _ => None,
    }
}

#[async_trait::async_trait]
impl PageData for DevicesCtx {
    async fn fill(&self, page: &str, params: &[(String, String)], _lang: Lang, data: &mut Map<String, Value>) {
        if let Some((key, value)) = page_data(self, page, params).await {
            data.insert(key.to_string(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_rounds_up_to_whole_km() {
        assert_eq!(distance_km(22.54, 114.06, 22.54, 114.06), 0);
        // one hundredth of a degree of latitude is about 1.11 km
        assert_eq!(distance_km(0.0, 0.0, 0.01, 0.0), 2);
        // Shenzhen to Beijing: about 1943 km
        let d = distance_km(22.5431, 114.0579, 39.9042, 116.4074);
        assert!((1940..=1950).contains(&d), "{d}");
    }

    #[test]
    fn coarse_keeps_two_decimals() {
        assert_eq!(coarse(22.54317), 22.54);
        assert_eq!(coarse(-0.005001), -0.01);
    }
}
