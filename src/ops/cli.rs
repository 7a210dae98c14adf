//! `zmarket operator grant --email E` and `revoke`: they open the configured database themselves,
//! so they work while the server runs (the flag is read on every operator call).

use anyhow::Context;

use crate::config::Config;

async fn database(config: &Config) -> anyhow::Result<sea_orm::DatabaseConnection> {
    let db = crate::db::connect(config).await.context("connecting to the database")?;
    crate::db::migrate(&db).await.context("running migrations")?;
    Ok(db)
}

/// Grants (`operator: true`) or revokes the operator's role; the line to print.
pub async fn set(config: &Config, email: &str, operator: bool) -> anyhow::Result<String> {
    let db = database(config).await?;
    let email = email.trim().to_lowercase();
    let changed = crate::ops::operators::set_operator(&db, &email, operator).await.map_err(|e| anyhow::anyhow!(describe(&e, &email)))?;
    Ok(match (operator, changed) {
        (true, true) => format!("{email} is now an operator"),
        (true, false) => format!("{email} was already an operator"),
        (false, true) => format!("{email} is no longer an operator"),
        (false, false) => format!("{email} was not an operator"),
    })
}

fn describe(e: &crate::error::AppError, email: &str) -> String {
    use crate::error::{AppError, Msg};
    match e {
        AppError::Refused(Msg::LastOperator) => "the market must keep at least one operator: grant another first".into(),
        e if e.status() == axum::http::StatusCode::NOT_FOUND => format!("no account has the email {email}"),
        AppError::Invalid { .. } => format!("{email} is not an email address"),
        other => format!("failed: {other:?}"),
    }
}
