//! The public nearby list: shared, rentable devices around a point, distances on a 6371 km
//! sphere rounded up, coordinates coarsened for visitors; and the nearby pages' first-paint
//! data. No HTTP types here.

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, Condition, DbBackend, EntityTrait, PaginatorTrait, QueryFilter, QuerySelect};

use crate::db::entity::devices;
use crate::devices::DevicesCtx;
use crate::devices::gpus::gpus_of;
use crate::devices::model::*;
use crate::error::{AppError, Msg};
use crate::lang::Lang;
use crate::ssr::data::PageData;
use crate::ids::DeviceId;
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

/// The distance a visitor is shown: from `at` to the coarsened point.
fn listed_distance(at: (f64, f64), lat: Option<f64>, lng: Option<f64>) -> i64 {
    distance_km(at.0, at.1, coarse(lat.unwrap_or(0.0)), coarse(lng.unwrap_or(0.0)))
}

/// A box as visitors see it; `free` its GPUs nobody holds. A GPU's UUID is left out: it names the
/// hardware, which a visitor has no need to follow from box to box.
fn nearby_of(d: &devices::Model, at: (f64, f64), free: i64) -> NearbyDevice {
    let (lat, lng) = (coarse(d.lat.unwrap_or(0.0)), coarse(d.lng.unwrap_or(0.0)));
    NearbyDevice {
        id: d.id.clone().into(),
        name: d.name.clone(),
        device_type: d.device_type,
        status: d.status.shown(),
        distance_km: listed_distance(at, d.lat, d.lng),
        lat,
        lng,
        price_per_hour: d.price_per_hour,
        cpu_cores: d.cpu_cores,
        memory_bytes: d.memory_bytes,
        disk_bytes: d.disk_bytes,
        gpus: gpus_of(d).into_iter().map(|g| Gpu { uuid: None, ..g }).collect(),
        gpus_free: free,
        verified: crate::devices::gpus::verified(d),
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
    // What visitors see changes only with public data: answers are kept under its version (read
    // from the database, so a change made on another instance counts at once).
    let version = cx.public.current().await as i64;
    let key = format!("{}|{}|{radius:?}|{offset}|{limit}", at.0, at.1);
    if let Some(list) = cx.nearby_answers.get(version, &key) {
        return Ok(list);
    }
    let list = nearby_uncached(cx, at, radius, offset, limit).await?;
    cx.nearby_answers.put(version, key, list.clone());
    Ok(list)
}

/// Nearby answers by (point, radius, page), under the public data version.
pub type Answers = crate::versions::VersionedCache<String, crate::http::List<NearbyDevice>>;

async fn nearby_uncached(cx: &DevicesCtx, at: (f64, f64), radius: Option<f64>, offset: u64, limit: u64) -> Result<crate::http::List<NearbyDevice>, AppError> {
    let wanted = (offset + limit) as usize;
    let (mut found, total) = match radius {
        // Everything within the radius: one box around the circle.
        Some(r) => {
            let found = within(cx, at, r).await?;
            let total = found.len() as u64;
            (found, total)
        }
        // The nearest first, from boxes growing until they hold the page (or the whole world).
        None => {
            let total = devices::Entity::find().filter(shared_condition()).count(&cx.db).await?;
            let mut r = FIRST_BOX_KM;
            loop {
                let found = within(cx, at, r).await?;
                if found.len() >= wanted || found.len() as u64 >= total || r >= HALF_EARTH_KM {
                    break (found, total);
                }
                r = (r * 4.0).min(HALF_EARTH_KM);
            }
        }
    };
    // Only the page's devices are read in full.
    found.sort_unstable();
    let page: Vec<String> = found.into_iter().skip(offset as usize).take(limit as usize).map(|(_, id)| id).collect();
    let mut items: Vec<NearbyDevice> = if page.is_empty() {
        Vec::new()
    } else {
        let rows = devices::Entity::find().filter(devices::Column::Id.is_in(page)).all(&cx.db).await?;
        let free = crate::devices::gpus::free_counts(&cx.db, &rows).await?;
        rows.iter().map(|d| nearby_of(d, at, free.get(&d.id).copied().unwrap_or(0))).collect()
    };
    items.sort_by(|a, b| a.distance_km.cmp(&b.distance_km).then_with(|| a.id.cmp(&b.id)));
    Ok(crate::http::List { items, total })
}

/// The first box of a nearest-first list (it grows fourfold until it holds the page).
const FIRST_BOX_KM: f64 = 64.0;
/// No point of the sphere is farther than this.
const HALF_EARTH_KM: f64 = std::f64::consts::PI * EARTH_RADIUS_KM;

/// (listed distance, id) of every shared device whose listed distance from `at` is at most `r`
/// km, read through the coordinate index (a box around the circle) rather than the whole table.
/// The box's (id, lat, lng) come back as one aggregated text value: the database driver hands
/// rows over one at a time (~5 µs each on SQLite), which made a 4,000-device box cost ~20 ms.
/// Coordinates are printed exactly (17 significant digits; PostgreSQL's shortest round-trip text),
/// so distances are the ones a row-by-row read would give.
async fn within(cx: &DevicesCtx, at: (f64, f64), r: f64) -> Result<Vec<(i64, String)>, AppError> {
    let mut cond = shared_condition();
    if let Some(b) = BoundingBox::around(at, r) {
        cond = cond.add(devices::Column::Lat.between(b.lat.0, b.lat.1));
        if let Some((lo, hi)) = b.lng {
            cond = cond.add(devices::Column::Lng.between(lo, hi));
        }
    }
    let packed = match cx.db.get_database_backend() {
        DbBackend::Postgres => "string_agg(id || ' ' || lat::text || ' ' || lng::text, E'\\n')",
        _ => "group_concat(id || ' ' || printf('%.17g', lat) || ' ' || printf('%.17g', lng), char(10))",
    };
    let text: Option<Option<String>> =
        devices::Entity::find().select_only().expr_as(Expr::cust(packed), "packed").filter(cond).into_tuple().one(&cx.db).await?;
    let mut found = Vec::new();
    for line in text.flatten().unwrap_or_default().lines() {
        let mut parts = line.rsplitn(3, ' ');
        let (Some(lng), Some(lat), Some(id)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let (Ok(lat), Ok(lng)) = (lat.parse::<f64>(), lng.parse::<f64>()) else { continue };
        let d = listed_distance(at, Some(lat), Some(lng));
        if d as f64 <= r {
            found.push((d, id.to_string()));
        }
    }
    Ok(found)
}

/// A latitude/longitude box holding every point whose *listed* distance from the centre is at
/// most `r` km. The listed distance is measured from the coarsened point (moved by at most
/// 0.005° on each axis) and rounded up, so the box is the circle of `r` + 1 km, which holds
/// every such point with room to spare.
#[derive(Debug, PartialEq)]
pub struct BoundingBox {
    pub lat: (f64, f64),
    /// None: every longitude (the circle reaches a pole or crosses the ±180° meridian).
    pub lng: Option<(f64, f64)>,
}

impl BoundingBox {
    /// None when the circle covers the whole sphere.
    pub fn around((lat, lng): (f64, f64), r: f64) -> Option<BoundingBox> {
        let km_per_degree = EARTH_RADIUS_KM.to_radians();
        let dlat = (r + 1.0) / km_per_degree;
        if dlat >= 180.0 {
            return None;
        }
        let (lo, hi) = (lat - dlat, lat + dlat);
        if lo <= -90.0 || hi >= 90.0 {
            return Some(BoundingBox { lat: (lo.max(-90.0), hi.min(90.0)), lng: None });
        }
        // The widest parallel of the box is the one nearest a pole.
        let widest = lo.abs().max(hi.abs()).to_radians().cos();
        let dlng = dlat / widest;
        let lng = (lng - dlng > -180.0 && lng + dlng < 180.0).then_some((lng - dlng, lng + dlng));
        Some(BoundingBox { lat: (lo, hi), lng })
    }
}

pub async fn nearby_one(cx: &DevicesCtx, id: &DeviceId, q: NearbyPoint) -> Result<NearbyDevice, AppError> {
    let at = visitor_point(cx, q.lat, q.lng)?;
    let d = devices::Entity::find_by_id(id.to_string())
        .filter(shared_condition())
        .one(&cx.db)
        .await?
        .ok_or(AppError::Refused(Msg::DeviceNotFound))?;
    let free = crate::devices::gpus::free_counts(&cx.db, std::slice::from_ref(&d)).await?;
    let mut n = nearby_of(&d, at, free.get(&d.id).copied().unwrap_or(0));
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
            let id = params.iter().find(|(k, _)| k == "id").and_then(|(_, v)| DeviceId::named(v))?;
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
    fn the_box_holds_the_circle() {
        // Points at the listed edge of the radius in every direction stay inside the box.
        for &(lat, lng) in &[(22.54, 114.06), (0.0, 0.0), (60.0, -179.5), (-75.0, 10.0)] {
            for r in [0.0, 1.0, 10.0, 500.0] {
                let b = BoundingBox::around((lat, lng), r).unwrap();
                for step in 0..360 {
                    let bearing = (step as f64).to_radians();
                    // The farthest point listed at <= r km: r km away along `bearing`, less a hair.
                    let d = (r + 0.999) / EARTH_RADIUS_KM;
                    let (p1, l1) = (lat.to_radians(), lng.to_radians());
                    let p2 = (p1.sin() * d.cos() + p1.cos() * d.sin() * bearing.cos()).asin();
                    let l2 = l1 + (bearing.sin() * d.sin() * p1.cos()).atan2(d.cos() - p1.sin() * p2.sin());
                    let (p2, l2) = (p2.to_degrees(), (l2.to_degrees() + 540.0) % 360.0 - 180.0);
                    if distance_km(lat, lng, coarse(p2), coarse(l2)) as f64 > r {
                        continue;
                    }
                    assert!(p2 >= b.lat.0 && p2 <= b.lat.1, "{lat},{lng} r={r}: {p2} outside {b:?}");
                    if let Some((lo, hi)) = b.lng {
                        assert!(l2 >= lo && l2 <= hi, "{lat},{lng} r={r}: {l2} outside {b:?}");
                    }
                }
            }
        }
        assert_eq!(BoundingBox::around((0.0, 0.0), 30_000.0), None);
        assert_eq!(BoundingBox::around((89.0, 0.0), 500.0).unwrap().lng, None);
    }

    #[test]
    fn coarse_keeps_two_decimals() {
        assert_eq!(coarse(22.54317), 22.54);
        assert_eq!(coarse(-0.005001), -0.01);
    }
}
