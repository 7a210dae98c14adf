//! The watchdog: a transitional state that outlives its time limit becomes the matching failed
//! state (install_failed, rent_failed, failed, uninstall_failed) with a reason the owner reads;
//! its command is withdrawn, so the device stops receiving it. The owner can then retry or remove.

use std::time::Duration;

use chrono::Duration as ChronoDuration;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use crate::apps::lifecycle::{Event, is_transitional, time_limit};
use crate::apps::model::{AppStatus, Reason, ReasonCode};
use crate::apps::state::{self, Change};
use crate::config::AppsConfig;
use crate::db::entity::installations;
use crate::db::{now, write_txn};
use crate::error::AppError;
use sea_orm::Iterable;

/// Fails every installation stuck past its limit; returns how many.
pub async fn run(db: &DatabaseConnection, settings: &AppsConfig) -> Result<usize, AppError> {
    let install = Duration::from_secs(settings.install_timeout_secs);
    let other = Duration::from_secs(settings.action_timeout_secs);
    let t = now();
    let mut n = 0;
    for s in AppStatus::iter().filter(|s| is_transitional(*s)) {
        let Some(limit) = time_limit(s, install, other) else { continue };
        let cutoff = t - ChronoDuration::from_std(limit).unwrap_or(ChronoDuration::MAX);
        let stuck = installations::Entity::find()
            .filter(installations::Column::Status.eq(s))
            .filter(installations::Column::StateSince.lt(cutoff))
            .all(db)
            .await?;
        for row in stuck {
            let txn = write_txn(db).await?;
            let reason = Reason { code: ReasonCode::TimedOut, state: Some(s.into()), secs: Some(limit.as_secs()), ..Default::default() }.stored();
            if let Some(cmd) = &row.command_id {
                crate::devices::commands::withdraw(&txn, cmd, "timed out").await?;
            }
            if state::apply(&txn, &row, Event::Timeout, Change { reason: Some(reason), ..Default::default() }).await?.is_some() {
                n += 1;
            }
            txn.commit().await?;
        }
    }
    Ok(n)
}
