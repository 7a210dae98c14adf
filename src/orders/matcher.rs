//! The one matcher: what a device lacks for a demand, as structured gaps. The check, the take and
//! the live count all ask [`gaps`]; there is no second copy of these rules.

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter};

use crate::apps::install::{free_on, needs};
use crate::db::enums::DisplayType;
use crate::db::entity::{apps, devices, orders};
use crate::db::enums::{DeviceStatus, SharingMode};
use crate::devices::gpus::gpus_of;
use crate::devices::gpus::{cuda_of, usable_vram};
use crate::devices::nearby::distance_km;
use crate::error::AppError;
use crate::market::fit::cuda_need;
use crate::orders::model::{Gap, Terms};
use zmarket_protocol::gpus::CudaVersion;

/// How many GPUs a demand needs of a device: its own count, at least what the app needs (a Lite
/// App needs one).
fn gpus_needed(terms: &Terms, app: &apps::Model) -> i64 {
    let lite = i64::from(app.display_type == DisplayType::LiteApp);
    terms.gpu_count.max(app.gpu_count as i64).max(lite)
}

/// The CUDA gap, if any: the higher of the demand's `min_cuda` and the app's own need against the
/// box's CUDA. A box that does not say its CUDA is refused only when the demand itself asked for
/// one (the app's need alone does not refuse it; nor does the fit).
fn cuda_gap(terms: &Terms, app: &apps::Model, d: &devices::Model) -> Option<Gap> {
    let need: CudaVersion = terms.min_cuda.max(cuda_need(app))?;
    match cuda_of(d) {
        Some(have) if have < need => Some(Gap::new("cuda", need.to_string(), have.to_string())),
        None if terms.min_cuda.is_some() => Some(Gap::new("cuda", need.to_string(), serde_json::Value::Null)),
        _ => None,
    }
}

/// The VRAM gap, if any: fewer than `need` (at least one) of the GPUs the box could give now
/// have `min_vram` bytes. `have` is the largest usable GPU's memory, null when none is usable.
async fn vram_gap(conn: &impl ConnectionTrait, terms: &Terms, need: i64, d: &devices::Model) -> Result<Option<Gap>, AppError> {
    if terms.min_vram <= 0 {
        return Ok(None);
    }
    let vram = usable_vram(conn, d).await?;
    let big_enough = vram.iter().filter(|v| **v >= terms.min_vram).count() as i64;
    if big_enough >= need.max(1) {
        return Ok(None);
    }
    let largest = vram.into_iter().max().map_or(serde_json::Value::Null, serde_json::Value::from);
    Ok(Some(Gap::new("min_vram", terms.min_vram, largest)))
}

/// Every requirement of `terms` (and of its app) that `d` does not meet now; empty = it qualifies.
/// Order: status, rentable, reserved, distance_km, gpu_count, gpu_models, cuda, min_vram,
/// cpu_cores, memory_bytes, disk_bytes, app.
pub async fn gaps(conn: &impl ConnectionTrait, terms: &Terms, app: &apps::Model, d: &devices::Model) -> Result<Vec<Gap>, AppError> {
    let mut out = Vec::new();
    if d.status != DeviceStatus::Online {
        out.push(Gap::new("status", "online", sea_orm::ActiveEnum::to_value(&d.status.shown())));
    }
    if !d.rentable || d.sharing_mode == SharingMode::Dedicated {
        out.push(Gap::new("rentable", true, false));
    }
    let reserved = orders::Entity::find().filter(orders::Column::ReservedDeviceId.eq(d.id.clone())).count(conn).await? > 0;
    if reserved {
        out.push(Gap::new("reserved", false, true));
    }
    if let (Some(limit), Some(p)) = (terms.distance_km, &terms.point) {
        match (d.lat, d.lng) {
            (Some(lat), Some(lng)) => {
                let km = distance_km(p.lat, p.lng, lat, lng);
                if km > limit {
                    out.push(Gap::new("distance_km", limit, km));
                }
            }
            _ => out.push(Gap::new("distance_km", limit, serde_json::Value::Null)),
        }
    }
    let free = free_on(conn, d).await?;
    let need = gpus_needed(terms, app);
    if free.gpu_count < need {
        out.push(Gap::new("gpu_count", need, free.gpu_count.max(0)));
    }
    if !terms.gpu_models.is_empty() {
        let names: Vec<String> = gpus_of(d).into_iter().map(|g| g.name).collect();
        let wanted: Vec<String> = terms.gpu_models.iter().map(|m| m.to_lowercase()).collect();
        let matching = names.iter().filter(|n| wanted.iter().any(|m| n.to_lowercase().contains(m.as_str()))).count() as i64;
        if matching < need.max(1) {
            let mut distinct = names.clone();
            distinct.dedup();
            let have = if distinct.is_empty() { serde_json::Value::Null } else { distinct.join(", ").into() };
            out.push(Gap::new("gpu_models", terms.models_text(), have));
        }
    }
    out.extend(cuda_gap(terms, app, d));
    out.extend(vram_gap(conn, terms, need, d).await?);
    let mut app_needs = needs(app);
    app_needs.gpu_count = 0;
    for g in crate::apps::install::gaps(app_needs, free) {
        out.push(Gap::new(&g.field, g.need, g.have));
    }
    if crate::apps::seen::installed(conn, &d.id, &app.id).await? {
        out.push(Gap::new("app", "not_installed", "installed"));
    }
    Ok(out)
}

/// The devices that could ever take a demand: individuals' online, rentable, shared devices.
pub async fn candidates(conn: &impl ConnectionTrait) -> Result<Vec<devices::Model>, AppError> {
    Ok(devices::Entity::find()
        .filter(devices::Column::Status.eq(DeviceStatus::Online))
        .filter(devices::Column::Rentable.eq(true))
        .filter(devices::Column::SharingMode.ne(SharingMode::Dedicated))
        .filter(devices::Column::OwnerUserId.is_not_null())
        .filter(devices::Column::OwnerCompanyId.is_null())
        .all(conn)
        .await?)
}

/// How many devices satisfy `terms` now (the live count while composing).
pub async fn count(conn: &impl ConnectionTrait, terms: &Terms, app: &apps::Model) -> Result<u64, AppError> {
    let mut n = 0;
    for d in candidates(conn).await? {
        if gaps(conn, terms, app, &d).await?.is_empty() {
            n += 1;
        }
    }
    Ok(n)
}
