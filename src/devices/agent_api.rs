//! The market's side of the agent API: registration, heartbeats (spec, metrics, the hosted
//! Z-CLOUD machines), the command/acknowledgement cycle and the protocol's version; and the
//! offline job. No HTTP types here. The wire's types are the protocol crate's (src/protocol/);
//! the agent program itself is src/agent/.

use std::net::IpAddr;

use chrono::Duration;
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set};

use crate::db::entity::{device_commands, devices};
use crate::db::enums::NotificationKind;
use crate::db::{for_update, now, write_txn};
use crate::devices::DevicesCtx;
use crate::devices::access::owner_of;
use crate::devices::model::*;
use crate::devices::notify::notify;
use crate::error::{AppError, Msg};
use crate::iam::tokens;
use crate::ids::{CommandId, DeviceId, InstallationId};

/// Another domain's part of a heartbeat (the apps domain: its installations' reports and the
/// acknowledgements of its commands). Registered in server::prepare; runs inside the heartbeat's
/// transaction; answers whether something people see changed.
#[async_trait::async_trait]
pub trait AgentListener: Send + Sync {
    async fn heartbeat(&self, txn: &sea_orm::DatabaseTransaction, beat: Beat<'_>) -> Result<bool, AppError>;
    /// The device went offline (its owners are told already), inside that change's transaction.
    async fn offline(&self, _txn: &sea_orm::DatabaseTransaction, _device: &devices::Model) -> Result<(), AppError> {
        Ok(())
    }
}

/// One heartbeat as the listeners see it.
pub struct Beat<'a> {
    /// The device, as this beat left it (online, seen now).
    pub device: &'a devices::Model,
    /// When the device was last heard from before this beat, if it was silent for longer than
    /// `offline_after_secs` since (offline, whether or not the sweep had marked it yet).
    pub silent_since: Option<chrono::DateTime<chrono::Utc>>,
    /// The device was offline before this beat (the first beat back: one of many at once).
    pub came_online: bool,
    pub installations: &'a [zmarket_protocol::apps::InstallationReport],
    pub acked: &'a [device_commands::Model],
    /// Installations holding a GPU this box no longer lists (docs/gpus.md): they fail with
    /// `gpu_gone`, and what the box reports of them is not believed while the GPU is away.
    pub gpus_gone: &'a [InstallationId],
    /// Snapshots that moved on (docs/data.md).
    pub snapshots: &'a [zmarket_protocol::snapshots::SnapshotReport],
}

/// Every registered listener.
#[derive(Clone, Default)]
pub struct AgentListeners(pub std::sync::Arc<Vec<std::sync::Arc<dyn AgentListener>>>);

/// The protocol version an agent speaks, from what it sent in the `zmarket-protocol` header
/// (none: version 1, an agent of the release before the version was sent), or the refusal of a
/// version this market does not know (zmarket_protocol::version).
pub fn protocol_of(sent: Option<&str>) -> Result<u32, AppError> {
    zmarket_protocol::version::spoken(sent).map_err(|u| AppError::Refused(Msg::AgentProtocolUnsupported(u.sent)))
}

/// Registers an agent's machine: limited per client IP, and in a closed market (a
/// `devices.registration_token` is set) only with that token.
pub async fn register(cx: &DevicesCtx, ip: IpAddr, req: AgentRegistration) -> Result<RegisterResponse, AppError> {
    let AgentRegistration { device_type, name, spec, registration_token, pairing_code } = req;
    let expected = cx.settings.registration_token.as_str();
    if !expected.is_empty() {
        // Compared as digests: the time taken says nothing about the token.
        let given = registration_token.unwrap_or_default();
        if tokens::hash_token(&given) != tokens::hash_token(expected) {
            return Err(AppError::Refused(Msg::RegistrationTokenInvalid));
        }
    }
    cx.register_limit.check(&cx.db, &ip.to_string()).await?;
    let secret = tokens::random_token();
    let code = pairing_code.unwrap_or_else(PairingCode::new_random);
    let txn = write_txn(&cx.db).await?;
    let id = crate::devices::rows::free_id(&txn).await?;
    let t = now();
    let mut row = crate::devices::rows::new_device(id.clone(), name, device_type, DeviceStatus::Online, t);
    row.secret_hash = Set(Some(tokens::hash_token(&secret)));
    row.pairing_hash = Set(Some(tokens::hash_token(code.as_str())));
    row.cpu_cores = Set(spec.cpu_cores);
    row.memory_bytes = Set(spec.memory_bytes);
    row.disk_bytes = Set(spec.disk_bytes);
    row.gpus = Set(serde_json::to_string(&spec.gpus).map_err(|e| AppError::Internal(e.into()))?);
    row.gpu_runtime = Set(spec.gpu_runtime);
    row.last_seen_at = Set(Some(t));
    row.insert(&txn).await?;
    txn.commit().await?;
    Ok(RegisterResponse { device_id: id.as_str().to_string(), device_secret: secret, pairing_code: code.as_str().to_string() })
}

/// The device whose secret this is; `None` when unknown, revoked or unlinked.
pub async fn device_by_secret(cx: &DevicesCtx, secret: Option<&str>) -> Result<devices::Model, AppError> {
    let secret = secret.filter(|s| !s.is_empty()).ok_or(AppError::Refused(Msg::DeviceSecretInvalid))?;
    devices::Entity::find()
        .filter(devices::Column::SecretHash.eq(tokens::hash_token(secret)))
        .one(&cx.db)
        .await?
        .ok_or(AppError::Refused(Msg::DeviceSecretInvalid))
}

pub(crate) fn settings(cx: &DevicesCtx, d: &devices::Model) -> Settings {
    Settings {
        name: d.name.clone(),
        sharing_mode: d.sharing_mode.into(),
        rentable: d.rentable,
        price_per_hour: d.price_per_hour,
        bound: owner_of(d).is_some(),
        heartbeat_secs: cx.settings.heartbeat_secs,
    }
}

pub async fn heartbeat(cx: &DevicesCtx, secret: Option<&str>, req: HeartbeatRequest) -> Result<HeartbeatResponse, AppError> {
    let device = device_by_secret(cx, secret).await?;
    beat(cx, &device, req).await
}

/// A beat of `device` (authenticated by its secret before), over HTTP or the channel: the same
/// rules either way; the answer holds every pending command.
pub async fn beat(cx: &DevicesCtx, device: &devices::Model, req: HeartbeatRequest) -> Result<HeartbeatResponse, AppError> {
    metrics::counter!(crate::observe::AGENT_BEATS).increment(1);
    if let Some(spec) = &req.spec {
        spec.check()?;
    }
    if let Some(m) = &req.metrics {
        m.check()?;
    }
    if let Some(v) = &req.verification {
        v.check()?;
    }
    // A beat's work is bounded whatever its size, and agents hold at most `AGENT_WRITERS` of the
    // database's writers, each given back only after as long again as its beat held it: beats
    // take at most half of the write time, and people's sign-ins and edits find it free.
    let writer = cx.agent_writers.clone().acquire_owned().await.map_err(|e| AppError::Internal(e.into()))?;
    let started = std::time::Instant::now();
    let answer = beat_written(cx, device, req).await;
    let held = started.elapsed().min(MAX_AGENT_PAUSE);
    tokio::spawn(async move {
        tokio::time::sleep(held).await;
        drop(writer);
    });
    answer
}

async fn beat_written(cx: &DevicesCtx, device: &devices::Model, req: HeartbeatRequest) -> Result<HeartbeatResponse, AppError> {
    let txn = write_txn(&cx.db).await?;
    // Re-read under the row's lock: the device may have been unlinked meanwhile, and of fifty
    // heartbeats at once only the first sees it come back online (one notification).
    let d = for_update(&txn, devices::Entity::find_by_id(device.id.clone()).filter(devices::Column::SecretHash.eq(device.secret_hash.clone())))
        .one(&txn)
        .await?
        .ok_or(AppError::Refused(Msg::DeviceSecretInvalid))?;
    let req = bounded(req, owner_of(&d).is_some());
    let t = now();
    let came_online = d.status != DeviceStatus::Online;
    let offline_after = Duration::seconds(cx.settings.offline_after_secs as i64);
    // The box's quiet beats not written yet (src/devices/quiet.rs): this beat writes its time.
    let waiting = cx.quiet.take(&d.id).map(|s| s.at);
    let prev_seen = d.last_seen_at.max(waiting);
    let silent_since = prev_seen.filter(|s| came_online || t - *s > offline_after);
    let mut a: devices::ActiveModel = d.clone().into();
    if let Some(spec) = &req.spec {
        a.cpu_cores = Set(spec.cpu_cores);
        a.memory_bytes = Set(spec.memory_bytes);
        a.disk_bytes = Set(spec.disk_bytes);
        a.gpus = Set(serde_json::to_string(&spec.gpus).map_err(|e| AppError::Internal(e.into()))?);
        a.gpu_runtime = Set(spec.gpu_runtime);
    }
    if let Some(m) = &req.metrics {
        let cpu = if m.cpu_percent.is_finite() { m.cpu_percent.clamp(0.0, 100.0) } else { 0.0 };
        a.cpu_percent = Set(Some(cpu));
        a.memory_used_bytes = Set(Some(m.memory_used_bytes.max(0)));
        a.disk_used_bytes = Set(Some(m.disk_used_bytes.max(0)));
        let used = (!m.gpus.is_empty()).then(|| serde_json::to_string(&m.gpus)).transpose().map_err(|e| AppError::Internal(e.into()))?;
        if d.gpu_use != used {
            a.gpu_use = Set(used);
        }
    }
    if let Some(v) = &req.verification {
        let at = crate::devices::model::Verification { at: t, gpus: v.gpus.clone() };
        a.verification = Set(Some(serde_json::to_string(&at).map_err(|e| AppError::Internal(e.into()))?));
    }
    a.status = Set(DeviceStatus::Online);
    a.last_seen_at = Set(Some(t));
    a.updated_at = Set(t);
    if let Some((ring, hour)) = crate::devices::presence::mark(d.presence.as_deref(), d.presence_hour, t) {
        a.presence = Set(Some(ring));
        a.presence_hour = Set(Some(hour));
    }
    let d = a.update(&txn).await?;
    // A box nobody bound keeps no series (anyone may register one).
    if let Some(m) = req.metrics.as_ref().filter(|_| owner_of(&d).is_some()) {
        crate::devices::telemetry::record(&txn, &d.id, prev_seen, t, m, cx.settings.sample_every_secs).await?;
    }
    if came_online {
        notify(&txn, &d, NotificationKind::DeviceOnline, None).await?;
    }
    let mut changed = came_online || req.verification.is_some();
    let gone = crate::devices::gpus::gone(&txn, &d).await?;
    // A host's heartbeat speaks for the Z-CLOUD machines running on it.
    let hosted = devices::Entity::find()
        .filter(devices::Column::HostId.eq(d.id.clone()))
        .filter(devices::Column::Status.is_in([DeviceStatus::Online, DeviceStatus::Offline]))
        .all(&txn)
        .await?;
    for m in hosted {
        let back = m.status != DeviceStatus::Online;
        let mark = crate::devices::presence::mark(m.presence.as_deref(), m.presence_hour, t);
        let mut a: devices::ActiveModel = m.into();
        a.status = Set(DeviceStatus::Online);
        a.last_seen_at = Set(Some(t));
        if let Some((ring, hour)) = mark {
            a.presence = Set(Some(ring));
            a.presence_hour = Set(Some(hour));
        }
        let m = a.update(&txn).await?;
        if back {
            changed = true;
            notify(&txn, &m, NotificationKind::DeviceOnline, None).await?;
        }
    }
    // The machines rented on a host that was silent: the silence is not charged.
    if let Some(since) = silent_since {
        crate::devices::rental::silence(&txn, &d.id, since, t).await?;
    }
    let mut acked = Vec::new();
    let mut waiting = acked_pending(&txn, &d, &req.acks).await?;
    for ack in &req.acks {
        let Some(cmd) = waiting.remove(&CommandId::from(&ack.id)) else { continue }; // another device's, or acknowledged
        let (c, cmd) = apply_ack(&txn, cmd, ack).await?;
        changed |= c;
        acked.push(cmd);
    }
    for l in cx.listeners.0.iter() {
        let beat = Beat { device: &d, silent_since, came_online, installations: &req.installations, acked: &acked, gpus_gone: &gone, snapshots: &req.snapshots };
        changed |= l.heartbeat(&txn, beat).await?;
    }
    let commands = pending_commands(&txn, &d.id).await?;
    txn.commit().await?;
    if changed {
        cx.public.changed();
    }
    Ok(HeartbeatResponse { settings: settings(cx, &d), commands })
}

async fn pending_commands(conn: &impl ConnectionTrait, device_id: &DeviceId) -> Result<Vec<Command>, AppError> {
    let pending = device_commands::Entity::find()
        .filter(device_commands::Column::DeviceId.eq(device_id))
        .filter(device_commands::Column::Status.eq(CommandStatus::Pending))
        .order_by_asc(device_commands::Column::CreatedAt)
        .order_by_asc(device_commands::Column::Id)
        .all(conn)
        .await?;
    Ok(pending.into_iter().map(|c| Command::stored(c.id.into(), c.kind.into(), &c.payload)).collect())
}

/// What a heartbeat would answer `device_id` now (the channel sends it when commands wait);
/// `None` when the device is gone or its secret changed.
pub async fn pending(cx: &DevicesCtx, device_id: &DeviceId, secret_hash: Option<&str>) -> Result<Option<HeartbeatResponse>, AppError> {
    let Some(d) = devices::Entity::find_by_id(device_id.to_string()).one(&cx.db).await? else { return Ok(None) };
    if d.secret_hash.as_deref() != secret_hash {
        return Ok(None);
    }
    let commands = pending_commands(&cx.db, device_id).await?;
    Ok(Some(HeartbeatResponse { settings: settings(cx, &d), commands }))
}

/// The devices among `ids` with commands pending, and those commands' ids.
pub async fn pending_ids(cx: &DevicesCtx, ids: &[DeviceId]) -> Result<Vec<(DeviceId, CommandId)>, AppError> {
    let rows = device_commands::Entity::find()
        .filter(device_commands::Column::DeviceId.is_in(ids.to_vec()))
        .filter(device_commands::Column::Status.eq(CommandStatus::Pending))
        .all(&cx.db)
        .await?;
    Ok(rows.into_iter().map(|c| (c.device_id, c.id)).collect())
}

/// Records which instance's channel the device holds (`token`), or that it holds none.
pub async fn record_channel(cx: &DevicesCtx, device_id: &DeviceId, token: Option<&str>) -> Result<(), AppError> {
    devices::Entity::update_many()
        .col_expr(devices::Column::ChannelInstance, Expr::value(token.map(str::to_string)))
        .filter(devices::Column::Id.eq(device_id))
        .exec(&cx.db)
        .await?;
    Ok(())
}

/// The channel `token` closed and the device did not come back on another: it is offline now
/// (not at the end of the heartbeat timeout). True when it went offline.
pub async fn channel_closed(cx: &DevicesCtx, device_id: &DeviceId, token: &str) -> Result<bool, AppError> {
    let txn = write_txn(&cx.db).await?;
    let Some(d) = for_update(&txn, devices::Entity::find_by_id(device_id.to_string()).filter(devices::Column::ChannelInstance.eq(token)))
        .one(&txn)
        .await?
    else {
        return Ok(false);
    };
    let went = d.status == DeviceStatus::Online;
    let mut a: devices::ActiveModel = d.clone().into();
    a.channel_instance = Set(None);
    if went {
        a.status = Set(DeviceStatus::Offline);
        a.updated_at = Set(now());
    }
    let d = a.update(&txn).await?;
    if went {
        went_offline(cx, &txn, &d).await?;
        let hosted = devices::Entity::find()
            .filter(devices::Column::HostId.eq(d.id.clone()))
            .filter(devices::Column::Status.eq(DeviceStatus::Online))
            .all(&txn)
            .await?;
        for m in hosted {
            let mut a: devices::ActiveModel = m.into();
            a.status = Set(DeviceStatus::Offline);
            let m = a.update(&txn).await?;
            went_offline(cx, &txn, &m).await?;
        }
    }
    txn.commit().await?;
    if went {
        cx.public.changed();
    }
    Ok(went)
}

/// What of a beat is read: at most [`MAX_ACKS`] acknowledgements and [`MAX_INSTALLATIONS`]
/// reports (each id once, the first kept), each with at most [`MAX_PASSED`] passed phases. A
/// device nobody has bound has no commands and no installations: its beat carries neither.
fn bounded(mut req: HeartbeatRequest, bound: bool) -> HeartbeatRequest {
    if !bound {
        req.acks.clear();
        req.installations.clear();
        req.snapshots.clear();
        return req;
    }
    let mut seen = std::collections::HashSet::new();
    req.snapshots.retain(|r| seen.len() < zmarket_protocol::snapshots::MAX_REPORTS && seen.insert(r.id.clone()));
    let mut seen = std::collections::HashSet::new();
    req.acks.retain(|a| seen.len() < MAX_ACKS && seen.insert(a.id.clone()));
    let mut seen = std::collections::HashSet::new();
    req.installations.retain(|r| seen.len() < MAX_INSTALLATIONS && seen.insert(r.id.clone()));
    for r in &mut req.installations {
        r.passed.truncate(MAX_PASSED);
    }
    req
}

/// The device's pending commands among those `acks` name, by id: one query for the whole beat.
async fn acked_pending(
    conn: &impl ConnectionTrait,
    device: &devices::Model,
    acks: &[Ack],
) -> Result<std::collections::HashMap<CommandId, device_commands::Model>, AppError> {
    if acks.is_empty() {
        return Ok(Default::default());
    }
    let rows = device_commands::Entity::find()
        .filter(device_commands::Column::Id.is_in(acks.iter().map(|a| a.id.clone())))
        .filter(device_commands::Column::DeviceId.eq(device.id.clone()))
        .filter(device_commands::Column::Status.eq(CommandStatus::Pending))
        .all(conn)
        .await?;
    Ok(rows.into_iter().map(|c| (c.id.clone(), c)).collect())
}

/// Records an acknowledgement of `cmd`, a pending command of the device that sent it; true when
/// a status changed, and the command as acknowledged (for the listeners).
async fn apply_ack(conn: &impl ConnectionTrait, cmd: device_commands::Model, ack: &Ack) -> Result<(bool, device_commands::Model), AppError> {
    // An app command's failure is kept as its reason code with its figures (worded when read).
    let error: Option<String> = if ack.ok {
        None
    } else if let Some(r) = &ack.reason {
        Some(r.clone().trimmed().stored())
    } else {
        Some(ack.error.clone().filter(|e| !e.trim().is_empty()).unwrap_or_else(|| "the agent reported a failure".into()))
    };
    let error = error.map(|e| e.chars().take(2000).collect::<String>());
    let kind = cmd.kind;
    let subject = cmd.subject_id.clone();
    let mut a: device_commands::ActiveModel = cmd.into();
    a.status = Set(if ack.ok { CommandStatus::Done } else { CommandStatus::Failed });
    a.error = Set(error.clone());
    a.acked_at = Set(Some(now()));
    let cmd = a.update(conn).await?;
    if kind == CommandKind::ZcloudCreate
        && let Some(machine) = subject
            && let Some(m) = devices::Entity::find_by_id(machine).filter(devices::Column::Status.eq(DeviceStatus::Creating)).one(conn).await? {
                let mut a: devices::ActiveModel = m.into();
                a.status = Set(if ack.ok { DeviceStatus::Online } else { DeviceStatus::Failed });
                a.status_reason = Set(error.clone());
                if ack.ok {
                    a.last_seen_at = Set(Some(now()));
                }
                a.updated_at = Set(now());
                let m = a.update(conn).await?;
                if ack.ok {
                    crate::devices::rental::made(conn, &m.id, now()).await?;
                }
                let kind = if ack.ok { NotificationKind::ZcloudReady } else { NotificationKind::ZcloudFailed };
                notify(conn, &m, kind, error.as_deref()).await?;
                return Ok((true, cmd));
            }
    Ok((false, cmd))
}

/// `d` went offline: its owners are told, and the listeners hear of it (the renters of its rentals).
async fn went_offline(cx: &DevicesCtx, txn: &sea_orm::DatabaseTransaction, d: &devices::Model) -> Result<(), AppError> {
    notify(txn, d, NotificationKind::DeviceOffline, None).await?;
    for l in cx.listeners.0.iter() {
        l.offline(txn, d).await?;
    }
    Ok(())
}

/// Marks devices offline whose last heartbeat is older than `offline_after_secs`; also forgets
/// devices that registered but were never bound and have not been heard from for
/// `unbound_ttl_secs` (hours: registrations nobody binds do not pile up).
pub async fn mark_offline(cx: &DevicesCtx) -> Result<usize, AppError> {
    let cutoff = now() - Duration::seconds(cx.settings.offline_after_secs as i64);
    let stale = devices::Entity::find()
        .filter(devices::Column::Status.eq(DeviceStatus::Online))
        .filter(Condition::any().add(devices::Column::LastSeenAt.lt(cutoff)).add(devices::Column::LastSeenAt.is_null()))
        .all(&cx.db)
        .await?;
    let mut n = 0;
    for d in stale {
        let txn = write_txn(&cx.db).await?;
        let res = devices::Entity::update_many()
            .col_expr(devices::Column::Status, Expr::value(DeviceStatus::Offline))
            // A channel its instance never closed (the instance stopped): no stream goes there.
            .col_expr(devices::Column::ChannelInstance, Expr::value(Option::<String>::None))
            .col_expr(devices::Column::UpdatedAt, now().into())
            .filter(devices::Column::Id.eq(d.id.clone()))
            .filter(devices::Column::Status.eq(DeviceStatus::Online))
            .filter(Condition::any().add(devices::Column::LastSeenAt.lt(cutoff)).add(devices::Column::LastSeenAt.is_null()))
            .exec(&txn)
            .await?;
        if res.rows_affected == 1 {
            let mut d = d;
            d.status = DeviceStatus::Offline;
            went_offline(cx, &txn, &d).await?;
            n += 1;
        }
        txn.commit().await?;
    }
    let forgotten = now() - Duration::seconds(cx.settings.unbound_ttl_secs as i64);
    devices::Entity::delete_many()
        .filter(devices::Column::OwnerUserId.is_null())
        .filter(devices::Column::OwnerCompanyId.is_null())
        .filter(devices::Column::DeviceType.ne(DeviceType::ZCloud))
        .filter(devices::Column::LastSeenAt.lt(forgotten))
        .exec(&cx.db)
        .await?;
    if n > 0 {
        cx.public.changed();
    }
    Ok(n)
}

