//! Password hashing: Argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane), bounded: at
//! most `auth.hash_concurrency` hashes at once (one per core by default), each on one of as many
//! dedicated threads (never the async workers, never the growing blocking pool: each thread's
//! allocator keeps its 19 MiB for the next hash, so memory stays at concurrency x 19 MiB in a
//! flood instead of growing with every new thread). A caller that cannot get a turn within
//! `auth.hash_wait_ms` is answered 429 at once instead of queueing without end.

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

type Work = Box<dyn FnOnce() + Send>;

/// The bounded hasher every password check and change goes through.
#[derive(Clone)]
pub struct Hasher {
    turns: Arc<Semaphore>,
    wait: Duration,
    work: std::sync::mpsc::SyncSender<Work>,
}

impl Hasher {
    /// `concurrency` 0 = one per CPU core.
    pub fn new(concurrency: usize, wait: Duration) -> Self {
        let n = if concurrency == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2) } else { concurrency };
        let (work, queue) = std::sync::mpsc::sync_channel::<Work>(n);
        let queue = Arc::new(std::sync::Mutex::new(queue));
        for i in 0..n {
            let queue = queue.clone();
            let spawned = std::thread::Builder::new().name(format!("argon2-{i}")).spawn(move || {
                loop {
                    let next = match queue.lock() {
                        Ok(q) => q.recv(),
                        Err(_) => return,
                    };
                    match next {
                        Ok(job) => job(),
                        Err(_) => return, // every Hasher is gone
                    }
                }
            });
            if let Err(e) = spawned {
                tracing::error!(error = %e, "cannot start a hashing thread");
            }
        }
        Hasher { turns: Arc::new(Semaphore::new(n)), wait, work }
    }

    /// Runs `f` on a hashing thread (the caller holds a turn, so one is free).
    async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Result<T, AppError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.work
            .send(Box::new(move || {
                let _ = tx.send(f());
            }))
            .map_err(|_| anyhow::anyhow!("the hashing threads are gone"))?;
        rx.await.map_err(|_| AppError::Internal(anyhow::anyhow!("a hashing thread failed")))
    }

    async fn turn(&self) -> Result<SemaphorePermit<'_>, AppError> {
        match tokio::time::timeout(self.wait, self.turns.acquire()).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(AppError::TooManyRequests { retry_after_secs: 1 }),
        }
    }

    pub async fn hash(&self, password: String) -> Result<String, AppError> {
        let _turn = self.turn().await?;
        let hashed = self
            .run(move || argon2().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(|e| anyhow::anyhow!("hashing: {e}")))
            .await??;
        Ok(hashed)
    }

    /// Checks `password` against a stored hash. With `None` (no such account) it checks against
    /// a fixed hash anyway, so both cases take the same time.
    pub async fn verify(&self, password: String, stored: Option<String>) -> Result<bool, AppError> {
        let _turn = self.turn().await?;
        let known = stored.is_some();
        let stored = stored.unwrap_or_else(|| dummy_hash().to_string());
        self.run(move || {
            let Ok(parsed) = PasswordHash::new(&stored) else { return false };
            argon2().verify_password(password.as_bytes(), &parsed).is_ok() && known
        })
        .await
    }
}

fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| argon2().hash_password(b"not a real password 1").map(|h| h.to_string()).unwrap_or_default())
}
