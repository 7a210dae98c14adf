//! Who may see and manage which device (owner, company admin, member with an assignment),
//! and a device as its owner sees it. No HTTP types here.

use sea_orm::{ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter};

use crate::companies::model::ResourceType;
use crate::companies::resources::assigned_resource_ids;
use crate::db::entity::devices;
use crate::db::for_update;
use crate::devices::DevicesCtx;
use crate::devices::model::*;
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::ids::{CompanyId, DeviceId, UserId};

/// Who owns a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    User(UserId),
    Company(CompanyId),
}

/// The devices a caller sees in the current context.
pub(crate) enum Scope {
    Owner(Owner),
    /// A company member: only devices assigned to them.
    Member { company: CompanyId, user: UserId },
}

pub(crate) fn scope(auth: &Auth) -> Scope {
    match auth.company() {
        None => Scope::Owner(Owner::User(auth.user_id.clone())),
        Some(c) if auth.is_admin() => Scope::Owner(Owner::Company(CompanyId::from(c))),
        Some(c) => Scope::Member { company: CompanyId::from(c), user: auth.user_id.clone() },
    }
}

/// The owner a management call acts for; members may not manage devices.
pub fn manager(auth: &Auth) -> Result<Owner, AppError> {
    match scope(auth) {
        Scope::Owner(o) => Ok(o),
        Scope::Member { .. } => Err(AppError::Refused(Msg::NoPermissionManageDevices)),
    }
}

pub(crate) fn owned_by(owner: &Owner) -> Condition {
    match owner {
        Owner::User(u) => {
            Condition::all().add(devices::Column::OwnerUserId.eq(u.as_str())).add(devices::Column::OwnerCompanyId.is_null())
        }
        Owner::Company(c) => Condition::all().add(devices::Column::OwnerCompanyId.eq(c.as_str())),
    }
}

pub(crate) fn owner_of(d: &devices::Model) -> Option<Owner> {
    match (&d.owner_company_id, &d.owner_user_id) {
        (Some(c), _) => Some(Owner::Company(c.clone())),
        (None, Some(u)) => Some(Owner::User(u.clone().into())),
        _ => None,
    }
}

/// Devices visible to a member: those the company assigned to them (the companies domain owns
/// the assignments) that still belong to that company.
pub async fn devices_visible_to_member(db: &DatabaseConnection, company: &CompanyId, user: &UserId) -> Result<Vec<DeviceId>, AppError> {
    let ids = assigned_resource_ids(db, company, user, ResourceType::Device).await?;
    let owned = devices::Entity::find()
        .filter(devices::Column::Id.is_in(ids))
        .filter(devices::Column::OwnerCompanyId.eq(company))
        .all(db)
        .await?;
    Ok(owned.into_iter().map(|d| d.id).collect())
}

pub(crate) fn scope_condition(scope: &Scope, member_ids: Vec<DeviceId>) -> Condition {
    match scope {
        Scope::Owner(o) => owned_by(o),
        Scope::Member { .. } => Condition::all().add(devices::Column::Id.is_in(member_ids)),
    }
}

pub(crate) async fn visible(cx: &DevicesCtx, auth: &Auth, id: &DeviceId) -> Result<devices::Model, AppError> {
    let s = scope(auth);
    let member_ids = match &s {
        Scope::Member { company, user } => devices_visible_to_member(&cx.db, company, user).await?,
        Scope::Owner(_) => Vec::new(),
    };
    devices::Entity::find_by_id(id.to_string())
        .filter(scope_condition(&s, member_ids))
        .one(&cx.db)
        .await?
        .ok_or(AppError::Refused(Msg::DeviceNotFound))
}

/// Whether the caller sees `d` as its owner does (the owner, the owning company's admin, a
/// member it is assigned to).
pub async fn may_see(db: &DatabaseConnection, auth: &Auth, d: &devices::Model) -> Result<bool, AppError> {
    Ok(match scope(auth) {
        Scope::Owner(o) => owner_of(d).as_ref() == Some(&o),
        Scope::Member { company, user } => devices_visible_to_member(db, &company, &user).await?.contains(&d.id),
    })
}

/// A device the caller may manage (403 for members, 404 for another owner's device), its row
/// locked until the transaction ends (`db::for_update`): the caller is about to change it.
pub(crate) async fn managed(conn: &impl ConnectionTrait, auth: &Auth, id: &DeviceId) -> Result<(devices::Model, Owner), AppError> {
    let owner = manager(auth)?;
    let d = for_update(conn, devices::Entity::find_by_id(id.to_string()).filter(owned_by(&owner)))
        .one(conn)
        .await?
        .ok_or(AppError::Refused(Msg::DeviceNotFound))?;
    Ok((d, owner))
}

// ---- shapes ----


/// A device as its owner sees it, with how many of its GPUs are free (one read of the holds).
pub async fn device_view(conn: &impl ConnectionTrait, d: &devices::Model) -> Result<Device, AppError> {
    let free = crate::devices::gpus::free_counts(conn, std::slice::from_ref(d)).await?;
    Ok(to_device(d, free.get(&d.id).copied().unwrap_or(0)))
}

/// A device as its owner sees it; `gpus_free` read by the caller (devices::gpus).
pub fn to_device(d: &devices::Model, gpus_free: i64) -> Device {
    let metrics = d.cpu_percent.map(|cpu| Metrics {
        cpu_percent: cpu,
        memory_used_bytes: d.memory_used_bytes.unwrap_or(0),
        disk_used_bytes: d.disk_used_bytes.unwrap_or(0),
        gpus: d.gpu_use.as_deref().and_then(|u| serde_json::from_str(u).ok()).unwrap_or_default(),
    });
    Device {
        id: d.id.clone().into(),
        name: d.name.clone(),
        device_type: d.device_type,
        status: d.status.shown(),
        status_reason: d.status_reason.clone(),
        sharing_mode: d.sharing_mode,
        rentable: d.rentable,
        price_per_hour: d.price_per_hour,
        spec: Spec { cpu_cores: d.cpu_cores, memory_bytes: d.memory_bytes, disk_bytes: d.disk_bytes, gpus: crate::devices::gpus::gpus_of(d), gpu_runtime: d.gpu_runtime },
        metrics,
        location: match (d.lat, d.lng) {
            (Some(lat), Some(lng)) => Some(Location { lat, lng }),
            _ => None,
        },
        owner_kind: if d.owner_company_id.is_some() { "company" } else { "user" }.to_string(),
        host_id: d.host_id.clone().map(String::from),
        last_seen_at: d.last_seen_at,
        created_at: d.created_at,
        gpus_free,
        verification: crate::devices::gpus::verification_of(d),
    }
}

