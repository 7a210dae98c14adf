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

/// `zmarket coins grant --email E --amount N [--memo M]`: the grant and its line in the
/// operator's audit (`user.grant`, by "command line") in one transaction (issue 43, item 9:
/// every money write is audited whatever its door). Prints the new balance.
pub async fn coins_grant(config: &Config, email: &str, amount: &str, memo: &str) -> anyhow::Result<String> {
    use crate::ops::model::{Actor, AuditAction};
    let coins = crate::billing::cli::grant_amount(amount)?;
    let db = database(config).await?;
    let txn = crate::db::write_txn(&db).await?;
    let (user_id, balance) = crate::billing::issuance::grant_by_email_in(&txn, email, coins, memo).await?;
    let detail = serde_json::json!({"amount": coins.cents(), "memo": memo.trim(), "before": {"balance": balance - coins.cents()}, "after": {"balance": balance}});
    crate::ops::audit::record(&txn, &Actor::command_line(), AuditAction::UserGrant, &format!("user:{user_id}"), detail).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    txn.commit().await?;
    Ok(crate::billing::cli::granted_line(coins, email, balance))
}

/// `zmarket coins codes --amount N --count K [--expires DATE]`: the codes, one a line, and the
/// batch's line in the operator's audit (`codes.issue`, by "command line"), in one transaction.
pub async fn coins_codes(config: &Config, amount: &str, count: u32, expires: Option<&str>) -> anyhow::Result<String> {
    use crate::ops::model::{Actor, AuditAction};
    let (cents, count, expires_at) = crate::billing::cli::codes_args(amount, count, expires)?;
    let db = database(config).await?;
    let txn = crate::db::write_txn(&db).await?;
    let issued = crate::billing::codes::issue(&txn, cents, count, expires_at, None).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let detail = serde_json::json!({"amount": cents, "count": count, "expires_at": expires_at, "batch": issued.batch});
    crate::ops::audit::record(&txn, &Actor::command_line(), AuditAction::CodesIssue, &format!("batch:{}", issued.batch), detail).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    txn.commit().await?;
    Ok(issued.codes.join("\n"))
}
