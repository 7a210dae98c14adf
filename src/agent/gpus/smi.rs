//! The GPUs through `nvidia-smi`, when NVML cannot be loaded: its CSV queries (`noheader,
//! nounits`) and the CUDA version in the header of its plain output. A field it cannot fill
//! ("[N/A]", "[Not Supported]") is unknown; a line it cannot read is left out.

use std::process::{Command, Stdio};
use std::time::Duration;

use zmarket_protocol::gpus::{Gpu, GpuUse};

/// The inventory's columns, in order.
const INVENTORY: &str = "--query-gpu=index,uuid,name,memory.total,driver_version,compute_cap,mig.mode.current";
/// The same without the columns a driver older than 510 does not know (it refuses the whole
/// query for one unknown field).
const INVENTORY_OLD: &str = "--query-gpu=index,uuid,name,memory.total,driver_version";
const USAGE: &str = "--query-gpu=uuid,utilization.gpu,memory.used,temperature.gpu,power.draw";
const CSV: &str = "--format=csv,noheader,nounits";

/// Runs nvidia-smi with `args`; its output when it ran and succeeded.
fn run(args: &[&str]) -> Option<String> {
    let out = Command::new("nvidia-smi").args(args).stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Every GPU nvidia-smi lists (none when it is absent or fails), with the CUDA version of its
/// header.
pub fn inventory(passthrough: bool) -> Vec<Gpu> {
    let (text, columns) = match run(&[INVENTORY, CSV]) {
        Some(t) => (t, 7),
        None => match run(&[INVENTORY_OLD, CSV]) {
            Some(t) => (t, 5),
            None => return Vec::new(),
        },
    };
    let cuda = run(&[]).as_deref().and_then(cuda_in_header);
    parse_inventory(&text, columns, passthrough, cuda.as_deref())
}

/// A field as nvidia-smi writes it: `None` for "[N/A]", "[Not Supported]", "N/A" or nothing.
fn field(s: &str) -> Option<&str> {
    let s = s.trim();
    (!s.is_empty() && !s.starts_with('[') && s != "N/A").then_some(s)
}

/// The lines of the inventory query with `columns` columns (7: the full query, 5: the one for old
/// drivers). A name holding a comma keeps it: the columns are counted from both ends.
fn parse_inventory(text: &str, columns: usize, passthrough: bool, cuda: Option<&str>) -> Vec<Gpu> {
    text.lines()
        .filter_map(|line| {
            let parts: Vec<&str> = line.split(',').collect();
            if parts.len() < columns {
                return None;
            }
            // index, uuid, name…, then the columns after the name.
            let after = columns - 3;
            let tail = &parts[parts.len() - after..];
            let name = parts[2..parts.len() - after].join(",").trim().to_string();
            let mib = field(tail[0])?.parse::<i64>().ok()?;
            (!name.is_empty()).then(|| Gpu {
                index: field(parts[0]).and_then(|i| i.parse().ok()),
                uuid: field(parts[1]).map(str::to_string),
                name,
                passthrough,
                vram: mib.saturating_mul(1024 * 1024),
                driver: field(tail[1]).map(str::to_string),
                cuda: cuda.map(str::to_string),
                compute_capability: tail.get(2).and_then(|c| field(c)).map(str::to_string),
                mig: tail.get(3).and_then(|m| field(m)).and_then(|m| match m {
                    "Enabled" => Some(true),
                    "Disabled" => Some(false),
                    _ => None,
                }),
            })
        })
        .collect()
}

/// The CUDA version in nvidia-smi's header: "… Driver Version: 580.95.05   CUDA Version: 13.0 |".
fn cuda_in_header(text: &str) -> Option<String> {
    let at = text.find("CUDA Version:")? + "CUDA Version:".len();
    let v: String = text[at..].trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let v = v.trim_end_matches('.');
    (!v.is_empty() && v.contains('.')).then(|| v.to_string())
}

/// Each GPU's figures now (nothing when nvidia-smi fails or takes longer than `wait`: it hangs
/// on a GPU fallen off the bus, and is killed then).
pub async fn usage(wait: Duration) -> Vec<GpuUse> {
    let child = tokio::process::Command::new("nvidia-smi")
        .args([USAGE, CSV])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn();
    let Ok(child) = child else { return Vec::new() };
    match tokio::time::timeout(wait, child.wait_with_output()).await {
        Ok(Ok(out)) if out.status.success() => parse_usage(&String::from_utf8_lossy(&out.stdout)),
        Ok(_) => Vec::new(),
        Err(_) => {
            tracing::warn!(secs = wait.as_secs(), "nvidia-smi did not answer: this beat goes without GPU figures");
            Vec::new()
        }
    }
}

/// The lines of the usage query: `uuid, utilization %, memory used MiB, °C, W`. A GPU whose
/// utilization or memory is not known is left out (not reported idle).
fn parse_usage(text: &str) -> Vec<GpuUse> {
    text.lines()
        .filter_map(|line| {
            let parts: Vec<&str> = line.split(',').map(str::trim).collect();
            let [uuid, util, mem, temp, power] = parts.as_slice() else { return None };
            Some(GpuUse {
                uuid: field(uuid)?.to_string(),
                utilization: field(util)?.parse().ok()?,
                memory_used: field(mem)?.parse::<i64>().ok()?.saturating_mul(1024 * 1024),
                temperature: field(temp).and_then(|t| t.parse().ok()),
                power_watts: field(power).and_then(|p| p.parse().ok()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As nvidia-smi 580 prints them: an H200, an A100 in MIG mode, and a consumer card that
    /// knows neither ECC nor MIG.
    const FULL: &str = "0, GPU-5a1b2c3d-0000-1111-2222-333344445555, NVIDIA H200, 143771, 580.95.05, 9.0, Disabled\n\
                        1, GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff, NVIDIA A100-SXM4-80GB, 81920, 580.95.05, 8.0, Enabled\n\
                        2, GPU-0a0b0c0d-1111-2222-3333-444455556666, NVIDIA GeForce RTX 4090, 24564, 580.95.05, 8.9, [N/A]\n\n";

    const HEADER: &str = "Fri Nov 21 10:12:01 2025\n\
        +-----------------------------------------------------------------------------------------+\n\
        | NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |\n\
        +-----------------------------------------+------------------------+----------------------+\n";

    #[test]
    fn inventory_lines_become_gpus() {
        let gpus = parse_inventory(FULL, 7, true, Some("13.0"));
        assert_eq!(gpus.len(), 3);
        let h200 = &gpus[0];
        assert_eq!(h200.index, Some(0));
        assert_eq!(h200.uuid.as_deref(), Some("GPU-5a1b2c3d-0000-1111-2222-333344445555"));
        assert_eq!(h200.name, "NVIDIA H200");
        assert_eq!(h200.vram, 143_771 * 1024 * 1024);
        assert_eq!(h200.driver.as_deref(), Some("580.95.05"));
        assert_eq!(h200.cuda.as_deref(), Some("13.0"));
        assert_eq!(h200.compute_capability.as_deref(), Some("9.0"));
        assert_eq!(h200.mig, Some(false));
        assert!(h200.passthrough);
        assert_eq!(gpus[1].mig, Some(true));
        assert_eq!(gpus[2].mig, None, "[N/A] is unknown");
        assert_eq!(gpus[2].compute_capability.as_deref(), Some("8.9"));
    }

    #[test]
    fn unknown_fields_and_odd_lines() {
        let text = "0, [N/A], NVIDIA Tesla, T4, 15360, 470.82.01, [Not Supported], [Not Supported]\n\
                    1, GPU-11112222-3333-4444-5555-666677778888, NVIDIA L4, [N/A], 470.82.01, 8.9, Disabled\n\
                    garbage\n";
        let gpus = parse_inventory(text, 7, false, None);
        assert_eq!(gpus.len(), 1, "a GPU without its memory is not reported with a made-up one");
        assert_eq!(gpus[0].name, "NVIDIA Tesla, T4", "a comma in the name stays in it");
        assert_eq!((gpus[0].uuid.as_deref(), gpus[0].compute_capability.as_deref(), gpus[0].mig), (None, None, None));
        assert_eq!(gpus[0].cuda, None);
        assert!(!gpus[0].passthrough);
        // An old driver's five columns.
        let old = parse_inventory("0, GPU-5a1b2c3d-0000-1111-2222-333344445555, Tesla V100-SXM2-16GB, 16160, 450.80.02\n", 5, false, Some("11.0"));
        assert_eq!(old.len(), 1);
        assert_eq!((old[0].name.as_str(), old[0].vram, old[0].driver.as_deref()), ("Tesla V100-SXM2-16GB", 16160 << 20, Some("450.80.02")));
        assert_eq!((old[0].compute_capability.as_deref(), old[0].mig), (None, None));
    }

    #[test]
    fn the_cuda_version_of_the_header() {
        assert_eq!(cuda_in_header(HEADER).as_deref(), Some("13.0"));
        assert_eq!(cuda_in_header("| NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA Version: 12.4  |").as_deref(), Some("12.4"));
        assert_eq!(cuda_in_header("| Driver Version: 550.54.15  CUDA Version: N/A |"), None);
        assert_eq!(cuda_in_header("No devices were found"), None);
    }

    #[test]
    fn usage_lines_become_figures() {
        let text = "GPU-5a1b2c3d-0000-1111-2222-333344445555, 97, 39012, 61, 540.12\n\
                    GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff, 0, 0, 34, [N/A]\n\
                    GPU-0a0b0c0d-1111-2222-3333-444455556666, [N/A], 1024, 40, 80.00\n\
                    GPU-11112222-3333-4444-5555-666677778888, 5, 100\n";
        let u = parse_usage(text);
        assert_eq!(u.len(), 2, "unknown utilization or a short line is left out");
        assert_eq!(u[0].uuid, "GPU-5a1b2c3d-0000-1111-2222-333344445555");
        assert_eq!(u[0].utilization, 97.0);
        assert_eq!(u[0].memory_used, 39012 * 1024 * 1024);
        assert_eq!(u[0].temperature, Some(61.0));
        assert_eq!(u[0].power_watts, Some(540.12));
        assert_eq!((u[1].utilization, u[1].power_watts), (0.0, None));
    }
}
