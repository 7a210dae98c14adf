//! Whether a device can take an app now: one rule for the market's offers (src/market/offers.rs)
//! and for the install and rent flows (src/apps/install.rs asks it before placing an app), so a
//! price the market shows is always a price the Rent dialog can charge.

use std::collections::{HashMap, HashSet};

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use crate::db::entity::{apps, devices, installations};
use crate::db::enums::{DeviceStatus, DisplayType};
use crate::devices::gpus::BoxGpus;
use zmarket_protocol::gpus::CudaVersion;
use crate::ids::{AppId, DeviceId};

/// The lowest CUDA the app's image runs on, when the app needs GPUs (an app without GPUs needs
/// no CUDA, whatever its row says).
pub fn cuda_need(app: &apps::Model) -> Option<CudaVersion> {
    app.cuda.as_deref().and_then(CudaVersion::parse).filter(|_| app.gpu_count > 0)
}

/// The app's CUDA and the box's, when the app needs GPUs and a newer CUDA than the box's driver
/// runs (a box that does not say its CUDA is not refused for it).
pub fn cuda_short(app: &apps::Model, gpus: &BoxGpus) -> Option<(CudaVersion, CudaVersion)> {
    let need = cuda_need(app)?;
    let have = gpus.cuda()?;
    (have < need).then_some((need, have))
}


/// Cores, bytes and GPUs: what an app needs or what a device has left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Room {
    pub cpu_cores: i64,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    pub gpu_count: i64,
}

impl Room {
    pub fn of_app(app: &apps::Model) -> Room {
        Room { cpu_cores: app.cpu_cores as i64, memory_bytes: app.memory_bytes, disk_bytes: app.disk_bytes, gpu_count: app.gpu_count as i64 }
    }

    pub fn held_by(h: &installations::Model) -> Room {
        Room { cpu_cores: h.cpu_cores, memory_bytes: h.memory_bytes, disk_bytes: h.disk_bytes, gpu_count: h.gpu_count }
    }

    /// What is left on `d` once `held` (what its installations hold) is taken; its GPUs are
    /// `usable_gpus`, those nobody holds by UUID and none failed (devices::gpus::usable_count).
    pub fn free_on(d: &devices::Model, held: impl IntoIterator<Item = Room>, usable_gpus: i64) -> Room {
        let mut free = Room { cpu_cores: d.cpu_cores, memory_bytes: d.memory_bytes, disk_bytes: d.disk_bytes, gpu_count: usable_gpus };
        for h in held {
            free.cpu_cores -= h.cpu_cores;
            free.memory_bytes -= h.memory_bytes;
            free.disk_bytes -= h.disk_bytes;
        }
        free
    }
}

/// Where a device stands now: what it has left, how many of its GPUs nobody holds, and the apps
/// on it.
#[derive(Debug, Clone, Default)]
pub struct Standing {
    pub free: Room,
    pub gpus_free: i64,
    /// The box's GPUs, read from its row once.
    pub gpus: BoxGpus,
    installed: HashSet<AppId>,
}

impl Standing {
    /// Whether `app_id` is on the device already.
    pub fn has(&self, app_id: &AppId) -> bool {
        self.installed.contains(app_id)
    }

    /// Where each of `devices` stands: one read of their installations and one of their GPU holds,
    /// whatever their number.
    pub async fn load(conn: &impl ConnectionTrait, devices: &[devices::Model]) -> Result<HashMap<DeviceId, Standing>, DbErr> {
        if devices.is_empty() {
            return Ok(HashMap::new());
        }
        let ids: Vec<DeviceId> = devices.iter().map(|d| d.id.clone()).collect();
        let gpus_held = crate::devices::gpus::held_on(conn, &ids).await?;
        let held = installations::Entity::find()
            .filter(installations::Column::ActiveKey.is_not_null())
            .filter(installations::Column::DeviceId.is_in(ids))
            .all(conn)
            .await?;
        let mut on: HashMap<&DeviceId, Vec<&installations::Model>> = HashMap::new();
        for h in &held {
            on.entry(&h.device_id).or_default().push(h);
        }
        Ok(devices
            .iter()
            .map(|d| {
                let here = on.get(&d.id).map(Vec::as_slice).unwrap_or_default();
                let holds = gpus_held.get(&d.id);
                let gpus = BoxGpus::of(d);
                let standing = Standing {
                    free: Room::free_on(d, here.iter().map(|h| Room::held_by(h)), gpus.usable_count(holds)),
                    gpus_free: gpus.free_count(holds),
                    gpus,
                    installed: here.iter().map(|h| h.app_id.clone()).collect(),
                };
                (d.id.clone(), standing)
            })
            .collect())
    }
}

/// Why a device cannot take an app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfit {
    Offline,
    NoGpuForLiteApp,
    NoGpuRuntime,
    /// The app is on the device already.
    Installed,
    /// A GPU of the box failed its last verification.
    GpuFailedCheck,
    /// The app's CUDA (need) is newer than the box's driver runs (have).
    CudaTooOld { need: CudaVersion, have: CudaVersion },
    /// The box has the GPUs, but they are held.
    NoFreeGpu,
    /// What is short: (field, need, have), `have` never below 0.
    Short(Vec<(&'static str, i64, i64)>),
}

impl Unfit {
    /// The stable name of the reason (`DeviceFit.reason`).
    pub fn code(&self) -> &'static str {
        match self {
            Unfit::Offline => "offline",
            Unfit::NoGpuForLiteApp => "no_gpu_for_lite_app",
            Unfit::NoGpuRuntime => "no_gpu_runtime",
            Unfit::Installed => "installed",
            Unfit::GpuFailedCheck => "gpu_failed_check",
            Unfit::CudaTooOld { .. } => "cuda_too_old",
            Unfit::NoFreeGpu => "no_free_gpu",
            Unfit::Short(_) => "resources",
        }
    }
}

/// What `need` lacks in `free`: (field, need, have) for each short field.
pub fn short(need: Room, free: Room) -> Vec<(&'static str, i64, i64)> {
    [
        ("cpu_cores", need.cpu_cores, free.cpu_cores),
        ("memory_bytes", need.memory_bytes, free.memory_bytes),
        ("disk_bytes", need.disk_bytes, free.disk_bytes),
        ("gpu_count", need.gpu_count, free.gpu_count),
    ]
    .into_iter()
    .filter(|(_, n, h)| n > h)
    .map(|(f, n, h)| (f, n, h.max(0)))
    .collect()
}

/// Why `d`, standing as it does (what is free, its GPUs, what is on it), cannot take `app`, if it
/// cannot.
pub fn unfit(app: &apps::Model, d: &devices::Model, standing: &Standing) -> Option<Unfit> {
    let (gpus, free) = (&standing.gpus, standing.free);
    if d.status != DeviceStatus::Online {
        Some(Unfit::Offline)
    } else if app.display_type == DisplayType::LiteApp && gpus.is_empty() {
        Some(Unfit::NoGpuForLiteApp)
    } else if app.gpu_count > 0 && d.gpu_runtime == Some(false) && !gpus.is_empty() {
        // GPUs on the box that its Docker cannot hand to a container.
        Some(Unfit::NoGpuRuntime)
    } else if standing.has(&app.id) {
        Some(Unfit::Installed)
    } else if app.gpu_count > 0 && gpus.verified() == Some(false) {
        Some(Unfit::GpuFailedCheck)
    } else if let Some((need, have)) = cuda_short(app, gpus) {
        Some(Unfit::CudaTooOld { need, have })
    } else if app.gpu_count > 0 && gpus.len() as i64 >= app.gpu_count as i64 && free.gpu_count < app.gpu_count as i64 {
        Some(Unfit::NoFreeGpu)
    } else {
        let s = short(Room::of_app(app), free);
        if s.is_empty() { None } else { Some(Unfit::Short(s)) }
    }
}
