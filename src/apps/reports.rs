//! The apps' part of a heartbeat: the acknowledgements of app commands end their pending
//! state, and the agent's reports of each installation's actual state move it (through the
//! one table, `lifecycle::next`). Registered with the devices domain as an `AgentListener`.

use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, DatabaseTransaction, EntityTrait, QueryFilter};

use crate::apps::lifecycle::{Event, install_phase};
use crate::apps::model::{AppStatus, Desired, InstallKind, InstallationReport, Reason};
use crate::apps::money::{self, Happened};
use crate::apps::notify;
use zmarket_protocol::heartbeat::CommandBody;
use crate::apps::state::{self, Change};
use crate::db::entity::{devices, installations};
use crate::db::enums::{CommandStatus, NotificationKind};
use crate::devices::agent_api::{AgentListener, Beat};
use crate::error::AppError;
use crate::ids::InstallationId;

pub struct AppsListener;

/// What the agent reported, trimmed to sane sizes; an older agent's prose becomes `other`.
fn clean(mut r: InstallationReport) -> InstallationReport {
    r.progress = r.progress.map(|p| p.clamp(0, 100));
    r.passed.truncate(8);
    r.reason = r.reason.map(Reason::trimmed).or_else(|| r.error.take().map(|e| Reason::from_stored(&e).trimmed()));
    r.error = None;
    r.url = r.url.filter(|u| box_address(u));
    r
}

/// The app's address on the box's own network, as the agent reports it: plain http(s) to an IP
/// address and a port, nothing else (a provider's agent cannot send renters to any site; Open
/// goes through the market).
fn box_address(u: &str) -> bool {
    if u.len() > 100 {
        return false;
    }
    let Ok(url) = url::Url::parse(u) else { return false };
    matches!(url.scheme(), "http" | "https")
        && matches!(url.host(), Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)))
        && url.port().is_some()
        && url.path() == "/"
        && url.query().is_none()
        && url.username().is_empty()
}

/// The failure of an acknowledged command, as stored (a reason code or an older agent's prose).
fn failure(cmd: &crate::devices::commands::Queued) -> Option<String> {
    cmd.error.as_deref().map(|e| Reason::from_stored(e).stored())
}

/// Fails the installations among `holders` (they hold a GPU `device` no longer lists) with
/// `gpu_gone`; one failed already stays as it is.
async fn gpu_gone(txn: &DatabaseTransaction, device: &devices::Model, holders: &[InstallationId]) -> Result<bool, AppError> {
    if holders.is_empty() {
        return Ok(false);
    }
    let rows = installations::Entity::find()
        .filter(installations::Column::Id.is_in(holders.to_vec()))
        .filter(installations::Column::DeviceId.eq(device.id.clone()))
        .all(txn)
        .await?;
    let mut changed = false;
    for row in rows {
        let reason = Some(Reason::new(zmarket_protocol::apps::ReasonCode::GpuGone).stored());
        let event = if matches!(row.status, AppStatus::Running | AppStatus::Suspended) { Event::Report(AppStatus::Failed) } else { Event::Fail };
        if state::apply(txn, &row, event, Change { reason, ..Default::default() }).await?.is_some() {
            tracing::warn!(installation = %row.id, device = %device.id, "a GPU the installation holds is gone from its box: failed");
            changed = true;
        }
    }
    Ok(changed)
}

#[async_trait::async_trait]
impl AgentListener for AppsListener {
    async fn offline(&self, txn: &DatabaseTransaction, device: &devices::Model) -> Result<(), AppError> {
        notify::rented_box(txn, &device.id, NotificationKind::RentalDeviceOffline).await
    }

    async fn heartbeat(&self, txn: &DatabaseTransaction, beat: Beat<'_>) -> Result<bool, AppError> {
        let Beat { device, silent_since, came_online, installations: reports, acked, gpus_gone, snapshots: _ } = beat;
        if came_online {
            notify::rented_box(txn, &device.id, NotificationKind::RentalDeviceBack).await?;
        }
        // An installation whose GPU left the box fails (its meter stops with the run); what the
        // box says of it is not believed until the GPU is back.
        let mut changed = gpu_gone(txn, device, gpus_gone).await?;
        let reports: Vec<InstallationReport> =
            reports.iter().filter(|r| !gpus_gone.iter().any(|g| g.as_str() == r.id)).cloned().map(clean).collect();
        let report_of = |id: &str| reports.iter().find(|r| r.id == id);
        if let Some(since) = silent_since {
            silence(txn, device, since, &reports).await?;
        }
        // The install phases passed since the last report, before the acknowledgement that may
        // end the install (the table lets an install only move forward through them).
        for r in reports.iter().filter(|r| !r.passed.is_empty()) {
            for phase in r.passed.iter().map(|p| AppStatus::from(*p)) {
                let Some(row) = installations::Entity::find_by_id(r.id.clone())
                    .filter(installations::Column::DeviceId.eq(device.id.clone()))
                    .one(txn)
                    .await?
                else {
                    break;
                };
                if row.status != phase && install_phase(row.status) && install_phase(phase) {
                    changed |= state::apply(txn, &row, Event::Report(phase), Change::default()).await?.is_some();
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
                CommandStatus::Done => (Event::Done(row.desired), None),
                _ => (Event::Fail, failure(cmd)),
            };
            // An update carried out: the installation runs the version it was sent.
            let version = match (cmd.status, CommandBody::from_stored(cmd.kind.into(), &cmd.payload)) {
                (CommandStatus::Done, Some(CommandBody::AppUpdate(p))) => Some(p.version),
                _ => None,
            };
            let url = report_of(row.id.as_str()).and_then(|r| r.url.clone());
            changed |= state::apply(txn, &row, event, Change { reason, open_url: url, version, ..Default::default() }).await?.is_some();
        }
        for r in &reports {
            let Some(row) = installations::Entity::find_by_id(r.id.clone())
                .filter(installations::Column::DeviceId.eq(device.id.clone()))
                .one(txn)
                .await?
            else {
                continue;
            };
            let status = AppStatus::from(r.status);
            if row.status == status {
                state::progress(txn, &row, r.progress).await?;
                state::open_url(txn, &row, r.url.clone()).await?;
                continue;
            }
            // While a command is under way its acknowledgement decides, except for an install's
            // progress (downloading, installing, installed).
            if row.command_id.is_some() && !install_phase(row.status) {
                continue;
            }
            // Running on the box although the person asked for it stopped or suspended (the
            // provider started it again): it is stopped again, and the meter does not restart.
            let desired = row.desired;
            if status == AppStatus::Running && matches!(desired, Desired::Stopped | Desired::Suspended) {
                let (kind, _) = crate::apps::lifecycle::command_of(
                    if desired == Desired::Stopped { crate::apps::model::Action::Stop } else { crate::apps::model::Action::Suspend },
                    desired,
                );
                let command = CommandBody::app(kind.into(), row.id.as_str());
                changed |= state::apply(txn, &row, Event::Drift(desired), Change { command, ..Default::default() }).await?.is_some();
                continue;
            }
            let change = Change { progress: r.progress, reason: r.reason.as_ref().map(Reason::stored), open_url: r.url.clone(), ..Default::default() };
            changed |= state::apply(txn, &row, Event::Report(status), change).await?.is_some();
        }
        Ok(changed)
    }
}

/// The device was silent since `since` (longer than `offline_after_secs`, or marked offline):
/// its running rentals are charged up to then and their meters restart with this beat if it
/// reports them running, so a silence is never charged, whether or not the offline sweep saw it
/// (issue 29), and the seconds after it are charged from this beat on, also when the meter job
/// paused the meter meanwhile (issue 39).
async fn silence(txn: &DatabaseTransaction, device: &devices::Model, since: DateTime<Utc>, reports: &[InstallationReport]) -> Result<(), AppError> {
    let running = installations::Entity::find()
        .filter(installations::Column::DeviceId.eq(device.id.clone()))
        .filter(installations::Column::Kind.eq(InstallKind::Rent))
        .filter(installations::Column::Status.eq(AppStatus::Running))
        .all(txn)
        .await?;
    for r in running {
        // When the hold cannot pay what ran before, the meter stops, and its job suspends the rental.
        let still = reports.iter().any(|p| p.id == r.id && AppStatus::from(p.status) == AppStatus::Running);
        let silent = Happened::Silent { since, seen: device.last_seen_at, running: still };
        money::settle(txn, &r, money::plan(&r, silent)).await?;
    }
    Ok(())
}

/// The snapshots' part of a heartbeat (src/apps/snapshots.rs): their reports and the
/// acknowledgements of the copies to the market.
pub struct SnapshotsListener {
    pub keep_ended_days: u32,
}

#[async_trait::async_trait]
impl AgentListener for SnapshotsListener {
    async fn heartbeat(&self, txn: &DatabaseTransaction, beat: Beat<'_>) -> Result<bool, AppError> {
        if beat.snapshots.is_empty() && !beat.acked.iter().any(|c| c.kind == crate::db::enums::CommandKind::SnapshotUpload) {
            return Ok(false);
        }
        crate::apps::snapshots::on_beat(txn, beat.device, beat.snapshots, beat.acked, self.keep_ended_days).await
    }
}
