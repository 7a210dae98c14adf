//! A box in one line (issue 41; docs/devices.md "A box in one line"): `GET /install.sh`, a POSIX
//! shell script with this market's address baked in, and `GET /downloads/zmarket-linux-x86_64`,
//! the running binary's own bytes (ranges, so a broken download resumes) with its sha256.
//!
//! The binary is read from `/proc/self/exe` where there is one: the bytes of the running
//! program even when an upgrade has replaced the file on disk. It is hashed once, on the first
//! request that needs the sum, and streamed from disk on every download (58 MB is not kept in
//! memory).

use std::path::PathBuf;

use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

use crate::config::Config;
use crate::error::{AppError, Msg};

/// The one download this market serves: the agent for Linux on x86-64.
pub const AGENT_FILE: &str = "zmarket-linux-x86_64";
/// Served only when the running binary is that platform's.
const SERVES_AGENT: bool = cfg!(all(target_os = "linux", target_arch = "x86_64"));
const TEMPLATE: &str = include_str!("install.sh");

/// What the script needs of the market, and the binary's sum once read.
pub struct Installer {
    public_url: String,
    warning: Option<&'static str>,
    token_required: bool,
    path: PathBuf,
    digest: OnceCell<Result<Binary, String>>,
}

#[derive(Clone, Debug)]
pub struct Binary {
    pub path: PathBuf,
    pub size: u64,
    pub sha256: String,
}

impl Installer {
    pub fn new(config: &Config) -> Installer {
        let public_url = config.public_url();
        let warning = if config.server.public_url.trim().is_empty() {
            Some("unset")
        } else if is_loopback(&public_url) {
            Some("loopback")
        } else {
            None
        };
        // A derived address that is loopback is "unset" too: say the one thing to do.
        let path = PathBuf::from("/proc/self/exe");
        let path = if path.exists() { path } else { std::env::current_exe().unwrap_or_default() };
        Installer { public_url, warning, token_required: !config.devices.registration_token.is_empty(), path, digest: OnceCell::new() }
    }

    /// The running binary with its size and sha256 (404 `download_not_served` for another file
    /// name or a market not running on Linux x86-64).
    pub async fn binary(&self, file: &str) -> Result<Binary, AppError> {
        if file != AGENT_FILE || !SERVES_AGENT {
            return Err(AppError::Refused(Msg::DownloadNotServed));
        }
        let path = self.path.clone();
        let read = self
            .digest
            .get_or_init(|| async move { tokio::task::spawn_blocking(move || hash_file(path)).await.unwrap_or_else(|e| Err(e.to_string())) })
            .await;
        read.clone().map_err(|e| AppError::Internal(anyhow::anyhow!("cannot read the running binary: {e}")))
    }

    /// The script, with this market's address, the binary's sum and the warnings baked in.
    pub async fn script(&self, code: Option<&str>) -> Result<String, AppError> {
        let code = match code.filter(|c| !c.is_empty()) {
            Some(c) => crate::devices::model::PairingCode::parse(Some(c)).ok_or(AppError::invalid("code", Msg::PairingCodeIncorrect))?.as_str().to_string(),
            None => String::new(),
        };
        let sha = if SERVES_AGENT { self.binary(AGENT_FILE).await?.sha256 } else { String::new() };
        let warning = match self.warning {
            Some("unset") => format!(
                "This market's server.public_url is not set: the address below ({}) was derived from the address it listens on and may not be reachable from this box. Ask the operator to set server.public_url.",
                self.public_url
            ),
            Some(_) => format!(
                "This market's address ({}) is a loopback address: only this same machine can reach it. Ask the operator to set server.public_url to an address boxes can reach.",
                self.public_url
            ),
            None => String::new(),
        };
        Ok(TEMPLATE
            .replace("@MARKET@", &shell_quote(&self.public_url))
            .replace("@SHA256@", &sha)
            .replace("@FILE@", AGENT_FILE)
            .replace("@SERVED@", if SERVES_AGENT { "1" } else { "0" })
            .replace("@PAIRING@", &code)
            .replace("@TOKEN_REQUIRED@", if self.token_required { "1" } else { "0" })
            .replace("@WARNING@", &shell_quote(&warning)))
    }
}

fn is_loopback(url: &str) -> bool {
    match url::Url::parse(url).ok().and_then(|u| u.host().map(|h| h.to_owned())) {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost") || d.to_ascii_lowercase().ends_with(".localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => true,
    }
}

/// A single-quoted shell word (`'` closes, escapes and reopens).
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn hash_file(path: PathBuf) -> Result<Binary, String> {
    use std::io::Read;
    let mut f = std::fs::File::open(&path).map_err(|e| e.to_string())?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok(Binary { path, size, sha256: hex::encode(hasher.finalize()) })
}

/// `len` bytes of the binary from `first`, in 64 KiB pieces, read as they are sent.
pub async fn chunks(bin: &Binary, first: u64, len: u64) -> Result<impl futures::Stream<Item = std::io::Result<bytes::Bytes>> + Send + use<>, AppError> {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let mut file = tokio::fs::File::open(&bin.path).await.map_err(|e| AppError::Internal(e.into()))?;
    file.seek(std::io::SeekFrom::Start(first)).await.map_err(|e| AppError::Internal(e.into()))?;
    let reader = file.take(len);
    Ok(futures::stream::unfold((reader, vec![0u8; 64 * 1024]), |(mut reader, mut buf)| async move {
        match reader.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => Some((Ok(bytes::Bytes::copy_from_slice(&buf[..n])), (reader, buf))),
            Err(e) => Some((Err(e), (reader, buf))),
        }
    }))
}

/// What a `Range` header asks of a file of `size` bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Span {
    Whole,
    /// First and last byte, inclusive.
    Part(u64, u64),
    Unsatisfiable,
}

/// One `bytes=` range (`a-b`, `a-`, `-n`); anything else (several ranges, another unit, a
/// malformed one) is answered whole, as RFC 9110 allows.
pub fn span(header: Option<&str>, size: u64) -> Span {
    let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else { return Span::Whole };
    if spec.contains(',') {
        return Span::Whole;
    }
    let Some((a, b)) = spec.trim().split_once('-') else { return Span::Whole };
    let (a, b) = (a.trim(), b.trim());
    let parsed = match (a.is_empty(), b.is_empty()) {
        (true, false) => match b.parse::<u64>() {
            Ok(0) => return Span::Unsatisfiable,
            Ok(n) => Some((size.saturating_sub(n), size.saturating_sub(1))),
            Err(_) => None,
        },
        (false, _) => match (a.parse::<u64>(), if b.is_empty() { Ok(u64::MAX) } else { b.parse::<u64>() }) {
            (Ok(first), Ok(last)) if first <= last => Some((first, last.min(size.saturating_sub(1)))),
            _ => None,
        },
        (true, true) => None,
    };
    match parsed {
        None => Span::Whole,
        Some((first, _)) if first >= size => Span::Unsatisfiable,
        Some((first, last)) => Span::Part(first, last),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(span(None, 10), Span::Whole);
        assert_eq!(span(Some("bytes=0-3"), 10), Span::Part(0, 3));
        assert_eq!(span(Some("bytes=4-"), 10), Span::Part(4, 9));
        assert_eq!(span(Some("bytes=-3"), 10), Span::Part(7, 9));
        assert_eq!(span(Some("bytes=5-100"), 10), Span::Part(5, 9));
        assert_eq!(span(Some("bytes=10-"), 10), Span::Unsatisfiable);
        assert_eq!(span(Some("bytes=0-1,4-5"), 10), Span::Whole);
        assert_eq!(span(Some("items=0-1"), 10), Span::Whole);
        assert_eq!(span(Some("bytes=5-2"), 10), Span::Whole);
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert!(is_loopback("http://localhost:8080"));
        assert!(is_loopback("http://127.0.0.1:8080"));
        assert!(!is_loopback("https://market.example"));
    }
}
