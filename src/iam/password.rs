//! Password hashing: Argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane), on the
//! blocking pool so hashing never stalls the async workers.

use std::sync::OnceLock;

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};

fn argon2() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).expect("OWASP parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

pub async fn hash(password: String) -> anyhow::Result<String> {
    tokio::task::spawn_blocking(move || {
        argon2().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(|e| anyhow::anyhow!("hashing: {e}"))
    })
    .await?
}

/// Checks `password` against a stored hash. With `None` (no such account) it checks against a
/// fixed hash anyway, so both cases take the same time.
pub async fn verify(password: String, stored: Option<String>) -> bool {
    let known = stored.is_some();
    let stored = stored.unwrap_or_else(|| dummy_hash().to_string());
    tokio::task::spawn_blocking(move || {
        let Ok(parsed) = PasswordHash::new(&stored) else { return false };
        argon2().verify_password(password.as_bytes(), &parsed).is_ok() && known
    })
    .await
    .unwrap_or(false)
}

fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| argon2().hash_password(b"not a real password 1").map(|h| h.to_string()).unwrap_or_default())
}
