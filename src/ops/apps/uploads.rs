//! Receiving an image archive: the multipart `file` streamed into a temporary file inside the
//! image store's directory (hashed as it arrives, never whole in memory), refused with 413 the
//! moment it passes `[apps] max_image_bytes` and with 415 when it is not a `docker save` tar;
//! a refused or abandoned upload leaves nothing behind (the temporary file is removed on drop).

use std::path::{Path, PathBuf};

use axum::extract::Multipart;
use sea_orm::ConnectionTrait;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use crate::apps::images::{self, Checked, Placement};
use crate::error::{AppError, Msg};

/// An archive received into a temporary file (removed when dropped, unless stored).
pub struct Received {
    path: PathBuf,
    sha256: String,
    size: u64,
}

impl Drop for Received {
    fn drop(&mut self) {
        // Gone already once stored (renamed): nothing to do then.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads the form's `file` field into `<data_dir>/images/.upload-<id>.part`.
pub async fn receive(form: &mut Multipart, data_dir: &Path, max: u64) -> Result<Received, AppError> {
    let too_large = || AppError::Refused(Msg::ImageArchiveTooLarge(max));
    let broken = |e: axum::extract::multipart::MultipartError| {
        if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE { too_large() } else { AppError::invalid("file", Msg::ImageArchiveMissing) }
    };
    while let Some(mut field) = form.next_field().await.map_err(broken)? {
        if field.name() != Some("file") {
            continue;
        }
        let dir = images::dir(data_dir);
        tokio::fs::create_dir_all(&dir).await.map_err(|e| AppError::Internal(e.into()))?;
        let mut received = Received { path: dir.join(format!(".upload-{}.part", crate::db::new_id())), sha256: String::new(), size: 0 };
        let mut file = tokio::fs::File::create(&received.path).await.map_err(|e| AppError::Internal(e.into()))?;
        let mut hash = Sha256::new();
        while let Some(chunk) = field.chunk().await.map_err(broken)? {
            received.size += chunk.len() as u64;
            if received.size > max {
                return Err(too_large());
            }
            hash.update(&chunk);
            file.write_all(&chunk).await.map_err(|e| AppError::Internal(e.into()))?;
        }
        file.flush().await.map_err(|e| AppError::Internal(e.into()))?;
        file.sync_all().await.map_err(|e| AppError::Internal(e.into()))?;
        if received.size == 0 {
            return Err(AppError::invalid("file", Msg::ImageArchiveMissing));
        }
        received.sha256 = hex::encode(hash.finalize());
        return Ok(received);
    }
    Err(AppError::invalid("file", Msg::ImageArchiveMissing))
}

impl Received {
    /// The image references the archive holds (415 when it is not a `docker save` tar).
    pub async fn checked(&self) -> Result<Checked, AppError> {
        let path = self.path.clone();
        let tags = tokio::task::spawn_blocking(move || images::tags_in_archive(&path))
            .await
            .map_err(|e| AppError::Internal(e.into()))?
            .map_err(|e| {
                tracing::info!(error = %e, "an uploaded image archive was refused");
                AppError::Refused(Msg::ImageArchiveInvalid)
            })?;
        Ok(Checked { tags, sha256: self.sha256.clone(), size: self.size })
    }

    /// Moves the archive into the store (`<sha256>.tar`) and lists it, in `conn`'s transaction.
    pub async fn store(&self, conn: &impl ConnectionTrait, data_dir: &Path, archive: Checked) -> Result<images::Archive, AppError> {
        images::store(conn, data_dir, &self.path, archive, Placement::Move).await.map_err(AppError::Internal)
    }
}
