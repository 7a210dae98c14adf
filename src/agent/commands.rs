//! Carries out the market's commands, whichever way they came (a heartbeat's answer over HTTP
//! or the channel): `app_*` commands go to the app runner (apps.rs), Z-CLOUD commands to the
//! host's provisioner, `gpu_verify` to the GPU verification (gpus/verify.rs). A command is
//! carried out once: one sent again (its acknowledgement was lost) is acknowledged again, never
//! run twice. Acknowledgements wait for the next beat; so does a verification's report, which
//! goes out with beats until one carrying it was accepted.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::apps::AppRunner;
use crate::gpus::{Gpus, verify};
use zmarket_protocol::gpus::VerificationReport;
use zmarket_protocol::heartbeat::{Ack, Command, CommandBody, HeartbeatResponse};

pub struct Dispatcher {
    runner: AppRunner,
    provisioner: Option<PathBuf>,
    gpus: Arc<Gpus>,
    /// The last verification's report with its number, until a beat carrying it is accepted.
    verification: Mutex<Option<(u64, VerificationReport)>>,
    verifications: AtomicU64,
    /// Acknowledgements of the Z-CLOUD commands carried out, by id (sent again when asked again).
    done: Mutex<HashMap<String, Ack>>,
    running: Mutex<HashSet<String>>,
    acks: Mutex<Vec<Ack>>,
    /// Something waits to be told to the market: beat now.
    pub wake: Notify,
    /// Seconds between beats, as the market last said.
    pub interval: AtomicU64,
    /// A person has bound the device (the market's last answer).
    pub bound: AtomicBool,
}

impl Dispatcher {
    pub fn new(runner: AppRunner, provisioner: Option<PathBuf>, gpus: Arc<Gpus>, interval: u64) -> Arc<Dispatcher> {
        Arc::new(Dispatcher {
            runner,
            provisioner,
            gpus,
            verification: Mutex::new(None),
            verifications: AtomicU64::new(0),
            done: Mutex::new(HashMap::new()),
            running: Mutex::new(HashSet::new()),
            acks: Mutex::new(Vec::new()),
            wake: Notify::new(),
            interval: AtomicU64::new(interval.max(1)),
            bound: AtomicBool::new(false),
        })
    }

    /// The market's answer: its settings and the commands pending for this device.
    pub fn on_answer(self: &Arc<Self>, answer: HeartbeatResponse) {
        if answer.settings.heartbeat_secs > 0 {
            self.interval.store(answer.settings.heartbeat_secs, Ordering::Relaxed);
        }
        // As the market says now: a device unlinked and registered again is not bound.
        self.bound.store(answer.settings.bound, Ordering::Relaxed);
        for cmd in answer.commands {
            self.take(cmd);
        }
    }

    fn take(self: &Arc<Self>, cmd: Command) {
        let body = match cmd.body() {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(id = %cmd.id, kind = %cmd.kind, "command not supported");
                self.ack(Ack { id: cmd.id, ok: false, error: Some(e), reason: None });
                return;
            }
        };
        if body.installation().is_some() {
            self.runner.handle(cmd, body);
            return;
        }
        if let Some(ack) = self.done.lock().unwrap().get(&cmd.id).cloned() {
            self.ack(ack);
            return;
        }
        if !self.running.lock().unwrap().insert(cmd.id.clone()) {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            let as_text = |r: Result<(), String>| r.map_err(|e| (e, None));
            let as_reason = |r: Result<(), zmarket_protocol::apps::Reason>| r.map_err(|e| (e.to_string(), Some(e)));
            let result = match &body {
                CommandBody::ZcloudCreate(m) => as_text(provision(me.provisioner.as_deref(), "create", &m.machine_id, m).await),
                CommandBody::ZcloudDelete(r) => as_text(provision(me.provisioner.as_deref(), "delete", &r.machine_id, r).await),
                // Ok once it ran, whatever it found: the report says how each GPU did.
                CommandBody::GpuVerify(_) => as_text(me.verify().await),
                CommandBody::SnapshotUpload(r) => as_reason(me.runner.upload_snapshot(&r.snapshot_id).await),
                CommandBody::SnapshotDelete(r) => as_reason(me.runner.delete_snapshot(&r.snapshot_id)),
                _ => Err((format!("this agent does not support the command {}", cmd.kind), None)),
            };
            let ack = match result {
                Ok(()) => {
                    tracing::info!(id = %cmd.id, kind = %cmd.kind, "command carried out");
                    Ack { id: cmd.id.clone(), ok: true, error: None, reason: None }
                }
                Err((e, reason)) => {
                    tracing::warn!(id = %cmd.id, kind = %cmd.kind, error = %e, "command failed");
                    Ack { id: cmd.id.clone(), ok: false, error: Some(e), reason }
                }
            };
            {
                let mut done = me.done.lock().unwrap();
                if done.len() > 500 {
                    done.clear();
                }
                done.insert(cmd.id.clone(), ack.clone());
            }
            me.running.lock().unwrap().remove(&cmd.id);
            me.ack(ack);
        });
    }

    fn ack(&self, ack: Ack) {
        self.acks.lock().unwrap().push(ack);
        self.wake.notify_one();
    }

    /// Every acknowledgement waiting for a beat.
    pub fn take_acks(&self) -> Vec<Ack> {
        let mut acks = std::mem::take(&mut *self.acks.lock().unwrap());
        acks.extend(self.runner.take_acks());
        acks
    }

    /// A beat that carried `acks` did not reach the market: they wait for the next one.
    pub fn put_back(&self, acks: Vec<Ack>) {
        self.acks.lock().unwrap().extend(acks);
    }

    /// Verifies the box's GPUs (off the async runtime: a few seconds of copies) and keeps the
    /// report for the next beats; wakes the heartbeat.
    pub async fn verify(&self) -> Result<(), String> {
        let gpus = self.gpus.clone();
        let report = tokio::task::spawn_blocking(move || verify::run(&gpus)).await.map_err(|e| format!("the GPU verification stopped: {e}"))?;
        let n = self.verifications.fetch_add(1, Ordering::Relaxed) + 1;
        *self.verification.lock().unwrap() = Some((n, report));
        self.wake.notify_one();
        Ok(())
    }

    /// The report waiting to go out, with its number (for [`Dispatcher::verification_sent`]).
    pub fn verification(&self) -> Option<(u64, VerificationReport)> {
        self.verification.lock().unwrap().clone()
    }

    /// A beat carrying report `n` was accepted: it is not sent again (a newer one still is).
    pub fn verification_sent(&self, n: u64) {
        let mut v = self.verification.lock().unwrap();
        if v.as_ref().is_some_and(|(m, _)| *m == n) {
            *v = None;
        }
    }
}

/// Runs `<provisioner> create|delete <machine id>` with the command's payload (JSON) on stdin.
async fn provision(provisioner: Option<&Path>, action: &str, machine: &str, payload: &impl serde::Serialize) -> Result<(), String> {
    let Some(program) = provisioner else {
        return Err("no provisioner is configured on this host (set [agent] provisioner or --provisioner)".into());
    };
    if machine.is_empty() {
        return Err("the command names no machine".into());
    }
    let mut child = tokio::process::Command::new(program)
        .arg(action)
        .arg(machine)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start the provisioner {}: {e}", program.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        use tokio::io::AsyncWriteExt;
        let _ = stdin.write_all(serde_json::to_string(payload).unwrap_or_default().as_bytes()).await;
    }
    let out = tokio::time::timeout(Duration::from_secs(1800), child.wait_with_output())
        .await
        .map_err(|_| "the provisioner did not finish within 30 minutes".to_string())?
        .map_err(|e| format!("the provisioner failed: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        Err(if last.is_empty() { format!("the provisioner exited with {}", out.status) } else { last.chars().take(500).collect() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dispatcher(gpus: Gpus) -> (Arc<Dispatcher>, tempfile::TempDir) {
        // As `agent::run` does first (the app runner's HTTP client needs it).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::tempdir().unwrap();
        let opts = crate::apps::AppsOptions {
            server: "http://127.0.0.1:9".into(),
            state_dir: dir.path().to_path_buf(),
            registry_mirror: String::new(),
            docker_socket: String::new(),
            public_host: "127.0.0.1".into(),
            gpu_runtime: false,
        };
        (Dispatcher::new(AppRunner::new(opts, "s"), None, Arc::new(gpus), 5), dir)
    }

    fn answer(commands: Vec<Command>) -> HeartbeatResponse {
        let settings = zmarket_protocol::heartbeat::Settings {
            name: "box".into(),
            sharing_mode: zmarket_protocol::heartbeat::SharingMode::Manual,
            rentable: false,
            price_per_hour: 0,
            bound: true,
            heartbeat_secs: 5,
        };
        HeartbeatResponse { settings, commands }
    }

    /// A `gpu_verify` command is acknowledged once it ran, and its report waits for a beat that
    /// gets through; one sent again is acknowledged again, not run again.
    #[tokio::test]
    async fn a_verification_is_acknowledged_and_reported_until_sent() {
        use zmarket_protocol::gpus::{CheckReason, Gpu};
        let uuid = "GPU-5a1b2c3d-0000-1111-2222-333344445555";
        let gpus = Gpus::listed(vec![Gpu { index: Some(0), uuid: Some(uuid.into()), name: "NVIDIA H200".into(), ..Default::default() }]);
        let (d, _dir) = dispatcher(gpus);
        let cmd = Command { id: "C1".into(), kind: "gpu_verify".into(), payload: serde_json::json!({}) };
        d.on_answer(answer(vec![cmd.clone()]));
        let mut acks = Vec::new();
        for _ in 0..200 {
            acks = d.take_acks();
            if !acks.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(acks, vec![Ack { id: "C1".into(), ok: true, error: None, reason: None }]);
        let (n, report) = d.verification().expect("a report waits for the beat");
        report.check().unwrap();
        assert_eq!(report.gpus.len(), 1);
        assert_eq!((report.gpus[0].uuid.as_str(), report.gpus[0].ok), (uuid, false));
        // This machine has no GPU: the made-up UUID is either not among CUDA's or CUDA is absent.
        assert!(matches!(report.gpus[0].reason, Some(CheckReason::CudaUnavailable | CheckReason::NotFound)));
        // A beat that did not get through keeps it; a stale number does not clear a newer one.
        assert!(d.verification().is_some());
        d.verification_sent(n + 1);
        assert!(d.verification().is_some());
        d.verification_sent(n);
        assert!(d.verification().is_none());
        // Sent again (its acknowledgement was lost): acknowledged again, not measured again.
        d.on_answer(answer(vec![cmd]));
        assert_eq!(d.take_acks().len(), 1);
        assert!(d.verification().is_none());
    }

    #[tokio::test]
    async fn a_box_without_gpus_reports_an_empty_verification() {
        let (d, _dir) = dispatcher(Gpus::none());
        d.verify().await.unwrap();
        let (_, report) = d.verification().unwrap();
        assert!(report.gpus.is_empty());
    }

    #[tokio::test]
    async fn no_provisioner_is_a_clear_failure() {
        let err = provision(None, "create", "M", &serde_json::json!({"machine_id": "M"})).await.unwrap_err();
        assert!(err.contains("no provisioner"));
    }
}
