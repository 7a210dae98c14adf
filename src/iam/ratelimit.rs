//! Identity's per-client limits, shared by every instance on the database (`crate::ratelimit`).
//! The client is the address `client_ip` resolves (the TCP peer, or the forwarded client behind
//! a trusted proxy).
//!
//! Sign-in: every attempt is charged to its IP; failed attempts are charged to the pair (IP,
//! account), and only that pair is closed when its bucket runs dry (until one attempt has
//! refilled). Someone guessing from one address therefore locks out only themselves: the owner
//! signs in from their own address as usual (issue 16, finding 5).
//!
//! Sign-up: attempts per IP, and per email address (each sign-up of a pending address sends a
//! mail, so this bounds the mails one address receives).
//!
//! Recovery ("Forgot password", "Resend verification email"): both kinds share one allowance per
//! IP and one per address (each is a mail to someone's inbox).

use std::net::IpAddr;
use std::time::Duration;

use sea_orm::DatabaseConnection;

use crate::error::AppError;
use crate::ratelimit::SharedLimit;

pub struct Limits {
    db: DatabaseConnection,
    login_ip: SharedLimit,
    login_failures: SharedLimit,
    register_ip: SharedLimit,
    register_email: SharedLimit,
    recovery_ip: SharedLimit,
    recovery_email: SharedLimit,
}

/// Recovery mails per address: a burst of 3, then one every 10 minutes.
const RECOVERY_EMAIL_BURST: u32 = 3;
const RECOVERY_EMAIL_EVERY: Duration = Duration::from_secs(600);
/// Recovery requests per client IP: a burst of 20, then one a minute.
const RECOVERY_IP_BURST: u32 = 20;
const RECOVERY_IP_EVERY: Duration = Duration::from_secs(60);

impl Limits {
    pub fn from_config(db: DatabaseConnection, a: &crate::config::AuthConfig) -> Self {
        let secs = Duration::from_secs;
        Limits {
            db,
            login_ip: SharedLimit::new("login_ip", a.login_ip_burst, secs(a.login_ip_refill_secs)),
            login_failures: SharedLimit::new("login_failed", a.login_account_burst, secs(a.login_account_refill_secs)),
            register_ip: SharedLimit::new("register_ip", a.register_ip_burst, secs(a.register_ip_refill_secs)),
            register_email: SharedLimit::new("register_email", a.register_email_burst, secs(a.register_email_refill_secs)),
            recovery_ip: SharedLimit::new("recovery_ip", RECOVERY_IP_BURST, RECOVERY_IP_EVERY),
            recovery_email: SharedLimit::new("recovery_email", RECOVERY_EMAIL_BURST, RECOVERY_EMAIL_EVERY),
        }
    }

    /// Charges one sign-in attempt to the IP and checks the pair (IP, account) is open.
    pub async fn login_attempt(&self, ip: IpAddr, account: &str) -> Result<(), AppError> {
        self.login_ip.check(&self.db, &ip.to_string()).await?;
        match self.login_failures.closed(&self.db, &pair(ip, account)).await? {
            Some(secs) => Err(AppError::TooManyRequests { retry_after_secs: secs }),
            None => Ok(()),
        }
    }

    /// Charges a failed sign-in to the pair (IP, account): once its allowance is used, the pair
    /// waits until one attempt has refilled.
    pub async fn login_failed(&self, ip: IpAddr, account: &str) -> Result<(), AppError> {
        self.login_failures.charge(&self.db, &pair(ip, account)).await?.ok();
        Ok(())
    }

    /// Charges one sign-up to the IP and to the address it would mail.
    pub async fn register_attempt(&self, ip: IpAddr, email: &str) -> Result<(), AppError> {
        self.register_ip.check(&self.db, &ip.to_string()).await?;
        self.register_email.check(&self.db, &email.to_ascii_lowercase()).await
    }

    /// Charges one recovery mail request to the IP and to the address.
    pub async fn recovery_attempt(&self, ip: IpAddr, email: &str) -> Result<(), AppError> {
        self.recovery_ip.check(&self.db, &ip.to_string()).await?;
        self.recovery_email.check(&self.db, &email.to_ascii_lowercase()).await
    }

    /// Forgets idle keys of the memory layers (called by a job; the shared rows: a job of
    /// `crate::ratelimit`).
    pub fn retain_recent(&self) {
        self.login_ip.retain_recent();
        self.login_failures.retain_recent();
        self.register_ip.retain_recent();
        self.register_email.retain_recent();
        self.recovery_ip.retain_recent();
        self.recovery_email.retain_recent();
    }
}

fn pair(ip: IpAddr, account: &str) -> String {
    format!("{ip}|{}", account.to_ascii_lowercase())
}
