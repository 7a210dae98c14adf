//! Per-client limits, kept in this instance's memory (governor's GCRA: a burst, then a steady
//! refill). The client is the address `client_ip` resolves (the TCP peer, or the forwarded client
//! behind a trusted proxy).
//!
//! Sign-in: every attempt is charged to its IP; failed attempts are charged to the pair (IP,
//! account), and only that pair is closed when its bucket runs dry (until one attempt has
//! refilled). Someone guessing from one address therefore locks out only themselves: the owner
//! signs in from their own address as usual (issue 16, finding 5).
//!
//! Sign-up: attempts per IP, and per email address (each sign-up of a pending address sends a
//! mail, so this bounds the mails one address receives).

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::error::AppError;

/// One keyed limit: `burst` at once, then one more every `every`.
pub struct Limit<K: Hash + Eq + Clone> {
    inner: DefaultKeyedRateLimiter<K>,
}

impl<K: Hash + Eq + Clone> Limit<K> {
    pub fn new(burst: u32, every: Duration) -> Self {
        let quota = Quota::with_period(every.max(Duration::from_millis(1)))
            .expect("non-zero period")
            .allow_burst(NonZeroU32::new(burst.max(1)).expect("max(1)"));
        Limit { inner: RateLimiter::keyed(quota) }
    }

    /// Charges one to `key`: `Err(seconds to wait)` when it has none left.
    pub fn charge(&self, key: &K) -> Result<(), u64> {
        // The limiter's own clock: a new DefaultClock per refusal calibrates (and keeps memory)
        // every time, which a flood of refusals turned into hundreds of megabytes.
        self.inner.check_key(key).map_err(|n| wait_secs(n.wait_time_from(self.inner.clock().now())))
    }

    /// As [`Limit::charge`], as the API's 429.
    pub fn check(&self, key: &K) -> Result<(), AppError> {
        self.charge(key).map_err(|s| AppError::TooManyRequests { retry_after_secs: s })
    }

    pub fn retain_recent(&self) {
        self.inner.retain_recent();
    }
}

type Pair = (IpAddr, String);

pub struct Limits {
    login_ip: Limit<IpAddr>,
    login_failures: Limit<Pair>,
    closed_until: Mutex<HashMap<Pair, Instant>>,
    register_ip: Limit<IpAddr>,
    register_email: Limit<String>,
}

impl Limits {
    pub fn from_config(a: &crate::config::AuthConfig) -> Self {
        let secs = Duration::from_secs;
        Limits {
            login_ip: Limit::new(a.login_ip_burst, secs(a.login_ip_refill_secs)),
            login_failures: Limit::new(a.login_account_burst, secs(a.login_account_refill_secs)),
            closed_until: Mutex::new(HashMap::new()),
            register_ip: Limit::new(a.register_ip_burst, secs(a.register_ip_refill_secs)),
            register_email: Limit::new(a.register_email_burst, secs(a.register_email_refill_secs)),
        }
    }

    /// Charges one sign-in attempt to the IP and checks the pair (IP, account) is open.
    pub fn login_attempt(&self, ip: IpAddr, account: &str) -> Result<(), AppError> {
        self.login_ip.check(&ip)?;
        let now = Instant::now();
        if let Ok(map) = self.closed_until.lock()
            && let Some(until) = map.get(&(ip, account.to_string()))
            && *until > now
        {
            return Err(AppError::TooManyRequests { retry_after_secs: wait_secs(*until - now) });
        }
        Ok(())
    }

    /// Charges a failed sign-in to the pair (IP, account).
    pub fn login_failed(&self, ip: IpAddr, account: &str) {
        let pair = (ip, account.to_string());
        if let Err(wait) = self.login_failures.charge(&pair)
            && let Ok(mut map) = self.closed_until.lock()
        {
            map.insert(pair, Instant::now() + Duration::from_secs(wait));
        }
    }

    /// Charges one sign-up to the IP and to the address it would mail.
    pub fn register_attempt(&self, ip: IpAddr, email: &str) -> Result<(), AppError> {
        self.register_ip.check(&ip)?;
        self.register_email.check(&email.to_ascii_lowercase())
    }

    /// Forgets idle keys (called by a job) so the maps do not grow without bound.
    pub fn retain_recent(&self) {
        self.login_ip.retain_recent();
        self.login_failures.retain_recent();
        self.register_ip.retain_recent();
        self.register_email.retain_recent();
        let now = Instant::now();
        if let Ok(mut map) = self.closed_until.lock() {
            map.retain(|_, until| *until > now);
        }
    }
}

fn wait_secs(d: Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
}
