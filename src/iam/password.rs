//! Password hashing: Argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane), on the
//! blocking pool so hashing never stalls the async workers, and bounded: at most
//! `auth.hash_concurrency` hashes at once (one per core by default), so a sign-up flood costs a
//! bounded amount of memory and CPU. A caller that cannot get a turn within `auth.hash_wait_ms`
//! is answered 429 at once instead of queueing without end.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::error::AppError;

fn argon2() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).expect("OWASP parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The bounded hasher every password check and change goes through.
#[derive(Clone)]
pub struct Hasher {
    turns: Arc<Semaphore>,
    wait: Duration,
}

impl Hasher {
    /// `concurrency` 0 = one per CPU core.
    pub fn new(concurrency: usize, wait: Duration) -> Self {
        let n = if concurrency == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2) } else { concurrency };
        Hasher { turns: Arc::new(Semaphore::new(n)), wait }
    }

    async fn turn(&self) -> Result<SemaphorePermit<'_>, AppError> {
        match tokio::time::timeout(self.wait, self.turns.acquire()).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(AppError::TooManyRequests { retry_after_secs: 1 }),
        }
    }

    pub async fn hash(&self, password: String) -> Result<String, AppError> {
        let _turn = self.turn().await?;
        let hashed = tokio::task::spawn_blocking(move || {
            argon2().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(|e| anyhow::anyhow!("hashing: {e}"))
        })
        .await
        .map_err(anyhow::Error::from)??;
        Ok(hashed)
    }

    /// Checks `password` against a stored hash. With `None` (no such account) it checks against
    /// a fixed hash anyway, so both cases take the same time.
    pub async fn verify(&self, password: String, stored: Option<String>) -> Result<bool, AppError> {
        let _turn = self.turn().await?;
        let known = stored.is_some();
        let stored = stored.unwrap_or_else(|| dummy_hash().to_string());
        Ok(tokio::task::spawn_blocking(move || {
            let Ok(parsed) = PasswordHash::new(&stored) else { return false };
            argon2().verify_password(password.as_bytes(), &parsed).is_ok() && known
        })
        .await
        .unwrap_or(false))
    }
}

fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| argon2().hash_password(b"not a real password 1").map(|h| h.to_string()).unwrap_or_default())
}
