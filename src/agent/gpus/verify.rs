//! A verification of the box's GPUs (docs/gpus.md): for each GPU, the copy bandwidth from its
//! memory to its memory (device to device) and from pinned host memory to it (host to device),
//! measured through the CUDA driver API loaded at run time (cudarc: `libcuda.so.1`, no CUDA
//! toolkit on the box, no Docker), plus NVML's health read (ECC errors, throttling). A few
//! seconds in all; blocking (the caller runs it off the async runtime).
//!
//! The figures are weighed against the GPU model's known figures ([`verdict`]): a GPU far below
//! them, with errors or held back is not ok, with the reason the owner's page words.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream, result, sys};

use super::{Gpus, Health};
use zmarket_protocol::gpus::{CheckReason, GpuCheck, MAX_GBPS, VerificationReport, valid_uuid};

/// The bytes of each copy; a GPU short of free memory (an app holds most of it) is measured with
/// the smaller size.
const SIZES: [usize; 2] = [256 << 20, 64 << 20];
/// Timed copies in each direction, after one untimed (warm-up) copy.
const TIMED: usize = 10;
/// Bytes compared at each end of the copied buffer.
const CHECKED: usize = 1 << 20;
/// Below this share of its model's known figure a GPU is "far below" it.
const FAR_BELOW: f64 = 0.4;
/// Floors for a model not in [`KNOWN`] (GB/s): below them something is wrong whatever the GPU.
const FLOOR_D2D: f64 = 50.0;
const FLOOR_H2D: f64 = 2.0;

/// Measures every GPU of the box that has a UUID (one at a time; one verification at a time).
/// A box without GPUs answers an empty report; a box without the CUDA driver answers
/// `cuda_unavailable` for each GPU.
pub fn run(gpus: &Gpus) -> VerificationReport {
    let _one = gpus.verifying.lock().unwrap_or_else(|e| e.into_inner());
    let list: Vec<(&str, &str)> =
        gpus.inventory().iter().filter_map(|g| g.uuid.as_deref().filter(|u| valid_uuid(u)).map(|u| (u, g.name.as_str()))).collect();
    if list.is_empty() {
        return VerificationReport::default();
    }
    let devices = cuda_devices();
    if let Err(e) = &devices {
        tracing::warn!(error = %e, "GPU verification: the CUDA driver is not available");
    }
    let checks = list
        .into_iter()
        .map(|(uuid, name)| {
            let measured = match &devices {
                Err(_) => Err(CheckReason::CudaUnavailable),
                Ok(map) => match map.get(&key(uuid)) {
                    None => Err(CheckReason::NotFound),
                    Some(&ordinal) => measure(ordinal),
                },
            };
            // Read after the copies, while the GPU is still warm from them.
            let health = gpus.health(uuid);
            let check = check_of(uuid, name, measured, health);
            tracing::info!(uuid, name, ok = check.ok, d2d_gbps = ?check.d2d_gbps, h2d_gbps = ?check.h2d_gbps, reason = ?check.reason, "GPU verified");
            check
        })
        .collect();
    VerificationReport { gpus: checks }
}

/// One GPU's check from what was measured and its health.
fn check_of(uuid: &str, name: &str, measured: Result<(f64, f64), CheckReason>, health: Health) -> GpuCheck {
    match measured {
        Ok((d2d, h2d)) => {
            let (ok, reason) = verdict(name, d2d, h2d, health);
            let figure = |v: f64| Some(v.clamp(0.0, MAX_GBPS));
            GpuCheck { uuid: uuid.to_string(), ok, d2d_gbps: figure(d2d), h2d_gbps: figure(h2d), reason }
        }
        // Errors NVML counts are the GPU's own fault, whatever else failed.
        Err(reason) => {
            let reason = if health.ecc_errors { CheckReason::EccErrors } else { reason };
            GpuCheck { uuid: uuid.to_string(), ok: false, d2d_gbps: None, h2d_gbps: None, reason: Some(reason) }
        }
    }
}

/// The CUDA devices by UUID ([`key`]: CUDA's order differs from NVML's), with their ordinals. cudarc panics when `libcuda` or one of its functions is missing: asked
/// first, and caught.
fn cuda_devices() -> Result<HashMap<String, usize>, String> {
    // SAFETY: only tries to open the library (dlopen) and closes it again.
    if !unsafe { sys::is_culib_present() } {
        return Err("libcuda.so.1 is not on this box".into());
    }
    let listed = catch_unwind(|| -> Result<HashMap<String, usize>, result::DriverError> {
        result::init()?;
        let count = result::device::get_count()?;
        let mut map = HashMap::new();
        for ordinal in 0..count.max(0) {
            let dev = result::device::get(ordinal)?;
            let uuid = result::device::get_uuid(dev)?;
            map.insert(key(&uuid_text(&uuid.bytes.map(|b| b as u8))), ordinal as usize);
        }
        Ok(map)
    });
    match listed {
        Ok(Ok(map)) => Ok(map),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("the CUDA driver lacks a function this agent calls".into()),
    }
}

/// A UUID as CUDA's and NVML's are compared: in lower case (hex digits and prefix alike).
fn key(uuid: &str) -> String {
    uuid.to_ascii_lowercase()
}

/// A CUDA UUID's bytes written as NVML writes GPU UUIDs: `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
pub fn uuid_text(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("GPU-{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// The copied pattern repeats every `PERIOD` bytes (a prime: a copy that shifts, drops or
/// repeats bytes shows, unless by a multiple of it).
const PERIOD: usize = 251;

/// The byte at `i` of the copied pattern.
fn pattern(i: usize) -> u8 {
    (i % PERIOD) as u8
}

/// The GPU's (device to device, host to device) bandwidth in GB/s; a context that cannot be
/// made is `cuda_unavailable`, a failed or wrong copy `copy_failed`.
fn measure(ordinal: usize) -> Result<(f64, f64), CheckReason> {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let ctx = CudaContext::new(ordinal).map_err(|e| {
            tracing::warn!(ordinal, error = %e, "GPU verification: no CUDA context");
            CheckReason::CudaUnavailable
        })?;
        let stream = ctx.default_stream();
        for size in SIZES {
            match copies(&ctx, &stream, size) {
                Ok(Some(figures)) => return Ok(figures),
                Ok(None) => return Err(CheckReason::CopyFailed),
                // Out of memory, most likely: the smaller size next.
                Err(e) => tracing::warn!(ordinal, size, error = %e, "GPU verification: a copy failed"),
            }
        }
        Err(CheckReason::CopyFailed)
    }));
    outcome.unwrap_or(Err(CheckReason::CudaUnavailable))
}

/// The copies with buffers of `size` bytes: `None` when the bytes that arrived are wrong.
fn copies(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>, size: usize) -> Result<Option<(f64, f64)>, result::DriverError> {
    // SAFETY: every byte is written before it is read (the loop below).
    let mut host = unsafe { ctx.alloc_pinned::<u8>(size) }?;
    let period: Vec<u8> = (0..PERIOD).map(pattern).collect();
    for chunk in host.as_mut_slice()?.chunks_mut(PERIOD) {
        chunk.copy_from_slice(&period[..chunk.len()]);
    }
    let mut a = stream.alloc_zeros::<u8>(size)?;
    let mut b = stream.alloc_zeros::<u8>(size)?;
    let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);

    // Host to device: the bytes crossing the PCIe link, counted once.
    stream.memcpy_htod(&host, &mut a)?;
    let start = stream.record_event(timing)?;
    for _ in 0..TIMED {
        stream.memcpy_htod(&host, &mut a)?;
    }
    let end = stream.record_event(timing)?;
    let h2d = gbps(size * TIMED, start.elapsed_ms(&end)?);

    // Device to device: each byte is read and written in the GPU's memory, so a copy of `size`
    // bytes moves 2 × size (as bandwidthTest and the datasheets' memory bandwidth count it).
    stream.memcpy_dtod(&a, &mut b)?;
    let start = stream.record_event(timing)?;
    for _ in 0..TIMED {
        stream.memcpy_dtod(&a, &mut b)?;
    }
    let end = stream.record_event(timing)?;
    let d2d = gbps(2 * size * TIMED, start.elapsed_ms(&end)?);

    for range in [0..CHECKED.min(size), size.saturating_sub(CHECKED)..size] {
        let got = stream.clone_dtoh(&b.slice(range.clone()))?;
        if got.iter().zip(range).any(|(&v, i)| v != pattern(i)) {
            tracing::warn!(size, "GPU verification: the copied bytes are wrong");
            return Ok(None);
        }
    }
    stream.synchronize()?;
    Ok(Some((d2d, h2d)))
}

/// GB/s (10⁹ bytes a second) of `bytes` moved in `ms` milliseconds; 0 for a time that is none.
fn gbps(bytes: usize, ms: f32) -> f64 {
    let secs = f64::from(ms) / 1000.0;
    if secs.is_finite() && secs > 0.0 { (bytes as f64 / secs / 1e9).min(MAX_GBPS) } else { 0.0 }
}

/// A GPU model's figures: what a healthy one measures (GB/s).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Known {
    /// Device to device, counting read + write: about 80 % of the datasheet's memory bandwidth.
    d2d: f64,
    /// Host to device from pinned memory over a full-width (x16) link of its PCIe generation.
    h2d: f64,
}

/// Pinned host-to-device copies over an x16 link: PCIe 3, 4, 5.
const GEN3: f64 = 12.0;
const GEN4: f64 = 25.0;
const GEN5: f64 = 50.0;

/// The words of a model's name (all must be in the GPU's name, as whole words) and its figures;
/// the first match wins, so a variant comes before its family ("H100 PCIe" before "H100").
const KNOWN: &[(&[&str], Known)] = &[
    (&["B200"], Known { d2d: 6_400.0, h2d: GEN5 }),
    (&["H200"], Known { d2d: 3_800.0, h2d: GEN5 }),
    (&["H100", "PCIE"], Known { d2d: 1_600.0, h2d: GEN5 }),
    (&["H100", "NVL"], Known { d2d: 3_100.0, h2d: GEN5 }),
    (&["H100"], Known { d2d: 2_700.0, h2d: GEN5 }),
    (&["H800"], Known { d2d: 2_700.0, h2d: GEN5 }),
    (&["H20"], Known { d2d: 3_200.0, h2d: GEN5 }),
    (&["A100"], Known { d2d: 1_250.0, h2d: GEN4 }),
    (&["A800"], Known { d2d: 1_250.0, h2d: GEN4 }),
    (&["L40S"], Known { d2d: 690.0, h2d: GEN4 }),
    (&["L40"], Known { d2d: 690.0, h2d: GEN4 }),
    (&["L4"], Known { d2d: 240.0, h2d: GEN4 }),
    (&["A10G"], Known { d2d: 480.0, h2d: GEN4 }),
    (&["A10"], Known { d2d: 480.0, h2d: GEN4 }),
    (&["A30"], Known { d2d: 740.0, h2d: GEN4 }),
    (&["A40"], Known { d2d: 560.0, h2d: GEN4 }),
    (&["RTX", "6000", "ADA"], Known { d2d: 770.0, h2d: GEN4 }),
    (&["RTX", "A6000"], Known { d2d: 610.0, h2d: GEN4 }),
    (&["RTX", "5090"], Known { d2d: 1_430.0, h2d: GEN5 }),
    (&["RTX", "4090"], Known { d2d: 800.0, h2d: GEN4 }),
    (&["RTX", "4080"], Known { d2d: 570.0, h2d: GEN4 }),
    (&["RTX", "3090"], Known { d2d: 750.0, h2d: GEN4 }),
    (&["V100"], Known { d2d: 720.0, h2d: GEN3 }),
    (&["T4"], Known { d2d: 240.0, h2d: GEN3 }),
];

/// The known figures of the model named `name` ("NVIDIA H100 PCIe", "Tesla T4",
/// "NVIDIA A100-SXM4-80GB"), if it is one of [`KNOWN`].
fn known(name: &str) -> Option<Known> {
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    KNOWN.iter().find(|(needed, _)| needed.iter().all(|n| words.contains(n))).map(|(_, k)| *k)
}

/// Whether a GPU named `name` that measured `d2d` and `h2d` GB/s, with `health`, is ok, and if
/// not why: ECC errors, then throttling, then device memory far below (under 40 % of) its
/// model's known figure, then the host link. A model not known fails only on errors or below
/// the floors (50 GB/s device to device, 2 GB/s from the host).
pub fn verdict(name: &str, d2d: f64, h2d: f64, health: Health) -> (bool, Option<CheckReason>) {
    if health.ecc_errors {
        return (false, Some(CheckReason::EccErrors));
    }
    if health.throttled {
        return (false, Some(CheckReason::Throttled));
    }
    let (d2d_min, h2d_min) = match known(name) {
        Some(k) => ((k.d2d * FAR_BELOW).max(FLOOR_D2D), (k.h2d * FAR_BELOW).max(FLOOR_H2D)),
        None => (FLOOR_D2D, FLOOR_H2D),
    };
    // A figure that is not a number fails too.
    if d2d.is_nan() || d2d < d2d_min {
        return (false, Some(CheckReason::SlowMemory));
    }
    if h2d.is_nan() || h2d < h2d_min {
        return (false, Some(CheckReason::SlowHostLink));
    }
    (true, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zmarket_protocol::gpus::Gpu;

    const CLEAR: Health = Health { ecc_errors: false, throttled: false };
    const U1: &str = "GPU-5a1b2c3d-0000-1111-2222-333344445555";

    #[test]
    fn models_are_known_by_whole_words() {
        assert_eq!(known("NVIDIA H200").unwrap().d2d, 3_800.0);
        assert_eq!(known("NVIDIA H200 NVL").unwrap().d2d, 3_800.0);
        assert_eq!(known("NVIDIA H100 80GB HBM3").unwrap().d2d, 2_700.0);
        assert_eq!(known("NVIDIA H100 PCIe").unwrap().d2d, 1_600.0);
        assert_eq!(known("NVIDIA H100 NVL").unwrap().d2d, 3_100.0);
        assert_eq!(known("NVIDIA A100-SXM4-80GB").unwrap().h2d, GEN4);
        assert_eq!(known("NVIDIA L4").unwrap().d2d, 240.0, "L4 is not L40S");
        assert_eq!(known("NVIDIA L40S").unwrap().d2d, 690.0);
        assert_eq!(known("NVIDIA A10").unwrap().d2d, 480.0, "A10 is not A100");
        assert_eq!(known("NVIDIA GeForce RTX 4090 D").unwrap().d2d, 800.0);
        assert_eq!(known("Tesla V100-SXM2-16GB").unwrap().h2d, GEN3);
        assert_eq!(known("Tesla T4").unwrap().d2d, 240.0);
        assert_eq!(known("NVIDIA RTX 6000 Ada Generation").unwrap().d2d, 770.0);
        assert_eq!(known("Quadro RTX 6000"), None);
        assert_eq!(known("NVIDIA GeForce GTX 1080"), None);
    }

    #[test]
    fn the_verdict() {
        let v = |name, d2d, h2d, health| verdict(name, d2d, h2d, health);
        assert_eq!(v("NVIDIA H200", 3_000.0, 52.0, CLEAR), (true, None));
        assert_eq!(v("NVIDIA H200", 500.0, 52.0, CLEAR), (false, Some(CheckReason::SlowMemory)));
        // Just at the line: 40 % of 3,800.
        assert_eq!(v("NVIDIA H200", 1_520.0, 52.0, CLEAR), (true, None));
        assert_eq!(v("NVIDIA H200", 1_519.0, 52.0, CLEAR), (false, Some(CheckReason::SlowMemory)));
        assert_eq!(v("NVIDIA H100 80GB HBM3", 2_600.0, 3.0, CLEAR), (false, Some(CheckReason::SlowHostLink)));
        // A Gen5 GPU in a Gen4 x16 slot is not far below.
        assert_eq!(v("NVIDIA H100 80GB HBM3", 2_600.0, 24.0, CLEAR), (true, None));
        let ecc = Health { ecc_errors: true, throttled: false };
        assert_eq!(v("NVIDIA H200", 3_000.0, 52.0, ecc), (false, Some(CheckReason::EccErrors)));
        let hot = Health { ecc_errors: false, throttled: true };
        assert_eq!(v("NVIDIA A100-PCIE-40GB", 1_300.0, 24.0, hot), (false, Some(CheckReason::Throttled)));
        assert_eq!(v("NVIDIA H200", 500.0, 3.0, Health { ecc_errors: true, throttled: true }), (false, Some(CheckReason::EccErrors)), "errors first");
        // A model not in the table: good figures are ok; only the floors fail it.
        assert_eq!(v("NVIDIA Future GPU 9000", 900.0, 20.0, CLEAR), (true, None));
        assert_eq!(v("NVIDIA Future GPU 9000", 40.0, 20.0, CLEAR), (false, Some(CheckReason::SlowMemory)));
        assert_eq!(v("NVIDIA Future GPU 9000", 900.0, 1.5, CLEAR), (false, Some(CheckReason::SlowHostLink)));
        assert_eq!(v("NVIDIA GeForce RTX 4090", 850.0, 22.0, CLEAR), (true, None));
        assert_eq!(v("Tesla T4", 230.0, 11.0, CLEAR), (true, None));
        // A figure that is not a number is not ok.
        assert_eq!(v("NVIDIA H200", f64::NAN, 52.0, CLEAR), (false, Some(CheckReason::SlowMemory)));
    }

    #[test]
    fn checks_carry_the_figures_or_the_failure() {
        let c = check_of(U1, "NVIDIA H200", Ok((3_900.0, 53.0)), CLEAR);
        assert_eq!((c.ok, c.d2d_gbps, c.h2d_gbps, c.reason), (true, Some(3_900.0), Some(53.0), None));
        let c = check_of(U1, "NVIDIA H200", Err(CheckReason::CudaUnavailable), CLEAR);
        assert_eq!((c.ok, c.d2d_gbps, c.reason), (false, None, Some(CheckReason::CudaUnavailable)));
        let c = check_of(U1, "NVIDIA H200", Err(CheckReason::CopyFailed), Health { ecc_errors: true, throttled: false });
        assert_eq!(c.reason, Some(CheckReason::EccErrors));
        let report = VerificationReport { gpus: vec![check_of(U1, "NVIDIA H200", Ok((1e12, 53.0)), CLEAR)] };
        report.check().unwrap();
    }

    #[test]
    fn figures_and_uuids() {
        assert_eq!(gbps(10 << 30, 1_000.0), 10.737_418_24);
        assert_eq!(gbps(1, 0.0), 0.0);
        assert_eq!(gbps(1, f32::NAN), 0.0);
        let bytes = [0x5a, 0x1b, 0x2c, 0x3d, 0, 0, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55];
        assert_eq!(uuid_text(&bytes), U1);
        assert!(valid_uuid(&uuid_text(&bytes)));
        // CUDA's UUID finds the GPU NVML named, whatever either's case.
        assert_eq!(key(&uuid_text(&bytes)), key(U1));
        assert_eq!(key(&uuid_text(&bytes)), key(&U1.to_ascii_uppercase().replacen("GPU", "gpu", 1)));
        assert_ne!(pattern(0), pattern(1));
        assert_eq!(pattern(251), pattern(0));
    }

    #[test]
    fn no_gpus_no_report_and_no_cuda_says_so() {
        assert_eq!(run(&Gpus::none()), VerificationReport::default());
        let gpus = Gpus::listed(vec![
            Gpu { index: Some(0), uuid: Some(U1.into()), name: "NVIDIA H200".into(), vram: 150_754_820_096, ..Default::default() },
            // Without a UUID there is nothing to report it by.
            Gpu { index: Some(1), name: "NVIDIA H200".into(), ..Default::default() },
        ]);
        let report = run(&gpus);
        report.check().unwrap();
        assert_eq!(report.gpus.len(), 1);
        let c = &report.gpus[0];
        assert_eq!((c.uuid.as_str(), c.ok, c.d2d_gbps, c.h2d_gbps), (U1, false, None, None));
        // This UUID is made up: on a box whose CUDA driver works it is not found among its GPUs.
        let expected = if cuda_devices().is_ok() { CheckReason::NotFound } else { CheckReason::CudaUnavailable };
        assert_eq!(c.reason, Some(expected));
    }
}
