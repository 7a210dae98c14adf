//! The market's figures (the overview), its settings and its top-up codes, as the operator's
//! console reads and changes them. The figures come from the domains that own them; a change of
//! the settings is stored, audited (before and after) and applied on this instance at once (the
//! others follow within `settings::FOLLOW_EVERY`).

use chrono::Duration;
use serde_json::{Map, Value, json};

use crate::billing::ledger::AccountRef;
use crate::billing::{codes, wallet};
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::ops::audit;
use crate::ops::model::{Actor, AuditAction, FeeDay, IssueCodes, IssuedCode, IssuedCodes, Overview, SettingsChange};
use crate::ops::OpsCtx;
use crate::settings::{self, MarketSettings};

/// The console's "Back up now": a copy into the backups folder, counted as the last backup
/// (manual) and audited. 409 on PostgreSQL (pg_dump's job).
pub async fn back_up_now(cx: &OpsCtx, actor: &Actor) -> Result<crate::ops::backup::BackupInfo, AppError> {
    if cx.db.get_database_backend() != sea_orm::DbBackend::Sqlite {
        return Err(AppError::Refused(Msg::BackupSqliteOnly));
    }
    let b = crate::ops::backup::back_up_now(&cx.db, &cx.data_dir).await.map_err(AppError::Internal)?;
    let txn = write_txn(&cx.db).await?;
    audit::record(&txn, actor, AuditAction::BackupRun, "backup", json!({ "file": b.file, "size": b.size })).await?;
    txn.commit().await?;
    Ok(b)
}

pub async fn overview(cx: &OpsCtx) -> Result<Overview, AppError> {
    let db = &cx.db;
    let t = now();
    let (users, users_7d) = crate::iam::account::people_counts(db, t - Duration::days(7)).await?;
    let (devices_online, devices_total) = crate::devices::counts(db).await?;
    let (installations_running, apps_rented) = crate::apps::rental::running_counts(db).await?;
    let machines_rented = crate::devices::rental::running_count(db).await?;
    let (coins_in_circulation, held, fee_income) = wallet::market_money(db).await?;
    let days = wallet::daily(db, &AccountRef::MarketFee, 30, t).await?;
    let (count, market_bytes, box_bytes) = crate::apps::snapshots::storage(db).await?;
    Ok(Overview {
        users,
        users_7d,
        devices_online,
        devices_total,
        installations_running,
        rentals_running: apps_rented + machines_rented,
        coins_in_circulation,
        held,
        fee_income,
        fee_income_30d: days.into_iter().map(|d| FeeDay { day: d.day, amount: d.income }).collect(),
        last_backup: crate::ops::backup::last_backup(&cx.data_dir),
        gpus: crate::devices::gpus::market(db).await?,
        snapshots: crate::ops::model::SnapshotStorage { count, market_bytes, box_bytes },
    })
}

/// Changes the settings named in `change`; answers the settings in force after it.
pub async fn update_settings(cx: &OpsCtx, actor: &Actor, change: SettingsChange) -> Result<MarketSettings, AppError> {
    let txn = write_txn(&cx.db).await?;
    settings::lock(&txn).await?;
    let before = cx.market_settings.read(&txn).await?;
    let after = change.apply(&before);
    let names = after.changed_from(&before);
    if !names.is_empty() {
        settings::store(&txn, &after, &names).await?;
        let pick = |s: &MarketSettings| names.iter().map(|n| (n.clone(), s.value_of(n))).collect::<Map<String, Value>>();
        audit::record(&txn, actor, AuditAction::SettingsUpdate, "settings", json!({ "before": pick(&before), "after": pick(&after) })).await?;
    }
    txn.commit().await?;
    cx.market_settings.reload(&cx.db).await?;
    Ok(after)
}

pub async fn issue_codes(cx: &OpsCtx, actor: &Actor, req: IssueCodes) -> Result<IssuedCodes, AppError> {
    let txn = write_txn(&cx.db).await?;
    let issued = codes::issue(&txn, req.amount, req.count, req.expires_at, Some(&actor.id)).await?;
    let detail = json!({ "amount": req.amount, "count": req.count, "expires_at": req.expires_at, "batch": issued.batch });
    audit::record(&txn, actor, AuditAction::CodesIssue, &format!("batch:{}", issued.batch), detail).await?;
    txn.commit().await?;
    let items = issued.codes.into_iter().map(|code| IssuedCode { code, amount: req.amount, expires_at: req.expires_at }).collect();
    Ok(IssuedCodes { batch: issued.batch, items })
}
