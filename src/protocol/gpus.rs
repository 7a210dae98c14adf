//! GPUs on the wire (docs/gpus.md): what the agent reads of each GPU (`spec.gpus`), how busy each
//! is (`metrics.gpus`, every beat) and what a verification measured (`verification`, once per
//! `gpu_verify` command). Checked here, once, for both sides: a malformed or duplicate UUID, a
//! utilization outside 0-100 or an absurd figure refuses the whole beat, naming the field.

use serde::{Deserialize, Serialize};

use crate::Invalid;

/// At most this many GPUs in a spec, each name at most this long: a registration is a few
/// hundred bytes, never kilobytes (with `AGENT_BODY_LIMIT` on the agent routes' bodies).
pub const MAX_GPUS: usize = 32;
pub const MAX_GPU_NAME: usize = 100;
/// Largest memory a GPU may report (bytes): 16 TiB, far above any GPU made.
pub const MAX_GPU_MEMORY: i64 = 16 << 40;
/// Largest power draw a GPU may report (W).
pub const MAX_GPU_WATTS: f64 = 5_000.0;
/// Largest copy bandwidth a verification may report (GB/s).
pub const MAX_GBPS: f64 = 100_000.0;

/// One GPU of a box. `index`, `uuid` and the versions come from NVML (or nvidia-smi); an agent
/// older than issue 38 sends only `name`, `passthrough` and `vram`, and its GPUs are then known
/// by their place in the list (see [`Gpu::key`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Gpu {
    /// NVML's index (the order nvidia-smi lists them in).
    #[serde(default)]
    pub index: Option<i64>,
    /// NVIDIA's `GPU-…` UUID.
    #[serde(default)]
    pub uuid: Option<String>,
    pub name: String,
    pub passthrough: bool,
    /// bytes
    pub vram: i64,
    /// The driver's version, e.g. "580.159.04".
    #[serde(default)]
    pub driver: Option<String>,
    /// The highest CUDA version the driver runs, e.g. "13.0".
    #[serde(default)]
    pub cuda: Option<String>,
    /// e.g. "9.0" (Hopper).
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// Whether MIG mode is on.
    #[serde(default)]
    pub mig: Option<bool>,
}

impl Gpu {
    /// What the market holds this GPU by and what the agent hands Docker: its UUID, or, from an
    /// agent that sends none, its index (its place in the list), as Docker also accepts.
    pub fn key(&self, position: usize) -> String {
        match &self.uuid {
            Some(u) => u.clone(),
            None => self.index.unwrap_or(position as i64).to_string(),
        }
    }

    /// The CUDA version its driver runs, parsed.
    pub fn cuda_version(&self) -> Option<CudaVersion> {
        self.cuda.as_deref().and_then(CudaVersion::parse)
    }
}

/// Whether `s` is a GPU UUID as NVIDIA writes it: `GPU-` then hex digits and dashes (36 after
/// the prefix on every GPU seen; 8 to 64 accepted).
pub fn valid_uuid(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("GPU-") else { return false };
    (8..=64).contains(&rest.len()) && rest.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') && rest.bytes().any(|b| b.is_ascii_hexdigit())
}

/// A version written as digits and dots, at most 24 characters ("580.159.04", "13.0", "9.0").
fn valid_version(s: &str) -> bool {
    !s.is_empty() && s.len() <= 24 && s.bytes().all(|b| b.is_ascii_digit() || b == b'.') && s.bytes().next().is_some_and(|b| b.is_ascii_digit())
}

/// A CUDA version, `major.minor`, compared as numbers ("12.10" is after "12.9").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CudaVersion(pub u32, pub u32);

impl CudaVersion {
    pub fn parse(s: &str) -> Option<CudaVersion> {
        let s = s.trim();
        let (major, minor) = s.split_once('.').unwrap_or((s, "0"));
        let minor = minor.split('.').next().unwrap_or("0");
        if major.is_empty() || major.len() > 3 || minor.len() > 3 {
            return None;
        }
        Some(CudaVersion(major.parse().ok()?, minor.parse().ok()?))
    }
}

impl std::fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

/// The checks of a spec's GPUs: at most [`MAX_GPUS`], names at most [`MAX_GPU_NAME`], memory
/// within bounds, well-formed UUIDs and versions, no UUID or index twice.
pub fn check_spec(gpus: &[Gpu]) -> Result<(), Invalid> {
    if gpus.len() > MAX_GPUS {
        return Err(Invalid::new("spec.gpus", "more GPUs than MAX_GPUS"));
    }
    let mut uuids = std::collections::HashSet::new();
    let mut indexes = std::collections::HashSet::new();
    for g in gpus {
        if g.name.chars().count() > MAX_GPU_NAME || !(0..=MAX_GPU_MEMORY).contains(&g.vram) {
            return Err(Invalid::new("spec.gpus", "a name too long or memory out of bounds"));
        }
        if let Some(u) = &g.uuid
            && (!valid_uuid(u) || !uuids.insert(u.to_ascii_lowercase()))
        {
            return Err(Invalid::new("spec.gpus.uuid", "a malformed UUID, or one UUID twice"));
        }
        if let Some(i) = g.index
            && (!(0..1024).contains(&i) || !indexes.insert(i))
        {
            return Err(Invalid::new("spec.gpus.index", "an index outside 0-1023, or one index twice"));
        }
        for (field, v) in [("spec.gpus.driver", &g.driver), ("spec.gpus.cuda", &g.cuda), ("spec.gpus.compute_capability", &g.compute_capability)] {
            if let Some(v) = v
                && !valid_version(v)
            {
                return Err(Invalid::new(field, "not a version of digits and dots"));
            }
        }
    }
    Ok(())
}

/// How busy one GPU is now (a beat's `metrics.gpus`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GpuUse {
    pub uuid: String,
    /// Percent of time a kernel ran over the last sample period, 0-100.
    pub utilization: f64,
    /// bytes
    pub memory_used: i64,
    /// °C
    #[serde(default)]
    pub temperature: Option<f64>,
    /// W
    #[serde(default)]
    pub power_watts: Option<f64>,
}

/// The checks of a beat's GPU figures: at most [`MAX_GPUS`], each UUID well formed and once,
/// utilization 0-100, memory within bounds, temperature -50..150 °C, power 0..5000 W.
pub fn check_use(gpus: &[GpuUse]) -> Result<(), Invalid> {
    if gpus.len() > MAX_GPUS {
        return Err(Invalid::new("metrics.gpus", "more GPUs than MAX_GPUS"));
    }
    let mut seen = std::collections::HashSet::new();
    for g in gpus {
        if !valid_uuid(&g.uuid) || !seen.insert(g.uuid.to_ascii_lowercase()) {
            return Err(Invalid::new("metrics.gpus.uuid", "a malformed UUID, or one UUID twice"));
        }
        if !(g.utilization.is_finite() && (0.0..=100.0).contains(&g.utilization)) {
            return Err(Invalid::new("metrics.gpus.utilization", "outside 0-100"));
        }
        if !(0..=MAX_GPU_MEMORY).contains(&g.memory_used) {
            return Err(Invalid::new("metrics.gpus.memory_used", "outside 0-MAX_GPU_MEMORY"));
        }
        if g.temperature.is_some_and(|t| !(t.is_finite() && (-50.0..=150.0).contains(&t))) {
            return Err(Invalid::new("metrics.gpus.temperature", "outside -50-150 °C"));
        }
        if g.power_watts.is_some_and(|w| !(w.is_finite() && (0.0..=MAX_GPU_WATTS).contains(&w))) {
            return Err(Invalid::new("metrics.gpus.power_watts", "outside 0-MAX_GPU_WATTS"));
        }
    }
    Ok(())
}

/// Why a GPU failed its verification (a stable name; the pages word it in both languages).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CheckReason {
    /// Device-to-device copies far below the model's known figure.
    SlowMemory,
    /// Host-to-device copies far below the model's known figure (a narrow or slow PCIe link).
    SlowHostLink,
    /// NVML counts uncorrected ECC errors.
    EccErrors,
    /// The GPU is held back by a hardware or thermal slowdown.
    Throttled,
    /// The CUDA driver could not be loaded or the GPU could not be opened.
    CudaUnavailable,
    /// A copy failed or gave wrong bytes.
    CopyFailed,
    /// The agent could not find the GPU by its UUID.
    NotFound,
}

/// What a verification found of one GPU.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GpuCheck {
    pub uuid: String,
    pub ok: bool,
    /// Device-to-device copy bandwidth, GB/s.
    #[serde(default)]
    pub d2d_gbps: Option<f64>,
    /// Host-to-device copy bandwidth (pinned memory), GB/s.
    #[serde(default)]
    pub h2d_gbps: Option<f64>,
    #[serde(default)]
    pub reason: Option<CheckReason>,
}

/// A verification as the agent reports it (a beat's `verification`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct VerificationReport {
    pub gpus: Vec<GpuCheck>,
}

impl VerificationReport {
    pub fn check(&self) -> Result<(), Invalid> {
        if self.gpus.len() > MAX_GPUS {
            return Err(Invalid::new("verification.gpus", "more GPUs than MAX_GPUS"));
        }
        let mut seen = std::collections::HashSet::new();
        for g in &self.gpus {
            if !valid_uuid(&g.uuid) || !seen.insert(g.uuid.to_ascii_lowercase()) {
                return Err(Invalid::new("verification.gpus.uuid", "a malformed UUID, or one UUID twice"));
            }
            for v in [g.d2d_gbps, g.h2d_gbps].into_iter().flatten() {
                if !(v.is_finite() && (0.0..=MAX_GBPS).contains(&v)) {
                    return Err(Invalid::new("verification.gpus.gbps", "outside 0-MAX_GBPS"));
                }
            }
        }
        Ok(())
    }
}

/// Payload of a `gpu_verify` command (nothing to say: every GPU of the box is measured).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct VerifyPayload {}

#[cfg(test)]
mod tests {
    use super::*;

    const U1: &str = "GPU-5a1b2c3d-0000-1111-2222-333344445555";
    const U2: &str = "GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff";

    fn gpu(uuid: &str, index: i64) -> Gpu {
        Gpu { index: Some(index), uuid: Some(uuid.into()), name: "NVIDIA H200".into(), vram: 150_754_820_096, ..Default::default() }
    }

    #[test]
    fn uuids_are_nvidia_shaped() {
        assert!(valid_uuid(U1));
        assert!(!valid_uuid("5a1b2c3d-0000-1111-2222-333344445555"));
        assert!(!valid_uuid("GPU-"));
        assert!(!valid_uuid("GPU-zzzzzzzzzz"));
        assert!(!valid_uuid("GPU-12345678'; drop table"));
    }

    #[test]
    fn a_spec_with_a_uuid_twice_is_refused() {
        assert!(check_spec(&[gpu(U1, 0), gpu(U2, 1)]).is_ok());
        let e = check_spec(&[gpu(U1, 0), gpu(U1, 1)]).unwrap_err();
        assert_eq!(e.field, "spec.gpus.uuid");
        let e = check_spec(&[gpu(U1, 0), gpu(U2, 0)]).unwrap_err();
        assert_eq!(e.field, "spec.gpus.index");
        let mut g = gpu(U1, 0);
        g.cuda = Some("13.0; rm".into());
        assert_eq!(check_spec(&[g]).unwrap_err().field, "spec.gpus.cuda");
    }

    #[test]
    fn figures_out_of_range_are_refused() {
        let ok = GpuUse { uuid: U1.into(), utilization: 97.0, memory_used: 39 << 30, temperature: Some(61.0), power_watts: Some(540.0) };
        assert!(check_use(std::slice::from_ref(&ok)).is_ok());
        for (bad, field) in [
            (GpuUse { utilization: 101.0, ..ok.clone() }, "metrics.gpus.utilization"),
            (GpuUse { utilization: f64::NAN, ..ok.clone() }, "metrics.gpus.utilization"),
            (GpuUse { memory_used: -1, ..ok.clone() }, "metrics.gpus.memory_used"),
            (GpuUse { temperature: Some(900.0), ..ok.clone() }, "metrics.gpus.temperature"),
            (GpuUse { power_watts: Some(1e9), ..ok.clone() }, "metrics.gpus.power_watts"),
            (GpuUse { uuid: "GPU-x".into(), ..ok.clone() }, "metrics.gpus.uuid"),
        ] {
            match check_use(&[bad]) {
                Err(Invalid { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        assert!(check_use(&[ok.clone(), ok]).is_err(), "a UUID twice");
    }

    #[test]
    fn cuda_versions_compare_as_numbers() {
        let v = |s| CudaVersion::parse(s).unwrap();
        assert!(v("12.10") > v("12.9"));
        assert!(v("13.0") > v("12.4"));
        assert_eq!(v("12"), CudaVersion(12, 0));
        assert_eq!(v("12.4.1"), CudaVersion(12, 4));
        assert_eq!(CudaVersion::parse("abc"), None);
        assert_eq!(v("11.8").to_string(), "11.8");
    }

    #[test]
    fn a_gpu_without_uuid_is_known_by_its_place() {
        let g = Gpu { name: "RTX".into(), ..Default::default() };
        assert_eq!(g.key(2), "2");
        assert_eq!(gpu(U1, 0).key(5), U1);
    }
}
