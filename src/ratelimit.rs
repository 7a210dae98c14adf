//! Per-client limits (GCRA: a burst, then one more every period), shared by every instance on
//! one database (issue 16: behind a round-robin proxy, N instances must not give a client N
//! allowances).
//!
//! A [`SharedLimit`] is checked twice: first in this instance's memory (governor; a flood is
//! refused there without touching the database), then in the `rate_limits` table, where the
//! limit's "theoretical arrival time" per key is moved by one conditional upsert: the row
//! changes (and the request passes) only when the key has allowance left, so two instances
//! charging one key at once cannot both take its last unit. Keys are prefixed with the limit's
//! name. Rows whose time has passed hold nothing and are deleted by [`forget_idle`] (a job).

use std::hash::Hash;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement};

use crate::error::AppError;

/// One keyed limit in this instance's memory: `burst` at once, then one more every `every`.
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

    pub fn retain_recent(&self) {
        self.inner.retain_recent();
    }
}

/// A limit every instance on the database shares (see the module documentation).
pub struct SharedLimit {
    name: &'static str,
    local: Limit<String>,
    /// One unit, in milliseconds.
    period_ms: i64,
    /// The whole allowance (burst × period), in milliseconds.
    allowance_ms: i64,
}

impl SharedLimit {
    pub fn new(name: &'static str, burst: u32, every: Duration) -> Self {
        let period_ms = i64::try_from(every.as_millis()).unwrap_or(i64::MAX / 4).max(1);
        SharedLimit { name, local: Limit::new(burst, every), period_ms, allowance_ms: period_ms.saturating_mul(i64::from(burst.max(1))) }
    }

    /// Charges one to `key`: `Err(seconds to wait)` when this instance, or all of them together,
    /// have used the key's allowance.
    pub async fn charge(&self, db: &impl ConnectionTrait, key: &str) -> Result<Result<(), u64>, DbErr> {
        if let Err(wait) = self.local.charge(&key.to_string()) {
            return Ok(Err(wait));
        }
        let backend = db.get_database_backend();
        let (greatest, p) = match backend {
            DbBackend::Postgres => ("GREATEST", ["$1", "$2", "$3", "$4"]),
            _ => ("MAX", ["?1", "?2", "?3", "?4"]),
        };
        // $1 key, $2 now (ms), $3 period, $4 allowance.
        let sql = format!(
            "INSERT INTO rate_limits (key, tat) VALUES ({k}, {now} + {t}) \
             ON CONFLICT (key) DO UPDATE SET tat = {greatest}(rate_limits.tat, {now}) + {t} \
             WHERE {greatest}(rate_limits.tat, {now}) + {t} - {now} <= {a} RETURNING tat",
            k = p[0],
            now = p[1],
            t = p[2],
            a = p[3],
        );
        let full = self.key(key);
        let now = now_ms();
        let values = [full.clone().into(), now.into(), self.period_ms.into(), self.allowance_ms.into()];
        if db.query_one_raw(Statement::from_sql_and_values(backend, sql, values)).await?.is_some() {
            return Ok(Ok(()));
        }
        Ok(Err(self.wait_for(db, &full, now).await?.unwrap_or(1)))
    }

    /// As [`SharedLimit::charge`], as the API's 429.
    pub async fn check(&self, db: &impl ConnectionTrait, key: &str) -> Result<(), AppError> {
        self.charge(db, key).await?.map_err(|s| AppError::TooManyRequests { retry_after_secs: s })
    }

    /// Without charging: `Some(seconds)` when the next charge of `key` would be refused.
    pub async fn closed(&self, db: &impl ConnectionTrait, key: &str) -> Result<Option<u64>, DbErr> {
        self.wait_for(db, &self.key(key), now_ms()).await
    }

    async fn wait_for(&self, db: &impl ConnectionTrait, full: &str, now: i64) -> Result<Option<u64>, DbErr> {
        let backend = db.get_database_backend();
        let sql = match backend {
            DbBackend::Postgres => "SELECT tat FROM rate_limits WHERE key = $1",
            _ => "SELECT tat FROM rate_limits WHERE key = ?1",
        };
        let Some(row) = db.query_one_raw(Statement::from_sql_and_values(backend, sql, [full.into()])).await? else {
            return Ok(None);
        };
        let tat: i64 = row.try_get("", "tat")?;
        let wait = tat.max(now) + self.period_ms - self.allowance_ms - now;
        Ok((wait > 0).then(|| wait_secs(Duration::from_millis(wait as u64))))
    }

    fn key(&self, key: &str) -> String {
        format!("{}:{key}", self.name)
    }

    /// Forgets idle keys of the memory layer (the table: [`forget_idle`]).
    pub fn retain_recent(&self) {
        self.local.retain_recent();
    }
}

/// Deletes the rows of keys with their whole allowance back (their time has passed).
pub async fn forget_idle(db: &impl ConnectionTrait) -> Result<u64, DbErr> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DbBackend::Postgres => "DELETE FROM rate_limits WHERE tat < $1",
        _ => "DELETE FROM rate_limits WHERE tat < ?1",
    };
    Ok(db.execute_raw(Statement::from_sql_and_values(backend, sql, [now_ms().into()])).await?.rows_affected())
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

pub fn wait_secs(d: Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
}
