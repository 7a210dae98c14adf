//! `zmarket agent`: runs on a Z-BOX, P-BOX or server-group host and reports to a zmarket server.
//! A crate of its own (`zmarket-agent`): it speaks to the market only through the protocol crate
//! (`zmarket-protocol`), never through the market's code; the `zmarket` binary runs it.
//!
//! First run: registers (`POST /api/agent/v1/register`), keeps the device id and secret in its
//! state directory (file mode 0600) and prints the lines `device id: …` and `pairing code: …`
//! that a person types into /devices/link. Then it sends a heartbeat every `heartbeat_secs`
//! (the server's answer may change the interval) with the machine's real specification and
//! live metrics, carries out the commands of the answer and acknowledges them by id in the next
//! heartbeat. A network error never stops it: it backs off and retries. A secret the server no
//! longer knows (the device was unlinked) makes it register afresh.
//!
//! Apps (`app_*` commands) run as containers through the Docker Engine API (apps.rs,
//! containers.rs); their actual state goes out with every heartbeat.
//!
//! GPUs (gpus.rs) are read through NVML (nvidia-smi as the fallback): each one by its UUID in
//! the spec, how busy each is in every beat's metrics, and a verification's report in the beat
//! after it ran (on a `gpu_verify` command, and once when the device is first bound).
//!
//! Every request to the market carries the protocol's version (`zmarket-protocol: 1`,
//! zmarket_protocol::version): a market that does not know it refuses with a sentence that says so.

mod apps;
mod channel;
mod commands;
mod containers;
pub mod doctor;
mod fetch;
mod gpus;
mod snapshots;
mod streams;
pub mod tunnel;

use std::sync::{Arc, Mutex};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use zmarket_protocol::heartbeat::{HeartbeatRequest, HeartbeatResponse, Metrics, RegisterRequest, RegisterResponse, Spec};

#[derive(Debug, Clone)]
pub struct AgentOptions {
    pub server: String,
    pub device_type: String,
    pub name: Option<String>,
    pub state_dir: PathBuf,
    /// Program that creates and deletes Z-CLOUD machines; see docs/devices.md.
    pub provisioner: Option<PathBuf>,
    /// Until the server says otherwise.
    pub heartbeat_secs: u64,
    /// The market's registration token, when it requires one (`devices.registration_token`).
    pub registration_token: Option<String>,
    /// `[agent] registry_mirror`, `docker_socket`, `public_host` (config.toml).
    pub registry_mirror: String,
    pub docker_socket: String,
    pub public_host: String,
    /// Ports of this box its owner may reach through the market (`[agent] tcp_ports`).
    pub tcp_ports: Vec<u16>,
    /// The pairing code to propose on first registration (the bind page's, issue 41).
    pub pairing_code: Option<String>,
}

/// What the agent keeps between runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct AgentState {
    server: String,
    device_id: String,
    device_secret: String,
    /// Kept (like the secret, readable only by this user) so a restart can show it again until
    /// the device is bound.
    pairing_code: Option<String>,
}

const STATE_FILE: &str = "agent.json";
const MAX_BACKOFF: Duration = Duration::from_secs(60);

pub async fn run(opts: AgentOptions) -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let server = opts.server.trim_end_matches('/').to_string();
    url::Url::parse(&server).map_err(|e| anyhow::anyhow!("--server must be a URL such as http://market.example:8080: {e}"))?;
    if zmarket_protocol::heartbeat::agent_type(&opts.device_type).is_none() {
        anyhow::bail!("--type must be Z-BOX, P-BOX or \"server group\"");
    }
    std::fs::create_dir_all(&opts.state_dir)?;
    restrict_dir(&opts.state_dir);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .user_agent(concat!("zmarket-agent/", env!("CARGO_PKG_VERSION")))
        .default_headers(protocol_header())
        .build()?;
    // The disk reported is the filesystem Docker keeps its data on (else the state dir's): one
    // filesystem, the same at every heartbeat.
    let daemon = match containers::Runtime::connect(&opts.docker_socket).await {
        Ok(rt) => rt.daemon().await,
        Err(_) => containers::Daemon::default(),
    };
    // NVML (or nvidia-smi) once, off the async runtime; kept open for the agent's life.
    let gpus = Arc::new(tokio::task::spawn_blocking(gpus::Gpus::open).await.unwrap_or_else(|_| gpus::Gpus::none()));
    let mut probe = Probe::new(daemon.root.clone().unwrap_or_else(|| opts.state_dir.clone()), daemon.gpu_runtime, gpus.clone());
    let name = opts.name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(default_name);

    let mut state = match load_state(&opts.state_dir) {
        Some(s) if s.server == server => s,
        _ => register(&client, &server, &opts, &name, &mut probe).await?,
    };
    announce(&state);
    let public_host = Some(opts.public_host.trim()).filter(|h| !h.is_empty()).map(str::to_string).unwrap_or_else(|| apps::default_public_host(&server));
    let runner = apps::AppRunner::new(
        apps::AppsOptions {
            server: server.clone(),
            state_dir: opts.state_dir.clone(),
            registry_mirror: opts.registry_mirror.clone(),
            docker_socket: opts.docker_socket.clone(),
            public_host,
            gpu_runtime: daemon.gpu_runtime,
        },
        &state.device_secret,
    );

    let secret = Arc::new(Mutex::new(state.device_secret.clone()));
    let dispatch = commands::Dispatcher::new(runner.clone(), opts.provisioner.clone(), gpus.clone(), opts.heartbeat_secs);
    let channel = Arc::new(channel::Channel::default());
    let reach = Arc::new(streams::Reach::new(runner.clone(), opts.tcp_ports.clone()));
    tokio::spawn(channel::run(channel.clone(), server.clone(), secret.clone(), dispatch.clone(), reach));

    let mut backoff = Duration::from_secs(1);
    let mut bound_seen = false;
    loop {
        let metrics = probe.metrics().await;
        let installations = runner.reports().await;
        let acks = dispatch.take_acks();
        // A verification's report goes with every beat until one carrying it is accepted. Read
        // after the acknowledgements: a `gpu_verify` acknowledged goes with its report.
        let verification = dispatch.verification();
        let snapshots = runner.snapshot_reports();
        let beat = HeartbeatRequest {
            spec: Some(probe.spec()),
            metrics: Some(metrics),
            installations,
            acks,
            verification: verification.as_ref().map(|(_, r)| r.clone()),
            snapshots: snapshots.iter().map(|(_, r)| r.clone()).collect(),
        };
        let sent_report = || {
            if let Some((n, _)) = &verification {
                dispatch.verification_sent(*n);
            }
            runner.snapshots_sent(&snapshots);
        };
        // Over the channel while it is up (its answer comes back on it), else over HTTP.
        if channel.beat(&beat).await {
            sent_report();
        } else {
            let sent = client.post(format!("{server}/api/agent/v1/heartbeat")).bearer_auth(&state.device_secret).json(&beat).send().await;
            match sent {
                Ok(res) if res.status() == reqwest::StatusCode::UNAUTHORIZED => {
                    tracing::warn!(device_id = %state.device_id, "the server no longer knows this device (unlinked?): registering again");
                    state = register(&client, &server, &opts, &name, &mut probe).await?;
                    runner.set_secret(&state.device_secret);
                    *secret.lock().unwrap() = state.device_secret.clone();
                    announce(&state);
                    bound_seen = false;
                    dispatch.bound.store(false, std::sync::atomic::Ordering::Relaxed);
                    continue;
                }
                Ok(res) if res.status().is_success() => {
                    // The market took the beat: the report it carried is not sent again.
                    sent_report();
                    match res.json::<Envelope<HeartbeatResponse>>().await {
                        Ok(env) => {
                            backoff = Duration::from_secs(1);
                            dispatch.on_answer(env.data);
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "unreadable heartbeat answer");
                            dispatch.put_back(beat.acks);
                        }
                    }
                }
                Ok(res) => {
                    tracing::warn!(status = res.status().as_u16(), "heartbeat refused; retrying");
                    // The agent sends reports within the market's bounds; should one still be
                    // refused as invalid, it must not hold back every beat after it.
                    if res.status().is_client_error() && verification.is_some() {
                        tracing::warn!("the market refused a beat carrying a GPU verification: the report is dropped");
                        sent_report();
                    }
                    dispatch.put_back(beat.acks);
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
                Err(e) => {
                    tracing::warn!(error = %e, retry_in_secs = backoff.as_secs(), "server unreachable; retrying");
                    dispatch.put_back(beat.acks);
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            }
        }
        if dispatch.bound.load(std::sync::atomic::Ordering::Relaxed) && !bound_seen {
            bound_seen = true;
            tracing::info!(device_id = %state.device_id, "device is bound");
            // The first bind of this registration (its pairing code is then forgotten, so a
            // restart does not count as one): the GPUs are verified once, unasked.
            if state.pairing_code.take().is_some() {
                save_state(&opts.state_dir, &state)?;
                if !gpus.inventory().is_empty() {
                    let d = dispatch.clone();
                    tokio::spawn(async move {
                        if let Err(e) = d.verify().await {
                            tracing::warn!(error = %e, "GPU verification on bind failed");
                        }
                    });
                }
            }
        }
        let interval = dispatch.interval.load(std::sync::atomic::Ordering::Relaxed).max(1);
        // An acknowledgement goes out at once; an app operation moving on (progress) at most
        // every half second.
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(interval)) => {}
            _ = dispatch.wake.notified() => {}
            _ = runner.changed() => {
                if !runner.has_acks() {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
    }
}

/// The market's answer envelope, as the agent reads it (its `data`).
#[derive(Deserialize)]
pub(crate) struct Envelope<T> {
    pub data: T,
}

/// The protocol's version, as every request to the market carries it.
pub(crate) fn protocol_header() -> reqwest::header::HeaderMap {
    let mut h = reqwest::header::HeaderMap::new();
    h.insert(zmarket_protocol::version::HEADER, reqwest::header::HeaderValue::from(zmarket_protocol::PROTOCOL_VERSION));
    h
}

/// Registers until the server answers (network errors are retried with back-off; a refusal is
/// an error: the arguments are wrong).
async fn register(
    client: &reqwest::Client,
    server: &str,
    opts: &AgentOptions,
    name: &str,
    probe: &mut Probe,
) -> anyhow::Result<AgentState> {
    let mut backoff = Duration::from_secs(1);
    loop {
        let body = RegisterRequest {
            device_type: Some(opts.device_type.clone()),
            name: Some(name.to_string()),
            spec: Some(probe.spec()),
            registration_token: opts.registration_token.clone(),
            pairing_code: opts.pairing_code.clone(),
        };
        match client.post(format!("{server}/api/agent/v1/register")).json(&body).send().await {
            Ok(res) if res.status().is_success() => {
                let env: Envelope<RegisterResponse> = res.json().await?;
                let state = AgentState {
                    server: server.to_string(),
                    device_id: env.data.device_id,
                    device_secret: env.data.device_secret,
                    pairing_code: Some(env.data.pairing_code),
                };
                save_state(&opts.state_dir, &state)?;
                return Ok(state);
            }
            Ok(res) if res.status().is_client_error() => {
                let text = res.text().await.unwrap_or_default();
                anyhow::bail!("the server refused the registration: {text}");
            }
            Ok(res) => tracing::warn!(status = res.status().as_u16(), "registration failed; retrying"),
            Err(e) => tracing::warn!(error = %e, retry_in_secs = backoff.as_secs(), "server unreachable; retrying"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

fn announce(state: &AgentState) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "device id: {}", state.device_id);
    if let Some(code) = &state.pairing_code {
        let _ = writeln!(out, "pairing code: {code}");
    }
    let _ = out.flush();
}

fn default_name() -> String {
    sysinfo::System::host_name().ok().filter(|n| !n.is_empty()).map(|n| n.chars().take(64).collect()).unwrap_or_else(|| "zmarket device".into())
}

fn state_path(dir: &Path) -> PathBuf {
    dir.join(STATE_FILE)
}

fn load_state(dir: &Path) -> Option<AgentState> {
    let text = std::fs::read_to_string(state_path(dir)).ok()?;
    serde_json::from_str(&text).ok()
}

fn save_state(dir: &Path, state: &AgentState) -> anyhow::Result<()> {
    let path = state_path(dir);
    let tmp = dir.join(format!("{STATE_FILE}.tmp"));
    let text = serde_json::to_string_pretty(state)?;
    {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    }
    std::fs::rename(&tmp, &path)?;
    Ok(())
}

fn restrict_dir(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    let _ = dir;
}

// ---- the machine ----

/// Reads the machine's specification and metrics with sysinfo (and NVML for GPUs).
struct Probe {
    sys: Option<sysinfo::System>,
    gpus: Arc<gpus::Gpus>,
    /// The disk figures are this path's filesystem.
    disk_path: PathBuf,
    gpu_runtime: bool,
}

impl Probe {
    fn new(disk_path: PathBuf, gpu_runtime: bool, gpus: Arc<gpus::Gpus>) -> Probe {
        let sys = match sysinfo::System::new() {
            Ok(mut s) => {
                s.refresh_cpu_all();
                s.refresh_memory();
                Some(s)
            }
            Err(e) => {
                tracing::warn!(error = %e, "system information is not available");
                None
            }
        };
        Probe { sys, gpus, disk_path, gpu_runtime }
    }

    fn spec(&mut self) -> Spec {
        let (total_disk, _) = disk_of(&self.disk_path);
        let (cpu_cores, memory_bytes) = match &mut self.sys {
            Some(s) => {
                s.refresh_memory();
                (s.cpus().len() as i64, s.total_memory() as i64)
            }
            None => (std::thread::available_parallelism().map(|n| n.get() as i64).unwrap_or(0), 0),
        };
        Spec { cpu_cores, memory_bytes, disk_bytes: total_disk, gpus: self.gpus.inventory().to_vec(), gpu_runtime: Some(self.gpu_runtime) }
    }

    /// How busy the machine is now; each GPU's figures too (nothing to do on a box without).
    async fn metrics(&mut self) -> Metrics {
        let (_, used_disk) = disk_of(&self.disk_path);
        let gpus = self.gpus.usage().await;
        match &mut self.sys {
            Some(s) => {
                s.refresh_cpu_usage();
                s.refresh_memory();
                Metrics { cpu_percent: s.global_cpu_usage() as f64, memory_used_bytes: s.used_memory() as i64, disk_used_bytes: used_disk, gpus }
            }
            None => Metrics { cpu_percent: 0.0, memory_used_bytes: 0, disk_used_bytes: used_disk, gpus },
        }
    }
}

/// Total and used bytes of the filesystem `path` is on.
fn disk_of(path: &Path) -> (i64, i64) {
    let Ok(list) = sysinfo::Disks::new_with_refreshed_list() else { return (0, 0) };
    let mounts: Vec<(PathBuf, u64, u64)> = list.iter().map(|d| (d.mount_point().to_path_buf(), d.total_space(), d.available_space())).collect();
    match mount_of(path, &mounts) {
        Some((_, total, free)) => (*total as i64, total.saturating_sub(*free) as i64),
        None => (0, 0),
    }
}

/// The mount holding `path`: the longest mount point that is a prefix of it.
fn mount_of<'a>(path: &Path, mounts: &'a [(PathBuf, u64, u64)]) -> Option<&'a (PathBuf, u64, u64)> {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    mounts.iter().filter(|(m, total, _)| *total > 0 && path.starts_with(m)).max_by_key(|(m, _, _)| m.components().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disk_is_the_filesystem_holding_the_data_root() {
        let mounts = vec![
            (PathBuf::from("/"), 100, 40),
            (PathBuf::from("/var/lib/docker"), 500, 100),
            (PathBuf::from("/var/lib/docker/overlay2/abc/merged"), 500, 100),
            (PathBuf::from("/home"), 200, 10),
        ];
        assert_eq!(mount_of(Path::new("/var/lib/docker"), &mounts).unwrap().1, 500);
        assert_eq!(mount_of(Path::new("/srv/agent"), &mounts).unwrap().1, 100);
        assert_eq!(mount_of(Path::new("/home/me/state"), &mounts).unwrap().1, 200);
        // The same answer however many container mounts come and go.
        let fewer: Vec<_> = mounts.iter().filter(|m| !m.0.starts_with("/var/lib/docker/overlay2")).cloned().collect();
        assert_eq!(mount_of(Path::new("/var/lib/docker"), &fewer), mount_of(Path::new("/var/lib/docker"), &mounts));
    }

    #[test]
    fn the_state_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let s = AgentState { server: "http://x".into(), device_id: "A".into(), device_secret: "s".into(), pairing_code: None };
        save_state(dir.path(), &s).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(state_path(dir.path())).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(load_state(dir.path()).unwrap().device_id, "A");
    }
}
