//! Quiet beats (issue 42, item 2): a beat over a box's channel that changes nothing but the
//! box's presence and its figures writes nothing at once. The box's row is read (no lock, no
//! transaction) and compared with what the beat says; when nothing differs the beat's time and
//! figures wait in this instance's memory ([`Pending`]) and one batched write per
//! `[connect] presence_flush_ms` carries them for every box of the instance ([`flush`]):
//! `last_seen_at`, the CPU, memory, disk and GPU figures, the telemetry samples, and the
//! `last_seen_at` of the Z-CLOUD machines a host speaks for. Anything else (the first beat back
//! online, a new hour of the reliability ring, a changed spec, acknowledgements, reports, a
//! verification) takes the full beat of `devices::protocol::beat`, which first takes the box's
//! waiting presence so no time goes backwards.
//!
//! Readers of `last_seen_at` (the offline sweep, the meters, the rentals' silences) see a time
//! at most one flush late; the flush interval stays under a quarter of `offline_after_secs`, so
//! a box beating on time is never seen silent. docs/performance.md "A city's boxes".

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};
use sea_orm::{ConnectionTrait, DbBackend, EntityTrait, Statement, Value};

use crate::db::entity::devices;
use crate::db::enums::DeviceStatus;
use crate::devices::DevicesCtx;
use crate::devices::access::owner_of;
use crate::error::AppError;
use crate::protocol::heartbeat::{HeartbeatRequest, Settings, Spec};

/// Boxes written per transaction of a flush: short transactions, so people's writes (a sign-in's
/// session) wait for at most one of them, not for the whole batch.
const CHUNK: usize = 250;

/// What a box's quiet beats left to write, by device id.
#[derive(Default)]
pub struct Pending(Mutex<HashMap<String, Seen>>);

/// A box's last quiet beat.
pub struct Seen {
    pub at: DateTime<Utc>,
    /// The beat before it (whether a fine sample is due).
    prev: Option<DateTime<Utc>>,
    metrics: Option<crate::protocol::heartbeat::Metrics>,
    /// Bound boxes keep telemetry samples.
    bound: bool,
}

impl Pending {
    fn put(&self, id: &str, seen: Seen) {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match m.get_mut(id) {
            Some(old) => {
                let prev = old.at;
                *old = Seen { prev: Some(prev), ..seen };
            }
            None => {
                m.insert(id.to_string(), seen);
            }
        }
    }

    /// The box's waiting presence, taken (a full beat writes it itself).
    pub fn take(&self, id: &str) -> Option<Seen> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(id)
    }

    fn drain(&self) -> Vec<(String, Seen)> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner())).into_iter().collect()
    }

    /// Boxes waiting for the next flush.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The beat of `device_id` (known by `secret_hash`) if it changes nothing but presence and
/// figures: its presence is kept for the next flush and the answer's settings come back.
/// `None`: the full beat must run (it also answers what this one cannot judge, such as a
/// secret that changed). The caller has already seen that the beat carries no
/// acknowledgements, verification or snapshot reports, and the same installation reports as
/// the box's last full beat.
pub async fn beat(cx: &DevicesCtx, device_id: &str, secret_hash: Option<&str>, req: &HeartbeatRequest) -> Result<Option<Settings>, AppError> {
    if !req.acks.is_empty() || req.verification.is_some() || !req.snapshots.is_empty() {
        return Ok(None);
    }
    if req.spec.as_ref().is_some_and(|s| s.check().is_err()) || req.metrics.as_ref().is_some_and(|m| m.check().is_err()) {
        return Ok(None);
    }
    let Some(d) = devices::Entity::find_by_id(device_id.to_string()).one(&cx.db).await? else { return Ok(None) };
    if d.secret_hash.as_deref() != secret_hash || d.status != DeviceStatus::Online {
        return Ok(None);
    }
    let t = crate::db::now();
    let waiting = cx.quiet.0.lock().unwrap_or_else(|e| e.into_inner()).get(device_id).map(|s| s.at);
    let last = d.last_seen_at.max(waiting);
    // Silent for longer than the sweep allows, or a new hour of the reliability ring: written now.
    if last.is_none_or(|l| t - l > Duration::seconds(cx.settings.offline_after_secs as i64)) {
        return Ok(None);
    }
    if crate::devices::presence::mark(d.presence.as_deref(), d.presence_hour, t).is_some() {
        return Ok(None);
    }
    if let Some(spec) = &req.spec
        && !same_spec(&d, spec)
    {
        return Ok(None);
    }
    cx.quiet.put(device_id, Seen { at: t, prev: last, metrics: req.metrics.clone(), bound: owner_of(&d).is_some() });
    metrics::counter!(crate::observe::AGENT_BEATS).increment(1);
    Ok(Some(crate::devices::protocol::settings(cx, &d)))
}

/// The spec as the row keeps it (what a full beat would write is what it holds).
fn same_spec(d: &devices::Model, s: &Spec) -> bool {
    d.cpu_cores == s.cpu_cores
        && d.memory_bytes == s.memory_bytes
        && d.disk_bytes == s.disk_bytes
        && d.gpu_runtime == s.gpu_runtime
        && serde_json::to_string(&s.gpus).is_ok_and(|g| g == d.gpus)
}

/// Writes every waiting presence of this instance: per [`CHUNK`] boxes one transaction with one
/// statement for their rows, one for the machines they host and one insert of their samples.
/// Answers the boxes written.
pub async fn flush(cx: &DevicesCtx) -> Result<usize, AppError> {
    let all = cx.quiet.drain();
    let backend = cx.db.get_database_backend();
    for chunk in all.chunks(CHUNK) {
        let txn = crate::db::write_txn(&cx.db).await?;
        txn.execute_raw(rows(backend, chunk)).await?;
        txn.execute_raw(hosted(backend, chunk)).await?;
        let mut samples = Vec::new();
        for (id, s) in chunk {
            if let (Some(m), true) = (&s.metrics, s.bound) {
                samples.extend(crate::devices::telemetry::samples(id, s.prev, s.at, m, cx.settings.sample_every_secs)?);
            }
        }
        crate::devices::telemetry::insert(&txn, samples).await?;
        txn.commit().await?;
    }
    Ok(all.len())
}

/// `$n` or `?`, with PostgreSQL's type where a bare parameter would read as text.
fn param(backend: DbBackend, n: &mut usize, cast: &str) -> String {
    *n += 1;
    if backend == DbBackend::Postgres { format!("${n}{cast}") } else { "?".into() }
}

/// The boxes' rows: their last time and, when the beat had them, their figures; a time never
/// goes back (a full beat may have written a later one meanwhile).
fn rows(backend: DbBackend, chunk: &[(String, Seen)]) -> Statement {
    let mut sql = String::from("WITH v(id, at, m, cpu, mem, disk, gpu) AS (VALUES ");
    let mut values: Vec<Value> = Vec::with_capacity(chunk.len() * 7);
    let mut n = 0;
    for (i, (id, s)) in chunk.iter().enumerate() {
        if i > 0 {
            sql.push(',');
        }
        let casts = ["", "::timestamptz", "::boolean", "::float8", "::int8", "::int8", "::text"];
        let row: Vec<String> = casts.iter().map(|c| param(backend, &mut n, c)).collect();
        sql.push('(');
        sql.push_str(&row.join(","));
        sql.push(')');
        let m = s.metrics.as_ref();
        let gpus = m.filter(|m| !m.gpus.is_empty()).and_then(|m| serde_json::to_string(&m.gpus).ok());
        values.extend([
            Value::from(id.clone()),
            Value::from(s.at),
            Value::from(m.is_some()),
            Value::from(m.map(|m| if m.cpu_percent.is_finite() { m.cpu_percent.clamp(0.0, 100.0) } else { 0.0 })),
            Value::from(m.map(|m| m.memory_used_bytes.max(0))),
            Value::from(m.map(|m| m.disk_used_bytes.max(0))),
            Value::from(gpus),
        ]);
    }
    sql.push_str(
        ") UPDATE devices SET last_seen_at = v.at, \
         cpu_percent = CASE WHEN v.m THEN v.cpu ELSE devices.cpu_percent END, \
         memory_used_bytes = CASE WHEN v.m THEN v.mem ELSE devices.memory_used_bytes END, \
         disk_used_bytes = CASE WHEN v.m THEN v.disk ELSE devices.disk_used_bytes END, \
         gpu_use = CASE WHEN v.m THEN v.gpu ELSE devices.gpu_use END \
         FROM v WHERE devices.id = v.id AND (devices.last_seen_at IS NULL OR devices.last_seen_at < v.at)",
    );
    Statement::from_sql_and_values(backend, sql, values)
}

/// The Z-CLOUD machines online on these hosts: their host's beat speaks for them.
fn hosted(backend: DbBackend, chunk: &[(String, Seen)]) -> Statement {
    let mut sql = String::from("WITH v(id, at) AS (VALUES ");
    let mut values: Vec<Value> = Vec::with_capacity(chunk.len() * 2 + 1);
    let mut n = 0;
    for (i, (id, s)) in chunk.iter().enumerate() {
        if i > 0 {
            sql.push(',');
        }
        let (a, b) = (param(backend, &mut n, ""), param(backend, &mut n, "::timestamptz"));
        sql.push_str(&format!("({a},{b})"));
        values.extend([Value::from(id.clone()), Value::from(s.at)]);
    }
    let online = param(backend, &mut n, "");
    values.push(Value::from(sea_orm::ActiveEnum::to_value(&DeviceStatus::Online)));
    sql.push_str(&format!(
        ") UPDATE devices SET last_seen_at = v.at FROM v WHERE devices.host_id = v.id AND devices.status = {online} \
         AND (devices.last_seen_at IS NULL OR devices.last_seen_at < v.at)"
    ));
    Statement::from_sql_and_values(backend, sql, values)
}
