//! The box's GPUs (docs/gpus.md): what each one is (the spec's `gpus`, read once at start), how
//! busy each one is (every beat's `metrics.gpus`) and what a verification measures of them
//! (gpus/verify.rs). Read through NVML, loaded at run time (`libnvidia-ml.so.1`, opened once and
//! kept for the agent's life), else through `nvidia-smi` (gpus/smi.rs). A box without NVIDIA runs
//! as before: no GPUs, and no GPU work at any beat.
//!
//! What leaves the agent is already within the market's bounds (`zmarket_protocol::gpus::
//! check_spec` and `check_use`): the market refuses a whole beat over one bad figure, so a figure
//! out of range is clamped and a GPU without a well-formed UUID is left out of the telemetry.

mod smi;
pub mod verify;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{EccCounter, MemoryError, TemperatureSensor};

use zmarket_protocol::gpus::{Gpu, GpuUse, MAX_GPU_MEMORY, MAX_GPU_NAME, MAX_GPU_WATTS, MAX_GPUS, valid_uuid};

/// How long a beat waits for the GPUs' figures (a GPU fallen off the bus can make NVML or
/// nvidia-smi hang); the beat goes without them rather than late.
const USAGE_WAIT: Duration = Duration::from_secs(5);

/// NVML's or nvidia-smi's view of the box's GPUs, for the agent's life.
pub struct Gpus {
    /// Open while the agent runs (NVML is thread-safe); `None` when it could not be loaded.
    nvml: Option<Nvml>,
    inventory: Vec<Gpu>,
    /// One verification at a time: a `gpu_verify` command and the first bind may ask together,
    /// and two measuring the same GPU would each see half its bandwidth.
    pub(crate) verifying: Mutex<()>,
}

/// What NVML says of a GPU's health (a verification's verdict weighs it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Health {
    /// Uncorrected ECC errors since the driver loaded.
    pub ecc_errors: bool,
    /// Clocks held back by a hardware slowdown, a thermal slowdown or the power brake (not the
    /// ordinary power cap every busy GPU reaches).
    pub throttled: bool,
}

impl Gpus {
    /// Loads NVML and reads the GPUs (falls back to nvidia-smi when NVML cannot be loaded).
    /// Blocking (a few milliseconds with NVML, up to a few seconds with nvidia-smi); never fails:
    /// a box without NVIDIA has no GPUs.
    pub fn open() -> Gpus {
        let passthrough = iommu();
        match Nvml::init() {
            Ok(nvml) => {
                let inventory = bounded_inventory(read_nvml(&nvml, passthrough));
                tracing::info!(gpus = inventory.len(), "GPUs read through NVML");
                Gpus { nvml: Some(nvml), inventory, verifying: Mutex::new(()) }
            }
            Err(e) => {
                let inventory = bounded_inventory(smi::inventory(passthrough));
                if inventory.is_empty() {
                    tracing::debug!(error = %e, "no NVML and no nvidia-smi: no GPUs");
                } else {
                    tracing::info!(gpus = inventory.len(), error = %e, "NVML not loaded: GPUs read through nvidia-smi");
                }
                Gpus { nvml: None, inventory, verifying: Mutex::new(()) }
            }
        }
    }

    /// No GPUs (a box where reading them failed outright).
    pub fn none() -> Gpus {
        Gpus { nvml: None, inventory: Vec::new(), verifying: Mutex::new(()) }
    }

    /// GPUs known without NVML (tests).
    #[cfg(test)]
    pub fn listed(inventory: Vec<Gpu>) -> Gpus {
        Gpus { nvml: None, inventory: bounded_inventory(inventory), verifying: Mutex::new(()) }
    }

    /// The GPUs as the spec reports them.
    pub fn inventory(&self) -> &[Gpu] {
        &self.inventory
    }

    /// How busy each GPU is now (a beat's `metrics.gpus`), within the market's bounds. A box
    /// without GPUs answers at once with nothing.
    pub async fn usage(self: &Arc<Self>) -> Vec<GpuUse> {
        if self.inventory.is_empty() {
            return Vec::new();
        }
        let read = if self.nvml.is_some() {
            let me = self.clone();
            match tokio::time::timeout(USAGE_WAIT, tokio::task::spawn_blocking(move || me.nvml_usage())).await {
                Ok(Ok(list)) => list,
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "reading the GPUs' figures failed");
                    Vec::new()
                }
                Err(_) => {
                    tracing::warn!(secs = USAGE_WAIT.as_secs(), "NVML did not answer: this beat goes without GPU figures");
                    Vec::new()
                }
            }
        } else {
            smi::usage(USAGE_WAIT).await
        };
        bounded_usage(read)
    }

    /// Each GPU's figures through NVML. A GPU whose utilization or memory cannot be read (MIG
    /// mode answers "not supported") is left out rather than reported idle.
    fn nvml_usage(&self) -> Vec<GpuUse> {
        let Some(nvml) = &self.nvml else { return Vec::new() };
        self.inventory
            .iter()
            .filter_map(|g| {
                let uuid = g.uuid.as_deref()?;
                let d = nvml.device_by_uuid(uuid).ok()?;
                let utilization = d.utilization_rates().ok()?.gpu as f64;
                let memory_used = i64::try_from(d.memory_info().ok()?.used).unwrap_or(i64::MAX);
                Some(GpuUse {
                    uuid: uuid.to_string(),
                    utilization,
                    memory_used,
                    temperature: d.temperature(TemperatureSensor::Gpu).ok().map(f64::from),
                    // NVML says milliwatts.
                    power_watts: d.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
                })
            })
            .collect()
    }

    /// ECC errors and throttling as NVML reads them now; nothing known (all clear) without NVML
    /// or on a GPU that does not count them.
    pub fn health(&self, uuid: &str) -> Health {
        let Some(nvml) = &self.nvml else { return Health::default() };
        let Ok(d) = nvml.device_by_uuid(uuid) else { return Health::default() };
        let ecc_errors = d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile).is_ok_and(|n| n > 0);
        let slow = ThrottleReasons::HW_SLOWDOWN
            | ThrottleReasons::HW_THERMAL_SLOWDOWN
            | ThrottleReasons::SW_THERMAL_SLOWDOWN
            | ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN;
        let throttled = d.current_throttle_reasons().is_ok_and(|r| r.intersects(slow));
        Health { ecc_errors, throttled }
    }
}

/// Every GPU through an open NVML: a GPU NVML cannot open (lost, not enough power) is left out,
/// a field it cannot read is unknown (`None`).
fn read_nvml(nvml: &Nvml, passthrough: bool) -> Vec<Gpu> {
    let driver = nvml.sys_driver_version().ok();
    let cuda = nvml.sys_cuda_driver_version().ok().and_then(cuda_of);
    let count = match nvml.device_count() {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "NVML cannot count the GPUs");
            return Vec::new();
        }
    };
    (0..count)
        .filter_map(|i| {
            let d = match nvml.device_by_index(i) {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(index = i, error = %e, "NVML cannot open a GPU: left out");
                    return None;
                }
            };
            Some(Gpu {
                index: Some(i64::from(d.index().unwrap_or(i))),
                uuid: d.uuid().ok(),
                name: d.name().unwrap_or_default(),
                passthrough,
                vram: d.memory_info().ok().and_then(|m| i64::try_from(m.total).ok()).unwrap_or(0),
                driver: driver.clone(),
                cuda: cuda.clone(),
                compute_capability: d.cuda_compute_capability().ok().map(|c| format!("{}.{}", c.major, c.minor)),
                // NVML_DEVICE_MIG_ENABLE is 1; a GPU without MIG answers "not supported".
                mig: d.mig_mode().ok().map(|m| m.current == 1),
            })
        })
        .collect()
}

/// NVML's CUDA driver version (`1000 × major + 10 × minor`: 12040) as "12.4".
pub fn cuda_of(version: i32) -> Option<String> {
    (version > 0).then(|| format!("{}.{}", version / 1000, (version % 1000) / 10))
}

/// Whether the kernel has IOMMU groups: a GPU can then be passed through to a virtual machine.
fn iommu() -> bool {
    std::fs::read_dir("/sys/kernel/iommu_groups").map(|mut d| d.next().is_some()).unwrap_or(false)
}

/// A version as the market accepts it: digits and dots, at most 24 characters.
fn version_like(v: &str) -> bool {
    !v.is_empty() && v.len() <= 24 && v.bytes().all(|b| b.is_ascii_digit() || b == b'.') && v.as_bytes()[0].is_ascii_digit()
}

/// The inventory as the market accepts it (`check_spec`): at most [`MAX_GPUS`], names cut to
/// [`MAX_GPU_NAME`] characters, memory within bounds, a malformed or repeated UUID or index
/// dropped (the GPU stays, known by its place), a malformed version unknown.
fn bounded_inventory(list: Vec<Gpu>) -> Vec<Gpu> {
    if list.len() > MAX_GPUS {
        tracing::warn!(gpus = list.len(), reported = MAX_GPUS, "more GPUs than a spec may carry: the first are reported");
    }
    let mut uuids = HashSet::new();
    let mut indexes = HashSet::new();
    list.into_iter()
        .take(MAX_GPUS)
        .map(|mut g| {
            g.uuid = g.uuid.filter(|u| valid_uuid(u) && uuids.insert(u.to_ascii_lowercase()));
            g.index = g.index.filter(|i| (0..1024).contains(i) && indexes.insert(*i));
            g.name = g.name.trim().chars().take(MAX_GPU_NAME).collect();
            g.vram = g.vram.clamp(0, MAX_GPU_MEMORY);
            for v in [&mut g.driver, &mut g.cuda, &mut g.compute_capability] {
                if v.as_deref().is_some_and(|s| !version_like(s)) {
                    *v = None;
                }
            }
            g
        })
        .collect()
}

/// Telemetry as the market accepts it (`check_use`): a malformed or repeated UUID left out,
/// utilization 0-100, memory 0..16 TiB, temperature -50..150 °C, power 0..5000 W; a figure that
/// is not a number is unknown (utilization and memory: the GPU is left out).
fn bounded_usage(list: Vec<GpuUse>) -> Vec<GpuUse> {
    let mut seen = HashSet::new();
    list.into_iter()
        .filter(|g| valid_uuid(&g.uuid) && g.utilization.is_finite() && seen.insert(g.uuid.to_ascii_lowercase()))
        .take(MAX_GPUS)
        .map(|mut g| {
            g.utilization = g.utilization.clamp(0.0, 100.0);
            g.memory_used = g.memory_used.clamp(0, MAX_GPU_MEMORY);
            g.temperature = g.temperature.filter(|t| t.is_finite()).map(|t| t.clamp(-50.0, 150.0));
            g.power_watts = g.power_watts.filter(|w| w.is_finite()).map(|w| w.clamp(0.0, MAX_GPU_WATTS));
            g
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use zmarket_protocol::gpus::{check_spec, check_use};

    const U1: &str = "GPU-5a1b2c3d-0000-1111-2222-333344445555";
    const U2: &str = "GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff";

    #[test]
    fn cuda_versions_from_nvml_integers() {
        assert_eq!(cuda_of(12040).as_deref(), Some("12.4"));
        assert_eq!(cuda_of(13000).as_deref(), Some("13.0"));
        assert_eq!(cuda_of(12090).as_deref(), Some("12.9"));
        assert_eq!(cuda_of(11080).as_deref(), Some("11.8"));
        assert_eq!(cuda_of(12100).as_deref(), Some("12.10"));
        assert_eq!(cuda_of(0), None);
        assert_eq!(cuda_of(-1), None);
    }

    #[test]
    fn the_inventory_sent_is_one_the_market_accepts() {
        let good = Gpu {
            index: Some(0),
            uuid: Some(U1.into()),
            name: "NVIDIA H200".into(),
            vram: 150_754_820_096,
            driver: Some("580.159.04".into()),
            cuda: Some("13.0".into()),
            compute_capability: Some("9.0".into()),
            mig: Some(false),
            ..Default::default()
        };
        let list = vec![
            good.clone(),
            // the same UUID and index again, a long name, absurd memory, a version with words
            Gpu { name: "x".repeat(300), vram: i64::MAX, driver: Some("580 beta".into()), ..good.clone() },
            Gpu { index: Some(5000), uuid: Some("GPU-zz".into()), vram: -4, ..good.clone() },
        ];
        assert!(check_spec(&list).is_err());
        let sent = bounded_inventory(list);
        check_spec(&sent).unwrap();
        assert_eq!(sent.len(), 3, "no GPU is lost");
        assert_eq!(sent[0], good);
        assert_eq!((sent[1].uuid.as_deref(), sent[1].index, sent[1].driver.as_deref()), (None, None, None));
        assert_eq!(sent[1].name.chars().count(), MAX_GPU_NAME);
        assert_eq!(sent[1].vram, MAX_GPU_MEMORY);
        assert_eq!((sent[2].uuid.as_deref(), sent[2].index, sent[2].vram), (None, None, 0));
        assert_eq!(sent[2].key(2), "2");
        let many: Vec<Gpu> = (0..40).map(|i| Gpu { index: Some(i), name: "RTX".into(), ..Default::default() }).collect();
        assert_eq!(bounded_inventory(many).len(), MAX_GPUS);
    }

    #[test]
    fn telemetry_sent_is_within_the_markets_bounds() {
        let ok = GpuUse { uuid: U1.into(), utilization: 97.0, memory_used: 39 << 30, temperature: Some(61.0), power_watts: Some(540.5) };
        let list = vec![
            ok.clone(),
            GpuUse { uuid: U1.into(), ..ok.clone() },
            GpuUse { uuid: "GPU-x".into(), ..ok.clone() },
            GpuUse { uuid: U2.into(), utilization: 180.0, memory_used: -1, temperature: Some(f64::NAN), power_watts: Some(1e9) },
            GpuUse { uuid: "GPU-0123456789".into(), utilization: f64::NAN, ..ok.clone() },
        ];
        assert!(check_use(&list).is_err());
        let sent = bounded_usage(list);
        check_use(&sent).unwrap();
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[0], ok);
        assert_eq!(sent[1], GpuUse { uuid: U2.into(), utilization: 100.0, memory_used: 0, temperature: None, power_watts: Some(MAX_GPU_WATTS) });
    }

    /// On whatever box the tests run: opening never fails, and what it reads the market accepts
    /// (no GPUs on a box without NVIDIA, the box's own on one with).
    #[tokio::test]
    async fn this_box_opens_and_reports_within_bounds() {
        let gpus = Arc::new(tokio::task::spawn_blocking(Gpus::open).await.unwrap());
        check_spec(gpus.inventory()).unwrap();
        let usage = gpus.usage().await;
        check_use(&usage).unwrap();
        if gpus.inventory().is_empty() {
            assert!(usage.is_empty());
        }
    }

    #[tokio::test]
    async fn a_box_without_gpus_reads_nothing() {
        let gpus = Arc::new(Gpus::none());
        assert!(gpus.inventory().is_empty());
        assert!(gpus.usage().await.is_empty());
        assert_eq!(gpus.health(U1), Health::default());
    }
}
