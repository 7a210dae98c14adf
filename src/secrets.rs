//! The JWT signing key: from configuration, or generated on first start and kept in
//! `<data_dir>/jwt.key` with mode 0600. Never logged.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use rand::RngCore;

use crate::config::Config;

pub fn jwt_secret(config: &Config) -> anyhow::Result<Vec<u8>> {
    if !config.auth.jwt_secret.is_empty() {
        return Ok(config.auth.jwt_secret.as_bytes().to_vec());
    }
    load_or_create(&config.data_dir.join("jwt.key"))
}

fn load_or_create(path: &Path) -> anyhow::Result<Vec<u8>> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let key = hex::decode(text.trim()).with_context(|| format!("{} is not a hex key", path.display()))?;
            anyhow::ensure!(key.len() >= 32, "{} holds a key shorter than 32 bytes", path.display());
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut key = vec![0u8; 64];
            rand::rng().fill_bytes(&mut key);
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            match opts.open(path) {
                Ok(mut f) => {
                    f.write_all(hex::encode(&key).as_bytes()).with_context(|| format!("writing {}", path.display()))?;
                    tracing::info!(file = %path.display(), "generated a new signing key");
                    Ok(key)
                }
                // Another process created it first: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => load_or_create(path),
                Err(e) => Err(e).with_context(|| format!("creating {}", path.display())),
            }
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Creates `dir` (and its parents) if missing; a directory created here is 0700: the data
/// directory holds the database, the signing key and mails with live links. One that exists
/// and lets others in (0755) is tightened to 0700, or a warning says it could not be.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        tighten(dir);
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Takes group and other permissions away from an existing directory.
fn tighten(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = std::fs::metadata(dir) else { return };
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 == 0 {
            return;
        }
        match std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode & !0o077)) {
            Ok(()) => tracing::warn!(dir = %dir.display(), was = format!("{mode:o}"), "the directory let other users in: tightened to owner only"),
            Err(e) => tracing::warn!(dir = %dir.display(), mode = format!("{mode:o}"), error = %e, "the directory lets other users in and could not be tightened"),
        }
    }
}

/// Creates `file` empty with mode 0600 if missing (SQLite then gives its -wal and -shm files
/// the same mode).
pub fn private_file(file: &Path) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    match opts.open(file) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}
