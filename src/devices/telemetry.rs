//! A box's recent figures (docs/gpus.md "Telemetry"): each beat's CPU, memory and per-GPU use is
//! kept at beat resolution (at most one sample per `sample_every_secs`) for an hour and as the
//! first sample of each minute for a day (`device_samples`, tier 0 and 1), pruned by a job; read
//! as series for the charts (`GET /api/ebs/v2/devices/{id}/metrics`). No HTTP types here.

use chrono::{DateTime, Duration, DurationRound, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set};
use serde::Serialize;
use utoipa::ToSchema;

use crate::db::entity::{device_samples, devices};
use crate::error::AppError;
use zmarket_protocol::heartbeat::Metrics;
use crate::ids::DeviceId;

/// Every beat, kept an hour.
const FINE: i16 = 0;
/// The first beat of each minute, kept a day.
const MINUTE: i16 = 1;
/// The most minutes a series may cover (a day).
pub const MAX_MINUTES: i64 = 1440;
/// Fine samples kept per device at most, whatever the beat rate (an hour at one a second).
pub const MAX_FINE: u64 = 3600;

/// One point of a box-wide series.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct Point {
    pub at: DateTime<Utc>,
    pub value: f64,
}

/// One point of a GPU's series.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct GpuPoint {
    /// RFC 3339, as every time of the API (written once per sample, shared by its GPUs' points:
    /// a day of 8 GPUs is 11,520 points).
    #[schema(value_type = String, format = DateTime)]
    pub at: std::sync::Arc<str>,
    /// 0-100
    pub utilization: f64,
    /// bytes
    pub memory_used: i64,
    /// °C
    pub temperature: Option<f64>,
    /// W
    pub power_watts: Option<f64>,
}

/// A GPU's series.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct GpuSeries {
    pub uuid: String,
    pub name: String,
    pub series: Vec<GpuPoint>,
}

/// The figures of a box over the last minutes.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Default)]
pub struct DeviceMetrics {
    /// CPU use, percent.
    pub cpu: Vec<Point>,
    /// Memory used, bytes.
    pub memory: Vec<Point>,
    pub gpus: Vec<GpuSeries>,
}

/// A GPU's figures as a sample keeps them, read without copying the UUID.
#[derive(serde::Deserialize)]
struct StoredUse<'a> {
    #[serde(borrow)]
    uuid: std::borrow::Cow<'a, str>,
    utilization: f64,
    memory_used: i64,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    power_watts: Option<f64>,
}

/// Keeps this beat's figures of `d` (its row as before the beat: `prev_seen` its last beat's
/// time): a fine sample unless the last one is younger than `every`, and the minute's first.
pub async fn record(conn: &impl ConnectionTrait, device_id: &DeviceId, prev_seen: Option<DateTime<Utc>>, at: DateTime<Utc>, m: &Metrics, every: u64) -> Result<(), AppError> {
    insert(conn, samples(device_id, prev_seen, at, m, every)?).await
}

/// The samples a beat at `at` keeps (see [`record`]).
pub fn samples(device_id: &DeviceId, prev_seen: Option<DateTime<Utc>>, at: DateTime<Utc>, m: &Metrics, every: u64) -> Result<Vec<device_samples::ActiveModel>, AppError> {
    let gpus = serde_json::to_string(&m.gpus).map_err(|e| AppError::Internal(e.into()))?;
    let cpu = if m.cpu_percent.is_finite() { m.cpu_percent.clamp(0.0, 100.0) } else { 0.0 };
    let row = |tier: i16, at: DateTime<Utc>| device_samples::ActiveModel {
        device_id: Set(DeviceId::from(device_id)),
        tier: Set(tier),
        at: Set(at),
        cpu_percent: Set(Some(cpu)),
        memory_used: Set(Some(m.memory_used_bytes.max(0))),
        gpus: Set(gpus.clone()),
    };
    let due = prev_seen.is_none_or(|p| at - p >= Duration::seconds(every as i64) || every == 0);
    let minute = at.duration_trunc(Duration::minutes(1)).unwrap_or(at);
    let mut rows = vec![row(MINUTE, minute)];
    if due {
        rows.push(row(FINE, at));
    }
    Ok(rows)
}

/// Inserts samples, those already kept (the minute's first) left as they are; in statements
/// of at most 500 rows.
pub async fn insert(conn: &impl ConnectionTrait, rows: Vec<device_samples::ActiveModel>) -> Result<(), AppError> {
    let keys = [device_samples::Column::DeviceId, device_samples::Column::Tier, device_samples::Column::At];
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<_> = rows.by_ref().take(500).collect();
        device_samples::Entity::insert_many(chunk).on_conflict(OnConflict::columns(keys).do_nothing().to_owned()).try_insert().exec(conn).await?;
    }
    Ok(())
}

/// The series of `d` over the last `minutes` (the fine samples for an hour or less, else one a
/// minute); GPUs of the spec only, those in `only` when given (a renter's), in the box's order.
pub async fn series(conn: &impl ConnectionTrait, d: &devices::Model, minutes: i64, only: Option<&[String]>, whole_box: bool) -> Result<DeviceMetrics, AppError> {
    let minutes = minutes.clamp(1, MAX_MINUTES);
    let since = crate::db::now() - Duration::minutes(minutes);
    let tier = if minutes <= 60 { FINE } else { MINUTE };
    use sea_orm::QuerySelect;
    let rows: Vec<(DateTime<Utc>, Option<f64>, Option<i64>, String)> = device_samples::Entity::find()
        .select_only()
        .columns([device_samples::Column::At, device_samples::Column::CpuPercent, device_samples::Column::MemoryUsed, device_samples::Column::Gpus])
        .filter(device_samples::Column::DeviceId.eq(d.id.clone()))
        .filter(device_samples::Column::Tier.eq(tier))
        .filter(device_samples::Column::At.gte(since))
        .order_by_asc(device_samples::Column::At)
        .into_tuple()
        .all(conn)
        .await?;
    let gpus: Vec<(String, String)> = crate::devices::gpus::keyed(d)
        .into_iter()
        .filter(|(k, _)| only.is_none_or(|o| o.iter().any(|x| x == k)))
        .map(|(k, g)| (k, g.name))
        .collect();
    let mut out = DeviceMetrics { gpus: gpus.iter().map(|(u, n)| GpuSeries { uuid: u.clone(), name: n.clone(), series: Vec::new() }).collect(), ..Default::default() };
    for s in &mut out.gpus {
        s.series.reserve(rows.len());
    }
    for (at, cpu, memory, used) in rows {
        if whole_box {
            if let Some(c) = cpu {
                out.cpu.push(Point { at, value: c });
            }
            if let Some(m) = memory {
                out.memory.push(Point { at, value: m as f64 });
            }
        }
        if out.gpus.is_empty() {
            continue;
        }
        let stamp: std::sync::Arc<str> = at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true).into();
        let used: Vec<StoredUse> = serde_json::from_str(&used).unwrap_or_default();
        for u in used {
            if let Some(s) = out.gpus.iter_mut().find(|s| s.uuid.eq_ignore_ascii_case(&u.uuid)) {
                let at = stamp.clone();
                s.series.push(GpuPoint { at, utilization: u.utilization, memory_used: u.memory_used, temperature: u.temperature, power_watts: u.power_watts });
            }
        }
    }
    Ok(out)
}

/// Drops fine samples older than an hour and minute samples older than a day; then, for any
/// device that beat faster than the bound allows, its oldest fine samples beyond [`MAX_FINE`].
/// Answers the rows removed.
pub async fn prune(conn: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<u64, AppError> {
    use sea_orm::QuerySelect;
    let mut n = device_samples::Entity::delete_many()
        .filter(device_samples::Column::Tier.eq(FINE))
        .filter(device_samples::Column::At.lt(now - Duration::hours(1)))
        .exec(conn)
        .await?
        .rows_affected;
    n += device_samples::Entity::delete_many()
        .filter(device_samples::Column::Tier.eq(MINUTE))
        .filter(device_samples::Column::At.lt(now - Duration::minutes(MAX_MINUTES)))
        .exec(conn)
        .await?
        .rows_affected;
    let busy: Vec<(String, i64)> = device_samples::Entity::find()
        .select_only()
        .column(device_samples::Column::DeviceId)
        .column_as(device_samples::Column::At.count(), "n")
        .filter(device_samples::Column::Tier.eq(FINE))
        .group_by(device_samples::Column::DeviceId)
        .having(sea_orm::sea_query::ExprTrait::gt(sea_orm::sea_query::Expr::from(sea_orm::sea_query::Func::count(sea_orm::sea_query::Expr::col(device_samples::Column::At))), MAX_FINE as i64))
        .into_tuple()
        .all(conn)
        .await?;
    for (device, _) in busy {
        let q = device_samples::Entity::find().filter(device_samples::Column::DeviceId.eq(device.clone())).filter(device_samples::Column::Tier.eq(FINE));
        let Some(oldest_kept) = q.order_by_desc(device_samples::Column::At).offset(MAX_FINE - 1).limit(1).one(conn).await? else { continue };
        n += device_samples::Entity::delete_many()
            .filter(device_samples::Column::DeviceId.eq(device))
            .filter(device_samples::Column::Tier.eq(FINE))
            .filter(device_samples::Column::At.lt(oldest_kept.at))
            .exec(conn)
            .await?
            .rows_affected;
    }
    Ok(n)
}
