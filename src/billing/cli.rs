//! The operator's commands: the arguments of `zmarket coins grant` and `zmarket coins codes`
//! (their writes are `ops::cli`'s, audited), and `zmarket ledger verify`. They open the
//! configured database themselves, so they work while the server runs.

use anyhow::Context;

use crate::billing::issuance::GrantError;
use crate::coins::{Coins, format_coins};
use crate::config::Config;

async fn database(config: &Config) -> anyhow::Result<sea_orm::DatabaseConnection> {
    let db = crate::db::connect(config).await.context("connecting to the database")?;
    crate::db::migrate(&db).await.context("running migrations")?;
    Ok(db)
}

/// `zmarket coins grant`'s amount, in coins ("12.50"). The grant itself (with the operator's
/// audit, issue 43 item 9) is `ops::cli::coins_grant`: billing cannot name the audit.
pub fn grant_amount(amount: &str) -> anyhow::Result<Coins> {
    let coins = Coins::parse(amount).ok_or(GrantError::BadAmount)?;
    if coins.cents() <= 0 {
        return Err(GrantError::BadAmount.into());
    }
    Ok(coins)
}

/// `zmarket coins codes --amount N --count K [--expires DATE]`'s checked arguments: (cents,
/// count, expiry). DATE is a day (`2026-12-31`, valid through that UTC day) or an RFC 3339 time.
/// The codes are made (and audited) by `ops::cli::coins_codes`.
pub fn codes_args(amount: &str, count: u32, expires: Option<&str>) -> anyhow::Result<(i64, u32, Option<chrono::DateTime<chrono::Utc>>)> {
    let coins = Coins::parse(amount).filter(|c| c.cents() > 0).ok_or(GrantError::BadAmount)?;
    if !(1..=10_000).contains(&count) {
        anyhow::bail!("--count must be between 1 and 10000");
    }
    let expires_at = match expires.map(str::trim) {
        None | Some("") => None,
        Some(raw) => Some(expiry(raw).ok_or_else(|| anyhow::anyhow!("--expires must be a day like 2026-12-31 or a time like 2026-12-31T18:00:00Z"))?),
    };
    if expires_at.is_some_and(|e| e <= crate::db::now()) {
        anyhow::bail!("--expires is already past");
    }
    Ok((coins.cents(), count, expires_at))
}

/// The line `coins grant` prints.
pub fn granted_line(coins: Coins, email: &str, balance: i64) -> String {
    format!("granted {coins} coins to {}; balance: {} coins", email.trim().to_lowercase(), format_coins(balance))
}

fn expiry(raw: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(raw) {
        return Some(t.with_timezone(&chrono::Utc));
    }
    let day = chrono::NaiveDate::parse_from_str(raw, "%Y-%m-%d").ok()?;
    Some(day.succ_opt()?.and_hms_opt(0, 0, 0)?.and_utc())
}

/// `zmarket ledger verify`: the report, or the first breach as the error.
pub async fn verify(config: &Config) -> anyhow::Result<String> {
    let db = database(config).await?;
    let report = crate::billing::verify::verify(&db).await?;
    Ok(report.to_string())
}
