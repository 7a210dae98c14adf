//! The apps' part of a heartbeat: the acknowledgements of app commands end their pending
//! state, and the agent's reports of each installation's actual state move it (through the
//! one table, `lifecycle::next`). Registered with the devices domain as an `AgentListener`.

use sea_orm::{ColumnTrait, DatabaseTransaction, EntityTrait, QueryFilter};

use crate::apps::lifecycle::{Desired, Event};
use crate::apps::model::{AppStatus, InstallationReport};
use crate::apps::state::{self, Change};
use crate::db::entity::{device_commands, devices, installations};
use crate::db::enums::CommandStatus;
use crate::devices::protocol::AgentListener;
use crate::error::AppError;

pub struct AppsListener;

fn install_phase(s: AppStatus) -> bool {
    matches!(s, AppStatus::Preparing | AppStatus::Downloading | AppStatus::Installing | AppStatus::Installed)
}

/// What the agent reported, trimmed to sane sizes.
fn clean(mut r: InstallationReport) -> InstallationReport {
    r.progress = r.progress.map(|p| p.clamp(0, 100));
    r.passed.truncate(8);
    r.error = r.error.map(|e| e.chars().take(1000).collect());
    r.url = r.url.filter(|u| (u.starts_with("http://") || u.starts_with("https://")) && u.len() <= 500);
    r
}

#[async_trait::async_trait]
impl AgentListener for AppsListener {
    async fn heartbeat(
        &self,
        txn: &DatabaseTransaction,
        device: &devices::Model,
        reports: &[InstallationReport],
        acked: &[device_commands::Model],
    ) -> Result<bool, AppError> {
        let reports: Vec<InstallationReport> =
            reports.iter().cloned().map(clean).collect();
        let report_of = |id: &str| reports.iter().find(|r| r.id == id);
        let mut changed = false;
        // The install phases passed since the last report, before the acknowledgement that may
        // end the install (the table lets an install only move forward through them).
        for r in reports.iter().filter(|r| !r.passed.is_empty()) {
            for phase in &r.passed {
                let Some(row) = installations::Entity::find_by_id(r.id.clone())
                    .filter(installations::Column::DeviceId.eq(device.id.clone()))
                    .one(txn)
                    .await?
                else {
                    break;
                };
                if row.status != *phase && install_phase(row.status) && install_phase(*phase) {
                    changed |= state::apply(txn, &row, Event::Report(*phase), Change::default()).await?.is_some();
                }
            }
        }
        // Then the acknowledgements: each ends its installation's pending command.
        for cmd in acked {
            let Some(inst) = &cmd.subject_id else { continue };
            let Some(row) = installations::Entity::find_by_id(inst.clone())
                .filter(installations::Column::DeviceId.eq(device.id.clone()))
                .filter(installations::Column::CommandId.eq(cmd.id.clone()))
                .one(txn)
                .await?
            else {
                continue; // not an app command, or one the watchdog already gave up on
            };
            let (event, reason) = match cmd.status {
                CommandStatus::Done => (Event::Done(Desired::parse(&row.desired)), None),
                _ => (Event::Fail, cmd.error.clone()),
            };
            let url = report_of(&row.id).and_then(|r| r.url.clone());
            changed |= state::apply(txn, &row, event, Change { reason, open_url: url, ..Default::default() }).await?.is_some();
        }
        for r in &reports {
            let Some(row) = installations::Entity::find_by_id(r.id.clone())
                .filter(installations::Column::DeviceId.eq(device.id.clone()))
                .one(txn)
                .await?
            else {
                continue;
            };
            if row.status == r.status {
                state::progress(txn, &row, r.progress).await?;
                state::open_url(txn, &row, r.url.clone()).await?;
                continue;
            }
            // While a command is under way its acknowledgement decides, except for an install's
            // progress (downloading, installing, installed).
            if row.command_id.is_some() && !install_phase(row.status) {
                continue;
            }
            let change = Change { progress: r.progress, reason: r.error.clone(), open_url: r.url.clone(), ..Default::default() };
            changed |= state::apply(txn, &row, Event::Report(r.status), change).await?.is_some();
        }
        Ok(changed)
    }
}
