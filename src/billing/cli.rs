//! The operator's commands: `zmarket coins grant` and `zmarket ledger verify`. They open the
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

/// `zmarket ledger verify`: the report, or the first breach as the error.
pub async fn verify(config: &Config) -> anyhow::Result<String> {
    let db = database(config).await?;
    let report = crate::billing::verify::verify(&db).await?;
    Ok(report.to_string())
}
