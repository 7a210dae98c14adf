//! Access tokens (JWT, HS256 pinned), refresh tokens and personal API keys (random, stored only
//! as a SHA-256 hash).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub const ACCESS: &str = "access";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    /// The user id.
    pub sub: String,
    /// "user" or a company id.
    pub sme: String,
    /// user, admin or member.
    pub user_type: String,
    /// The session (refresh-token family) this token belongs to.
    pub sid: String,
    /// Token type: always "access".
    pub typ: String,
    pub iat: i64,
    pub exp: i64,
}

pub struct Keys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    /// Keyed digest of the secret, to derive refresh-token successors.
    successor_key: [u8; 32],
}

impl Keys {
    pub fn new(secret: &[u8]) -> Keys {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.algorithms = vec![Algorithm::HS256];
        validation.leeway = 0;
        validation.set_required_spec_claims(&["exp", "sub"]);
        let successor_key = Sha256::new().chain_update(b"zmarket refresh successor\0").chain_update(secret).finalize().into();
        Keys { encoding: EncodingKey::from_secret(secret), decoding: DecodingKey::from_secret(secret), validation, successor_key }
    }

    /// The one refresh token that follows `presented`: derived, so presenting the same token
    /// again within the grace window answers the same successor (never a second one), and only
    /// the server (which holds the secret) can compute it.
    pub fn successor(&self, presented: &str) -> String {
        let digest = Sha256::new().chain_update(self.successor_key).chain_update(presented.as_bytes()).finalize();
        URL_SAFE_NO_PAD.encode(digest)
    }

    pub fn sign(&self, claims: &Claims) -> anyhow::Result<String> {
        Ok(jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.encoding)?)
    }

    /// The claims of a valid, unexpired access token.
    pub fn verify(&self, token: &str) -> Option<Claims> {
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation).ok()?;
        (data.claims.typ == ACCESS).then_some(data.claims)
    }
}

/// A new random secret (256 bits), URL-safe.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// What every personal API key starts with (an access token, a JWT, starts with `eyJ`).
pub const API_KEY_PREFIX: &str = "zk_";

/// How many characters of a key (with `zk_`) lists show: `zk_ab12cd`.
pub const API_KEY_SHOWN: usize = 9;

/// Whether a presented Bearer credential is an API key rather than an access token.
pub fn is_api_key(token: &str) -> bool {
    token.starts_with(API_KEY_PREFIX)
}

/// A new API key (`zk_` and 256 random bits, URL-safe) and the prefix lists show of it.
pub fn api_key() -> (String, String) {
    let key = format!("{API_KEY_PREFIX}{}", random_token());
    let shown = key[..API_KEY_SHOWN].to_string();
    (key, shown)
}

/// What the database keeps of a secret token.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(typ: &str, exp: i64) -> Claims {
        Claims { sub: "u".into(), sme: "user".into(), user_type: "user".into(), sid: "s".into(), typ: typ.into(), iat: 0, exp }
    }

    #[test]
    fn api_keys_are_random_url_safe_and_prefixed() {
        let (a, shown) = api_key();
        let (b, _) = api_key();
        assert_ne!(a, b);
        assert!(is_api_key(&a) && a.len() == 3 + 43, "{a}");
        assert!(a[3..].chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'), "{a}");
        assert_eq!(shown, a[..9]);
        assert!(!is_api_key("eyJhbGciOi"));
    }

    #[test]
    fn only_unexpired_access_tokens_of_our_key_verify() {
        let keys = Keys::new(&[7u8; 32]);
        let later = chrono::Utc::now().timestamp() + 60;
        assert!(keys.verify(&keys.sign(&claims(ACCESS, later)).unwrap()).is_some());
        assert!(keys.verify(&keys.sign(&claims("refresh", later)).unwrap()).is_none());
        assert!(keys.verify(&keys.sign(&claims(ACCESS, 1000)).unwrap()).is_none());
        let other = Keys::new(&[8u8; 32]);
        assert!(keys.verify(&other.sign(&claims(ACCESS, later)).unwrap()).is_none());
        // alg=none is refused
        let none = format!("{}.{}.", URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#), URL_SAFE_NO_PAD.encode(serde_json::to_string(&claims(ACCESS, later)).unwrap()));
        assert!(keys.verify(&none).is_none());
    }
}
