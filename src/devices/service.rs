//! Device rules: agent registration and heartbeats, binding, ownership and visibility, sharing,
//! status changes with their notifications, Z-CLOUD capacity and the command/acknowledgement cycle.
//! No HTTP types here.

use chrono::Duration;
use sea_orm::sea_query::{Alias, Expr, Query};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set,
};
use serde_json::json;

use crate::app::AppState;
use crate::db::entity::{company_members, device_commands, devices};
use crate::db::{new_id, now, write_txn};
use crate::devices::model::*;
use crate::error::{AppError, Msg};
use crate::iam::service::Auth;
use crate::iam::tokens;

// ---- who may see and manage what ----

/// Who owns a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    User(String),
    Company(String),
}

/// The devices a caller sees in the current context.
enum Scope {
    Owner(Owner),
    /// A company member: only devices assigned to them.
    Member { company: String, user: String },
}

fn scope(auth: &Auth) -> Scope {
    match auth.company() {
        None => Scope::Owner(Owner::User(auth.user_id.clone())),
        Some(c) if auth.is_admin() => Scope::Owner(Owner::Company(c.to_string())),
        Some(c) => Scope::Member { company: c.to_string(), user: auth.user_id.clone() },
    }
}

/// The owner a management call acts for; members may not manage devices.
pub fn manager(auth: &Auth) -> Result<Owner, AppError> {
    match scope(auth) {
        Scope::Owner(o) => Ok(o),
        Scope::Member { .. } => Err(AppError::Forbidden(Msg::NoPermissionManageDevices)),
    }
}

fn owned_by(owner: &Owner) -> Condition {
    match owner {
        Owner::User(u) => {
            Condition::all().add(devices::Column::OwnerUserId.eq(u.as_str())).add(devices::Column::OwnerCompanyId.is_null())
        }
        Owner::Company(c) => Condition::all().add(devices::Column::OwnerCompanyId.eq(c.as_str())),
    }
}

fn owner_of(d: &devices::Model) -> Option<Owner> {
    match (&d.owner_company_id, &d.owner_user_id) {
        (Some(c), _) => Some(Owner::Company(c.clone())),
        (None, Some(u)) => Some(Owner::User(u.clone())),
        _ => None,
    }
}

/// Devices visible to member: the ids the company assigned to this member (the companies work
/// owns the `resource_assignments` table; until it exists a member sees no device).
pub async fn devices_visible_to_member(db: &DatabaseConnection, company: &str, user: &str) -> Result<Vec<String>, AppError> {
    let manager = sea_orm_migration::SchemaManager::new(db);
    if !manager.has_table("resource_assignments").await? {
        return Ok(Vec::new());
    }
    use sea_orm::sea_query::ExprTrait;
    let q = Query::select()
        .column(Alias::new("resource_id"))
        .from(Alias::new("resource_assignments"))
        .and_where(Expr::col(Alias::new("user_id")).eq(user))
        .and_where(Expr::col(Alias::new("resource_type")).eq("device"))
        .to_owned();
    let rows = db.query_all(&q).await?;
    let ids: Vec<String> = rows.iter().filter_map(|r| r.try_get::<String>("", "resource_id").ok()).collect();
    // The device must still belong to that company.
    let owned = devices::Entity::find()
        .filter(devices::Column::Id.is_in(ids))
        .filter(devices::Column::OwnerCompanyId.eq(company))
        .all(db)
        .await?;
    Ok(owned.into_iter().map(|d| d.id).collect())
}

fn scope_condition(scope: &Scope, member_ids: Vec<String>) -> Condition {
    match scope {
        Scope::Owner(o) => owned_by(o),
        Scope::Member { .. } => Condition::all().add(devices::Column::Id.is_in(member_ids)),
    }
}

async fn visible(state: &AppState, auth: &Auth, id: &str) -> Result<devices::Model, AppError> {
    let s = scope(auth);
    let member_ids = match &s {
        Scope::Member { company, user } => devices_visible_to_member(&state.db, company, user).await?,
        Scope::Owner(_) => Vec::new(),
    };
    devices::Entity::find_by_id(id.to_string())
        .filter(scope_condition(&s, member_ids))
        .one(&state.db)
        .await?
        .ok_or(AppError::NotFound(Msg::DeviceNotFound))
}

/// A device the caller may manage (403 for members, 404 for another owner's device).
async fn managed(conn: &impl ConnectionTrait, auth: &Auth, id: &str) -> Result<(devices::Model, Owner), AppError> {
    let owner = manager(auth)?;
    let d = devices::Entity::find_by_id(id.to_string())
        .filter(owned_by(&owner))
        .one(conn)
        .await?
        .ok_or(AppError::NotFound(Msg::DeviceNotFound))?;
    Ok((d, owner))
}

// ---- shapes ----

fn gpus_of(d: &devices::Model) -> Vec<Gpu> {
    serde_json::from_str(&d.gpus).unwrap_or_default()
}

fn shown_status(status: &str) -> &str {
    match status {
        ONLINE | CREATING | FAILED => status,
        _ => OFFLINE,
    }
}

pub fn to_device(d: &devices::Model) -> Device {
    let metrics = d.cpu_percent.map(|cpu| Metrics {
        cpu_percent: cpu,
        memory_used_bytes: d.memory_used_bytes.unwrap_or(0),
        disk_used_bytes: d.disk_used_bytes.unwrap_or(0),
    });
    Device {
        id: d.id.clone(),
        name: d.name.clone(),
        device_type: d.device_type.clone(),
        status: shown_status(&d.status).to_string(),
        status_reason: d.status_reason.clone(),
        sharing_mode: d.sharing_mode.clone(),
        rentable: d.rentable,
        price_per_hour: d.price_per_hour,
        spec: Spec { cpu_cores: d.cpu_cores, memory_bytes: d.memory_bytes, disk_bytes: d.disk_bytes, gpus: gpus_of(d) },
        metrics,
        location: match (d.lat, d.lng) {
            (Some(lat), Some(lng)) => Some(Location { lat, lng }),
            _ => None,
        },
        owner_kind: if d.owner_company_id.is_some() { "company" } else { "user" }.to_string(),
        host_id: d.host_id.clone(),
        last_seen_at: d.last_seen_at,
        created_at: d.created_at,
    }
}

// ---- notifications ----

/// The people told about a device: its owner, or every administrator of the owning company.
async fn recipients(conn: &impl ConnectionTrait, d: &devices::Model) -> Result<Vec<String>, AppError> {
    Ok(match owner_of(d) {
        None => Vec::new(),
        Some(Owner::User(u)) => vec![u],
        Some(Owner::Company(c)) => company_members::Entity::find()
            .filter(company_members::Column::CompanyId.eq(c))
            .filter(company_members::Column::Role.eq("admin"))
            .all(conn)
            .await?
            .into_iter()
            .map(|m| m.user_id)
            .collect(),
    })
}

/// One notification per recipient, with English text and the Chinese text in `params`.
async fn notify(conn: &impl ConnectionTrait, d: &devices::Model, kind: &str, reason: Option<&str>) -> Result<(), AppError> {
    let name = &d.name;
    let id = &d.id;
    let reason_en = reason.unwrap_or("unknown reason");
    let reason_zh = reason.unwrap_or("未知原因");
    let (title, body, title_zh, body_zh) = match kind {
        "device_online" => ("Device online".to_string(), format!("{name} ({id}) is online."), "设备上线".to_string(), format!("{name}（{id}）已上线。")),
        "device_offline" => (
            "Device offline".to_string(),
            format!("{name} ({id}) is offline: no heartbeat received."),
            "设备离线".to_string(),
            format!("{name}（{id}）已离线：未收到心跳。"),
        ),
        "zcloud_ready" => (
            "Z-CLOUD machine ready".to_string(),
            format!("{name} ({id}) has been created and is online."),
            "Z-CLOUD 云主机已就绪".to_string(),
            format!("{name}（{id}）已创建并上线。"),
        ),
        _ => (
            "Z-CLOUD machine failed".to_string(),
            format!("{name} ({id}) could not be created: {reason_en}"),
            "Z-CLOUD 云主机创建失败".to_string(),
            format!("{name}（{id}）创建失败：{reason_zh}"),
        ),
    };
    let params = json!({"device_id": id, "name": name, "status": d.status, "reason": reason, "title_zh": title_zh, "body_zh": body_zh});
    for user in recipients(conn, d).await? {
        crate::notifications::service::notify(conn, &user, kind, &title, &body, &params).await?;
    }
    Ok(())
}

// ---- the agent protocol ----

pub async fn register(state: &AppState, req: RegisterRequest) -> Result<RegisterResponse, AppError> {
    let device_type = req.device_type.as_deref().map(str::trim).unwrap_or("");
    let device_type = AGENT_TYPES
        .iter()
        .find(|t| t.eq_ignore_ascii_case(device_type))
        .ok_or(AppError::invalid("type", Msg::InvalidField("type")))?;
    let name = device_name("name", req.name.as_deref())?;
    let spec = req.spec.ok_or(AppError::invalid("spec", Msg::InvalidField("spec")))?;
    spec.check()?;
    let secret = tokens::random_token();
    let code = PairingCode::new_random();
    let txn = write_txn(&state.db).await?;
    let mut id = DeviceId::new_random();
    for _ in 0..8 {
        if devices::Entity::find_by_id(id.as_str().to_string()).one(&txn).await?.is_none() {
            break;
        }
        id = DeviceId::new_random();
    }
    let t = now();
    devices::ActiveModel {
        id: Set(id.as_str().to_string()),
        name: Set(name),
        device_type: Set(device_type.to_string()),
        status: Set(ONLINE.into()),
        status_reason: Set(None),
        secret_hash: Set(Some(tokens::hash_token(&secret))),
        pairing_hash: Set(Some(tokens::hash_token(code.as_str()))),
        owner_user_id: Set(None),
        owner_company_id: Set(None),
        bound_by: Set(None),
        bound_at: Set(None),
        sharing_mode: Set("manual".into()),
        rentable: Set(false),
        price_per_hour: Set(0),
        cpu_cores: Set(spec.cpu_cores),
        memory_bytes: Set(spec.memory_bytes),
        disk_bytes: Set(spec.disk_bytes),
        gpus: Set(serde_json::to_string(&spec.gpus).map_err(|e| AppError::Internal(e.into()))?),
        cpu_percent: Set(None),
        memory_used_bytes: Set(None),
        disk_used_bytes: Set(None),
        lat: Set(None),
        lng: Set(None),
        host_id: Set(None),
        gpu_count: Set(0),
        gpu_model: Set(String::new()),
        passthrough: Set(false),
        last_seen_at: Set(Some(t)),
        created_at: Set(t),
        updated_at: Set(t),
    }
    .insert(&txn)
    .await?;
    txn.commit().await?;
    Ok(RegisterResponse { device_id: id.as_str().to_string(), device_secret: secret, pairing_code: code.as_str().to_string() })
}

/// The device whose secret this is; `None` when unknown, revoked or unlinked.
pub async fn device_by_secret(state: &AppState, secret: Option<&str>) -> Result<devices::Model, AppError> {
    let secret = secret.filter(|s| !s.is_empty()).ok_or(AppError::Unauthorized(Msg::DeviceSecretInvalid))?;
    devices::Entity::find()
        .filter(devices::Column::SecretHash.eq(tokens::hash_token(secret)))
        .one(&state.db)
        .await?
        .ok_or(AppError::Unauthorized(Msg::DeviceSecretInvalid))
}

fn settings(state: &AppState, d: &devices::Model) -> Settings {
    Settings {
        name: d.name.clone(),
        sharing_mode: d.sharing_mode.clone(),
        rentable: d.rentable,
        price_per_hour: d.price_per_hour,
        bound: owner_of(d).is_some(),
        heartbeat_secs: state.config.devices.heartbeat_secs,
    }
}

pub async fn heartbeat(state: &AppState, secret: Option<&str>, req: HeartbeatRequest) -> Result<HeartbeatResponse, AppError> {
    let device = device_by_secret(state, secret).await?;
    if let Some(spec) = &req.spec {
        spec.check()?;
    }
    let txn = write_txn(&state.db).await?;
    // Re-read inside the write lock: the device may have been unlinked meanwhile.
    let d = devices::Entity::find_by_id(device.id.clone())
        .filter(devices::Column::SecretHash.eq(device.secret_hash.clone()))
        .one(&txn)
        .await?
        .ok_or(AppError::Unauthorized(Msg::DeviceSecretInvalid))?;
    let t = now();
    let came_online = d.status != ONLINE;
    let mut a: devices::ActiveModel = d.clone().into();
    if let Some(spec) = &req.spec {
        a.cpu_cores = Set(spec.cpu_cores);
        a.memory_bytes = Set(spec.memory_bytes);
        a.disk_bytes = Set(spec.disk_bytes);
        a.gpus = Set(serde_json::to_string(&spec.gpus).map_err(|e| AppError::Internal(e.into()))?);
    }
    if let Some(m) = &req.metrics {
        let cpu = if m.cpu_percent.is_finite() { m.cpu_percent.clamp(0.0, 100.0) } else { 0.0 };
        a.cpu_percent = Set(Some(cpu));
        a.memory_used_bytes = Set(Some(m.memory_used_bytes.max(0)));
        a.disk_used_bytes = Set(Some(m.disk_used_bytes.max(0)));
    }
    a.status = Set(ONLINE.into());
    a.last_seen_at = Set(Some(t));
    a.updated_at = Set(t);
    let d = a.update(&txn).await?;
    if came_online {
        notify(&txn, &d, "device_online", None).await?;
    }
    // A host's heartbeat speaks for the Z-CLOUD machines running on it.
    let hosted = devices::Entity::find()
        .filter(devices::Column::HostId.eq(d.id.clone()))
        .filter(devices::Column::Status.is_in([ONLINE, OFFLINE]))
        .all(&txn)
        .await?;
    let mut changed = came_online;
    for m in hosted {
        let back = m.status != ONLINE;
        let mut a: devices::ActiveModel = m.into();
        a.status = Set(ONLINE.into());
        a.last_seen_at = Set(Some(t));
        let m = a.update(&txn).await?;
        if back {
            changed = true;
            notify(&txn, &m, "device_online", None).await?;
        }
    }
    for ack in &req.acks {
        changed |= apply_ack(&txn, &d, ack).await?;
    }
    let pending = device_commands::Entity::find()
        .filter(device_commands::Column::DeviceId.eq(d.id.clone()))
        .filter(device_commands::Column::Status.eq("pending"))
        .order_by_asc(device_commands::Column::CreatedAt)
        .order_by_asc(device_commands::Column::Id)
        .all(&txn)
        .await?;
    txn.commit().await?;
    if changed {
        state.ssr.invalidate();
    }
    let commands = pending
        .into_iter()
        .map(|c| Command { id: c.id, kind: c.kind, payload: serde_json::from_str(&c.payload).unwrap_or(json!({})) })
        .collect();
    Ok(HeartbeatResponse { settings: settings(state, &d), commands })
}

/// Records an acknowledgement by the device its command was sent to; true when a status changed.
async fn apply_ack(conn: &impl ConnectionTrait, device: &devices::Model, ack: &Ack) -> Result<bool, AppError> {
    let Some(cmd) = device_commands::Entity::find_by_id(ack.id.clone())
        .filter(device_commands::Column::DeviceId.eq(device.id.clone()))
        .filter(device_commands::Column::Status.eq("pending"))
        .one(conn)
        .await?
    else {
        return Ok(false); // another device's command, or already acknowledged
    };
    let error: Option<String> = if ack.ok {
        None
    } else {
        Some(ack.error.clone().filter(|e| !e.trim().is_empty()).unwrap_or_else(|| "the agent reported a failure".into()))
    };
    let error = error.map(|e| e.chars().take(1000).collect::<String>());
    let kind = cmd.kind.clone();
    let subject = cmd.subject_id.clone();
    let mut a: device_commands::ActiveModel = cmd.into();
    a.status = Set(if ack.ok { "done" } else { "failed" }.into());
    a.error = Set(error.clone());
    a.acked_at = Set(Some(now()));
    a.update(conn).await?;
    if kind == "zcloud_create"
        && let Some(machine) = subject
            && let Some(m) = devices::Entity::find_by_id(machine).filter(devices::Column::Status.eq(CREATING)).one(conn).await? {
                let mut a: devices::ActiveModel = m.into();
                a.status = Set(if ack.ok { ONLINE } else { FAILED }.into());
                a.status_reason = Set(error.clone());
                if ack.ok {
                    a.last_seen_at = Set(Some(now()));
                }
                a.updated_at = Set(now());
                let m = a.update(conn).await?;
                let kind = if ack.ok { "zcloud_ready" } else { "zcloud_failed" };
                notify(conn, &m, kind, error.as_deref()).await?;
                return Ok(true);
            }
    Ok(false)
}

// ---- binding and listing ----

pub async fn link(state: &AppState, auth: &Auth, req: LinkRequest) -> Result<Device, AppError> {
    let owner = manager(auth)?;
    let id = DeviceId::parse(req.device_id.as_deref())?;
    let txn = write_txn(&state.db).await?;
    let d = devices::Entity::find_by_id(id.as_str().to_string())
        .one(&txn)
        .await?
        .filter(|d| d.device_type != ZCLOUD)
        .ok_or(AppError::invalid("device_id", Msg::InvalidDeviceId))?;
    if owner_of(&d).is_some() {
        return Err(AppError::conflict(Msg::DeviceAlreadyBound));
    }
    let code = PairingCode::parse(req.pairing_code.as_deref()).ok_or(AppError::invalid("pairing_code", Msg::InvalidDeviceId))?;
    let expected = d.pairing_hash.clone().unwrap_or_default();
    if !constant_time_eq(expected.as_bytes(), tokens::hash_token(code.as_str()).as_bytes()) {
        return Err(AppError::invalid("pairing_code", Msg::InvalidDeviceId));
    }
    let t = now();
    let (user, company) = match &owner {
        Owner::User(u) => (Some(u.clone()), None),
        Owner::Company(c) => (None, Some(c.clone())),
    };
    let res = devices::Entity::update_many()
        .col_expr(devices::Column::OwnerUserId, user.into())
        .col_expr(devices::Column::OwnerCompanyId, company.into())
        .col_expr(devices::Column::BoundBy, Some(auth.user_id.clone()).into())
        .col_expr(devices::Column::BoundAt, Some(t).into())
        .col_expr(devices::Column::PairingHash, Option::<String>::None.into())
        .col_expr(devices::Column::UpdatedAt, t.into())
        .filter(devices::Column::Id.eq(d.id.clone()))
        .filter(devices::Column::OwnerUserId.is_null())
        .filter(devices::Column::OwnerCompanyId.is_null())
        .exec(&txn)
        .await?;
    if res.rows_affected != 1 {
        return Err(AppError::conflict(Msg::DeviceAlreadyBound));
    }
    let d = devices::Entity::find_by_id(d.id).one(&txn).await?.ok_or(AppError::NotFound(Msg::DeviceNotFound))?;
    txn.commit().await?;
    state.ssr.invalidate();
    Ok(to_device(&d))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub async fn list(state: &AppState, auth: &Auth, f: DeviceFilter, offset: u64, limit: u64) -> Result<crate::http::List<Device>, AppError> {
    let s = scope(auth);
    let member_ids = match &s {
        Scope::Member { company, user } => devices_visible_to_member(&state.db, company, user).await?,
        Scope::Owner(_) => Vec::new(),
    };
    let mut q = devices::Entity::find().filter(scope_condition(&s, member_ids));
    if let Some(t) = f.device_type.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        let t = TYPES.iter().find(|x| x.eq_ignore_ascii_case(t)).ok_or(AppError::invalid("type", Msg::InvalidField("type")))?;
        q = q.filter(devices::Column::DeviceType.eq(*t));
    }
    if let Some(st) = f.status.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        q = match st {
            ONLINE | CREATING | FAILED => q.filter(devices::Column::Status.eq(st)),
            // unknown and anything else are shown as offline
            OFFLINE => q.filter(devices::Column::Status.is_not_in([ONLINE, CREATING, FAILED])),
            _ => return Err(AppError::invalid("status", Msg::InvalidField("status"))),
        };
    }
    let all = q.order_by_asc(devices::Column::CreatedAt).order_by_asc(devices::Column::Id).all(&state.db).await?;
    let total = all.len() as u64;
    let items = all.iter().skip(offset as usize).take(limit as usize).map(to_device).collect();
    Ok(crate::http::List { items, total })
}

pub async fn get(state: &AppState, auth: &Auth, id: &str) -> Result<Device, AppError> {
    Ok(to_device(&visible(state, auth, id).await?))
}

// ---- sharing, location, name ----

pub async fn update_sharing(state: &AppState, auth: &Auth, id: &str, req: SharingRequest) -> Result<Device, AppError> {
    let mode = req.mode.as_deref().map(str::trim).unwrap_or("");
    let mode = MODES.iter().find(|m| **m == mode).ok_or(AppError::invalid("mode", Msg::InvalidField("mode")))?;
    let rentable = req.rentable.ok_or(AppError::invalid("rentable", Msg::InvalidField("rentable")))?;
    let txn = write_txn(&state.db).await?;
    let (d, _) = managed(&txn, auth, id).await?;
    let price = match req.price_per_hour {
        Some(p) if (0..=MAX_PRICE).contains(&p) => p,
        None => d.price_per_hour,
        Some(_) => return Err(AppError::invalid("price_per_hour", Msg::InvalidField("price_per_hour"))),
    };
    // dedicated = self-used: never rented; autopilot = rented out whenever idle for max profit.
    if (*mode == "dedicated" && rentable) || (*mode == "autopilot" && !rentable) {
        return Err(AppError::conflict(Msg::SharingModeForbids));
    }
    if rentable && d.status != ONLINE && !(d.rentable && d.sharing_mode == *mode) {
        // Offering a stopped or offline machine for rent is refused; withdrawing it is not.
        return Err(AppError::conflict(Msg::DeviceNotRunning));
    }
    let mut a: devices::ActiveModel = d.into();
    a.sharing_mode = Set(mode.to_string());
    a.rentable = Set(rentable);
    a.price_per_hour = Set(price);
    a.updated_at = Set(now());
    let d = a.update(&txn).await?;
    txn.commit().await?;
    state.ssr.invalidate();
    Ok(to_device(&d))
}

pub async fn update_location(state: &AppState, auth: &Auth, id: &str, req: LocationRequest) -> Result<Device, AppError> {
    let loc = match (req.lat, req.lng) {
        (None, None) => None,
        (lat, lng) => Some(Location::check(lat, lng)?),
    };
    let txn = write_txn(&state.db).await?;
    let (d, _) = managed(&txn, auth, id).await?;
    let mut a: devices::ActiveModel = d.into();
    a.lat = Set(loc.as_ref().map(|l| l.lat));
    a.lng = Set(loc.as_ref().map(|l| l.lng));
    a.updated_at = Set(now());
    let d = a.update(&txn).await?;
    txn.commit().await?;
    state.ssr.invalidate();
    Ok(to_device(&d))
}

pub async fn rename(state: &AppState, auth: &Auth, id: &str, req: RenameRequest) -> Result<Device, AppError> {
    let name = device_name("name", req.name.as_deref())?;
    let txn = write_txn(&state.db).await?;
    let (d, _) = managed(&txn, auth, id).await?;
    let mut a: devices::ActiveModel = d.into();
    a.name = Set(name);
    a.updated_at = Set(now());
    let d = a.update(&txn).await?;
    txn.commit().await?;
    state.ssr.invalidate();
    Ok(to_device(&d))
}

/// Unlinks a box (its secret stops working: the agent registers afresh) or deletes a Z-CLOUD
/// machine (its capacity is released and its host is told to delete it).
pub async fn unlink(state: &AppState, auth: &Auth, id: &str) -> Result<(), AppError> {
    let txn = write_txn(&state.db).await?;
    let (d, _) = managed(&txn, auth, id).await?;
    // Machines still running (or being made) on a host keep it; failed ones hold nothing.
    let machines = devices::Entity::find()
        .filter(devices::Column::HostId.eq(d.id.clone()))
        .filter(devices::Column::Status.ne(FAILED))
        .all(&txn)
        .await?;
    if !machines.is_empty() {
        return Err(AppError::conflict(Msg::HostHasMachines));
    }
    if let Some(host) = &d.host_id {
        if devices::Entity::find_by_id(host.clone()).one(&txn).await?.is_some() {
            device_commands::ActiveModel {
                id: Set(new_id()),
                device_id: Set(host.clone()),
                subject_id: Set(Some(d.id.clone())),
                kind: Set("zcloud_delete".into()),
                payload: Set(json!({"machine_id": d.id}).to_string()),
                status: Set("pending".into()),
                error: Set(None),
                created_at: Set(now()),
                acked_at: Set(None),
            }
            .insert(&txn)
            .await?;
        }
        // A create still waiting for the host is withdrawn.
        device_commands::Entity::delete_many()
            .filter(device_commands::Column::SubjectId.eq(d.id.clone()))
            .filter(device_commands::Column::Kind.eq("zcloud_create"))
            .filter(device_commands::Column::Status.eq("pending"))
            .exec(&txn)
            .await?;
    }
    // Its allocations to company members end with it.
    crate::iam::sme::resources::resource_released(&txn, crate::iam::sme::model::ResourceType::Device, &d.id).await?;
    devices::Entity::delete_by_id(d.id).exec(&txn).await?;
    txn.commit().await?;
    state.ssr.invalidate();
    Ok(())
}

/// Devices still bound to a person (blocks deleting the account).
pub async fn linked_count(conn: &impl ConnectionTrait, user_id: &str) -> Result<u64, AppError> {
    use sea_orm::PaginatorTrait;
    Ok(devices::Entity::find().filter(owned_by(&Owner::User(user_id.to_string()))).count(conn).await?)
}

// ---- status job ----

/// Marks devices offline whose last heartbeat is older than `offline_after_secs`; also forgets
/// devices that registered but were never bound and have not been seen for a week.
pub async fn mark_offline(state: &AppState) -> Result<usize, AppError> {
    let cutoff = now() - Duration::seconds(state.config.devices.offline_after_secs as i64);
    let stale = devices::Entity::find()
        .filter(devices::Column::Status.eq(ONLINE))
        .filter(Condition::any().add(devices::Column::LastSeenAt.lt(cutoff)).add(devices::Column::LastSeenAt.is_null()))
        .all(&state.db)
        .await?;
    let mut n = 0;
    for d in stale {
        let txn = write_txn(&state.db).await?;
        let res = devices::Entity::update_many()
            .col_expr(devices::Column::Status, OFFLINE.into())
            .col_expr(devices::Column::UpdatedAt, now().into())
            .filter(devices::Column::Id.eq(d.id.clone()))
            .filter(devices::Column::Status.eq(ONLINE))
            .filter(Condition::any().add(devices::Column::LastSeenAt.lt(cutoff)).add(devices::Column::LastSeenAt.is_null()))
            .exec(&txn)
            .await?;
        if res.rows_affected == 1 {
            let mut d = d;
            d.status = OFFLINE.into();
            notify(&txn, &d, "device_offline", None).await?;
            n += 1;
        }
        txn.commit().await?;
    }
    let week = now() - Duration::days(7);
    devices::Entity::delete_many()
        .filter(devices::Column::OwnerUserId.is_null())
        .filter(devices::Column::OwnerCompanyId.is_null())
        .filter(devices::Column::LastSeenAt.lt(week))
        .exec(&state.db)
        .await?;
    if n > 0 {
        state.ssr.invalidate();
    }
    Ok(n)
}

// ---- Z-CLOUD ----

/// What a host has left.
#[derive(Debug, Clone)]
struct Free {
    host: devices::Model,
    cpu_cores: i64,
    memory_bytes: i64,
    disk_bytes: i64,
    /// (name, passthrough-capable, free count)
    gpus: Vec<(String, bool, i64)>,
}

/// Server-group hosts a Z-CLOUD machine may be made on for this owner: the owner's own online
/// hosts, and other owners' online hosts that are shared and rentable.
async fn free_capacity(conn: &impl ConnectionTrait, owner: &Owner) -> Result<Vec<Free>, AppError> {
    let shared = Condition::all().add(devices::Column::SharingMode.ne("dedicated")).add(devices::Column::Rentable.eq(true));
    let hosts = devices::Entity::find()
        .filter(devices::Column::DeviceType.eq(SERVER_GROUP))
        .filter(devices::Column::Status.eq(ONLINE))
        .filter(Condition::any().add(owned_by(owner)).add(shared.add(Condition::any().add(devices::Column::OwnerUserId.is_not_null()).add(devices::Column::OwnerCompanyId.is_not_null()))))
        .order_by_asc(devices::Column::CreatedAt)
        .all(conn)
        .await?;
    let mut out = Vec::new();
    for host in hosts {
        let machines = devices::Entity::find()
            .filter(devices::Column::HostId.eq(host.id.clone()))
            .filter(devices::Column::Status.ne(FAILED))
            .all(conn)
            .await?;
        let mut groups: Vec<(String, bool, i64)> = Vec::new();
        for g in gpus_of(&host) {
            match groups.iter_mut().find(|(n, p, _)| *n == g.name && *p == g.passthrough) {
                Some(e) => e.2 += 1,
                None => groups.push((g.name.clone(), g.passthrough, 1)),
            }
        }
        for m in &machines {
            // passthrough GPUs are held whole; virtual ones are shared
            if m.passthrough && m.gpu_count > 0
                && let Some(e) = groups.iter_mut().find(|(n, p, _)| *n == m.gpu_model && *p) {
                    e.2 -= m.gpu_count;
                }
        }
        out.push(Free {
            cpu_cores: host.cpu_cores - machines.iter().map(|m| m.cpu_cores).sum::<i64>(),
            memory_bytes: host.memory_bytes - machines.iter().map(|m| m.memory_bytes).sum::<i64>(),
            disk_bytes: host.disk_bytes - machines.iter().map(|m| m.disk_bytes).sum::<i64>(),
            gpus: groups,
            host,
        });
    }
    Ok(out)
}

pub async fn capacity(state: &AppState, auth: &Auth) -> Result<Vec<HostFree>, AppError> {
    let owner = manager(auth)?;
    Ok(free_capacity(&state.db, &owner)
        .await?
        .into_iter()
        .map(|f| HostFree {
            cpu_cores: f.cpu_cores.max(0),
            memory_bytes: f.memory_bytes.max(0),
            disk_bytes: f.disk_bytes.max(0),
            gpus: f.gpus.into_iter().map(|(name, passthrough, count)| GpuFree { name, passthrough, count: count.max(0) }).collect(),
        })
        .collect())
}

struct ZcloudAsk {
    name: String,
    cpu_cores: i64,
    memory_bytes: i64,
    disk_bytes: i64,
    gpu_count: i64,
    gpu_model: String,
    passthrough: bool,
}

fn check_zcloud(req: ZcloudRequest) -> Result<ZcloudAsk, AppError> {
    let name = device_name("name", req.name.as_deref())?;
    let bad = |f: &'static str| AppError::invalid(f, Msg::InvalidField(f));
    let cpu_cores = req.cpu_cores.filter(|v| (1..=1024).contains(v)).ok_or(bad("cpu_cores"))?;
    let memory_bytes = req.memory_bytes.filter(|v| (1..=(1i64 << 50)).contains(v)).ok_or(bad("memory_bytes"))?;
    let disk_bytes = req.disk_bytes.filter(|v| (1..=(1i64 << 55)).contains(v)).ok_or(bad("disk_bytes"))?;
    let gpu_count = req.gpu_count.unwrap_or(0);
    if !(0..=16).contains(&gpu_count) {
        return Err(bad("gpu_count"));
    }
    // SPEC.md §5: GPU models are entered as a comma-separated list; the first that fits is used.
    let gpu_model = req.gpu_model.unwrap_or_default().trim().to_string();
    if gpu_model.chars().count() > 200 {
        return Err(bad("gpu_model"));
    }
    Ok(ZcloudAsk { name, cpu_cores, memory_bytes, disk_bytes, gpu_count, gpu_model, passthrough: req.passthrough.unwrap_or(false) })
}

/// The GPU model name a host can give for the ask, if any.
fn gpu_fit(free: &Free, ask: &ZcloudAsk) -> Option<String> {
    if ask.gpu_count == 0 {
        return Some(String::new());
    }
    let wanted: Vec<String> = ask.gpu_model.split(',').map(|m| m.trim().to_lowercase()).filter(|m| !m.is_empty()).collect();
    let matches = |name: &str| wanted.is_empty() || wanted.iter().any(|w| name.to_lowercase().contains(w.as_str()));
    if ask.passthrough {
        free.gpus.iter().find(|(n, p, c)| *p && *c >= ask.gpu_count && matches(n)).map(|(n, _, _)| n.clone())
    } else {
        // a virtual GPU needs a physical one of that model not held whole by another machine
        let mut by_name: Vec<(String, i64)> = Vec::new();
        for (n, _, c) in &free.gpus {
            match by_name.iter_mut().find(|(x, _)| x == n) {
                Some(e) => e.1 += c,
                None => by_name.push((n.clone(), *c)),
            }
        }
        by_name.into_iter().find(|(n, c)| *c >= ask.gpu_count && matches(n)).map(|(n, _)| n)
    }
}

pub async fn create_zcloud(state: &AppState, auth: &Auth, req: ZcloudRequest) -> Result<Device, AppError> {
    let owner = manager(auth)?;
    let ask = check_zcloud(req)?;
    let txn = write_txn(&state.db).await?;
    let mut chosen: Option<(Free, String)> = None;
    for f in free_capacity(&txn, &owner).await? {
        if f.cpu_cores >= ask.cpu_cores && f.memory_bytes >= ask.memory_bytes && f.disk_bytes >= ask.disk_bytes
            && let Some(model) = gpu_fit(&f, &ask) {
                chosen = Some((f, model));
                break;
            }
    }
    let Some((free, model)) = chosen else { return Err(AppError::conflict(Msg::NoCapacity)) };
    let host_gpu = gpus_of(&free.host).into_iter().find(|g| g.name == model);
    let gpus: Vec<Gpu> = (0..ask.gpu_count)
        .map(|_| Gpu { name: model.clone(), passthrough: ask.passthrough, vram: host_gpu.as_ref().map(|g| g.vram).unwrap_or(0) })
        .collect();
    let mut id = DeviceId::new_random();
    while devices::Entity::find_by_id(id.as_str().to_string()).one(&txn).await?.is_some() {
        id = DeviceId::new_random();
    }
    let (user, company) = match &owner {
        Owner::User(u) => (Some(u.clone()), None),
        Owner::Company(c) => (None, Some(c.clone())),
    };
    let t = now();
    let machine = devices::ActiveModel {
        id: Set(id.as_str().to_string()),
        name: Set(ask.name.clone()),
        device_type: Set(ZCLOUD.into()),
        status: Set(CREATING.into()),
        status_reason: Set(None),
        secret_hash: Set(None),
        pairing_hash: Set(None),
        owner_user_id: Set(user),
        owner_company_id: Set(company),
        bound_by: Set(Some(auth.user_id.clone())),
        bound_at: Set(Some(t)),
        sharing_mode: Set("dedicated".into()),
        rentable: Set(false),
        price_per_hour: Set(0),
        cpu_cores: Set(ask.cpu_cores),
        memory_bytes: Set(ask.memory_bytes),
        disk_bytes: Set(ask.disk_bytes),
        gpus: Set(serde_json::to_string(&gpus).map_err(|e| AppError::Internal(e.into()))?),
        cpu_percent: Set(None),
        memory_used_bytes: Set(None),
        disk_used_bytes: Set(None),
        lat: Set(free.host.lat),
        lng: Set(free.host.lng),
        host_id: Set(Some(free.host.id.clone())),
        gpu_count: Set(ask.gpu_count),
        gpu_model: Set(model.clone()),
        passthrough: Set(ask.passthrough),
        last_seen_at: Set(None),
        created_at: Set(t),
        updated_at: Set(t),
    }
    .insert(&txn)
    .await?;
    device_commands::ActiveModel {
        id: Set(new_id()),
        device_id: Set(free.host.id.clone()),
        subject_id: Set(Some(machine.id.clone())),
        kind: Set("zcloud_create".into()),
        payload: Set(json!({
            "machine_id": machine.id,
            "name": ask.name,
            "cpu_cores": ask.cpu_cores,
            "memory_bytes": ask.memory_bytes,
            "disk_bytes": ask.disk_bytes,
            "gpu_count": ask.gpu_count,
            "gpu_model": model,
            "passthrough": ask.passthrough,
        })
        .to_string()),
        status: Set("pending".into()),
        error: Set(None),
        created_at: Set(t),
        acked_at: Set(None),
    }
    .insert(&txn)
    .await?;
    txn.commit().await?;
    Ok(to_device(&machine))
}

// ---- nearby (public) ----

pub const EARTH_RADIUS_KM: f64 = 6371.0;

/// Great-circle distance on a 6371 km sphere, rounded up to whole kilometres.
pub fn distance_km(lat1: f64, lng1: f64, lat2: f64, lng2: f64) -> i64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = (lat2 - lat1).to_radians();
    let dl = (lng2 - lng1).to_radians();
    let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    let d = 2.0 * EARTH_RADIUS_KM * a.sqrt().min(1.0).asin();
    // guard against 1e-12 noise turning an exact 0 into 1 km
    let d = (d * 1e9).round() / 1e9;
    d.ceil() as i64
}

/// Coordinates shown to visitors: two decimals (about 1 km), so an address is not exposed.
pub fn coarse(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn visitor_point(state: &AppState, lat: Option<f64>, lng: Option<f64>) -> Result<(f64, f64), AppError> {
    match (lat, lng) {
        (None, None) => Ok((state.config.map.default_lat, state.config.map.default_lng)),
        (lat, lng) => {
            let l = Location::check(lat, lng)?;
            Ok((l.lat, l.lng))
        }
    }
}

fn shared_condition() -> Condition {
    Condition::all()
        .add(devices::Column::SharingMode.ne("dedicated"))
        .add(devices::Column::Rentable.eq(true))
        .add(devices::Column::Lat.is_not_null())
        .add(devices::Column::Lng.is_not_null())
        .add(Condition::any().add(devices::Column::OwnerUserId.is_not_null()).add(devices::Column::OwnerCompanyId.is_not_null()))
}

fn nearby_of(d: &devices::Model, at: (f64, f64)) -> NearbyDevice {
    let (lat, lng) = (coarse(d.lat.unwrap_or(0.0)), coarse(d.lng.unwrap_or(0.0)));
    NearbyDevice {
        id: d.id.clone(),
        name: d.name.clone(),
        device_type: d.device_type.clone(),
        status: shown_status(&d.status).to_string(),
        distance_km: distance_km(at.0, at.1, lat, lng),
        lat,
        lng,
        price_per_hour: d.price_per_hour,
        gpus: gpus_of(d),
        apps: None,
    }
}

pub async fn nearby(state: &AppState, q: NearbyQuery) -> Result<crate::http::List<NearbyDevice>, AppError> {
    let at = visitor_point(state, q.lat, q.lng)?;
    let (offset, limit) = crate::http::Page { offset: q.offset, limit: q.limit }.checked(24)?;
    let radius = match q.radius_km {
        None => None,
        Some(r) if r.is_finite() && r >= 0.0 => Some(r),
        Some(_) => return Err(AppError::invalid("radius_km", Msg::InvalidField("radius_km"))),
    };
    let rows = devices::Entity::find().filter(shared_condition()).all(&state.db).await?;
    let mut items: Vec<NearbyDevice> =
        rows.iter().map(|d| nearby_of(d, at)).filter(|d| radius.is_none_or(|r| d.distance_km as f64 <= r)).collect();
    items.sort_by(|a, b| a.distance_km.cmp(&b.distance_km).then_with(|| a.id.cmp(&b.id)));
    let total = items.len() as u64;
    let items = items.into_iter().skip(offset as usize).take(limit as usize).collect();
    Ok(crate::http::List { items, total })
}

pub async fn nearby_one(state: &AppState, id: &str, q: NearbyPoint) -> Result<NearbyDevice, AppError> {
    let at = visitor_point(state, q.lat, q.lng)?;
    let d = devices::Entity::find_by_id(id.to_string())
        .filter(shared_condition())
        .one(&state.db)
        .await?
        .ok_or(AppError::NotFound(Msg::DeviceNotFound))?;
    let mut n = nearby_of(&d, at);
    n.apps = Some(Vec::new());
    Ok(n)
}

/// Server-rendered data of the nearby pages (ui/README.md "state.data shapes"): `nearby` is the
/// first page at the configured map centre, `nearbyDetails` the device of `?id=` seen from it.
/// `page` is the desktop path of the page (src/ssr/data.rs normalizes it).
pub async fn page_data(state: &AppState, page: &str, params: &[(String, String)]) -> Option<(&'static str, serde_json::Value)> {
    match page {
        "/nearby" => {
            let q = NearbyQuery { lat: None, lng: None, radius_km: None, offset: Some(0), limit: Some(24) };
            match nearby(state, q).await {
                Ok(list) => serde_json::to_value(list).ok().map(|v| ("nearby", v)),
                Err(e) => {
                    tracing::warn!(error = %e, "nearby data for the page");
                    None
                }
            }
        }
        "/nearby/details" => {
            let id = params.iter().find(|(k, _)| k == "id").map(|(_, v)| v.clone())?;
            let one = nearby_one(state, &id, NearbyPoint { lat: None, lng: None }).await.ok()?;
            serde_json::to_value(one).ok().map(|v| ("nearbyDetails", v))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_rounds_up_to_whole_km() {
        assert_eq!(distance_km(22.54, 114.06, 22.54, 114.06), 0);
        // one hundredth of a degree of latitude is about 1.11 km
        assert_eq!(distance_km(0.0, 0.0, 0.01, 0.0), 2);
        // Shenzhen to Beijing: about 1943 km
        let d = distance_km(22.5431, 114.0579, 39.9042, 116.4074);
        assert!((1940..=1950).contains(&d), "{d}");
    }

    #[test]
    fn coarse_keeps_two_decimals() {
        assert_eq!(coarse(22.54317), 22.54);
        assert_eq!(coarse(-0.005001), -0.01);
    }
}
