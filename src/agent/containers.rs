//! The container runtime of the agent: the Docker Engine API over its socket (bollard). Thin:
//! each call is one Engine operation with its error turned into a sentence for the owner.

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

use crate::apps::DOCKER_UNAVAILABLE;
use crate::apps::model::Manifest;

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
    /// How many times Docker restarted it after it exited (its restart policy).
    pub restarts: i64,
    /// Host port of each published container port ("80/tcp" → 32768).
    pub ports: HashMap<String, u16>,
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

fn err(what: &str, e: bollard::errors::Error) -> String {
    format!("{what}: {e}")
}

fn not_found(e: &bollard::errors::Error) -> bool {
    matches!(e, bollard::errors::Error::DockerResponseServerError { status_code: 404, .. })
}

impl Runtime {
    /// Connects to the Engine (`socket` empty: the platform default); "Docker is not available
    /// on this device" when nothing answers there.
    pub async fn connect(socket: &str) -> Result<Runtime, String> {
        let path = if socket.trim().is_empty() {
            std::env::var("DOCKER_HOST").ok().filter(|h| h.starts_with("unix://")).unwrap_or_else(|| "/var/run/docker.sock".into())
        } else {
            socket.trim().to_string()
        };
        let docker = Docker::connect_with_socket(&path, 600, &MIN_API).map_err(|_| DOCKER_UNAVAILABLE.to_string())?;
        let docker = docker.negotiate_version().await.map_err(|_| DOCKER_UNAVAILABLE.to_string())?;
        docker.ping().await.map_err(|_| DOCKER_UNAVAILABLE.to_string())?;
        Ok(Runtime { docker })
    }

    pub async fn image_present(&self, image: &str) -> bool {
        self.docker.inspect_image(image).await.is_ok()
    }

    /// Loads a `docker save` archive.
    pub async fn load_archive(&self, path: &Path) -> Result<(), String> {
        let file = tokio::fs::File::open(path).await.map_err(|e| format!("opening the image archive: {e}"))?;
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
            item.map_err(|e| err("loading the image archive", e))?;
        }
        Ok(())
    }

    /// Pulls `image` (through `mirror` when set, then tagged with the image's own name);
    /// `progress` gets 0-100 over the layers' bytes.
    pub async fn pull(&self, image: &str, mirror: &str, progress: impl Fn(i32)) -> Result<(), String> {
        let mirror = mirror.trim().trim_end_matches('/');
        let source = if mirror.is_empty() { image.to_string() } else { format!("{mirror}/{}", strip_registry(image)) };
        let mut layers: HashMap<String, (i64, i64)> = HashMap::new();
        let opts = CreateImageOptions { from_image: Some(source.clone()), ..Default::default() };
        let mut s = self.docker.create_image(Some(opts), None, None);
        while let Some(item) = s.next().await {
            let info = item.map_err(|e| err(&format!("pulling {source}"), e))?;
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
            self.docker.tag_image(&source, Some(opts)).await.map_err(|e| err("tagging the mirrored image", e))?;
        }
        Ok(())
    }

    /// Creates the container (kept if it already exists: an install resumed after a restart).
    pub async fn create(&self, name: &str, m: &Manifest, volume_root: &Path, gpus: bool, installation: &str) -> Result<(), String> {
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
            std::fs::create_dir_all(&dir).map_err(|e| format!("creating the volume {}: {e}", v.name))?;
            binds.push(format!("{}:{}", dir.display(), v.path));
        }
        let device_requests = (m.gpu && gpus).then(|| {
            vec![DeviceRequest { driver: Some("nvidia".into()), count: Some(-1), capabilities: Some(vec![vec!["gpu".into()]]), ..Default::default() }]
        });
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
                restart_policy: Some(RestartPolicy { name: Some(RestartPolicyNameEnum::UNLESS_STOPPED), maximum_retry_count: None }),
                // A small init as PID 1: signals reach the app (a stop takes a moment, not
                // Docker's 10-second kill) and the shells of the terminal leave no zombies.
                init: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        let opts = CreateContainerOptions { name: Some(name.to_string()), ..Default::default() };
        self.docker.create_container(Some(opts), body).await.map_err(|e| err("creating the container", e))?;
        Ok(())
    }

    pub async fn inspect(&self, name: &str) -> Result<Option<Seen>, String> {
        match self.docker.inspect_container(name, None).await {
            Ok(c) => {
                let state = c.state.clone().unwrap_or_default();
                let restarts = c.restart_count.unwrap_or(0);
                let mut ports = HashMap::new();
                for (k, v) in c.network_settings.and_then(|n| n.ports).unwrap_or_default() {
                    if let Some(p) = v.into_iter().flatten().find_map(|b| b.host_port.and_then(|p| p.parse::<u16>().ok())) {
                        ports.insert(k, p);
                    }
                }
                Ok(Some(Seen {
                    state: state.status.unwrap_or(ContainerStateStatusEnum::EMPTY),
                    exit_code: state.exit_code.unwrap_or(0),
                    restarts,
                    ports,
                }))
            }
            Err(e) if not_found(&e) => Ok(None),
            Err(e) => Err(err("reading the container", e)),
        }
    }

    pub async fn start(&self, name: &str) -> Result<(), String> {
        self.docker.start_container(name, None).await.map_err(|e| err("starting the app", e))
    }

    pub async fn stop(&self, name: &str) -> Result<(), String> {
        let opts = StopContainerOptions { t: Some(10), ..Default::default() };
        match self.docker.stop_container(name, Some(opts)).await {
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 304, .. }) | Ok(()) => Ok(()),
            Err(e) => Err(err("stopping the app", e)),
        }
    }

    pub async fn restart(&self, name: &str) -> Result<(), String> {
        self.docker.restart_container(name, None).await.map_err(|e| err("restarting the app", e))
    }

    pub async fn pause(&self, name: &str) -> Result<(), String> {
        self.docker.pause_container(name).await.map_err(|e| err("suspending the app", e))
    }

    pub async fn unpause(&self, name: &str) -> Result<(), String> {
        self.docker.unpause_container(name).await.map_err(|e| err("resuming the app", e))
    }

    /// Commits the container as `repo:tag`.
    pub async fn commit(&self, name: &str, repo: &str, tag: &str) -> Result<(), String> {
        let opts = CommitContainerOptions { container: Some(name.to_string()), repo: Some(repo.into()), tag: Some(tag.into()), pause: true, ..Default::default() };
        self.docker.commit_container(opts, bollard::models::ContainerConfig::default()).await.map_err(|e| err("taking the snapshot", e))?;
        Ok(())
    }

    /// Removes the container with its anonymous volumes; a container already gone is fine.
    pub async fn remove(&self, name: &str) -> Result<(), String> {
        let opts = RemoveContainerOptions { force: true, v: true, ..Default::default() };
        match self.docker.remove_container(name, Some(opts)).await {
            Ok(()) => Ok(()),
            Err(e) if not_found(&e) => Ok(()),
            Err(e) => Err(err("removing the app", e)),
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
        let exec = self.docker.create_exec(name, opts).await.map_err(|e| err("opening a shell", e))?;
        let started = self
            .docker
            .start_exec(&exec.id, Some(StartExecOptions { detach: false, tty: true, output_capacity: Some(64 * 1024) }))
            .await
            .map_err(|e| err("opening a shell", e))?;
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
            .map_err(|e| err("resizing the terminal", e))
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
    fn mirror_names() {
        assert_eq!(strip_registry("ghcr.io/open-webui/open-webui:v0.5.10"), "open-webui/open-webui:v0.5.10");
        assert_eq!(strip_registry("grafana/grafana:11.5.0"), "grafana/grafana:11.5.0");
        assert_eq!(split_tag("localhost:5000/a:1"), ("localhost:5000/a".into(), "1".into()));
    }
}
