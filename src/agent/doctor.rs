//! `zmarket agent doctor [--server URL] [--state-dir DIR]`: what a box needs, one line each
//! with what to do (docs/devices.md "A box in one line"). It reads and asks, never changes
//! anything: no container, no registration, no channel opened in the device's name (the running
//! agent keeps its own). Exit 1 when a check fails; a warning does not fail.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::{containers, disk_of, gpus, load_state};

/// Below this much free space on Docker's filesystem a check fails; below `WARN_FREE` it warns.
const MIN_FREE: u64 = 5 << 30;
const WARN_FREE: u64 = 20 << 30;
/// The market's clock and this box's may differ this much (the `Date` header has whole seconds).
const MAX_SKEW_SECS: i64 = 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Ok,
    Warn,
    Fail,
}

pub struct Line {
    pub level: Level,
    pub check: &'static str,
    pub text: String,
}

fn line(level: Level, check: &'static str, text: impl Into<String>) -> Line {
    Line { level, check, text: text.into() }
}

pub struct DoctorOptions {
    /// The market (else the state directory's, else no network checks).
    pub server: Option<String>,
    pub state_dir: PathBuf,
    pub docker_socket: String,
}

/// Prints one line per check; `Ok(false)` when one failed.
pub async fn run(opts: DoctorOptions) -> anyhow::Result<bool> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let lines = checks(&opts).await;
    let mut ok = true;
    for l in &lines {
        let tag = match l.level {
            Level::Ok => "ok  ",
            Level::Warn => "warn",
            Level::Fail => {
                ok = false;
                "FAIL"
            }
        };
        println!("{tag}  {:<9} {}", l.check, l.text);
    }
    Ok(ok)
}

async fn checks(opts: &DoctorOptions) -> Vec<Line> {
    let mut out = Vec::new();
    let state = load_state(&opts.state_dir);
    // Docker, and what it says of the NVIDIA runtime and its data root.
    let mut root = None;
    let runtime = containers::Runtime::connect(&opts.docker_socket).await;
    let docker_seen = match &runtime {
        Ok(rt) => {
            let d = rt.daemon().await;
            let version = rt.version().await.unwrap_or_else(|| "?".into());
            out.push(line(Level::Ok, "docker", format!("Docker {version} is running")));
            root = d.root.clone();
            Some(d.gpu_runtime)
        }
        Err(_) => {
            let at = if opts.docker_socket.trim().is_empty() {
                std::env::var("DOCKER_HOST").ok().filter(|h| h.starts_with("unix://")).unwrap_or_else(|| "/var/run/docker.sock".into())
            } else {
                opts.docker_socket.clone()
            };
            out.push(line(
                Level::Fail,
                "docker",
                format!("no Docker Engine answers at {at}: install Docker (https://docs.docker.com/engine/install/) and start it (systemctl enable --now docker)"),
            ));
            None
        }
    };
    let gpus = tokio::task::spawn_blocking(|| gpus::Gpus::open().inventory().len()).await.unwrap_or(0);
    out.push(match (gpus, docker_seen) {
        (0, _) => line(Level::Ok, "nvidia", "no NVIDIA GPU on this box: apps run on its CPUs"),
        (n, Some(true)) => line(Level::Ok, "nvidia", format!("{n} GPU(s) and Docker's NVIDIA runtime")),
        (n, Some(false)) => line(
            Level::Fail,
            "nvidia",
            format!("{n} GPU(s) but Docker has no NVIDIA runtime: install the NVIDIA Container Toolkit (nvidia-ctk runtime configure --runtime=docker), then restart Docker"),
        ),
        (n, None) => line(Level::Warn, "nvidia", format!("{n} GPU(s); Docker's NVIDIA runtime cannot be checked while Docker does not answer")),
    });
    out.push(disk(root.as_deref().unwrap_or(&opts.state_dir)));

    let server = opts.server.clone().or_else(|| state.as_ref().map(|s| s.server.clone())).map(|s| s.trim_end_matches('/').to_string());
    let Some(server) = server else {
        out.push(line(Level::Fail, "market", "no market named: run with --server URL (or --state-dir of an agent that registered)"));
        return out;
    };
    let client = match reqwest::Client::builder().timeout(Duration::from_secs(10)).user_agent(concat!("zmarket-agent/", env!("CARGO_PKG_VERSION"))).default_headers(crate::protocol_header()).build() {
        Ok(c) => c,
        Err(e) => {
            out.push(line(Level::Fail, "market", format!("cannot make an HTTP client: {e}")));
            return out;
        }
    };
    match client.get(format!("{server}/healthz")).send().await {
        Ok(res) if res.status().is_success() => {
            let date = res.headers().get(reqwest::header::DATE).and_then(|v| v.to_str().ok()).map(str::to_string);
            out.push(line(Level::Ok, "market", format!("{server} answers")));
            out.push(clock(date.as_deref()));
        }
        Ok(res) => {
            out.push(line(Level::Fail, "market", format!("{server}/healthz answered {}: is this the market's address? Check it, and any proxy in front of it", res.status())));
            out.push(line(Level::Warn, "clock", "not compared: the market did not answer"));
        }
        Err(e) => {
            out.push(line(Level::Fail, "market", format!("cannot reach {server} ({e}): check the address, this box's network and firewall")));
            out.push(line(Level::Warn, "clock", "not compared: the market did not answer"));
            return out;
        }
    }
    out.push(channel(&client, &server, state.filter(|s| s.server.trim_end_matches('/') == server), &opts.state_dir).await);
    out
}

fn disk(path: &Path) -> Line {
    let (total, used) = disk_of(path);
    if total <= 0 {
        return line(Level::Warn, "disk", format!("cannot read the free space of {}", path.display()));
    }
    let free = (total - used).max(0) as u64;
    let gib = |b: u64| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64);
    let text = format!("{} free of {} on {}", gib(free), gib(total as u64), path.display());
    if free < MIN_FREE {
        line(Level::Fail, "disk", format!("{text}: apps need room for their images; free at least {} (docker system prune removes unused images)", gib(MIN_FREE)))
    } else if free < WARN_FREE {
        line(Level::Warn, "disk", format!("{text}: large images may not fit; free some space"))
    } else {
        line(Level::Ok, "disk", text)
    }
}

/// This box's clock against the market's `Date` header.
fn clock(date: Option<&str>) -> Line {
    let Some(theirs) = date.and_then(|d| chrono::DateTime::parse_from_rfc2822(d).ok()) else {
        return line(Level::Warn, "clock", "the market sent no Date header: not compared");
    };
    let skew = chrono::Utc::now().signed_duration_since(theirs).num_seconds();
    if skew.abs() > MAX_SKEW_SECS {
        line(Level::Fail, "clock", format!("this box's clock is {skew} s off the market's: turn on time synchronisation (timedatectl set-ntp true)"))
    } else {
        line(Level::Ok, "clock", format!("within {} s of the market's", skew.abs().max(1)))
    }
}

/// The channel's endpoint, asked without an upgrade so the running agent's channel is left as
/// it is: with the device's secret it answers 400 `websocket_required` when the market knows
/// the device, 401 when it does not, and 400 `agent_protocol_unsupported` when it does not know
/// this agent's protocol.
async fn channel(client: &reqwest::Client, server: &str, state: Option<crate::AgentState>, dir: &Path) -> Line {
    let url = format!("{server}/api/agent/v1/channel");
    let mut req = client.get(&url);
    if let Some(s) = &state {
        req = req.bearer_auth(&s.device_secret);
    }
    let (status, body) = match req.send().await {
        Ok(res) => (res.status().as_u16(), res.json::<serde_json::Value>().await.unwrap_or_default()),
        Err(e) => return line(Level::Fail, "channel", format!("{url} did not answer ({e}): a proxy in front of the market must pass it, with WebSocket upgrades")),
    };
    if body["error"] == "agent_protocol_unsupported" {
        return line(Level::Fail, "channel", body["msg"].as_str().unwrap_or("the market does not know this agent's protocol").to_string());
    }
    match (state, status) {
        (Some(s), 400) => line(Level::Ok, "channel", format!("the market knows this box (device id {}) and its channel answers", s.device_id)),
        (Some(s), 401) => line(
            Level::Fail,
            "channel",
            format!("the market no longer knows device {} (unlinked?): restart the agent (systemctl restart zmarket-agent) and it registers afresh", s.device_id),
        ),
        (None, 401) => line(Level::Ok, "channel", format!("the channel answers; no agent has registered from {} yet", dir.display())),
        (_, status) => line(Level::Fail, "channel", format!("{url} answered {status}: a proxy in front of the market must pass it to the market, with WebSocket upgrades")),
    }
}
