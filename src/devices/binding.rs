//! Binding a box to a person or company, listing and reading devices, unlinking, and the
//! account-deletion check. No HTTP types here.

use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter, QueryOrder};

use crate::db::entity::devices;
use crate::db::enums::ResourceType;
use crate::db::{for_update, now, write_txn};
use crate::devices::DevicesCtx;
use crate::devices::{machines, rental};
use crate::devices::guards::DeviceChange;
use crate::devices::access::*;
use crate::devices::model::*;
use crate::error::{AppError, Msg};
use crate::ids::{CompanyId, DeviceId, UserId};
use crate::iam::auth::Auth;
use crate::iam::deletion::DeletionCheck;
use crate::iam::tokens;

pub async fn link(cx: &DevicesCtx, auth: &Auth, req: LinkRequest) -> Result<Device, AppError> {
    let owner = manager(auth)?;
    let id = DeviceId::parse(req.device_id.as_deref())?;
    let txn = write_txn(&cx.db).await?;
    let d = for_update(&txn, devices::Entity::find_by_id(id.as_str().to_string()))
        .one(&txn)
        .await?
        .filter(|d| d.device_type != DeviceType::ZCloud)
        .ok_or(AppError::invalid("device_id", Msg::InvalidDeviceId))?;
    if owner_of(&d).is_some() {
        return Err(AppError::Refused(Msg::DeviceAlreadyBound));
    }
    // A malformed code answers like a wrong one.
    let code = PairingCode::parse(req.pairing_code.as_deref()).ok_or(AppError::invalid("pairing_code", Msg::PairingCodeIncorrect))?;
    let expected = d.pairing_hash.clone().unwrap_or_default();
    if !constant_time_eq(expected.as_bytes(), tokens::hash_token(code.as_str()).as_bytes()) {
        return Err(AppError::invalid("pairing_code", Msg::PairingCodeIncorrect));
    }
    let t = now();
    let (user, company) = match &owner {
        Owner::User(u) => (Some(u.to_string()), None),
        Owner::Company(c) => (None, Some(c.clone())),
    };
    let res = devices::Entity::update_many()
        .col_expr(devices::Column::OwnerUserId, user.into())
        .col_expr(devices::Column::OwnerCompanyId, company.into())
        .col_expr(devices::Column::BoundBy, Some(auth.user_id.to_string()).into())
        .col_expr(devices::Column::BoundAt, Some(t).into())
        .col_expr(devices::Column::PairingHash, Option::<String>::None.into())
        .col_expr(devices::Column::UpdatedAt, t.into())
        .filter(devices::Column::Id.eq(d.id.clone()))
        .filter(devices::Column::OwnerUserId.is_null())
        .filter(devices::Column::OwnerCompanyId.is_null())
        .exec(&txn)
        .await?;
    if res.rows_affected != 1 {
        return Err(AppError::Refused(Msg::DeviceAlreadyBound));
    }
    let d = devices::Entity::find_by_id(d.id).one(&txn).await?.ok_or(AppError::Refused(Msg::DeviceNotFound))?;
    txn.commit().await?;
    cx.public.changed();
    device_view(&cx.db, &d).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub async fn list(cx: &DevicesCtx, auth: &Auth, f: DeviceFilter, offset: u64, limit: u64) -> Result<crate::http::List<Device>, AppError> {
    let s = scope(auth);
    let member_ids = match &s {
        Scope::Member { company, user } => devices_visible_to_member(&cx.db, company, user).await?,
        Scope::Owner(_) => Vec::new(),
    };
    let mut q = devices::Entity::find().filter(scope_condition(&s, member_ids));
    // A filter given is one of its values: an empty one is refused like an unknown one (the
    // UI leaves a filter out rather than send it empty).
    if let Some(t) = f.device_type.as_deref().map(str::trim) {
        let t = DeviceType::parse(t).ok_or(AppError::invalid("type", Msg::InvalidField("type")))?;
        q = q.filter(devices::Column::DeviceType.eq(t));
    }
    if let Some(st) = f.status.as_deref().map(str::trim) {
        q = match DeviceStatus::parse_filter(st) {
            // unknown is shown (and listed) as offline
            Some(DeviceStatus::Offline) => q.filter(devices::Column::Status.is_in([DeviceStatus::Offline, DeviceStatus::Unknown])),
            Some(s) => q.filter(devices::Column::Status.eq(s)),
            None => return Err(AppError::invalid("status", Msg::InvalidField("status"))),
        };
    }
    let all = q.order_by_asc(devices::Column::CreatedAt).order_by_asc(devices::Column::Id).all(&cx.db).await?;
    let total = all.len() as u64;
    let page: Vec<devices::Model> = all.into_iter().skip(offset as usize).take(limit as usize).collect();
    let free = crate::devices::gpus::free_counts(&cx.db, &page).await?;
    let items = page.iter().map(|d| to_device(d, free.get(&d.id).copied().unwrap_or(0))).collect();
    Ok(crate::http::List { items, total })
}

pub async fn get(cx: &DevicesCtx, auth: &Auth, id: &DeviceId) -> Result<Device, AppError> {
    device_view(&cx.db, &visible(cx, auth, id).await?).await
}

/// Unlinks a box (its secret stops working: the agent registers afresh) or deletes a Z-CLOUD
/// machine (its capacity is released and its host is told to delete it).
pub async fn unlink(cx: &DevicesCtx, auth: &Auth, id: &DeviceId) -> Result<(), AppError> {
    let txn = write_txn(&cx.db).await?;
    let (d, _) = managed(&txn, auth, id).await?;
    cx.guards.check(&txn, &d, DeviceChange::Unlink).await?;
    // A rented machine deleted by its renter: charged up to now, its hold released, removed.
    if rental::settle_machine(&txn, &d, ZcloudEndReason::Renter).await? {
        txn.commit().await?;
        cx.public.changed();
        return Ok(());
    }
    // A host leaving the market ends the machines other owners rent on it at once (settled, their
    // renters told); the owner's own machines keep it until the owner deletes them.
    rental::end_on_host_now(&txn, &d).await?;
    // Machines still running (or being made) on a host keep it; failed ones hold nothing.
    let carried = devices::Entity::find()
        .filter(devices::Column::HostId.eq(d.id.clone()))
        .filter(devices::Column::Status.ne(DeviceStatus::Failed))
        .all(&txn)
        .await?;
    if !carried.is_empty() {
        return Err(AppError::Refused(Msg::HostHasMachines));
    }
    machines::remove(&txn, &d).await?;
    txn.commit().await?;
    cx.public.changed();
    Ok(())
}

/// Devices still bound to a person (blocks deleting the account).
pub async fn linked_count(conn: &impl ConnectionTrait, user_id: &UserId) -> Result<u64, AppError> {
    use sea_orm::PaginatorTrait;
    Ok(devices::Entity::find().filter(owned_by(&Owner::User(user_id.into()))).count(conn).await?)
}

/// An account with devices still bound cannot be deleted (`devices_linked`).
pub struct DevicesLinked;

#[async_trait::async_trait]
impl DeletionCheck for DevicesLinked {
    async fn blocks(&self, txn: &DatabaseTransaction, user_id: &UserId) -> Result<Option<&'static str>, AppError> {
        Ok((linked_count(txn, user_id).await? > 0).then_some("devices_linked"))
    }
}

/// How many boxes each of `user_ids` owns (none: absent), for the operator's people list.
pub async fn counts_by_owner(conn: &impl ConnectionTrait, user_ids: &[UserId]) -> Result<std::collections::HashMap<UserId, u64>, AppError> {
    use sea_orm::QuerySelect;
    let rows: Vec<(Option<UserId>, i64)> = devices::Entity::find()
        .select_only()
        .column(devices::Column::OwnerUserId)
        .column_as(devices::Column::Id.count(), "n")
        .filter(devices::Column::OwnerUserId.is_in(user_ids.iter().cloned()))
        .group_by(devices::Column::OwnerUserId)
        .into_tuple()
        .all(conn)
        .await?;
    Ok(rows.into_iter().filter_map(|(owner, n)| Some((owner?, u64::try_from(n).unwrap_or(0)))).collect())
}

/// What the devices among `ids` are called, by id: a company's assignments and a rental's ledger
/// title name them so.
pub async fn names(conn: &impl ConnectionTrait, ids: &[DeviceId]) -> Result<std::collections::HashMap<DeviceId, String>, sea_orm::DbErr> {
    if ids.is_empty() {
        return Ok(Default::default());
    }
    let rows = devices::Entity::find().filter(devices::Column::Id.is_in(ids.iter().cloned())).all(conn).await?;
    Ok(rows.into_iter().map(|d| (d.id, d.name)).collect())
}

/// The devices bound in a company's context, for companies: a member may be assigned one, the
/// assignments name it, and a company with one still linked cannot be deleted (`devices_linked`).
pub struct CompanyDevices;

#[async_trait::async_trait]
impl crate::companies::resources::CompanyResources for CompanyDevices {
    async fn assignable(&self, conn: &sea_orm::DatabaseExecutor<'_>, kind: ResourceType, id: &str, company_id: &CompanyId) -> Result<Option<bool>, AppError> {
        if kind != ResourceType::Device {
            return Ok(None);
        }
        let company = Owner::Company(company_id.into());
        Ok(Some(devices::Entity::find_by_id(id.to_string()).filter(owned_by(&company)).one(conn).await?.is_some()))
    }

    async fn names(&self, conn: &sea_orm::DatabaseExecutor<'_>, kind: ResourceType, ids: &[String], _lang: crate::lang::Lang) -> Result<Vec<(String, String)>, AppError> {
        if kind != ResourceType::Device {
            return Ok(Vec::new());
        }
        let ids: Vec<DeviceId> = ids.iter().map(DeviceId::from).collect();
        Ok(names(conn, &ids).await?.into_iter().map(|(id, name)| (id.into_string(), name)).collect())
    }

    async fn held(&self, txn: &DatabaseTransaction, company_id: &CompanyId) -> Result<Option<&'static str>, AppError> {
        use sea_orm::PaginatorTrait;
        let n = devices::Entity::find().filter(owned_by(&Owner::Company(company_id.into()))).count(txn).await?;
        Ok((n > 0).then_some("devices_linked"))
    }
}

/// The box that registered with this pairing code in the last hour and is bound to nobody (the
/// bind page made the code for its install line and waits for the box): 404 until it has.
/// Only someone who may bind asks; the code is the page's secret, as it is the bind's.
pub async fn pending(cx: &DevicesCtx, auth: &Auth, code: Option<&str>) -> Result<Option<PendingDevice>, AppError> {
    manager(auth)?;
    let code = PairingCode::parse(code).ok_or(AppError::invalid("pairing_code", Msg::PairingCodeIncorrect))?;
    let since = now() - chrono::Duration::hours(1);
    let d = devices::Entity::find()
        .filter(devices::Column::PairingHash.eq(tokens::hash_token(code.as_str())))
        .filter(devices::Column::OwnerUserId.is_null())
        .filter(devices::Column::OwnerCompanyId.is_null())
        .filter(devices::Column::DeviceType.ne(DeviceType::ZCloud))
        .filter(devices::Column::CreatedAt.gt(since))
        .order_by_desc(devices::Column::CreatedAt)
        .one(&cx.db)
        .await?;
    Ok(d.map(|d| PendingDevice { device_id: d.id.into(), name: d.name, device_type: d.device_type, registered_at: d.created_at.into() }))
}
