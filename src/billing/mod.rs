//! The wallet: a double-entry ledger in the product's coin (integer cents), two-phase holds,
//! bills of metered usage, runway and its notices, the signup bonus and the operator's grants,
//! the `Idempotency-Key` mechanism of coin-moving routes, and `zmarket ledger verify`.
//! Other domains move coins only through [`ledger`]; see docs/wallet.md.

pub mod accounts;
pub mod bills;
pub mod cli;
pub mod export;
pub mod codes;
pub mod fees;
pub mod holds;
pub mod idempotency;
pub mod issuance;
pub mod ledger;
pub mod limits;
pub mod memo;
pub mod model;
pub mod posting;
pub mod routes;
pub mod runway;
pub mod store;
pub mod titles;
pub mod verify;
pub mod wallet;

use std::sync::Arc;
use std::time::Duration;

use sea_orm::{DatabaseConnection, DatabaseTransaction};
use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::config::BillingConfig;
use crate::error::AppError;
use crate::iam::deletion::DeletionCheck;
use crate::iam::signup::OnVerified;
use crate::jobs::{Runs, repeated};
use crate::ids::UserId;

/// What the wallet's rules use.
#[derive(Clone)]
pub struct BillingCtx {
    pub db: DatabaseConnection,
    pub settings: Arc<BillingConfig>,
    /// The operator's settings: low-balance hours, the top-up page's words.
    pub market_settings: crate::settings::LiveSettings,
    /// Runway notices are mailed too.
    pub mailer: crate::mail::Mailer,
    /// Where mails link to (`server.public_url`).
    pub public_url: String,
    /// What the ledger's references are called, named by their domains (`titles::Titles`).
    pub titles: titles::Titles,
    /// Redemption attempts per address and failures per person (`limits`).
    pub redeem_limits: Arc<limits::RedeemLimits>,
    /// A current code asked again for a move above the threshold (two-factor sign-in).
    pub step_up: crate::iam::two_factor::StepUp,
}

/// The wallet's background jobs: hold expiry, closing billing periods, runway notices, and
/// forgetting old idempotency keys. All shared: one instance runs each at a time.
pub fn jobs(cx: &BillingCtx) -> Vec<Result<Job, JobSchedulerError>> {
    let db = cx.db.clone();
    let expire = repeated(&cx.db, "billing.expire_holds", Duration::from_secs(30), Runs::Shared, move || {
        let db = db.clone();
        async move {
            match ledger::expire_due(&db, crate::db::now()).await {
                Ok(n) if n > 0 => tracing::info!(holds = n, "expired holds released"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "hold expiry failed");
                    crate::jobs::failed();
                }
            }
        }
    });
    let db = cx.db.clone();
    let close = repeated(&cx.db, "billing.close_bills", Duration::from_secs(60), Runs::Shared, move || {
        let db = db.clone();
        async move {
            match bills::close_due(&db, crate::db::now()).await {
                Ok(n) if n > 0 => tracing::info!(bills = n, "billing periods closed"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "closing billing periods failed");
                    crate::jobs::failed();
                }
            }
        }
    });
    let billing = cx.clone();
    let notices = repeated(&cx.db, "billing.runway_notices", Duration::from_secs(60), Runs::Shared, move || {
        let billing = billing.clone();
        async move {
            match runway::send_notices(&billing).await {
                Ok(n) if n > 0 => tracing::info!(notices = n, "runway notices sent"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "runway notices failed");
                    crate::jobs::failed();
                }
            }
        }
    });
    let (db, ttl) = (cx.db.clone(), cx.settings.idempotency_ttl_secs);
    let keys = repeated(&cx.db, "billing.idempotency_cleanup", Duration::from_secs(3600), Runs::Shared, move || {
        let db = db.clone();
        async move {
            if let Err(e) = idempotency::cleanup(&db, ttl).await {
                tracing::warn!(error = %e, "idempotency key cleanup failed");
                crate::jobs::failed();
            }
        }
    });
    let limits = cx.redeem_limits.clone();
    let retain = repeated(&cx.db, "billing.redeem_limits_retain", Duration::from_secs(300), Runs::PerInstance, move || {
        let limits = limits.clone();
        async move { limits.retain_recent() }
    });
    vec![expire, close, notices, keys, retain]
}

/// A negative or held balance, or usage not billed yet, keeps an account from being deleted
/// (`balance_outstanding`).
pub struct BalanceOutstanding;

#[async_trait::async_trait]
impl DeletionCheck for BalanceOutstanding {
    async fn blocks(&self, txn: &DatabaseTransaction, user_id: &UserId) -> Result<Option<&'static str>, AppError> {
        Ok(wallet::blocks_deletion(txn, user_id).await?.then_some("balance_outstanding"))
    }
}

/// The signup bonus (the market's settings, `billing.signup_bonus` by default), credited in the
/// transaction that verifies an account.
pub struct SignupBonus(pub crate::settings::LiveSettings);

#[async_trait::async_trait]
impl OnVerified for SignupBonus {
    async fn verified(&self, txn: &DatabaseTransaction, user_id: &UserId) -> Result<(), AppError> {
        issuance::signup_bonus(txn, crate::coins::Coins::from_cents(self.0.current().signup_bonus), user_id).await
    }
}
