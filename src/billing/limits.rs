//! Top-up code redemption is limited like sign-in (issue 43, item 8; `crate::iam::ratelimit`):
//! every attempt is charged to the client's address (`auth.login_ip_*`), and a failed one (an
//! unknown, used or expired code) to the person (`auth.login_account_*`), whose redemptions wait
//! once that allowance is used, until one has refilled. Guessing codes (each try a write) from
//! many accounts or from one costs what guessing passwords costs; a person redeeming good codes
//! is never slowed. Both limits are shared by the instances (`crate::ratelimit::SharedLimit`).

use std::net::IpAddr;
use std::time::Duration;

use sea_orm::DatabaseConnection;

use crate::error::AppError;
use crate::ratelimit::SharedLimit;
use crate::ids::UserId;

pub struct RedeemLimits {
    db: DatabaseConnection,
    ip: SharedLimit,
    failures: SharedLimit,
}

impl RedeemLimits {
    pub fn from_config(db: DatabaseConnection, a: &crate::config::AuthConfig) -> Self {
        let secs = Duration::from_secs;
        RedeemLimits {
            db,
            ip: SharedLimit::new("redeem_ip", a.login_ip_burst, secs(a.login_ip_refill_secs)),
            failures: SharedLimit::new("redeem_failed", a.login_account_burst, secs(a.login_account_refill_secs)),
        }
    }

    /// Charges one attempt to the address and checks the person may still try (429 otherwise).
    pub async fn attempt(&self, ip: IpAddr, person: &UserId) -> Result<(), AppError> {
        self.ip.check(&self.db, &ip.to_string()).await?;
        match self.failures.closed(&self.db, person.as_str()).await? {
            Some(secs) => Err(AppError::TooManyRequests { retry_after_secs: secs }),
            None => Ok(()),
        }
    }

    /// Charges a failed redemption to the person.
    pub async fn failed(&self, person: &UserId) -> Result<(), AppError> {
        self.failures.charge(&self.db, person.as_str()).await?.ok();
        Ok(())
    }

    /// Forgets idle keys of the memory layer (a job).
    pub fn retain_recent(&self) {
        self.ip.retain_recent();
        self.failures.retain_recent();
    }
}
