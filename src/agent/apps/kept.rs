//! The app runner's snapshots (docs/data.md): taking one of an installation (stopped for a
//! consistent copy unless its manifest allows a live one), reporting it in the beats until the
//! market has it, copying it to the market, removing it, and a restore's data for a new
//! installation. The archive itself: agent::snapshots.

use std::path::PathBuf;
use std::time::Duration;

use bollard::models::ContainerStateStatusEnum as St;

use super::{AppRunner, Known, container};
use crate::containers::Runtime;
use crate::{fetch, snapshots};
use zmarket_protocol::apps::{AppStatus, Reason, ReasonCode};
use zmarket_protocol::snapshots::{Description, RestoreRef, SnapshotReport, SnapshotStatus};

impl AppRunner {
    /// Takes snapshot `sid` of installation `id` (docs/data.md): the app is stopped for a
    /// consistent copy (unless its manifest says a live one is safe) and, when `restart`, started
    /// again as it was. Everything about the snapshot itself (a full disk, a Docker error) is in
    /// its report; only an app that does not come back is this call's error.
    pub(super) async fn snapshot(&self, rt: &Runtime, id: &str, sid: &str, k: &Known, restart: bool) -> Result<(), Reason> {
        let fail = |r: Reason| SnapshotReport { id: sid.to_string(), status: SnapshotStatus::Failed, progress: None, size: 0, sha256: None, reason: Some(r) };
        if !valid_id(sid) {
            self.report_snapshot(fail(Reason::with_detail(ReasonCode::Other, "not a snapshot id")));
            return Ok(());
        }
        self.report_snapshot(SnapshotReport { id: sid.to_string(), status: SnapshotStatus::Creating, progress: Some(0), size: 0, sha256: None, reason: None });
        let name = container(id);
        let seen = match rt.inspect(&name).await {
            Ok(Some(s)) => s,
            Ok(None) => {
                self.report_snapshot(fail(Reason::new(ReasonCode::ContainerGone)));
                return Ok(());
            }
            Err(e) => {
                self.report_snapshot(fail(e));
                return Ok(());
            }
        };
        let root = self.volume_root(id);
        let volumes: Vec<(String, PathBuf)> = k.manifest.volumes.iter().map(|v| (v.name.clone(), root.join(&v.name))).collect();
        let estimate: u64 = volumes.iter().map(|(_, d)| snapshots::size_of(d)).sum();
        let out = snapshots::file(&self.0.opts.state_dir, sid);
        let _ = std::fs::create_dir_all(snapshots::dir(&self.0.opts.state_dir));
        // Room for the data (uncompressed, the worst case) and a margin: else nothing is stopped.
        if snapshots::free_bytes(&snapshots::dir(&self.0.opts.state_dir)).is_some_and(|free| free < estimate + 64 * 1024 * 1024) {
            self.report_snapshot(fail(Reason::new(ReasonCode::NoSpace)));
            return Ok(());
        }
        let was_running = matches!(seen.state, St::RUNNING | St::PAUSED);
        let stop = was_running && !k.manifest.live_snapshot;
        if stop {
            if seen.state == St::PAUSED {
                rt.unpause(&name).await?;
            }
            rt.keep_running(&name, false).await?;
            rt.stop(&name).await?;
        }
        let made = async {
            let changes = rt.changes(&name).await?;
            let (rootfs, deleted) = snapshots::plan(&changes, &k.manifest.volumes.iter().map(|v| v.path.clone()).collect::<Vec<_>>());
            let description = Description {
                format: zmarket_protocol::snapshots::FORMAT,
                snapshot_id: sid.to_string(),
                installation_id: id.to_string(),
                app_id: k.app_id.clone(),
                manifest: k.manifest.clone(),
                created_at: chrono::Utc::now().to_rfc3339(),
                deleted,
            };
            let (me, rt2, name2, out2, sid2) = (self.clone(), rt.clone(), name.clone(), out.clone(), sid.to_string());
            let handle = tokio::runtime::Handle::current();
            tokio::task::spawn_blocking(move || {
                let read = std::sync::atomic::AtomicU64::new(0);
                let last = std::sync::atomic::AtomicI32::new(-1);
                let c = snapshots::Contents { description: &description, volumes, container: &name2, rootfs };
                snapshots::write(&out2, &c, Some(&rt2), handle, &|n| {
                    let total = read.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
                    let pc = ((total * 99) / estimate.max(1)).min(99) as i32;
                    if last.swap(pc, std::sync::atomic::Ordering::Relaxed) != pc {
                        me.report_snapshot(SnapshotReport { id: sid2.clone(), status: SnapshotStatus::Creating, progress: Some(pc), size: 0, sha256: None, reason: None });
                    }
                })
            })
            .await
            .map_err(|e| Reason::with_detail(ReasonCode::Other, e.to_string()))?
            .map_err(|e| snapshots::io_reason(&e))
        }
        .await;
        match made {
            Ok((size, sha)) => {
                tracing::info!(snapshot = sid, installation = id, size, "snapshot made");
                self.report_snapshot(SnapshotReport { id: sid.to_string(), status: SnapshotStatus::Ready, progress: None, size: size as i64, sha256: Some(sha), reason: None });
            }
            Err(r) => {
                tracing::warn!(snapshot = sid, installation = id, reason = %r, "snapshot failed");
                self.report_snapshot(fail(r));
            }
        }
        if stop && restart {
            rt.start(&name).await?;
            self.healthy(rt, &name, Some(&k.manifest)).await?;
            rt.keep_running(&name, true).await?;
        }
        Ok(())
    }

    pub(super) fn report_snapshot(&self, r: SnapshotReport) {
        let n = self.0.snap_seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        self.0.snaps.lock().unwrap().insert(r.id.clone(), (n, r));
        self.0.wake.notify_one();
    }

    /// The snapshot reports waiting for a beat, with their numbers (for [`AppRunner::snapshots_sent`]).
    pub fn snapshot_reports(&self) -> Vec<(u64, SnapshotReport)> {
        self.0.snaps.lock().unwrap().values().take(zmarket_protocol::snapshots::MAX_REPORTS).cloned().collect()
    }

    /// A beat carrying these reports was accepted: they are not sent again (a newer one is).
    pub fn snapshots_sent(&self, sent: &[(u64, SnapshotReport)]) {
        let mut snaps = self.0.snaps.lock().unwrap();
        for (n, r) in sent {
            if snaps.get(&r.id).is_some_and(|(m, _)| m == n) {
                snaps.remove(&r.id);
            }
        }
    }

    /// A restore's data for new installation `id`: the archive (this box's own copy, else the
    /// market's, once the market holds all of it), its volumes unpacked into the installation's
    /// folders; answers the tar of the container's changes to put in once it is created.
    pub(super) async fn restore_data(&self, id: &str, r: &RestoreRef) -> Result<Option<PathBuf>, Reason> {
        if !valid_id(&r.snapshot_id) {
            return Err(Reason::with_detail(ReasonCode::Other, "not a snapshot id"));
        }
        let state = &self.0.opts.state_dir;
        let archive = snapshots::file(state, &r.snapshot_id);
        let local = archive.clone();
        let have = tokio::task::spawn_blocking(move || local.exists().then(|| snapshots::hash(&local).ok()).flatten()).await.ok().flatten();
        if have.as_deref() != Some(r.sha256.as_str()) {
            let _ = std::fs::remove_file(&archive);
            self.await_market_copy(id, r).await?;
            let url = format!("{}{}", self.0.opts.server, r.path);
            let secret = self.0.secret.lock().unwrap().clone();
            let size = r.size.max(1) as u64;
            let mut tries = 0;
            loop {
                let got = fetch::download(&self.0.client, &url, &secret, &archive, &r.sha256, size, |n| {
                    self.set_live(id, AppStatus::Downloading, Some(((n * 100) / size).min(100) as i32))
                })
                .await;
                match got {
                    Ok(()) => break,
                    Err(e) if e.contains("sha256") && tries == 0 => tries += 1,
                    Err(e) if e.contains("sha256") => return Err(Reason::with_detail(ReasonCode::ChecksumMismatch, e)),
                    Err(e) => return Err(Reason::with_detail(ReasonCode::ArchiveFailed, e)),
                }
            }
        }
        self.set_live(id, AppStatus::Installing, Some(30));
        let (root, tar) = (self.volume_root(id), snapshots::dir(state).join(format!("{id}.rootfs.tar")));
        let (root2, tar2, archive2) = (root.clone(), tar.clone(), archive.clone());
        let (_, changed) = tokio::task::spawn_blocking(move || snapshots::unpack(&archive2, &root2, &tar2))
            .await
            .map_err(|e| Reason::with_detail(ReasonCode::Other, e.to_string()))?
            .map_err(|e| snapshots::io_reason(&e))?;
        if !changed {
            let _ = std::fs::remove_file(&tar);
        }
        Ok(changed.then_some(tar))
    }

    /// Waits (up to an hour, `downloading` at 0 %) while the market is still receiving the
    /// snapshot from the box that made it.
    async fn await_market_copy(&self, id: &str, r: &RestoreRef) -> Result<(), Reason> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(3600);
        loop {
            let secret = self.0.secret.lock().unwrap().clone();
            match snapshots::market_offset(&self.0.client, &self.0.opts.server, &secret, &r.snapshot_id).await {
                Ok(at) if at.size > 0 && at.offset >= at.size => return Ok(()),
                Err((Some(s), _)) if s.is_client_error() => {
                    return Err(Reason::with_detail(ReasonCode::ArchiveFailed, format!("the market answered {} for the snapshot", s.as_u16())));
                }
                _ => {}
            }
            if tokio::time::Instant::now() > deadline {
                return Err(Reason { code: ReasonCode::TimedOut, state: Some(AppStatus::Downloading), secs: Some(3600), ..Default::default() });
            }
            self.set_live(id, AppStatus::Downloading, Some(0));
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }

    /// Copies snapshot `sid` to the market (`snapshot_upload`).
    pub async fn upload_snapshot(&self, sid: &str) -> Result<(), Reason> {
        if !valid_id(sid) {
            return Err(Reason::with_detail(ReasonCode::Other, "not a snapshot id"));
        }
        let file = snapshots::file(&self.0.opts.state_dir, sid);
        let secret = self.0.secret.lock().unwrap().clone();
        snapshots::upload(&self.0.client, &self.0.opts.server, &secret, sid, &file).await
    }

    /// Removes snapshot `sid`'s archive from the box (`snapshot_delete`); one already gone is fine.
    pub fn delete_snapshot(&self, sid: &str) -> Result<(), Reason> {
        if !valid_id(sid) {
            return Err(Reason::with_detail(ReasonCode::Other, "not a snapshot id"));
        }
        let file = snapshots::file(&self.0.opts.state_dir, sid);
        let _ = std::fs::remove_file(file.with_extension("part"));
        match std::fs::remove_file(&file) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(snapshots::io_reason(&e)),
        }
    }
}

/// A snapshot id as the market makes them: letters, digits, `-` and `_` (it names a file).
fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}
