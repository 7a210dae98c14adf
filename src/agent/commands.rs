//! Carries out the market's commands, whichever way they came (a heartbeat's answer over HTTP
//! or the channel): `app_*` commands go to the app runner (apps.rs), Z-CLOUD commands to the
//! host's provisioner. A command is carried out once: one sent again (its acknowledgement was
//! lost) is acknowledged again, never run twice. Acknowledgements wait for the next beat.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::agent::apps::AppRunner;
use crate::protocol::heartbeat::{Ack, Command, CommandBody, HeartbeatResponse};

pub struct Dispatcher {
    runner: AppRunner,
    provisioner: Option<PathBuf>,
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
    pub fn new(runner: AppRunner, provisioner: Option<PathBuf>, interval: u64) -> Arc<Dispatcher> {
        Arc::new(Dispatcher {
            runner,
            provisioner,
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
            let result = match &body {
                CommandBody::ZcloudCreate(m) => provision(me.provisioner.as_deref(), "create", &m.machine_id, m).await,
                CommandBody::ZcloudDelete(r) => provision(me.provisioner.as_deref(), "delete", &r.machine_id, r).await,
                _ => Err(format!("this agent does not support the command {}", cmd.kind)),
            };
            let ack = match result {
                Ok(()) => {
                    tracing::info!(id = %cmd.id, kind = %cmd.kind, "command carried out");
                    Ack { id: cmd.id.clone(), ok: true, error: None, reason: None }
                }
                Err(e) => {
                    tracing::warn!(id = %cmd.id, kind = %cmd.kind, error = %e, "command failed");
                    Ack { id: cmd.id.clone(), ok: false, error: Some(e), reason: None }
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

    #[tokio::test]
    async fn no_provisioner_is_a_clear_failure() {
        let err = provision(None, "create", "M", &serde_json::json!({"machine_id": "M"})).await.unwrap_err();
        assert!(err.contains("no provisioner"));
    }
}
