//! The container runtime of the agent: the Docker Engine API over its socket (bollard). Thin:
//! each call is one Engine operation with its error turned into a reason code with its figures
//! (the server words it in the reader's language).

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use bollard::models::{ContainerCreateBody, ContainerStateStatusEnum, DeviceRequest, HostConfig, PortBinding, RestartPolicy, RestartPolicyNameEnum};
use bollard::query_parameters::{
    CommitContainerOptions, CreateContainerOptions, CreateImageOptions, ImportImageOptions, RemoveContainerOptions, StopContainerOptions,
    TagImageOptions,
};
use bollard::{ClientVersion, Docker};
use futures::StreamExt;

use zmarket_protocol::apps::{Limits, Manifest, Reason, ReasonCode};

/// The oldest Engine API this agent speaks (Docker 20.10); newer daemons are negotiated.
const MIN_API: ClientVersion = ClientVersion { major_version: 1, minor_version: 41 };

#[derive(Clone)]
pub struct Runtime {
    docker: Docker,
}

/// What the agent needs to know of a container.
#[derive(Debug, Clone)]
pub struct Seen {
    pub state: ContainerStateStatusEnum,
    pub exit_code: i64,
    /// Host port of each published container port ("80/tcp" → 32768), while it runs.
    pub ports: HashMap<String, u16>,
    /// The host ports its configuration binds ("80/tcp" → 32768), running or not.
    pub bound: HashMap<String, u16>,
    /// Its address on a Docker network, while it runs: the agent reaches its ports there,
    /// without the published port's proxy (one hop and one copy less a byte).
    pub address: Option<std::net::IpAddr>,
}

/// What the agent reads of the Docker daemon once.
#[derive(Debug, Clone, Default)]
pub struct Daemon {
    /// Where Docker keeps images and containers (its data root).
    pub root: Option<std::path::PathBuf>,
    /// Whether it has the NVIDIA runtime (GPUs for containers).
    pub gpu_runtime: bool,
}

/// A port of this box free now, for `protocol` (tcp or udp).
fn free_port(protocol: &str) -> Option<u16> {
    if protocol == "udp" {
        std::net::UdpSocket::bind("0.0.0.0:0").ok()?.local_addr().ok().map(|a| a.port())
    } else {
        std::net::TcpListener::bind("0.0.0.0:0").ok()?.local_addr().ok().map(|a| a.port())
    }
}

/// A shell's two ends.
pub struct Shell {
    pub output: std::pin::Pin<Box<dyn futures::Stream<Item = Result<bollard::container::LogOutput, bollard::errors::Error>> + Send>>,
    pub input: std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>,
}

/// A Docker error as a reason: a taken port, a full disk, a missing GPU runtime, a container or
/// image that is not there, else Docker's status with its message.
pub fn docker_reason(e: bollard::errors::Error) -> Reason {
    use bollard::errors::Error as E;
    match e {
        E::DockerResponseServerError { status_code, message } => {
            let m = message.to_ascii_lowercase();
            let code = if m.contains("port is already allocated") || m.contains("address already in use") {
                ReasonCode::PortInUse
            } else if m.contains("no space left") {
                ReasonCode::NoSpace
            } else if m.contains("could not select device driver") || m.contains("nvidia") {
                ReasonCode::NoGpuRuntime
            } else if status_code == 404 && m.contains("no such container") {
                ReasonCode::ContainerGone
            } else if status_code == 404 || m.contains("pull access denied") || m.contains("manifest unknown") || m.contains("no such image") {
                ReasonCode::ImageMissing
            } else {
                ReasonCode::DockerError
            };
            let port = (code == ReasonCode::PortInUse).then(|| port_in(&message)).flatten();
            Reason { code, status: Some(status_code), port, detail: Some(message), ..Default::default() }
        }
        E::IOError { .. } | E::HyperResponseError { .. } | E::RequestTimeoutError => Reason::new(ReasonCode::DockerUnavailable),
        other => Reason::with_detail(ReasonCode::DockerError, other.to_string()),
    }
}

/// The port in Docker's "… Bind for 0.0.0.0:32768 failed: port is already allocated" or
/// "… listen tcp4 0.0.0.0:32768: bind: address already in use".
fn port_in(message: &str) -> Option<u16> {
    let addr = match message.find("Bind for ") {
        Some(i) => message[i + "Bind for ".len()..].split(' ').next()?,
        None => {
            let i = message.find("listen tcp")?;
            message[i..].split(' ').nth(2)?.trim_end_matches(':')
        }
    };
    addr.rsplit(':').next()?.parse().ok()
}

fn image_reason(image: &str, e: bollard::errors::Error) -> Reason {
    let mut r = docker_reason(e);
    if matches!(r.code, ReasonCode::ImageMissing | ReasonCode::DockerError) {
        r.code = ReasonCode::ImageMissing;
        r.image = Some(image.to_string());
    }
    r
}

/// A port of this box taken now (something listens on it).
pub fn port_taken(port: u16, protocol: &str) -> bool {
    if protocol == "udp" { std::net::UdpSocket::bind(("0.0.0.0", port)).is_err() } else { std::net::TcpListener::bind(("0.0.0.0", port)).is_err() }
}

fn not_found(e: &bollard::errors::Error) -> bool {
    matches!(e, bollard::errors::Error::DockerResponseServerError { status_code: 404, .. })
}

impl Runtime {
    /// Connects to the Engine (`socket` empty: the platform default); `docker_unavailable` when
    /// nothing answers there.
    pub async fn connect(socket: &str) -> Result<Runtime, Reason> {
        let path = if socket.trim().is_empty() {
            std::env::var("DOCKER_HOST").ok().filter(|h| h.starts_with("unix://")).unwrap_or_else(|| "/var/run/docker.sock".into())
        } else {
            socket.trim().to_string()
        };
        let gone = |_| Reason::new(ReasonCode::DockerUnavailable);
        let docker = Docker::connect_with_socket(&path, 600, &MIN_API).map_err(gone)?;
        let docker = docker.negotiate_version().await.map_err(gone)?;
        docker.ping().await.map_err(gone)?;
        Ok(Runtime { docker })
    }

    /// The daemon's data root and whether it has the NVIDIA runtime.
    pub async fn daemon(&self) -> Daemon {
        match self.docker.info().await {
            Ok(i) => Daemon {
                root: i.docker_root_dir.map(std::path::PathBuf::from),
                gpu_runtime: i.runtimes.is_some_and(|r| r.contains_key("nvidia")),
            },
            Err(_) => Daemon::default(),
        }
    }

    /// The Engine's version (`agent doctor`).
    pub async fn version(&self) -> Option<String> {
        self.docker.version().await.ok().and_then(|v| v.version)
    }

    pub async fn image_present(&self, image: &str) -> bool {
        self.docker.inspect_image(image).await.is_ok()
    }

    /// Loads a `docker save` archive.
    pub async fn load_archive(&self, path: &Path) -> Result<(), Reason> {
        let file = tokio::fs::File::open(path).await.map_err(|e| Reason::with_detail(ReasonCode::ArchiveFailed, e.to_string()))?;
        let stream = futures::stream::unfold(file, |mut f| async move {
            use tokio::io::AsyncReadExt;
            let mut buf = vec![0u8; 1 << 20];
            match f.read(&mut buf).await {
                Ok(0) => None,
                Ok(n) => {
                    buf.truncate(n);
                    Some((Ok::<_, std::io::Error>(bytes::Bytes::from(buf)), f))
                }
                Err(e) => Some((Err(e), f)),
            }
        });
        let mut out = self.docker.import_image_stream(ImportImageOptions { quiet: true, ..Default::default() }, stream, None);
        while let Some(item) = out.next().await {
            item.map_err(|e| match docker_reason(e) {
                r if r.code == ReasonCode::NoSpace => r,
                r => Reason { code: ReasonCode::ArchiveFailed, ..r },
            })?;
        }
        Ok(())
    }

    /// Pulls `image` (through `mirror` when set, then tagged with the image's own name);
    /// `progress` gets 0-100 over the layers' bytes.
    pub async fn pull(&self, image: &str, mirror: &str, progress: impl Fn(i32)) -> Result<(), Reason> {
        let mirror = mirror.trim().trim_end_matches('/');
        let source = if mirror.is_empty() { image.to_string() } else { format!("{mirror}/{}", strip_registry(image)) };
        let mut layers: HashMap<String, (i64, i64)> = HashMap::new();
        let opts = CreateImageOptions { from_image: Some(source.clone()), ..Default::default() };
        let mut s = self.docker.create_image(Some(opts), None, None);
        while let Some(item) = s.next().await {
            let info = item.map_err(|e| image_reason(image, e))?;
            if let (Some(id), Some(d)) = (info.id, info.progress_detail)
                && let (Some(cur), Some(total)) = (d.current, d.total)
                && total > 0
            {
                layers.insert(id, (cur.min(total), total));
                let (c, t) = layers.values().fold((0i64, 0i64), |a, v| (a.0 + v.0, a.1 + v.1));
                progress(((c * 100) / t.max(1)) as i32);
            }
        }
        if source != image {
            let (repo, tag) = split_tag(image);
            let opts = TagImageOptions { repo: Some(repo), tag: Some(tag) };
            self.docker.tag_image(&source, Some(opts)).await.map_err(|e| image_reason(image, e))?;
        }
        Ok(())
    }

    /// Creates the container (kept if it already exists: an install resumed after a restart),
    /// with the CPU and memory of `limits` and exactly the GPUs the market assigned it (`gpus`,
    /// their keys; none: no GPU, whatever the manifest says). It restarts by itself only once it
    /// proved healthy ([`Runtime::keep_running`]), so a failing start shows the app's own exit
    /// code.
    #[allow(clippy::too_many_arguments)]
    pub async fn create(
        &self,
        name: &str,
        m: &Manifest,
        volume_root: &Path,
        gpu_runtime: bool,
        installation: &str,
        limits: Limits,
        gpus: &[String],
    ) -> Result<(), Reason> {
        if self.inspect(name).await?.is_some() {
            return Ok(());
        }
        let mut bindings = HashMap::new();
        let mut exposed = Vec::new();
        for p in &m.ports {
            let key = format!("{}/{}", p.container, p.protocol);
            exposed.push(key.clone());
            // A port chosen now and kept in the container's configuration: the same one for
            // the installation's life (Docker would pick a new one at every start).
            let host_port = free_port(&p.protocol).map(|n| n.to_string()).unwrap_or_default();
            bindings.insert(key, Some(vec![PortBinding { host_ip: Some("0.0.0.0".into()), host_port: Some(host_port) }]));
        }
        let mut binds = Vec::new();
        for v in &m.volumes {
            let dir = volume_root.join(&v.name);
            std::fs::create_dir_all(&dir).map_err(|e| Reason::with_detail(ReasonCode::Storage, format!("{}: {e}", v.name)))?;
            binds.push(format!("{}:{}", dir.display(), v.path));
        }
        if !gpus.is_empty() && !gpu_runtime {
            return Err(Reason::new(ReasonCode::NoGpuRuntime));
        }
        let device_requests = gpu_requests(gpus);
        let body = ContainerCreateBody {
            image: Some(m.image.clone()),
            cmd: m.command.clone(),
            env: Some(m.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
            exposed_ports: Some(exposed),
            labels: Some(HashMap::from([("zmarket.installation".to_string(), installation.to_string())])),
            host_config: Some(HostConfig {
                port_bindings: Some(bindings),
                binds: Some(binds),
                device_requests,
                nano_cpus: (limits.cpu_cores > 0).then(|| limits.cpu_cores * 1_000_000_000),
                memory: (limits.memory_bytes > 0).then_some(limits.memory_bytes),
                restart_policy: Some(RestartPolicy { name: Some(RestartPolicyNameEnum::NO), maximum_retry_count: None }),
                // A small init as PID 1: signals reach the app (a stop takes a moment, not
                // Docker's 10-second kill) and the shells of the terminal leave no zombies.
                init: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        let opts = CreateContainerOptions { name: Some(name.to_string()), ..Default::default() };
        self.docker.create_container(Some(opts), body).await.map_err(docker_reason)?;
        Ok(())
    }

    /// From now on Docker starts the app again when it exits or the box restarts (`true`), or
    /// leaves an exited app exited (`false`, while a start is being checked).
    pub async fn keep_running(&self, name: &str, on: bool) -> Result<(), Reason> {
        let name_of = if on { RestartPolicyNameEnum::UNLESS_STOPPED } else { RestartPolicyNameEnum::NO };
        let body = bollard::models::ContainerUpdateBody {
            restart_policy: Some(RestartPolicy { name: Some(name_of), maximum_retry_count: None }),
            ..Default::default()
        };
        self.docker.update_container(name, body).await.map_err(docker_reason)?;
        Ok(())
    }

    /// Renames a container (the update's switch).
    pub async fn rename(&self, from: &str, to: &str) -> Result<(), Reason> {
        let opts = bollard::query_parameters::RenameContainerOptions { name: to.to_string() };
        self.docker.rename_container(from, opts).await.map_err(docker_reason)
    }

    pub async fn inspect(&self, name: &str) -> Result<Option<Seen>, Reason> {
        match self.docker.inspect_container(name, None).await {
            Ok(c) => {
                let state = c.state.clone().unwrap_or_default();
                let host_ports = |map: Option<HashMap<String, Option<Vec<PortBinding>>>>| -> HashMap<String, u16> {
                    map.unwrap_or_default()
                        .into_iter()
                        .filter_map(|(k, v)| Some((k, v.into_iter().flatten().find_map(|b| b.host_port.and_then(|p| p.parse::<u16>().ok()))?)))
                        .collect()
                };
                let address = c.network_settings.as_ref().and_then(|n| n.networks.as_ref()).and_then(|nets| {
                    nets.values().find_map(|n| n.ip_address.as_deref().filter(|a| !a.is_empty()).and_then(|a| a.parse().ok()))
                });
                let ports = host_ports(c.network_settings.and_then(|n| n.ports));
                let bound = host_ports(c.host_config.and_then(|h| h.port_bindings));
                Ok(Some(Seen {
                    state: state.status.unwrap_or(ContainerStateStatusEnum::EMPTY),
                    exit_code: state.exit_code.unwrap_or(0),
                    ports,
                    bound,
                    address,
                }))
            }
            Err(e) if not_found(&e) => Ok(None),
            Err(e) => Err(docker_reason(e)),
        }
    }

    pub async fn start(&self, name: &str) -> Result<(), Reason> {
        self.docker.start_container(name, None).await.map_err(docker_reason)
    }

    pub async fn stop(&self, name: &str) -> Result<(), Reason> {
        let opts = StopContainerOptions { t: Some(10), ..Default::default() };
        match self.docker.stop_container(name, Some(opts)).await {
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 304, .. }) | Ok(()) => Ok(()),
            Err(e) => Err(docker_reason(e)),
        }
    }

    pub async fn restart(&self, name: &str) -> Result<(), Reason> {
        self.docker.restart_container(name, None).await.map_err(docker_reason)
    }

    pub async fn pause(&self, name: &str) -> Result<(), Reason> {
        self.docker.pause_container(name).await.map_err(docker_reason)
    }

    pub async fn unpause(&self, name: &str) -> Result<(), Reason> {
        self.docker.unpause_container(name).await.map_err(docker_reason)
    }

    /// Commits the container as `repo:tag`.
    pub async fn commit(&self, name: &str, repo: &str, tag: &str) -> Result<(), Reason> {
        let opts = CommitContainerOptions { container: Some(name.to_string()), repo: Some(repo.into()), tag: Some(tag.into()), pause: true, ..Default::default() };
        self.docker.commit_container(opts, bollard::models::ContainerConfig::default()).await.map_err(docker_reason)?;
        Ok(())
    }

    /// What the container changed of its image: `(path, kind)` with kind 0 modified, 1 added,
    /// 2 deleted (Docker's `changes`).
    pub async fn changes(&self, name: &str) -> Result<Vec<(String, u8)>, Reason> {
        use bollard::models::ChangeType;
        let list = self.docker.container_changes(name).await.map_err(docker_reason)?.unwrap_or_default();
        Ok(list
            .into_iter()
            .map(|c| {
                let kind = match c.kind {
                    ChangeType::_0 => 0,
                    ChangeType::_1 => 1,
                    ChangeType::_2 => 2,
                };
                (c.path, kind)
            })
            .collect())
    }

    /// A path of the container as a tar stream (Docker's archive: entries named from the path's
    /// last component).
    pub fn download(&self, name: &str, path: &str) -> impl futures::Stream<Item = Result<bytes::Bytes, bollard::errors::Error>> + Send + use<> {
        let opts = bollard::query_parameters::DownloadFromContainerOptions { path: path.to_string() };
        self.docker.download_from_container(name, Some(opts))
    }

    /// Unpacks the tar at `file` into the container at `/` (a created container, before it runs).
    pub async fn upload(&self, name: &str, file: &Path) -> Result<(), Reason> {
        let f = tokio::fs::File::open(file).await.map_err(|e| Reason::with_detail(ReasonCode::Storage, e.to_string()))?;
        let body = bollard::body_try_stream(tokio_util::io::ReaderStream::with_capacity(f, 256 * 1024));
        let opts = bollard::query_parameters::UploadToContainerOptions { path: "/".into(), ..Default::default() };
        self.docker.upload_to_container(name, Some(opts), body).await.map_err(docker_reason)
    }

    /// Removes the container with its anonymous volumes; a container already gone is fine.
    pub async fn remove(&self, name: &str) -> Result<(), Reason> {
        let opts = RemoveContainerOptions { force: true, v: true, ..Default::default() };
        match self.docker.remove_container(name, Some(opts)).await {
            Ok(()) => Ok(()),
            Err(e) if not_found(&e) => Ok(()),
            Err(e) => Err(docker_reason(e)),
        }
    }

    /// A shell in the container with a terminal of `cols`×`rows`: its id, what it prints and
    /// where keystrokes go.
    pub async fn shell(&self, name: &str, cols: u16, rows: u16) -> Result<(String, Shell), String> {
        use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
        let cmd = vec!["/bin/sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi"];
        let opts = CreateExecOptions {
            attach_stdin: Some(true),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            tty: Some(true),
            env: Some(vec!["TERM=xterm-256color"]),
            cmd: Some(cmd),
            ..Default::default()
        };
        let exec = self.docker.create_exec(name, opts).await.map_err(|e| format!("opening a shell: {e}"))?;
        let started = self
            .docker
            .start_exec(&exec.id, Some(StartExecOptions { detach: false, tty: true, output_capacity: Some(64 * 1024) }))
            .await
            .map_err(|e| format!("opening a shell: {e}"))?;
        match started {
            StartExecResults::Attached { output, input } => {
                let _ = self.resize_shell(&exec.id, cols, rows).await;
                Ok((exec.id, Shell { output, input }))
            }
            StartExecResults::Detached => Err("the shell detached".into()),
        }
    }

    pub async fn resize_shell(&self, exec: &str, cols: u16, rows: u16) -> Result<(), String> {
        self.docker
            .resize_exec(exec, bollard::exec::ResizeExecOptions { width: cols, height: rows })
            .await
            .map_err(|e| format!("resizing the terminal: {e}"))
    }

    /// The container's log with timestamps: the last `tail` lines, then new ones while `follow`.
    pub fn logs(&self, name: &str, tail: u32, follow: bool) -> impl futures::Stream<Item = Result<bollard::container::LogOutput, bollard::errors::Error>> + Send + use<> {
        let opts = bollard::query_parameters::LogsOptions { follow, stdout: true, stderr: true, timestamps: true, tail: tail.to_string(), ..Default::default() };
        self.docker.logs(name, Some(opts))
    }

    /// Waits a little for the container's state to settle (used after start).
    pub async fn settle() {
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
}

/// The Docker device requests that hand a container exactly the GPUs `keys` name (UUIDs, or an
/// older box's indexes): by id, never by count and never all; no keys, no request (the
/// container sees no GPU).
pub fn gpu_requests(keys: &[String]) -> Option<Vec<DeviceRequest>> {
    (!keys.is_empty()).then(|| {
        vec![DeviceRequest {
            driver: Some("nvidia".into()),
            count: None,
            device_ids: Some(keys.to_vec()),
            capabilities: Some(vec![vec!["gpu".into()]]),
            options: None,
        }]
    })
}

/// `registry.example/a/b:1` → `a/b:1`; `a/b:1` stays (a first part with a dot, a colon or
/// `localhost` names a registry).
fn strip_registry(image: &str) -> &str {
    match image.split_once('/') {
        Some((first, rest)) if first.contains('.') || first.contains(':') || first == "localhost" => rest,
        _ => image,
    }
}

fn split_tag(image: &str) -> (String, String) {
    match image.rsplit_once(':') {
        Some((r, t)) if !t.contains('/') => (r.to_string(), t.to_string()),
        _ => (image.to_string(), "latest".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_errors_become_codes() {
        let e = |status_code: u16, m: &str| bollard::errors::Error::DockerResponseServerError { status_code, message: m.into() };
        let r = docker_reason(e(500, "driver failed programming external connectivity: Bind for 0.0.0.0:32768 failed: port is already allocated"));
        assert_eq!((r.code, r.port), (ReasonCode::PortInUse, Some(32768)));
        let r = docker_reason(e(500, "driver failed programming external connectivity: listen tcp4 0.0.0.0:8080: bind: address already in use"));
        assert_eq!((r.code, r.port), (ReasonCode::PortInUse, Some(8080)));
        assert_eq!(docker_reason(e(404, "No such container: zmarket-x")).code, ReasonCode::ContainerGone);
        assert_eq!(docker_reason(e(500, "write /var/lib/docker/tmp: no space left on device")).code, ReasonCode::NoSpace);
        assert_eq!(docker_reason(e(500, "could not select device driver \"nvidia\" with capabilities: [[gpu]]")).code, ReasonCode::NoGpuRuntime);
        let r = image_reason("a/b:1", e(404, "pull access denied for a/b"));
        assert_eq!((r.code, r.image.as_deref()), (ReasonCode::ImageMissing, Some("a/b:1")));
        assert_eq!(docker_reason(e(409, "conflict")).code, ReasonCode::DockerError);
    }

    #[test]
    fn gpus_are_asked_for_by_id() {
        let keys = vec!["GPU-5a1b2c3d-0000-1111-2222-333344445555".to_string(), "GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff".to_string()];
        let req = gpu_requests(&keys).unwrap();
        assert_eq!(req.len(), 1);
        assert_eq!(req[0].device_ids.as_deref(), Some(keys.as_slice()), "exactly the assigned GPUs, in order");
        assert_eq!(req[0].count, None, "never a count (-1 would be every GPU of the box)");
        assert_eq!(req[0].driver.as_deref(), Some("nvidia"));
        assert_eq!(req[0].capabilities, Some(vec![vec!["gpu".to_string()]]));
        // An older box's GPUs by index.
        assert_eq!(gpu_requests(&["1".to_string()]).unwrap()[0].device_ids, Some(vec!["1".to_string()]));
        assert!(gpu_requests(&[]).is_none(), "no GPUs assigned: no GPU at all");
        // As Docker gets it.
        let json = serde_json::to_value(HostConfig { device_requests: gpu_requests(&keys), ..Default::default() }).unwrap();
        assert_eq!(json["DeviceRequests"][0]["DeviceIDs"], serde_json::json!(keys));
        assert!(json["DeviceRequests"][0].get("Count").is_none());
    }

    /// With real Docker (issue 38; no NVIDIA runtime here, none needed to create a container):
    /// the container made for an installation holding two GPUs asks for exactly those two, by
    /// id, in its HostConfig as `docker inspect` shows it before it starts; one holding none asks
    /// for no GPU at all; a box without the runtime refuses with `no_gpu_runtime` and creates
    /// nothing. Needs the local test image (scripts/test-images); skipped without a daemon unless
    /// ZMARKET_TEST_DOCKER=required.
    #[tokio::test]
    async fn a_created_container_holds_exactly_its_assigned_gpus() {
        let Ok(rt) = Runtime::connect("").await else {
            assert!(std::env::var("ZMARKET_TEST_DOCKER").as_deref() != Ok("required"), "no Docker daemon reachable");
            return;
        };
        let m = Manifest {
            image: "zmarket-test/httpd:1".into(),
            ports: Vec::new(),
            env: Default::default(),
            volumes: Vec::new(),
            gpu: true,
            health: None,
            command: None,
            live_snapshot: false,
        };
        let dir = tempfile::tempdir().unwrap();
        let suffix = std::process::id();
        let (two, none, refused) = (format!("zmarket-gputest-two-{suffix}"), format!("zmarket-gputest-none-{suffix}"), format!("zmarket-gputest-refused-{suffix}"));
        let keys = vec!["GPU-5a1b2c3d-0000-1111-2222-333344445555".to_string(), "GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff".to_string()];
        let limits = Limits::default();
        let made = rt.create(&two, &m, dir.path(), true, "inst-two", limits, &keys).await;
        let made_none = rt.create(&none, &m, dir.path(), true, "inst-none", limits, &[]).await;
        let inspected = rt.docker.inspect_container(&two, None).await;
        let inspected_none = rt.docker.inspect_container(&none, None).await;
        let refusal = rt.create(&refused, &m, dir.path(), false, "inst-refused", limits, &keys).await;
        let left = rt.docker.inspect_container(&refused, None).await;
        for name in [&two, &none, &refused] {
            rt.remove(name).await.unwrap();
        }
        made.unwrap();
        made_none.unwrap();
        let requests = inspected.unwrap().host_config.unwrap().device_requests.unwrap_or_default();
        assert_eq!(requests.len(), 1, "{requests:?}");
        assert_eq!(requests[0].device_ids.as_deref(), Some(keys.as_slice()), "exactly the assigned GPUs");
        assert!(requests[0].count.is_none_or(|c| c == 0), "never by count: {requests:?}");
        assert_eq!(requests[0].driver.as_deref(), Some("nvidia"));
        assert!(inspected_none.unwrap().host_config.unwrap().device_requests.unwrap_or_default().is_empty(), "no GPU assigned: none asked for");
        assert_eq!(refusal.unwrap_err().code, ReasonCode::NoGpuRuntime);
        assert!(left.is_err(), "nothing is created on a box without the runtime");
    }

    #[test]
    fn mirror_names() {
        assert_eq!(strip_registry("ghcr.io/open-webui/open-webui:v0.5.10"), "open-webui/open-webui:v0.5.10");
        assert_eq!(strip_registry("grafana/grafana:11.5.0"), "grafana/grafana:11.5.0");
        assert_eq!(split_tag("localhost:5000/a:1"), ("localhost:5000/a".into(), "1".into()));
    }
}
