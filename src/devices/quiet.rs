//! Quiet beats (issue 42, item 2): a beat over a box's channel that changes nothing but the
//! box's presence and its figures writes nothing at once. The box's row is read (no lock, no
//! transaction; the rows of the beats arriving within 50 ms are read in one query) and compared
//! with what the beat says; when nothing differs the beat's time and
//! figures wait in this instance's memory ([`Pending`]) and one batched write per
//! `[connect] presence_flush_ms` carries them for every box of the instance ([`flush`]):
//! `last_seen_at`, the CPU, memory, disk and GPU figures, the telemetry samples, and the
//! `last_seen_at` of the Z-CLOUD machines a host speaks for. Anything else (the first beat back
//! online, a new hour of the reliability ring, a changed spec, acknowledgements, reports, a
//! verification) takes the full beat of `devices::agent_api::beat`, which first takes the box's
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
use crate::ids::DeviceId;
use zmarket_protocol::heartbeat::{HeartbeatRequest, Settings, Spec};

/// Boxes written per transaction of a flush: short transactions, so people's writes (a sign-in's
/// session) wait for at most one of them, not for the whole batch.
const CHUNK: usize = 250;

/// What a box's quiet beats left to write, by device id.
#[derive(Default)]
pub struct Pending(Mutex<HashMap<DeviceId, Seen>>);

/// A box's last quiet beat.
pub struct Seen {
    pub at: DateTime<Utc>,
    /// The beat before it (whether a fine sample is due).
    prev: Option<DateTime<Utc>>,
    metrics: Option<zmarket_protocol::heartbeat::Metrics>,
    /// Bound boxes keep telemetry samples.
    bound: bool,
}

impl Pending {
    fn put(&self, id: &DeviceId, seen: Seen) {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match m.get_mut(id) {
            Some(old) => {
                let prev = old.at;
                *old = Seen { prev: Some(prev), ..seen };
            }
            None => {
                m.insert(id.clone(), seen);
            }
        }
    }

    /// The box's waiting presence, taken (a full beat writes it itself).
    pub fn take(&self, id: &DeviceId) -> Option<Seen> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(id)
    }

    fn drain(&self) -> Vec<(DeviceId, Seen)> {
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

/// Beats waiting for the next batched read of their boxes' rows.
#[derive(Default)]
pub struct Asks {
    waiting: Mutex<Vec<Ask>>,
    arrived: tokio::sync::Notify,
}

struct Ask {
    device_id: String,
    secret_hash: Option<String>,
    req: HeartbeatRequest,
    reply: tokio::sync::oneshot::Sender<Judged>,
}

/// What became of a beat offered as quiet.
pub enum Judged {
    /// Quiet: kept for the next flush; the answer's settings.
    Quiet(Settings),
    /// The full beat must run (it also answers what a quiet one cannot judge, such as a secret
    /// that changed): the beat, handed back.
    Full(HeartbeatRequest),
}

/// How long the first beat of a batch waits for others to join it: one read of the rows for all.
const GATHER: std::time::Duration = std::time::Duration::from_millis(50);
/// Boxes read at most in one query.
const MAX_ASKS: usize = 500;
/// A beat not judged within this (the reader gone) takes the full path.
const JUDGED_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// The beat of `device_id` (known by `secret_hash`) offered as quiet: answered once its row was
/// read with those of the other beats arriving within [`GATHER`] (one query for them all). The
/// caller has already seen that the beat carries the same installation reports as the box's last
/// full beat and that no command waits on its channel.
pub async fn beat(cx: &DevicesCtx, device_id: &DeviceId, secret_hash: Option<&str>, req: HeartbeatRequest) -> Judged {
    if !req.acks.is_empty() || req.verification.is_some() || !req.snapshots.is_empty() {
        return Judged::Full(req);
    }
    if req.spec.as_ref().is_some_and(|s| s.check().is_err()) || req.metrics.as_ref().is_some_and(|m| m.check().is_err()) {
        return Judged::Full(req);
    }
    let (reply, judged) = tokio::sync::oneshot::channel();
    let ask = Ask { device_id: device_id.to_string(), secret_hash: secret_hash.map(str::to_string), req, reply };
    cx.asks.waiting.lock().unwrap_or_else(|e| e.into_inner()).push(ask);
    cx.asks.arrived.notify_one();
    match tokio::time::timeout(JUDGED_WITHIN, judged).await {
        Ok(Ok(j)) => j,
        // Lost with the reader: the beat itself is gone with it; an empty one runs in full.
        _ => Judged::Full(HeartbeatRequest::default()),
    }
}

/// This instance's reader of the quiet beats' rows; runs until aborted.
pub async fn judge_beats(cx: DevicesCtx) {
    loop {
        cx.asks.arrived.notified().await;
        tokio::time::sleep(GATHER).await;
        loop {
            let batch: Vec<Ask> = {
                let mut w = cx.asks.waiting.lock().unwrap_or_else(|e| e.into_inner());
                let n = w.len().min(MAX_ASKS);
                w.drain(..n).collect()
            };
            if batch.is_empty() {
                break;
            }
            judge(&cx, batch).await;
        }
    }
}

async fn judge(cx: &DevicesCtx, batch: Vec<Ask>) {
    use sea_orm::{ColumnTrait, QueryFilter};
    let ids: Vec<String> = batch.iter().map(|a| a.device_id.clone()).collect();
    let rows = match devices::Entity::find().filter(devices::Column::Id.is_in(ids)).all(&cx.db).await {
        Ok(rows) => rows,
        Err(e) => {
            tracing::warn!(error = %e, "reading the rows of quiet beats failed; they run in full");
            Vec::new()
        }
    };
    let rows: HashMap<&str, &devices::Model> = rows.iter().map(|d| (d.id.as_str(), d)).collect();
    let t = crate::db::now();
    for ask in batch {
        let judged = match rows.get(ask.device_id.as_str()).and_then(|d| quiet(cx, d, &ask, t).then_some(d)) {
            Some(d) => {
                let bound = owner_of(d).is_some();
                let prev = d.last_seen_at.max(cx.quiet.0.lock().unwrap_or_else(|e| e.into_inner()).get(&d.id).map(|s| s.at));
                cx.quiet.put(&d.id, Seen { at: t, prev, metrics: ask.req.metrics.clone(), bound });
                metrics::counter!(crate::observe::AGENT_BEATS).increment(1);
                Judged::Quiet(crate::devices::agent_api::settings(cx, d))
            }
            None => Judged::Full(ask.req),
        };
        let _ = ask.reply.send(judged);
    }
}

/// Whether the beat of `ask` changes nothing of `d` but its presence and figures.
fn quiet(cx: &DevicesCtx, d: &devices::Model, ask: &Ask, t: DateTime<Utc>) -> bool {
    if d.secret_hash != ask.secret_hash || d.status != DeviceStatus::Online {
        return false;
    }
    let waiting = cx.quiet.0.lock().unwrap_or_else(|e| e.into_inner()).get(&d.id).map(|s| s.at);
    // Silent for longer than the sweep allows, or a new hour of the reliability ring: written now.
    if d.last_seen_at.max(waiting).is_none_or(|l| t - l > Duration::seconds(cx.settings.offline_after_secs as i64)) {
        return false;
    }
    if crate::devices::presence::mark(d.presence.as_deref(), d.presence_hour, t).is_some() {
        return false;
    }
    ask.req.spec.as_ref().is_none_or(|spec| same_spec(d, spec))
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
fn rows(backend: DbBackend, chunk: &[(DeviceId, Seen)]) -> Statement {
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
///
/// On SQLite the statement names its index: without statistics SQLite 3.51 (the bundled one)
/// joins a batch of ten or more hosts through `idx_devices_status_seen`, every online box for
/// every host of the batch (at 10,000 boxes, 0.1-0.5 s a flush, most of a beat's CPU), where
/// `idx_devices_host` finds the few machines a host has in microseconds. PostgreSQL plans it
/// from its statistics.
fn hosted(backend: DbBackend, chunk: &[(DeviceId, Seen)]) -> Statement {
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
    let table = if backend == DbBackend::Sqlite { "devices INDEXED BY idx_devices_host" } else { "devices" };
    sql.push_str(&format!(
        ") UPDATE {table} SET last_seen_at = v.at FROM v WHERE devices.host_id = v.id AND devices.status = {online} \
         AND (devices.last_seen_at IS NULL OR devices.last_seen_at < v.at)"
    ));
    Statement::from_sql_and_values(backend, sql, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan SQLite makes for a flush's statements: each box and each host is found by an
    /// index of its own, never by a walk of the online boxes (issue 42: the hosts' statement
    /// did that, for every host of the batch).
    #[tokio::test]
    async fn a_flush_finds_its_rows_by_their_indexes() {
        let mut opts = sea_orm::ConnectOptions::new("sqlite::memory:");
        opts.max_connections(1).sqlx_logging(false);
        let db = sea_orm::Database::connect(opts).await.unwrap();
        crate::db::migrate(&db).await.unwrap();
        let at = crate::db::now();
        let chunk: Vec<(DeviceId, Seen)> =
            (0..CHUNK).map(|i| (DeviceId::from(format!("box-{i}")), Seen { at, prev: None, metrics: None, bound: true })).collect();
        for (statement, index) in [(rows(DbBackend::Sqlite, &chunk), "sqlite_autoindex_devices_1"), (hosted(DbBackend::Sqlite, &chunk), "idx_devices_host")] {
            let explain = Statement::from_sql_and_values(DbBackend::Sqlite, format!("EXPLAIN QUERY PLAN {}", statement.sql), statement.values.unwrap().0);
            let plan: Vec<String> = db.query_all_raw(explain).await.unwrap().iter().map(|r| r.try_get::<String>("", "detail").unwrap()).collect();
            let devices: Vec<&String> = plan.iter().filter(|d| d.contains("devices")).collect();
            assert_eq!(devices.len(), 1, "{plan:?}");
            assert!(devices[0].starts_with("SEARCH devices USING INDEX") && devices[0].contains(index), "{plan:?}");
        }
    }
}
