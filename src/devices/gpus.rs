//! A box's GPUs as the market sells them (docs/gpus.md): each known by its key (the UUID), held
//! by at most one installation or Z-CLOUD machine (`gpu_holds`, whose primary key refuses a
//! second holder), assigned in the transaction that reserves the box's capacity and free again
//! when the holder goes; the box's CUDA version and its last verification. No HTTP types here.

use std::collections::{HashMap, HashSet};

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};
use serde::Serialize;
use utoipa::ToSchema;

use crate::db::entity::{devices, gpu_holds};
use crate::db::now;
use crate::devices::model::{HeldGpu, Verification};
use crate::error::{AppError, Msg};
use zmarket_protocol::gpus::{CudaVersion, Gpu};
use crate::ids::{DeviceId, InstallationId};

/// What holds a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder<'a> {
    Installation(&'a InstallationId),
    /// A Z-CLOUD machine, a device of its own.
    Machine(&'a DeviceId),
}

/// `gpu_holds.holder_kind` of an installation's hold (a machine's is "machine").
const INSTALLATION: &str = "installation";

impl Holder<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Holder::Installation(_) => INSTALLATION,
            Holder::Machine(_) => "machine",
        }
    }

    fn id(&self) -> &str {
        match self {
            Holder::Installation(id) => id.as_str(),
            Holder::Machine(id) => id.as_str(),
        }
    }
}

/// A box's GPUs as its agent last reported them (none when unreadable).
pub fn gpus_of(d: &devices::Model) -> Vec<Gpu> {
    serde_json::from_str(&d.gpus).unwrap_or_default()
}

/// A box's GPUs with their keys, in the order the box lists them.
pub fn keyed(d: &devices::Model) -> Vec<(String, Gpu)> {
    gpus_of(d).into_iter().enumerate().map(|(i, g)| (g.key(i), g)).collect()
}

/// The box's last verification, if any.
pub fn verification_of(d: &devices::Model) -> Option<Verification> {
    d.verification.as_deref().and_then(|v| serde_json::from_str(v).ok())
}

/// A box's GPUs (with their keys, in the box's order) and their last verification, read from its
/// row once: the offers weigh hundreds of boxes, each asked several questions.
#[derive(Debug, Clone, Default)]
pub struct BoxGpus {
    keyed: Vec<(String, Gpu)>,
    verification: Option<Verification>,
}

impl BoxGpus {
    pub fn of(d: &devices::Model) -> Self {
        BoxGpus { keyed: keyed(d), verification: verification_of(d) }
    }

    /// The GPUs, in the box's order.
    pub fn list(&self) -> impl Iterator<Item = &Gpu> {
        self.keyed.iter().map(|(_, g)| g)
    }

    pub fn len(&self) -> usize {
        self.keyed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keyed.is_empty()
    }

    /// Whether the GPUs passed their last verification: `Some(true)` all of them, `Some(false)`
    /// one failed, `None` never verified (or GPUs added since).
    pub fn verified(&self) -> Option<bool> {
        let v = self.verification.as_ref()?;
        if self.keyed.is_empty() {
            return None;
        }
        if v.gpus.iter().any(|c| !c.ok && self.keyed.iter().any(|(k, _)| k.eq_ignore_ascii_case(&c.uuid))) {
            return Some(false);
        }
        self.keyed.iter().all(|(k, _)| v.gpus.iter().any(|c| c.ok && c.uuid.eq_ignore_ascii_case(k))).then_some(true)
    }

    /// The CUDA version the box's driver runs (the lowest any GPU reports; `None` when none says).
    pub fn cuda(&self) -> Option<CudaVersion> {
        self.list().filter_map(Gpu::cuda_version).min()
    }

    /// How many GPUs are not held (`gpus_free`).
    pub fn free_count(&self, held: Option<&HashSet<String>>) -> i64 {
        self.keyed.iter().filter(|(k, _)| !held.is_some_and(|h| h.contains(k))).count() as i64
    }

    /// The GPUs an app may be given, with their keys, in the box's order: neither held nor failed
    /// at their last check.
    fn usable_keyed(&self, held: Option<&HashSet<String>>) -> impl Iterator<Item = &(String, Gpu)> {
        let failed: HashSet<&str> =
            self.verification.iter().flat_map(|v| v.gpus.iter()).filter(|c| !c.ok).map(|c| c.uuid.as_str()).collect();
        self.keyed.iter().filter(move |(k, _)| !held.is_some_and(|h| h.contains(k)) && !failed.contains(k.as_str()))
    }

    /// How many GPUs an app may be given now.
    pub fn usable_count(&self, held: Option<&HashSet<String>>) -> i64 {
        self.usable_keyed(held).count() as i64
    }
}

/// Whether the box's GPUs passed their last verification ([`BoxGpus::verified`]).
pub fn verified(d: &devices::Model) -> Option<bool> {
    BoxGpus::of(d).verified()
}

/// The CUDA version the box's driver runs ([`BoxGpus::cuda`]).
pub fn cuda_of(d: &devices::Model) -> Option<CudaVersion> {
    gpus_of(d).iter().filter_map(Gpu::cuda_version).min()
}

/// How many GPUs of `d` are not held (`gpus_free`).
pub fn free_count(d: &devices::Model, held: Option<&HashSet<String>>) -> i64 {
    BoxGpus::of(d).free_count(held)
}

/// The GPUs of `d` an app may be given, with their keys, in the box's order: neither held nor
/// failed at their last check.
fn usable_keyed(d: &devices::Model, held: Option<&HashSet<String>>) -> Vec<(String, Gpu)> {
    BoxGpus::of(d).usable_keyed(held).cloned().collect()
}

/// The GPUs of `d` an app may be given, in the box's order: neither held nor failed at their
/// last check.
pub fn usable(d: &devices::Model, held: Option<&HashSet<String>>) -> Vec<Gpu> {
    usable_keyed(d, held).into_iter().map(|(_, g)| g).collect()
}

/// The keys held on each of `device_ids`.
pub async fn held_on(conn: &impl ConnectionTrait, device_ids: &[DeviceId]) -> Result<HashMap<DeviceId, HashSet<String>>, sea_orm::DbErr> {
    if device_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = gpu_holds::Entity::find().filter(gpu_holds::Column::DeviceId.is_in(device_ids.to_vec())).all(conn).await?;
    let mut out: HashMap<DeviceId, HashSet<String>> = HashMap::new();
    for r in rows {
        out.entry(r.device_id).or_default().insert(r.gpu_key);
    }
    Ok(out)
}

/// The memory (bytes) of each GPU of `d` an app may be given now, in the box's order.
pub async fn usable_vram(conn: &impl ConnectionTrait, d: &devices::Model) -> Result<Vec<i64>, AppError> {
    let held = held_on(conn, std::slice::from_ref(&d.id)).await?;
    Ok(usable(d, held.get(&d.id)).into_iter().map(|g| g.vram).collect())
}

/// `gpus_free` of each device among `rows`.
pub async fn free_counts(conn: &impl ConnectionTrait, rows: &[devices::Model]) -> Result<HashMap<DeviceId, i64>, AppError> {
    let ids: Vec<DeviceId> = rows.iter().map(|d| d.id.clone()).collect();
    let held = held_on(conn, &ids).await?;
    Ok(rows.iter().map(|d| (d.id.clone(), free_count(d, held.get(&d.id)))).collect())
}

/// Gives `holder` `n` free GPUs of `d` (whose row the caller locked in this transaction), in
/// the box's order, skipping those that failed their last verification; of a model named by
/// `model` when given. `no_free_gpu` when there are not that many: nothing is written. The
/// primary key of `gpu_holds` refuses a GPU held twice even if two writers got here at once.
pub async fn assign(conn: &impl ConnectionTrait, d: &devices::Model, n: i64, model: Option<&str>, holder: Holder<'_>) -> Result<Vec<HeldGpu>, AppError> {
    if n <= 0 {
        return Ok(Vec::new());
    }
    let held = held_on(conn, std::slice::from_ref(&d.id)).await?;
    let chosen: Vec<(String, Gpu)> =
        usable_keyed(d, held.get(&d.id)).into_iter().filter(|(_, g)| model.is_none_or(|m| g.name == m)).take(n as usize).collect();
    if (chosen.len() as i64) < n {
        return Err(AppError::Refused(Msg::NoFreeGpu));
    }
    let t = now();
    let rows = chosen.iter().map(|(k, _)| gpu_holds::ActiveModel {
        device_id: Set(d.id.clone()),
        gpu_key: Set(k.clone()),
        holder_kind: Set(holder.kind().to_string()),
        holder_id: Set(holder.id().to_string()),
        created_at: Set(t),
    });
    gpu_holds::Entity::insert_many(rows).exec(conn).await.map_err(|e| match e.sql_err() {
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_)) => AppError::Refused(Msg::NoFreeGpu),
        _ => AppError::from(e),
    })?;
    crate::versions::standing_changed();
    Ok(chosen.into_iter().map(|(uuid, g)| HeldGpu { uuid, name: g.name, vram: g.vram }).collect())
}

/// Frees every GPU `holder` holds.
pub async fn release(conn: &impl ConnectionTrait, holder: Holder<'_>) -> Result<(), AppError> {
    gpu_holds::Entity::delete_many().filter(gpu_holds::Column::HolderId.eq(holder.id())).exec(conn).await?;
    crate::versions::standing_changed();
    Ok(())
}

/// Frees every GPU of device `device_id` (the box leaves the market).
pub async fn release_on(conn: &impl ConnectionTrait, device_id: &DeviceId) -> Result<(), AppError> {
    gpu_holds::Entity::delete_many().filter(gpu_holds::Column::DeviceId.eq(device_id)).exec(conn).await?;
    crate::versions::standing_changed();
    Ok(())
}

/// The keys installation `id` holds, in the box's order.
pub async fn keys_of(conn: &impl ConnectionTrait, id: &InstallationId) -> Result<Vec<String>, AppError> {
    Ok(held_by(conn, std::slice::from_ref(id)).await?.remove(id).unwrap_or_default().into_iter().map(|g| g.uuid).collect())
}

/// The GPUs each of installations `holder_ids` holds (described from its box's spec), in the
/// box's order.
pub async fn held_by(conn: &impl ConnectionTrait, holder_ids: &[InstallationId]) -> Result<HashMap<InstallationId, Vec<HeldGpu>>, AppError> {
    if holder_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = gpu_holds::Entity::find().filter(gpu_holds::Column::HolderId.is_in(holder_ids.to_vec())).all(conn).await?;
    if rows.is_empty() {
        return Ok(HashMap::new());
    }
    let device_ids: HashSet<DeviceId> = rows.iter().map(|r| r.device_id.clone()).collect();
    let boxes: HashMap<DeviceId, Vec<(String, Gpu)>> = devices::Entity::find()
        .filter(devices::Column::Id.is_in(device_ids))
        .all(conn)
        .await?
        .into_iter()
        .map(|d| (d.id.clone(), keyed(&d)))
        .collect();
    let mut out: HashMap<InstallationId, Vec<(usize, HeldGpu)>> = HashMap::new();
    for r in rows {
        let gpus = boxes.get(&r.device_id).map(Vec::as_slice).unwrap_or_default();
        let (pos, gpu) = match gpus.iter().position(|(k, _)| *k == r.gpu_key) {
            Some(i) => (i, Some(&gpus[i].1)),
            None => (usize::MAX, None),
        };
        let held = HeldGpu { uuid: r.gpu_key, name: gpu.map(|g| g.name.clone()).unwrap_or_default(), vram: gpu.map(|g| g.vram).unwrap_or(0) };
        out.entry(InstallationId::from(r.holder_id)).or_default().push((pos, held));
    }
    Ok(out
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_by_key(|(p, g)| (*p, g.uuid.clone()));
            (k, v.into_iter().map(|(_, g)| g).collect())
        })
        .collect())
}

/// The installations holding a GPU of `d` that its spec no longer lists (a GPU gone while held),
/// for their domain to fail them. Their holds stay: a GPU seated again is theirs again.
pub async fn gone(conn: &impl ConnectionTrait, d: &devices::Model) -> Result<Vec<InstallationId>, AppError> {
    let keys: HashSet<String> = keyed(d).into_iter().map(|(k, _)| k).collect();
    let rows = gpu_holds::Entity::find().filter(gpu_holds::Column::DeviceId.eq(d.id.clone())).all(conn).await?;
    let lost: Vec<gpu_holds::Model> = rows.into_iter().filter(|r| !keys.contains(&r.gpu_key)).collect();
    if lost.is_empty() {
        return Ok(Vec::new());
    }
    let mut holders: Vec<InstallationId> = lost.iter().filter(|r| r.holder_kind == INSTALLATION).map(|r| InstallationId::from(&r.holder_id)).collect();
    holders.sort();
    holders.dedup();
    Ok(holders)
}

/// GPUs across the market (the operator's overview).
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct MarketGpus {
    /// GPUs of bound boxes.
    pub total: u64,
    /// Of them, on boxes online now.
    pub online: u64,
    /// Held by an installation or a Z-CLOUD machine.
    pub held: u64,
    /// Busy (10 % or more) at their box's last beat.
    pub busy: u64,
    /// The mean utilization of online GPUs at their last beat (0-100); null when none reports.
    pub utilization: Option<f64>,
}

/// Every GPU's use at its online box's last beat, with the box's id (the `/metrics` gauges).
pub async fn live_use(conn: &impl ConnectionTrait) -> Result<Vec<(DeviceId, zmarket_protocol::gpus::GpuUse)>, AppError> {
    use crate::db::enums::DeviceStatus;
    let boxes = devices::Entity::find()
        .filter(devices::Column::Status.eq(DeviceStatus::Online))
        .filter(devices::Column::GpuUse.is_not_null())
        .all(conn)
        .await?;
    Ok(boxes
        .into_iter()
        .flat_map(|d| {
            let used: Vec<zmarket_protocol::gpus::GpuUse> = d.gpu_use.as_deref().and_then(|u| serde_json::from_str(u).ok()).unwrap_or_default();
            used.into_iter().map(move |u| (d.id.clone(), u))
        })
        .collect())
}

/// GPUs across the market, read from the boxes and the holds.
pub async fn market(conn: &impl ConnectionTrait) -> Result<MarketGpus, AppError> {
    use crate::db::enums::DeviceStatus;
    let boxes = devices::Entity::find()
        .filter(devices::Column::Gpus.ne("[]"))
        .filter(sea_orm::Condition::any().add(devices::Column::OwnerUserId.is_not_null()).add(devices::Column::OwnerCompanyId.is_not_null()))
        .filter(devices::Column::HostId.is_null())
        .all(conn)
        .await?;
    use sea_orm::PaginatorTrait;
    let mut m = MarketGpus { held: gpu_holds::Entity::find().count(conn).await?, ..Default::default() };
    let (mut sum, mut reporting) = (0.0, 0u64);
    for d in &boxes {
        let n = gpus_of(d).len() as u64;
        m.total += n;
        if d.status != DeviceStatus::Online {
            continue;
        }
        m.online += n;
        let used: Vec<zmarket_protocol::gpus::GpuUse> = d.gpu_use.as_deref().and_then(|u| serde_json::from_str(u).ok()).unwrap_or_default();
        for u in used {
            sum += u.utilization;
            reporting += 1;
            if u.utilization >= 10.0 {
                m.busy += 1;
            }
        }
    }
    m.utilization = (reporting > 0).then(|| (sum / reporting as f64 * 10.0).round() / 10.0);
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(gpus: &[(&str, &str)], verification: Option<&str>) -> devices::Model {
        let list: Vec<Gpu> = gpus.iter().enumerate().map(|(i, (u, n))| Gpu { index: Some(i as i64), uuid: Some(u.to_string()), name: n.to_string(), vram: 80 << 30, ..Default::default() }).collect();
        devices::Model {
            id: "D".into(),
            name: "box".into(),
            device_type: crate::db::enums::DeviceType::ZBox,
            status: crate::db::enums::DeviceStatus::Online,
            status_reason: None,
            secret_hash: None,
            pairing_hash: None,
            owner_user_id: None,
            owner_company_id: None,
            bound_by: None,
            bound_at: None,
            sharing_mode: crate::db::enums::SharingMode::Manual,
            rentable: false,
            price_per_hour: 0,
            cpu_cores: 8,
            memory_bytes: 1 << 34,
            disk_bytes: 1 << 40,
            gpus: serde_json::to_string(&list).unwrap(),
            gpu_runtime: Some(true),
            cpu_percent: None,
            memory_used_bytes: None,
            disk_used_bytes: None,
            lat: None,
            lng: None,
            host_id: None,
            gpu_count: 0,
            gpu_model: String::new(),
            passthrough: false,
            last_seen_at: None,
            channel_instance: None,
            created_at: chrono::Utc::now(),
            updated_at: chrono::Utc::now(),
            verification: verification.map(str::to_string),
            gpu_use: None,
            presence: None,
            presence_hour: None,
        }
    }

    const A: &str = "GPU-aaaaaaaa-0000-0000-0000-000000000000";
    const B: &str = "GPU-bbbbbbbb-0000-0000-0000-000000000000";

    #[test]
    fn free_and_usable_leave_out_held_and_failed() {
        let check = format!(r#"{{"at":"2026-11-28T00:00:00Z","gpus":[{{"uuid":"{A}","ok":true,"d2d_gbps":3000.0,"h2d_gbps":50.0,"reason":null}},{{"uuid":"{B}","ok":false,"d2d_gbps":400.0,"h2d_gbps":50.0,"reason":"slow_memory"}}]}}"#);
        let d = device(&[(A, "NVIDIA H200"), (B, "NVIDIA H200")], Some(&check));
        let held: HashSet<String> = [A.to_string()].into();
        assert_eq!(free_count(&d, None), 2);
        assert_eq!(free_count(&d, Some(&held)), 1);
        assert_eq!(BoxGpus::of(&d).usable_count(None), 1, "B failed its check");
        assert_eq!(BoxGpus::of(&d).usable_count(Some(&held)), 0);
        assert_eq!(usable(&d, None).into_iter().map(|g| g.uuid).collect::<Vec<_>>(), vec![Some(A.to_string())]);
        assert_eq!(verified(&d), Some(false));
    }

    #[test]
    fn verified_needs_every_gpu_checked() {
        let one = format!(r#"{{"at":"2026-11-28T00:00:00Z","gpus":[{{"uuid":"{A}","ok":true,"d2d_gbps":3000.0,"h2d_gbps":50.0,"reason":null}}]}}"#);
        assert_eq!(verified(&device(&[(A, "H200"), (B, "H200")], Some(&one))), None, "B never checked");
        assert_eq!(verified(&device(&[(A, "H200")], Some(&one))), Some(true));
        assert_eq!(verified(&device(&[(A, "H200")], None)), None);
    }

    #[test]
    fn the_box_cuda_is_its_lowest() {
        let mut d = device(&[(A, "H200"), (B, "H200")], None);
        let mut list = gpus_of(&d);
        list[0].cuda = Some("12.4".into());
        list[1].cuda = Some("12.2".into());
        d.gpus = serde_json::to_string(&list).unwrap();
        assert_eq!(cuda_of(&d), Some(CudaVersion(12, 2)));
    }
}
