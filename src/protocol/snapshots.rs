//! The snapshots part of the agent protocol (docs/data.md): a snapshot is one archive
//! (`<id>.tar.zst`: `snapshot.json`, `volumes/<name>/…`, `rootfs/…`) the agent makes of an
//! installation on its box, reports in its beats, copies to the market on request (HTTP PUTs with
//! `Content-Range`, resumable) and restores as a new installation.

use serde::{Deserialize, Serialize};

pub use crate::apps::RestoreRef;
use crate::apps::{Manifest, Reason};

/// The zstd frame's first bytes: every snapshot archive starts with them.
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
/// The archive's description of itself, its first entry.
pub const DESCRIPTION: &str = "snapshot.json";
/// The format of [`Description`] this agent writes.
pub const FORMAT: u32 = 1;
/// The largest piece of an upload (one `PUT`): the agent holds one in memory at a time.
pub const UPLOAD_CHUNK: usize = 8 * 1024 * 1024;
/// Most snapshot reports in one beat.
pub const MAX_REPORTS: usize = 64;

/// Where a snapshot stands (docs/data.md): being made on the box, ready, or failed (its reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SnapshotStatus {
    Creating,
    Ready,
    Failed,
}

impl SnapshotStatus {
    pub const ALL: [SnapshotStatus; 3] = [SnapshotStatus::Creating, SnapshotStatus::Ready, SnapshotStatus::Failed];
}

/// Payload of `snapshot_upload` and `snapshot_delete`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SnapshotRef {
    pub snapshot_id: String,
}

/// A snapshot as the agent reports it in a beat: sent until a beat carrying it is accepted.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SnapshotReport {
    pub id: String,
    pub status: SnapshotStatus,
    /// 0-100 while creating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<i32>,
    /// Bytes of the archive (ready).
    #[serde(default)]
    pub size: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
}

/// What an archive says of itself (`snapshot.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Description {
    pub format: u32,
    pub snapshot_id: String,
    pub installation_id: String,
    pub app_id: String,
    pub manifest: Manifest,
    pub created_at: String,
    /// Paths the container had deleted from its image (not replayed on restore: docs/data.md).
    #[serde(default)]
    pub deleted: Vec<String>,
}

/// The answer to the agent's `GET /api/agent/v1/snapshots/{id}/upload`: how many bytes the market
/// holds of an upload under way (the next `PUT` starts there).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct UploadOffset {
    pub offset: i64,
    pub size: i64,
}

impl SnapshotReport {
    /// Sane sizes for what an agent sent.
    pub fn trimmed(mut self) -> SnapshotReport {
        self.progress = self.progress.map(|p| p.clamp(0, 100));
        self.size = self.size.max(0);
        self.sha256 = self.sha256.filter(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())).map(|s| s.to_ascii_lowercase());
        self.reason = self.reason.map(Reason::trimmed);
        self
    }
}

/// The sha256 of a file (hex), read in pieces: how an archive (an image's or a snapshot's) is
/// checked by the side that receives it.
pub fn sha256_file(path: &std::path::Path) -> std::io::Result<String> {
    use sha2::Digest;
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}
