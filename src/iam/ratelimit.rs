//! Sign-in attempts are limited per client IP and per account: a burst, then a steady refill
//! (governor's GCRA). Every attempt is charged to its IP; only failed attempts are charged to the
//! account. An account whose bucket runs dry is closed until one attempt has refilled (seconds,
//! not forever), so an attacker cannot lock the real user out for long, and is himself limited
//! by IP.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

pub struct LoginLimiter {
    per_ip: DefaultKeyedRateLimiter<IpAddr>,
    per_account: DefaultKeyedRateLimiter<String>,
    closed_until: Mutex<HashMap<String, Instant>>,
}

impl LoginLimiter {
    pub fn from_config(a: &crate::config::AuthConfig) -> Self {
        Self::new(
            a.login_ip_burst,
            Duration::from_secs(a.login_ip_refill_secs),
            a.login_account_burst,
            Duration::from_secs(a.login_account_refill_secs),
        )
    }

    pub fn new(ip_burst: u32, ip_every: Duration, account_burst: u32, account_every: Duration) -> Self {
        let quota = |burst: u32, every: Duration| {
            Quota::with_period(every).expect("non-zero period").allow_burst(NonZeroU32::new(burst.max(1)).expect("max(1)"))
        };
        LoginLimiter {
            per_ip: RateLimiter::keyed(quota(ip_burst, ip_every)),
            per_account: RateLimiter::keyed(quota(account_burst, account_every)),
            closed_until: Mutex::new(HashMap::new()),
        }
    }

    /// Charges one attempt to the IP and checks the account is open. `Err(seconds to wait)`.
    pub fn attempt(&self, ip: IpAddr, account: &str) -> Result<(), u64> {
        if let Err(n) = self.per_ip.check_key(&ip) {
            return Err(wait_secs(n.wait_time_from(DefaultClock::default().now())));
        }
        let now = Instant::now();
        if let Ok(map) = self.closed_until.lock()
            && let Some(until) = map.get(account)
                && *until > now {
                    return Err(wait_secs(*until - now));
                }
        Ok(())
    }

    /// Charges a failed attempt to the account.
    pub fn failed(&self, account: &str) {
        if let Err(n) = self.per_account.check_key(&account.to_string()) {
            let wait = n.wait_time_from(DefaultClock::default().now());
            if let Ok(mut map) = self.closed_until.lock() {
                map.insert(account.to_string(), Instant::now() + wait);
            }
        }
    }

    /// Forgets idle keys (called by a job) so the maps do not grow without bound.
    pub fn retain_recent(&self) {
        self.per_ip.retain_recent();
        self.per_account.retain_recent();
        let now = Instant::now();
        if let Ok(mut map) = self.closed_until.lock() {
            map.retain(|_, until| *until > now);
        }
    }
}

fn wait_secs(d: Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
}
