//! Snapshots on the box (docs/data.md): one archive per snapshot, `<state dir>/snapshots/<id>.tar.zst`,
//! a zstd-compressed tar of `snapshot.json` (how the app ran), `volumes/<name>/…` (the app's data
//! folders) and `rootfs/…` (what the container changed of its image, from Docker's `changes`).
//! Written and read as streams (never held in memory), hashed while written; copied to the
//! market in resumable pieces; unpacked for a restore into a new installation's folders and
//! container.

use std::collections::HashSet;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::containers::Runtime;
use zmarket_protocol::apps::{Reason, ReasonCode};
use zmarket_protocol::snapshots::{DESCRIPTION, Description, FORMAT, UPLOAD_CHUNK, UploadOffset};

pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("snapshots")
}

/// Where snapshot `id`'s archive is kept on the box.
pub fn file(state_dir: &Path, id: &str) -> PathBuf {
    dir(state_dir).join(format!("{id}.tar.zst"))
}

/// A write error as a reason: a full disk is `no_space`, anything else `storage`.
pub fn io_reason(e: &io::Error) -> Reason {
    if e.raw_os_error() == Some(libc::ENOSPC) || e.kind() == io::ErrorKind::StorageFull {
        Reason::new(ReasonCode::NoSpace)
    } else {
        Reason::with_detail(ReasonCode::Storage, e.to_string())
    }
}

/// Bytes free for unprivileged writers on the filesystem of `path`.
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a zeroed struct the call fills.
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// Bytes of the files under `dir` (what a snapshot of it must at most hold, before compression).
pub fn size_of(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    rd.flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => size_of(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// What a snapshot takes of the container's changes: the top paths (an added directory whole, a
/// changed directory through the changes listed inside it), outside the app's volumes and the
/// kernel's filesystems; and the paths it deleted.
pub fn plan(changes: &[(String, u8)], volumes: &[String]) -> (Vec<String>, Vec<String>) {
    let skipped = |p: &str| {
        ["/proc", "/sys", "/dev"].iter().map(|s| s.to_string()).chain(volumes.iter().cloned()).any(|root| p == root || p.starts_with(&format!("{root}/")))
    };
    let mut paths: Vec<&(String, u8)> = changes.iter().filter(|(p, _)| p.starts_with('/') && !skipped(p)).collect();
    paths.sort();
    let mut parents = HashSet::new();
    for (p, _) in &paths {
        let mut at = Path::new(p.as_str()).parent();
        while let Some(a) = at {
            parents.insert(a.to_string_lossy().to_string());
            at = a.parent();
        }
    }
    let (mut take, mut deleted) = (Vec::new(), Vec::new());
    let mut whole: HashSet<String> = HashSet::new();
    for (p, kind) in paths {
        let inside_whole = Path::new(p.as_str()).ancestors().skip(1).any(|a| whole.contains(a.to_string_lossy().as_ref()));
        if inside_whole {
            continue;
        }
        match kind {
            2 => deleted.push(p.clone()),
            // A changed directory: what changed in it is listed on its own.
            0 if parents.contains(p.as_str()) => {}
            k => {
                if *k == 1 {
                    whole.insert(p.clone());
                }
                take.push(p.clone());
            }
        }
    }
    (take, deleted)
}

/// Counts and hashes what goes through to the file.
struct Hashing<W> {
    inner: W,
    hash: Sha256,
    written: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Counts what is read of a volume's files (the progress of a snapshot).
struct Counting<'a, R> {
    inner: R,
    seen: &'a dyn Fn(u64),
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        (self.seen)(n as u64);
        Ok(n)
    }
}

/// What goes into an archive.
pub struct Contents<'a> {
    pub description: &'a Description,
    /// Each volume's name and its folder on the box.
    pub volumes: Vec<(String, PathBuf)>,
    /// The container and the paths of it to take (from [`plan`]).
    pub container: &'a str,
    pub rootfs: Vec<String>,
}

/// Writes the archive to `out` (through `out.part`, renamed once whole): answers its size and
/// sha256. Blocking: run it off the async runtime; the container's paths are read from Docker
/// through `handle`. `read` is told the bytes of volume files read so far.
pub fn write(out: &Path, c: &Contents<'_>, rt: Option<&Runtime>, handle: tokio::runtime::Handle, read: &dyn Fn(u64)) -> io::Result<(u64, String)> {
    use futures::TryStreamExt;
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d)?;
    }
    let part = out.with_extension("part");
    let result = (|| {
        let f = std::fs::File::create(&part)?;
        let hashing = Hashing { inner: BufWriter::with_capacity(1 << 20, f), hash: Sha256::new(), written: 0 };
        let enc = zstd::Encoder::new(hashing, 3)?;
        let mut tar = tar::Builder::new(enc);
        tar.follow_symlinks(false);
        let json = serde_json::to_vec_pretty(c.description).map_err(io::Error::other)?;
        let mut h = made(tar::EntryType::Regular, 0o644, json.len() as u64);
        tar.append_data(&mut h, DESCRIPTION, &json[..])?;
        for (name, folder) in &c.volumes {
            let base = format!("volumes/{name}");
            if !folder.is_dir() {
                let mut h = made(tar::EntryType::Directory, 0o755, 0);
                tar.append_data(&mut h, &base, io::empty())?;
                continue;
            }
            append_tree(&mut tar, folder, Path::new(&base), read)?;
        }
        for path in &c.rootfs {
            let rt = rt.ok_or_else(|| io::Error::other("no container runtime to read the container's changes"))?;
            let stream = rt.download(c.container, path).map_err(io::Error::other);
            let reader = tokio_util::io::SyncIoBridge::new_with_handle(tokio_util::io::StreamReader::new(stream), handle.clone());
            let parent = Path::new(path).parent().unwrap_or(Path::new("/")).to_string_lossy().trim_start_matches('/').to_string();
            let prefix = if parent.is_empty() { PathBuf::from("rootfs") } else { Path::new("rootfs").join(&parent) };
            let mut from = tar::Archive::new(BufReader::with_capacity(256 * 1024, reader));
            for e in from.entries()? {
                let mut e = e?;
                let rel = e.path()?.into_owned();
                let dest = prefix.join(&rel);
                let mut h = e.header().clone();
                match h.entry_type() {
                    tar::EntryType::Symlink => {
                        let target = e.link_name()?.map(|t| t.into_owned()).unwrap_or_default();
                        tar.append_link(&mut h, &dest, &target)?;
                    }
                    tar::EntryType::Link => {
                        let target = e.link_name()?.map(|t| prefix.join(t)).unwrap_or_default();
                        tar.append_link(&mut h, &dest, &target)?;
                    }
                    _ => tar.append_data(&mut h, &dest, &mut e)?,
                }
            }
        }
        let enc = tar.into_inner()?;
        let mut hashing = enc.finish()?;
        hashing.flush()?;
        let (size, sha) = (hashing.written, hex::encode(hashing.hash.finalize()));
        hashing.inner.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        Ok((size, sha))
    })();
    match result {
        Ok(done) => {
            std::fs::rename(&part, out)?;
            Ok(done)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&part);
            Err(e)
        }
    }
}

/// The header of an entry the agent makes itself (root's, now).
fn made(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(chrono::Utc::now().timestamp().max(0) as u64);
    h
}

/// A volume folder into the tar as `base/…`: folders, files (counted as read), symbolic links;
/// sockets and other special files are left out.
fn append_tree<W: Write>(tar: &mut tar::Builder<W>, folder: &Path, base: &Path, read: &dyn Fn(u64)) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(folder)?;
    let mut h = tar::Header::new_gnu();
    h.set_metadata(&meta);
    h.set_size(0);
    tar.append_data(&mut h, base, io::empty())?;
    let mut entries: Vec<_> = std::fs::read_dir(folder)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let name = base.join(e.file_name());
        let meta = std::fs::symlink_metadata(&path)?;
        let t = meta.file_type();
        if t.is_dir() {
            append_tree(tar, &path, &name, read)?;
        } else if t.is_symlink() {
            let mut h = tar::Header::new_gnu();
            h.set_metadata(&meta);
            h.set_size(0);
            tar.append_link(&mut h, &name, std::fs::read_link(&path)?)?;
        } else if t.is_file() {
            let mut h = tar::Header::new_gnu();
            h.set_metadata(&meta);
            let f = std::fs::File::open(&path)?;
            tar.append_data(&mut h, &name, Counting { inner: BufReader::with_capacity(256 * 1024, f), seen: read })?;
        }
    }
    Ok(())
}

/// Unpacks an archive for a new installation: its volumes into `volume_root` (replaced whole) and
/// the container's changes into a plain tar at `rootfs_out` (for [`Runtime::upload`] once the
/// container exists). Answers the description and whether the container had changes.
pub fn unpack(archive: &Path, volume_root: &Path, rootfs_out: &Path) -> io::Result<(Description, bool)> {
    let staging = volume_root.with_extension("restoring");
    if staging.exists() {
        std::fs::remove_dir_all(&staging)?;
    }
    std::fs::create_dir_all(&staging)?;
    let dec = zstd::Decoder::new(std::fs::File::open(archive)?)?;
    let mut from = tar::Archive::new(dec);
    let root = unsafe { libc::geteuid() } == 0;
    from.set_preserve_permissions(true);
    from.set_preserve_ownerships(root);
    from.set_preserve_mtime(true);
    let mut rootfs = tar::Builder::new(BufWriter::with_capacity(1 << 20, std::fs::File::create(rootfs_out)?));
    rootfs.follow_symlinks(false);
    let (mut description, mut changed) = (None, false);
    for e in from.entries()? {
        let mut e = e?;
        let path = e.path()?.into_owned();
        if path == Path::new(DESCRIPTION) {
            let mut text = String::new();
            e.take(1 << 20).read_to_string(&mut text)?;
            description = Some(serde_json::from_str::<Description>(&text).map_err(io::Error::other)?);
        } else if path.starts_with("volumes") {
            // unpack_in refuses paths that leave the folder (`..`, absolute ones).
            e.unpack_in(&staging)?;
        } else if let Ok(rel) = path.strip_prefix("rootfs") {
            if rel.as_os_str().is_empty() {
                continue;
            }
            let mut h = e.header().clone();
            match h.entry_type() {
                tar::EntryType::Symlink => {
                    let target = e.link_name()?.map(|t| t.into_owned()).unwrap_or_default();
                    rootfs.append_link(&mut h, rel, &target)?;
                }
                tar::EntryType::Link => {
                    let target = e.link_name()?.and_then(|t| t.strip_prefix("rootfs").ok().map(Path::to_path_buf)).unwrap_or_default();
                    rootfs.append_link(&mut h, rel, &target)?;
                }
                _ => rootfs.append_data(&mut h, rel, &mut e)?,
            }
            changed = true;
        }
    }
    rootfs.into_inner()?.flush()?;
    let description = description.ok_or_else(|| io::Error::other("the archive has no snapshot.json"))?;
    if description.format > FORMAT {
        return Err(io::Error::other(format!("the archive's format {} is newer than this agent's ({FORMAT})", description.format)));
    }
    if volume_root.exists() {
        std::fs::remove_dir_all(volume_root)?;
    }
    if let Some(parent) = volume_root.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let volumes = staging.join("volumes");
    if volumes.exists() {
        std::fs::rename(&volumes, volume_root)?;
    } else {
        std::fs::create_dir_all(volume_root)?;
    }
    std::fs::remove_dir_all(&staging)?;
    Ok((description, changed))
}

pub use zmarket_protocol::snapshots::sha256_file as hash;

/// Where the market's copy of snapshot `id` stands. `Err(Some(status))`: the market answered
/// otherwise (a client error is final); `Err(None)`: no answer, or an unreadable one (worth a retry).
pub async fn market_offset(client: &reqwest::Client, server: &str, secret: &str, id: &str) -> Result<UploadOffset, (Option<reqwest::StatusCode>, String)> {
    let res = client.get(format!("{server}/api/agent/v1/snapshots/{id}/upload")).bearer_auth(secret).send().await.map_err(|e| (None, e.to_string()))?;
    let status = res.status();
    if !status.is_success() {
        return Err((Some(status), format!("the market answered {}", status.as_u16())));
    }
    res.json::<crate::Envelope<UploadOffset>>().await.map(|e| e.data).map_err(|e| (None, e.to_string()))
}

/// Copies snapshot `id`'s archive at `file` to the market, in pieces of [`UPLOAD_CHUNK`] bytes
/// from where the market's copy stands (an interrupted copy goes on from there). The market
/// checks the sha256 once it is whole: a mismatch starts over once, then fails
/// (`checksum_mismatch`). Network failures are retried with back-off for about ten minutes.
pub async fn upload(client: &reqwest::Client, server: &str, secret: &str, id: &str, file: &Path) -> Result<(), Reason> {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let base = format!("{server}/api/agent/v1/snapshots/{id}");
    let total = tokio::fs::metadata(file).await.map_err(|_| Reason::new(ReasonCode::SnapshotMissing))?.len();
    let (mut mismatches, mut failures) = (0u32, 0u32);
    let mut buf = vec![0u8; UPLOAD_CHUNK];
    let retry = |failures: &mut u32, why: String| {
        *failures += 1;
        if *failures > 20 {
            return Err(Reason::with_detail(ReasonCode::Other, format!("copying the snapshot to the market: {why}")));
        }
        tracing::warn!(snapshot = id, error = %why, "copying a snapshot to the market: retrying");
        Ok(Duration::from_secs(u64::from(*failures).min(30)))
    };
    loop {
        let at = match market_offset(client, server, secret, id).await {
            Ok(at) => at,
            Err((Some(s), _)) if s.is_client_error() => {
                return Err(Reason::with_detail(ReasonCode::Other, format!("the market refused the copy ({})", s.as_u16())));
            }
            Err((_, why)) => {
                tokio::time::sleep(retry(&mut failures, why)?).await;
                continue;
            }
        };
        let offset = at.offset.max(0) as u64;
        if offset >= total {
            return Ok(());
        }
        let mut f = tokio::fs::File::open(file).await.map_err(|_| Reason::new(ReasonCode::SnapshotMissing))?;
        f.seek(std::io::SeekFrom::Start(offset)).await.map_err(|e| io_reason(&e))?;
        let want = ((total - offset) as usize).min(UPLOAD_CHUNK);
        f.read_exact(&mut buf[..want]).await.map_err(|e| io_reason(&e))?;
        let range = format!("bytes {offset}-{}/{total}", offset + want as u64 - 1);
        let sent = client
            .put(format!("{base}/data"))
            .bearer_auth(secret)
            .header(reqwest::header::CONTENT_RANGE, range)
            .header(reqwest::header::CONTENT_TYPE, "application/zstd")
            .body(buf[..want].to_vec())
            .send()
            .await;
        match sent {
            Ok(r) if r.status().is_success() => failures = 0,
            // Another offset than ours: ask again where the market's copy stands.
            Ok(r) if r.status() == reqwest::StatusCode::CONFLICT => {}
            Ok(r) if r.status() == reqwest::StatusCode::UNPROCESSABLE_ENTITY => {
                mismatches += 1;
                tracing::warn!(snapshot = id, "the market's copy did not match the snapshot's sha256");
                if mismatches >= 2 {
                    return Err(Reason::new(ReasonCode::ChecksumMismatch));
                }
            }
            Ok(r) if r.status().is_client_error() => {
                return Err(Reason::with_detail(ReasonCode::Other, format!("the market refused the copy ({})", r.status().as_u16())));
            }
            Ok(r) => tokio::time::sleep(retry(&mut failures, format!("the market answered {}", r.status().as_u16()))?).await,
            Err(e) => tokio::time::sleep(retry(&mut failures, e.to_string())?).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_takes_top_changes_outside_the_volumes() {
        let changes: Vec<(String, u8)> = [
            ("/etc", 0),
            ("/etc/app.conf", 0),
            ("/opt", 1),
            ("/opt/tool", 1),
            ("/opt/tool/bin", 1),
            ("/data", 1),
            ("/data/x", 1),
            ("/usr", 0),
            ("/usr/share", 0),
            ("/usr/share/doc", 2),
            ("/proc", 0),
            ("/tmp", 0),
            ("/tmp/cache", 1),
            ("/root/.profile", 0),
        ]
        .iter()
        .map(|(p, k)| (p.to_string(), *k))
        .collect();
        let (take, deleted) = plan(&changes, &["/data".to_string()]);
        assert_eq!(take, vec!["/etc/app.conf", "/opt", "/root/.profile", "/tmp/cache"]);
        assert_eq!(deleted, vec!["/usr/share/doc"]);
    }

    /// Volumes written, archived, unpacked elsewhere: the same bytes, modes and links; a
    /// traversal in a made-up archive stays inside the folder.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn volumes_survive_an_archive_and_its_unpacking() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("src/data");
        std::fs::create_dir_all(data.join("sub")).unwrap();
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        std::fs::write(data.join("sub/big.bin"), &big).unwrap();
        std::fs::write(data.join("note.txt"), b"hello").unwrap();
        std::os::unix::fs::symlink("note.txt", data.join("link")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(data.join("note.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
        let desc = Description {
            format: FORMAT,
            snapshot_id: "S1".into(),
            installation_id: "I1".into(),
            app_id: "app".into(),
            manifest: serde_json::from_str(r#"{"image":"zmarket-test/httpd:1"}"#).unwrap(),
            created_at: "2026-11-29T00:00:00Z".into(),
            deleted: vec![],
        };
        let out = dir.path().join("S1.tar.zst");
        let c = Contents { description: &desc, volumes: vec![("data".into(), data.clone()), ("empty".into(), dir.path().join("none"))], container: "x", rootfs: vec![] };
        let seen = std::sync::atomic::AtomicU64::new(0);
        let handle = tokio::runtime::Handle::current();
        let (size, sha) = tokio::task::block_in_place(|| {
            write(&out, &c, None, handle, &|n| {
                seen.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            })
        })
        .unwrap();
        assert_eq!(std::fs::metadata(&out).unwrap().len(), size);
        assert_eq!(hash(&out).unwrap(), sha);
        assert_eq!(std::fs::read(&out).unwrap()[..4], zmarket_protocol::snapshots::ZSTD_MAGIC);
        assert_eq!(seen.load(std::sync::atomic::Ordering::Relaxed), big.len() as u64 + 5);
        assert!(size < big.len() as u64, "compressed");
        let root = dir.path().join("dst/I2");
        let (d, changed) = unpack(&out, &root, &dir.path().join("rootfs.tar")).unwrap();
        assert_eq!(d, desc);
        assert!(!changed);
        assert_eq!(std::fs::read(root.join("data/sub/big.bin")).unwrap(), big);
        assert_eq!(std::fs::read(root.join("data/note.txt")).unwrap(), b"hello");
        assert_eq!(std::fs::metadata(root.join("data/note.txt")).unwrap().permissions().mode() & 0o777, 0o640);
        assert_eq!(std::fs::read_link(root.join("data/link")).unwrap(), Path::new("note.txt"));
        assert!(root.join("empty").is_dir());
        assert!(!dir.path().join("dst/I2.restoring").exists());
    }
}
