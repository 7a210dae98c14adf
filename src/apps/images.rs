//! Image archives the market server holds for agents (`zmarket images add FILE.tar`): a market on
//! a LAN with no internet still installs apps. An archive is a `docker save` tar; it is stored as
//! `<data_dir>/images/<sha256>.tar` and listed by digest with the image references it holds.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use sea_orm::{ActiveModelTrait, ConnectionTrait, EntityTrait, QueryOrder, Set};
use sha2::{Digest, Sha256};

use crate::db::entity::app_images;

pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("images")
}

/// The image references ("repo:tag") named by the archive's top-level `manifest.json`.
pub fn tags_in_archive(path: &Path) -> anyhow::Result<Vec<String>> {
    let mut f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut header = [0u8; 512];
    loop {
        f.read_exact(&mut header).context("not a tar archive (docker save) with a manifest.json")?;
        if header.iter().all(|b| *b == 0) {
            bail!("the archive has no manifest.json: make it with `docker save`");
        }
        let name = String::from_utf8_lossy(&header[..100]).trim_end_matches('\0').to_string();
        let size_text = String::from_utf8_lossy(&header[124..136]).trim_matches(|c: char| c == '\0' || c == ' ').to_string();
        let size = u64::from_str_radix(&size_text, 8).with_context(|| format!("bad tar header for {name}"))?;
        if name == "manifest.json" || name == "./manifest.json" {
            if size > 1 << 20 {
                bail!("the archive's manifest.json is larger than 1 MiB: not a `docker save` archive");
            }
            let mut buf = vec![0u8; size as usize];
            f.read_exact(&mut buf)?;
            let v: serde_json::Value = serde_json::from_slice(&buf).context("manifest.json is not JSON")?;
            let tags: Vec<String> = v
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|m| m["RepoTags"].as_array().cloned().unwrap_or_default())
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect();
            if tags.is_empty() {
                bail!("the archive's images have no name: tag them before `docker save`");
            }
            return Ok(tags);
        }
        let skip = size.div_ceil(512) * 512;
        f.seek(SeekFrom::Current(skip as i64))?;
    }
}

pub fn sha256_of(path: &Path) -> anyhow::Result<(String, u64)> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
    Ok((hex::encode(h.finalize()), n))
}

/// Adds an archive (copied into the data dir); adding the same archive again changes nothing.
pub async fn add(db: &impl ConnectionTrait, data_dir: &Path, file: &Path) -> anyhow::Result<app_images::Model> {
    let tags = tags_in_archive(file)?;
    let (sha, size) = sha256_of(file)?;
    store(db, data_dir, file, Checked { tags, sha256: sha, size }, Placement::Copy).await
}

/// What [`tags_in_archive`] and the digest found in an archive.
#[derive(Debug, Clone)]
pub struct Checked {
    pub tags: Vec<String>,
    pub sha256: String,
    pub size: u64,
}

/// How [`store`] puts the file in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The file stays where it is (the command line's `images add`).
    Copy,
    /// The file is a temporary file inside [`dir`] (an upload): renamed into place, or removed
    /// when the store already holds the archive.
    Move,
}

/// Keeps a checked archive as `<sha256>.tar` and lists it; an archive the store already holds
/// changes nothing.
pub async fn store(db: &impl ConnectionTrait, data_dir: &Path, file: &Path, archive: Checked, how: Placement) -> anyhow::Result<app_images::Model> {
    let Checked { tags, sha256: sha, size } = archive;
    if let Some(m) = app_images::Entity::find_by_id(sha.clone()).one(db).await? {
        if how == Placement::Move {
            let _ = std::fs::remove_file(file);
        }
        return Ok(m);
    }
    let dir = dir(data_dir);
    std::fs::create_dir_all(&dir)?;
    let name = format!("{sha}.tar");
    match how {
        Placement::Copy => {
            let tmp = dir.join(format!("{name}.part"));
            std::fs::copy(file, &tmp).with_context(|| format!("copying {} into {}", file.display(), dir.display()))?;
            std::fs::rename(&tmp, dir.join(&name))?;
        }
        Placement::Move => std::fs::rename(file, dir.join(&name))?,
    }
    let row = app_images::ActiveModel {
        sha256: Set(sha.clone()),
        tags: Set(serde_json::to_string(&tags)?),
        size_bytes: Set(size as i64),
        file: Set(name),
        created_at: Set(crate::db::now()),
    }
    .insert(db)
    .await;
    match row {
        Ok(m) => Ok(m),
        // The same archive stored at the same moment by another upload: theirs is ours.
        Err(e) => app_images::Entity::find_by_id(sha).one(db).await?.ok_or_else(|| e.into()),
    }
}

/// An archive as the store lists it: its digest, size and the image references it holds (`tags`,
/// JSON).
pub type Archive = app_images::Model;

/// Every archive, oldest first.
pub async fn list(db: &impl ConnectionTrait) -> anyhow::Result<Vec<app_images::Model>> {
    Ok(app_images::Entity::find().order_by_asc(app_images::Column::CreatedAt).all(db).await?)
}

/// The stored file of an archive, when the server holds it.
pub async fn file_of(db: &impl ConnectionTrait, data_dir: &Path, sha256: &str) -> anyhow::Result<Option<PathBuf>> {
    if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    Ok(app_images::Entity::find_by_id(sha256.to_ascii_lowercase()).one(db).await?.map(|m| dir(data_dir).join(m.file)))
}
