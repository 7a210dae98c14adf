//! The operator's commands: `zmarket coins grant`, `zmarket coins codes` and `zmarket ledger verify`. They open the
//! configured database themselves, so they work while the server runs.

use anyhow::Context;

use crate::billing::issuance::{self, GrantError};
use crate::coins::{Coins, format_coins};
use crate::config::Config;

async fn database(config: &Config) -> anyhow::Result<sea_orm::DatabaseConnection> {
    let db = crate::db::connect(config).await.context("connecting to the database")?;
    crate::db::migrate(&db).await.context("running migrations")?;
    Ok(db)
}

/// `zmarket coins grant --email E --amount N [--memo M]`: N in coins ("12.50"). Prints the new balance.
pub async fn grant(config: &Config, email: &str, amount: &str, memo: &str) -> anyhow::Result<String> {
    let coins = Coins::parse(amount).ok_or(GrantError::BadAmount)?;
    if coins.cents() <= 0 {
        return Err(GrantError::BadAmount.into());
    }
    let db = database(config).await?;
    let balance = issuance::grant_by_email(&db, email, coins, memo).await?;
    Ok(format!("granted {coins} coins to {}; balance: {} coins", email.trim().to_lowercase(), format_coins(balance)))
}

/// `zmarket coins codes --amount N --count K [--expires DATE]`: K new top-up codes of N coins,
/// one a line. DATE is a day (`2026-12-31`, valid through that UTC day) or an RFC 3339 time.
pub async fn codes(config: &Config, amount: &str, count: u32, expires: Option<&str>) -> anyhow::Result<String> {
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
    let db = database(config).await?;
    Ok(crate::billing::codes::generate(&db, coins.cents(), count, expires_at).await?.join("\n"))
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
