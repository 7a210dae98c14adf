//! The agent's apps: carries out `app_*` commands as containers (in the background, so
//! heartbeats keep reporting progress), reports every installation's actual state, and keeps
//! what it must remember across restarts in `<state dir>/apps.json`: the installations it runs
//! and the acknowledgements of the commands it finished (a command the server sends again,
//! because an acknowledgement was lost, is acknowledged again, never carried out twice). A
//! command interrupted by a restart is not finished: the server sends it again and it resumes
//! (the archive download from where it stopped, the container if it was created).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bollard::models::ContainerStateStatusEnum as St;
use tokio::sync::Notify;
use zmarket_protocol::apps::{AppStatus, ArchiveRef, InstallPayload, InstallationReport, Manifest, Reason, ReasonCode, UpdatePayload};
use zmarket_protocol::heartbeat::{Ack, Command, CommandBody, CommandKind};
use zmarket_protocol::snapshots::SnapshotReport;

use crate::containers::{Runtime, port_taken};
use crate::fetch;
use saved::{Desired, Known, Saved};

mod kept;
mod saved;

const SAVED: &str = "apps.json";
/// Acknowledgements remembered for commands sent again.
const KEEP_DONE: usize = 500;
/// How long an app may take to answer its health check after starting.
const HEALTH_WAIT: Duration = Duration::from_secs(120);
/// How long the old container of an update keeps serving after the switch: the connections
/// opened to it before (a stream under way, a kept-alive connection of the market's proxy)
/// finish on a running app.
const DRAIN: Duration = Duration::from_secs(6);

/// An operation under way on one installation.
#[derive(Debug, Clone)]
struct Live {
    status: AppStatus,
    progress: Option<i32>,
}

pub struct AppsOptions {
    pub server: String,
    pub state_dir: PathBuf,
    pub registry_mirror: String,
    pub docker_socket: String,
    /// Where people reach this box's apps.
    pub public_host: String,
    /// Whether the box's Docker can hand GPUs to containers (the NVIDIA runtime).
    pub gpu_runtime: bool,
}

#[derive(Clone)]
pub struct AppRunner(Arc<Inner>);

struct Inner {
    opts: AppsOptions,
    client: reqwest::Client,
    secret: Mutex<String>,
    saved: Mutex<Saved>,
    live: Mutex<HashMap<String, Live>>,
    /// The install phases each installation went through since the last report (a phase shorter
    /// than the heartbeat's wake-up delay is still reported, as `passed`).
    trail: Mutex<HashMap<String, Vec<AppStatus>>>,
    in_flight: Mutex<HashSet<String>>,
    outbox: Mutex<Vec<Ack>>,
    wake: Notify,
    /// Snapshot reports not yet carried by a beat the market accepted, each with its number.
    snaps: Mutex<BTreeMap<String, (u64, SnapshotReport)>>,
    snap_seq: std::sync::atomic::AtomicU64,
    /// Moves whenever an operation on an installation begins or ends: the streams' memory of
    /// containers' host ports (`agent::streams`) holds until it moves.
    generation: std::sync::atomic::AtomicU64,
}

pub fn container(id: &str) -> String {
    format!("zmarket-{id}")
}

impl AppRunner {
    pub fn new(opts: AppsOptions, secret: &str) -> AppRunner {
        let saved = std::fs::read_to_string(opts.state_dir.join(SAVED)).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .read_timeout(Duration::from_secs(120))
            .user_agent(concat!("zmarket-agent/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        AppRunner(Arc::new(Inner {
            opts,
            client,
            secret: Mutex::new(secret.to_string()),
            saved: Mutex::new(saved),
            live: Mutex::new(HashMap::new()),
            trail: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(HashSet::new()),
            outbox: Mutex::new(Vec::new()),
            wake: Notify::new(),
            snaps: Mutex::new(BTreeMap::new()),
            snap_seq: std::sync::atomic::AtomicU64::new(0),
            generation: std::sync::atomic::AtomicU64::new(0),
        }))
    }

    /// Moves whenever an operation on an installation begins or ends (its containers may have
    /// changed, and with them their host ports).
    pub fn generation(&self) -> u64 {
        self.0.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    pub(crate) fn moved(&self) {
        self.0.generation.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// Whether the installation runs here.
    pub fn runs(&self, id: &str) -> bool {
        self.0.saved.lock().unwrap().installations.contains_key(id)
    }

    /// Whether the installation runs here and its manifest declares TCP port `port`: `None`
    /// when it does not run here.
    pub fn declares(&self, id: &str, port: u16) -> Option<bool> {
        let saved = self.0.saved.lock().unwrap();
        let k = saved.installations.get(id)?;
        Some(k.manifest.ports.iter().any(|p| p.container == port && p.protocol == "tcp"))
    }

    pub fn docker_socket(&self) -> &str {
        &self.0.opts.docker_socket
    }

    pub fn set_secret(&self, secret: &str) {
        *self.0.secret.lock().unwrap() = secret.to_string();
    }

    /// Wakes the heartbeat loop when an operation moves on or finishes.
    pub async fn changed(&self) {
        self.0.wake.notified().await
    }

    pub fn has_acks(&self) -> bool {
        !self.0.outbox.lock().unwrap().is_empty()
    }

    pub fn take_acks(&self) -> Vec<Ack> {
        std::mem::take(&mut *self.0.outbox.lock().unwrap())
    }

    /// Takes a command: acknowledged again if finished before, ignored while under way,
    /// otherwise carried out in the background.
    pub fn handle(&self, cmd: Command, body: CommandBody) {
        let inner = &self.0;
        if let Some(ack) = inner.saved.lock().unwrap().done.iter().find(|a| a.id == cmd.id).cloned() {
            inner.outbox.lock().unwrap().push(ack);
            return;
        }
        if !inner.in_flight.lock().unwrap().insert(cmd.id.clone()) {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            let result = me.execute(&body).await;
            let ack = match result {
                Ok(()) => {
                    tracing::info!(id = %cmd.id, kind = %cmd.kind, "app command carried out");
                    Ack { id: cmd.id.clone(), ok: true, error: None, reason: None }
                }
                Err(e) => {
                    tracing::warn!(id = %cmd.id, kind = %cmd.kind, error = %e, "app command failed");
                    Ack { id: cmd.id.clone(), ok: false, error: Some(e.to_string()), reason: Some(e) }
                }
            };
            {
                let mut saved = me.0.saved.lock().unwrap();
                saved.done.push_back(ack.clone());
                while saved.done.len() > KEEP_DONE {
                    saved.done.pop_front();
                }
            }
            me.save();
            me.0.in_flight.lock().unwrap().remove(&cmd.id);
            me.0.outbox.lock().unwrap().push(ack);
            me.0.wake.notify_one();
        });
    }

    fn save(&self) {
        let text = serde_json::to_string_pretty(&*self.0.saved.lock().unwrap()).unwrap_or_default();
        let dir = &self.0.opts.state_dir;
        let tmp = dir.join(format!("{SAVED}.tmp"));
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(tmp, dir.join(SAVED));
        }
    }

    fn set_live(&self, id: &str, status: AppStatus, progress: Option<i32>) {
        let before = self.0.live.lock().unwrap().insert(id.to_string(), Live { status, progress }).map(|l| l.status);
        if before != Some(status) && matches!(status, AppStatus::Downloading | AppStatus::Installing | AppStatus::Installed) {
            let mut trail = self.0.trail.lock().unwrap();
            let t = trail.entry(id.to_string()).or_default();
            if t.last() != Some(&status) {
                t.push(status);
            }
        }
        self.0.wake.notify_one();
    }

    fn volume_root(&self, id: &str) -> PathBuf {
        self.0.opts.state_dir.join("apps").join(id)
    }

    async fn execute(&self, body: &CommandBody) -> Result<(), Reason> {
        let id = body.installation().ok_or_else(|| Reason::with_detail(ReasonCode::Other, "not an app command"))?.to_string();
        self.moved();
        let result = self.execute_on(body, &id).await;
        self.moved();
        self.0.live.lock().unwrap().remove(&id);
        result
    }

    async fn execute_on(&self, body: &CommandBody, id: &str) -> Result<(), Reason> {
        let rt = Runtime::connect(&self.0.opts.docker_socket).await?;
        let name = container(id);
        let kind = body.kind();
        let (transit, desired) = match body {
            CommandBody::AppInstall(p) => return self.install(&rt, p.clone()).await,
            CommandBody::AppUpdate(p) => return self.update(&rt, p.clone()).await,
            CommandBody::AppStart(_) => (AppStatus::Starting, Some(Desired::Running)),
            CommandBody::AppStop(_) => (AppStatus::Stopping, Some(Desired::Stopped)),
            CommandBody::AppRestart(_) => (AppStatus::Restarting, Some(Desired::Running)),
            CommandBody::AppSuspend(_) => (AppStatus::Suspending, Some(Desired::Suspended)),
            CommandBody::AppResume(_) => (AppStatus::Resuming, Some(Desired::Running)),
            // A snapshot leaves it as it was.
            CommandBody::AppSnapshot(_) => (AppStatus::Snapshotting, None),
            CommandBody::AppUninstall(_) => (AppStatus::Uninstalling, Some(Desired::Removed)),
            CommandBody::ZcloudCreate(_)
            | CommandBody::ZcloudDelete(_)
            | CommandBody::GpuVerify(_)
            | CommandBody::SnapshotUpload(_)
            | CommandBody::SnapshotDelete(_) => {
                return Err(Reason::with_detail(ReasonCode::Other, "not an app command"));
            }
        };
        self.set_live(id, transit, None);
        let known = self.0.saved.lock().unwrap().installations.get(id).cloned();
        match kind {
            CommandKind::AppStart => {
                if let Some(k) = &known {
                    self.free_ports(&rt, id, k).await?;
                }
                rt.keep_running(&name, false).await?;
                rt.start(&name).await?;
                self.healthy(&rt, &name, known.as_ref().map(|k| &k.manifest)).await?;
                rt.keep_running(&name, true).await?;
            }
            CommandKind::AppStop => rt.stop(&name).await?,
            CommandKind::AppRestart => {
                rt.keep_running(&name, false).await?;
                rt.restart(&name).await?;
                self.healthy(&rt, &name, known.as_ref().map(|k| &k.manifest)).await?;
                rt.keep_running(&name, true).await?;
            }
            CommandKind::AppSuspend => rt.pause(&name).await?,
            CommandKind::AppResume => rt.unpause(&name).await?,
            CommandKind::AppSnapshot => {
                let sid = match body {
                    CommandBody::AppSnapshot(p) => p.snapshot_id.clone(),
                    _ => None,
                };
                match (sid, &known) {
                    (Some(sid), Some(k)) => self.snapshot(&rt, id, &sid, k, true).await?,
                    // A market older than snapshots: the container's image, committed on the box.
                    _ => {
                        let tag = chrono::Utc::now().format("%Y%m%d%H%M%S").to_string();
                        rt.commit(&name, &format!("zmarket-snapshot/{id}"), &tag).await?;
                    }
                }
            }
            _ => {
                // An ended rental's data is kept first (a failure is the snapshot's, not the removal's).
                if let (CommandBody::AppUninstall(p), Some(k)) = (body, &known)
                    && let Some(sid) = &p.snapshot_id
                {
                    let _ = self.snapshot(&rt, id, sid, k, false).await;
                }
                // with what an update left (a new version being tried, an old one draining)
                rt.remove(&next_of(&name)).await?;
                rt.remove(&format!("{name}-old")).await?;
                rt.remove(&name).await?;
                let root = self.volume_root(id);
                if root.exists() {
                    std::fs::remove_dir_all(&root).map_err(|e| Reason::with_detail(ReasonCode::Storage, e.to_string()))?;
                }
                self.0.saved.lock().unwrap().installations.remove(id);
                self.save();
                return Ok(());
            }
        }
        if let Some(desired) = desired
            && let Some(k) = self.0.saved.lock().unwrap().installations.get_mut(id)
        {
            k.desired = desired;
        }
        self.save();
        Ok(())
    }

    /// Makes sure the image is on the box: already there, from the market's archive, or pulled.
    /// Progress shows as `status` (downloading for an install, updating for an update).
    async fn image(&self, rt: &Runtime, id: &str, m: &Manifest, archive: Option<&ArchiveRef>, status: AppStatus) -> Result<(), Reason> {
        if rt.image_present(&m.image).await {
            return Ok(());
        }
        match archive {
            Some(a) => {
                let url = format!("{}{}", self.0.opts.server, a.path);
                let secret = self.0.secret.lock().unwrap().clone();
                let size = a.size.max(1) as u64;
                let dir = self.0.opts.state_dir.join("images");
                let path = fetch::archive(&self.0.client, &url, &secret, &dir, &a.sha256, size, |n| {
                    self.set_live(id, status, Some(((n * 100) / size).min(100) as i32))
                })
                .await
                .map_err(|e| Reason::with_detail(ReasonCode::ArchiveFailed, e))?;
                if status == AppStatus::Downloading {
                    self.set_live(id, AppStatus::Installing, Some(0));
                }
                rt.load_archive(&path).await?;
            }
            None => rt.pull(&m.image, &self.0.opts.registry_mirror, |pc| self.set_live(id, status, Some(pc))).await?,
        }
        if !rt.image_present(&m.image).await {
            return Err(Reason { code: ReasonCode::ImageMissing, image: Some(m.image.clone()), ..Default::default() });
        }
        Ok(())
    }

    /// Starts a created container and waits until it proves healthy; only then may Docker
    /// restart it by itself.
    async fn start_checked(&self, rt: &Runtime, name: &str, m: &Manifest) -> Result<(), Reason> {
        rt.start(name).await?;
        self.healthy(rt, name, Some(m)).await?;
        rt.keep_running(name, true).await
    }

    async fn install(&self, rt: &Runtime, p: InstallPayload) -> Result<(), Reason> {
        let id = p.installation_id.clone();
        let m = &p.manifest;
        self.set_live(&id, AppStatus::Downloading, Some(0));
        self.image(rt, &id, m, p.archive.as_ref(), AppStatus::Downloading).await?;
        self.set_live(&id, AppStatus::Installing, Some(50));
        let name = container(&id);
        let rootfs = match &p.restore {
            Some(r) => self.restore_data(&id, r).await?,
            None => None,
        };
        rt.create(&name, m, &self.volume_root(&id), self.0.opts.gpu_runtime, &id, p.limits, &p.gpus).await?;
        if let Some(tar) = rootfs {
            let put = rt.upload(&name, &tar).await;
            let _ = std::fs::remove_file(&tar);
            if let Err(e) = put {
                let _ = rt.remove(&name).await;
                return Err(e);
            }
        }
        {
            let mut saved = self.0.saved.lock().unwrap();
            let known = Known { app_id: p.app_id.clone(), manifest: m.clone(), desired: Desired::Running, limits: p.limits, gpus: p.gpus.clone() };
            saved.installations.insert(id.clone(), known);
        }
        self.save();
        self.set_live(&id, AppStatus::Installed, None);
        if let Err(e) = self.start_checked(rt, &name, m).await {
            // Nothing half-made is left behind: the next try starts clean.
            let _ = rt.remove(&name).await;
            self.0.saved.lock().unwrap().installations.remove(&id);
            self.save();
            return Err(e);
        }
        Ok(())
    }

    /// An update: the new version starts beside the old one (the same data), on ports of its
    /// own; once it is healthy it takes the installation's name and the old container, after
    /// serving what was already on its way to it, is removed. If the new one fails, it is
    /// removed and the old one runs on untouched: `rolled_back` with the cause.
    async fn update(&self, rt: &Runtime, p: UpdatePayload) -> Result<(), Reason> {
        let id = p.installation_id.clone();
        let name = container(&id);
        let next = next_of(&name);
        let rolled_back = |cause: Reason| Reason { code: ReasonCode::RolledBack, version: Some(p.version.clone()), cause: Some(Box::new(cause)), ..Default::default() };
        self.set_live(&id, AppStatus::Updating, Some(0));
        let app_id = self.0.saved.lock().unwrap().installations.get(&id).map(|k| k.app_id.clone()).unwrap_or_default();
        self.image(rt, &id, &p.manifest, p.archive.as_ref(), AppStatus::Updating).await.map_err(rolled_back)?;
        self.set_live(&id, AppStatus::Updating, Some(60));
        rt.remove(&next).await.map_err(rolled_back)?;
        let started = async {
            rt.create(&next, &p.manifest, &self.volume_root(&id), self.0.opts.gpu_runtime, &id, p.limits, &p.gpus).await?;
            self.start_checked(rt, &next, &p.manifest).await
        }
        .await;
        if let Err(e) = started {
            let _ = rt.remove(&next).await;
            return Err(rolled_back(e));
        }
        self.set_live(&id, AppStatus::Updating, Some(90));
        // The switch: two renames, so the installation's name always names a running app.
        let old = format!("{name}-old");
        rt.remove(&old).await?;
        if rt.inspect(&name).await?.is_some() {
            rt.rename(&name, &old).await?;
        }
        rt.rename(&next, &name).await?;
        {
            let mut saved = self.0.saved.lock().unwrap();
            let known = Known { app_id, manifest: p.manifest.clone(), desired: Desired::Running, limits: p.limits, gpus: p.gpus.clone() };
            saved.installations.insert(id.clone(), known);
        }
        self.save();
        let rt2 = rt.clone();
        tokio::spawn(async move {
            tokio::time::sleep(DRAIN).await;
            let _ = rt2.stop(&old).await;
            let _ = rt2.remove(&old).await;
        });
        Ok(())
    }

    /// Before a start: a host port of the installation taken by something else on the box is
    /// given up for a free one (the container is made again with the same data).
    async fn free_ports(&self, rt: &Runtime, id: &str, k: &Known) -> Result<(), Reason> {
        let name = container(id);
        let Some(seen) = rt.inspect(&name).await? else { return Ok(()) };
        if seen.state == St::RUNNING {
            return Ok(());
        }
        let taken = seen.bound.iter().any(|(key, port)| port_taken(*port, key.rsplit('/').next().unwrap_or("tcp")));
        if !taken {
            return Ok(());
        }
        tracing::warn!(installation = id, ports = ?seen.bound, "a host port of the app is taken on the box: choosing another");
        rt.remove(&name).await?;
        rt.create(&name, &k.manifest, &self.volume_root(id), self.0.opts.gpu_runtime, id, k.limits, &k.gpus).await
    }

    /// Waits until the app runs (and answers its health path, when it has one); an app that
    /// exited reports its own exit code (Docker does not restart it while it is checked).
    async fn healthy(&self, rt: &Runtime, name: &str, m: Option<&Manifest>) -> Result<(), Reason> {
        Runtime::settle().await;
        let deadline = tokio::time::Instant::now() + HEALTH_WAIT;
        loop {
            let seen = rt.inspect(name).await?.ok_or(Reason::new(ReasonCode::ContainerGone))?;
            if matches!(seen.state, St::EXITED | St::DEAD | St::RESTARTING) {
                return Err(Reason::exited(ReasonCode::Exited, seen.exit_code));
            }
            let health = m.and_then(|m| {
                let web = m.ports.iter().find(|p| p.web)?;
                let port = seen.ports.get(&format!("{}/tcp", web.container))?;
                Some(format!("http://127.0.0.1:{port}{}", m.health.as_ref().map_or("/", |h| h.path.as_str())))
            });
            let ok = match (seen.state == St::RUNNING, health, m.and_then(|m| m.health.as_ref())) {
                (false, _, _) => false,
                (true, Some(url), Some(_)) => {
                    let res = self.0.client.get(&url).timeout(Duration::from_secs(5)).send().await;
                    res.is_ok_and(|r| r.status().as_u16() < 500)
                }
                (true, _, _) => true,
            };
            if ok {
                return Ok(());
            }
            if tokio::time::Instant::now() > deadline {
                return Err(Reason { code: ReasonCode::HealthFailed, secs: Some(HEALTH_WAIT.as_secs()), ..Default::default() });
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Every installation's actual state: the operation under way, else what Docker says.
    pub async fn reports(&self) -> Vec<InstallationReport> {
        let mut out = self.reports_now().await;
        let mut trail = std::mem::take(&mut *self.0.trail.lock().unwrap());
        for r in &mut out {
            r.passed = trail.remove(&r.id).unwrap_or_default();
        }
        out
    }

    async fn reports_now(&self) -> Vec<InstallationReport> {
        let live: HashMap<String, Live> = self.0.live.lock().unwrap().clone();
        let known: BTreeMap<String, Known> = self.0.saved.lock().unwrap().installations.clone();
        let mut out: Vec<InstallationReport> = live
            .iter()
            .map(|(id, l)| InstallationReport { id: id.clone(), status: l.status, progress: l.progress, reason: None, error: None, url: None, passed: vec![] })
            .collect();
        let rest: Vec<(&String, &Known)> = known.iter().filter(|(id, _)| !live.contains_key(*id)).collect();
        if rest.is_empty() {
            return out;
        }
        let Ok(rt) = Runtime::connect(&self.0.opts.docker_socket).await else { return out };
        for (id, k) in rest {
            let report = match rt.inspect(&container(id)).await {
                Err(_) => continue,
                Ok(None) => InstallationReport {
                    id: id.clone(),
                    status: AppStatus::Failed,
                    progress: None,
                    reason: Some(Reason::new(ReasonCode::ContainerGone)),
                    error: None,
                    url: None,
                    passed: vec![],
                },
                Ok(Some(seen)) => {
                    let (status, reason) = match seen.state {
                        St::RUNNING => (AppStatus::Running, None),
                        // Its restart policy starts it again and again: it is not running.
                        St::RESTARTING => (AppStatus::Failed, Some(Reason::exited(ReasonCode::KeepsExiting, seen.exit_code))),
                        St::PAUSED => (AppStatus::Suspended, None),
                        _ if k.desired == Desired::Running => (AppStatus::Failed, Some(Reason::exited(ReasonCode::Exited, seen.exit_code))),
                        _ => (AppStatus::Stopped, None),
                    };
                    let url = (status == AppStatus::Running).then(|| self.url_of(&k.manifest, &seen.ports)).flatten();
                    InstallationReport { id: id.clone(), status, progress: None, reason, error: None, url, passed: vec![] }
                }
            };
            out.push(report);
        }
        out
    }

    fn url_of(&self, m: &Manifest, ports: &HashMap<String, u16>) -> Option<String> {
        let web = m.ports.iter().find(|p| p.web)?;
        let port = ports.get(&format!("{}/tcp", web.container))?;
        let scheme = web.scheme.as_deref().unwrap_or("http");
        let host = &self.0.opts.public_host;
        let host = if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host.clone() };
        Some(format!("{scheme}://{host}:{port}/"))
    }
}

/// The address this box uses to reach the market server (what its apps are reached at on the
/// same network), when no public host is configured.
pub fn default_public_host(server: &str) -> String {
    let Ok(url) = url::Url::parse(server) else { return "127.0.0.1".into() };
    let host = url.host_str().unwrap_or("127.0.0.1").trim_matches(|c| c == '[' || c == ']').to_string();
    if host == "localhost" {
        return "127.0.0.1".into();
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let local = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port)).ok().and_then(|mut a| a.next()).and_then(|addr| {
        let bind = if addr.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
        let s = std::net::UdpSocket::bind(bind).ok()?;
        s.connect(addr).ok()?;
        s.local_addr().ok().map(|l| l.ip().to_string())
    });
    local.unwrap_or(host)
}

/// The container an update starts beside the installation's.
fn next_of(name: &str) -> String {
    format!("{name}-next")
}
