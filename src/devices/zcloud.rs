//! Z-CLOUD machines: free capacity of server-group hosts, placement, and the create command
//! to the chosen host. No HTTP types here.

use sea_orm::{ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set};

use crate::db::entity::devices;
use crate::db::{for_update, now, write_txn};
use crate::devices::{DevicesCtx, rental};
use crate::devices::access::*;
use crate::devices::gpus::gpus_of;
use crate::devices::model::*;
use zmarket_protocol::heartbeat::{CommandBody, ZcloudMachine};
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::ids::CommandId;

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
/// hosts, and other owners' online hosts that are shared and rentable. With `lock`, the host rows
/// stay locked until the transaction ends (`db::for_update`), so two creates never both count
/// the same free capacity and an unlink waits for a create on that host.
async fn free_capacity(conn: &impl ConnectionTrait, owner: &Owner, lock: bool) -> Result<Vec<Free>, AppError> {
    let shared = Condition::all().add(devices::Column::SharingMode.ne(SharingMode::Dedicated)).add(devices::Column::Rentable.eq(true));
    let hosts = devices::Entity::find()
        .filter(devices::Column::DeviceType.eq(DeviceType::ServerGroup))
        .filter(devices::Column::Status.eq(DeviceStatus::Online))
        .filter(Condition::any().add(owned_by(owner)).add(shared.add(Condition::any().add(devices::Column::OwnerUserId.is_not_null()).add(devices::Column::OwnerCompanyId.is_not_null()))))
        .order_by_asc(devices::Column::CreatedAt)
        .order_by_asc(devices::Column::Id);
    let hosts = if lock { for_update(conn, hosts) } else { hosts }.all(conn).await?;
    let mut out = Vec::new();
    for host in hosts {
        let machines = devices::Entity::find()
            .filter(devices::Column::HostId.eq(host.id.clone()))
            .filter(devices::Column::Status.ne(DeviceStatus::Failed))
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

pub async fn capacity(cx: &DevicesCtx, auth: &Auth) -> Result<Vec<HostFree>, AppError> {
    let owner = manager(auth)?;
    Ok(free_capacity(&cx.db, &owner, false)
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

pub async fn create_zcloud(cx: &DevicesCtx, auth: &Auth, ask: ZcloudAsk) -> Result<Device, AppError> {
    let owner = manager(auth)?;
    let txn = write_txn(&cx.db).await?;
    let mut chosen: Option<(Free, String)> = None;
    // The owner's own hosts first (free), then other owners' (a rental, src/devices/rental.rs).
    let mut hosts = free_capacity(&txn, &owner, true).await?;
    hosts.sort_by_key(|f| owner_of(&f.host).as_ref() != Some(&owner));
    for f in hosts {
        if f.cpu_cores >= ask.cpu_cores && f.memory_bytes >= ask.memory_bytes && f.disk_bytes >= ask.disk_bytes
            && let Some(model) = gpu_fit(&f, &ask)
            && !within_company(&txn, &owner, &f.host).await?
        {
            chosen = Some((f, model));
            break;
        }
    }
    let Some((free, model)) = chosen else { return Err(AppError::Refused(Msg::NoCapacity)) };
    let host_gpu = gpus_of(&free.host).into_iter().find(|g| g.name == model);
    let gpus: Vec<Gpu> = (0..ask.gpu_count)
        .map(|_| Gpu { name: model.clone(), passthrough: ask.passthrough, vram: host_gpu.as_ref().map(|g| g.vram).unwrap_or(0), ..Default::default() })
        .collect();
    let id = crate::devices::rows::free_id(&txn).await?;
    let t = now();
    let mut machine = crate::devices::rows::new_device(id, ask.name.clone(), DeviceType::ZCloud, DeviceStatus::Creating, t);
    match &owner {
        Owner::User(u) => machine.owner_user_id = Set(Some(u.clone())),
        Owner::Company(c) => machine.owner_company_id = Set(Some(c.clone())),
    }
    machine.bound_by = Set(Some(auth.user_id.clone()));
    machine.bound_at = Set(Some(t));
    machine.sharing_mode = Set(SharingMode::Dedicated);
    machine.cpu_cores = Set(ask.cpu_cores);
    machine.memory_bytes = Set(ask.memory_bytes);
    machine.disk_bytes = Set(ask.disk_bytes);
    machine.gpus = Set(serde_json::to_string(&gpus).map_err(|e| AppError::Internal(e.into()))?);
    machine.lat = Set(free.host.lat);
    machine.lng = Set(free.host.lng);
    machine.host_id = Set(Some(free.host.id.clone()));
    machine.gpu_count = Set(ask.gpu_count);
    machine.gpu_model = Set(model.clone());
    machine.passthrough = Set(ask.passthrough);
    let machine = machine.insert(&txn).await?;
    // Passthrough GPUs are the machine's alone: held by UUID (virtual ones are shared).
    let held = if ask.passthrough {
        crate::devices::gpus::assign(&txn, &free.host, ask.gpu_count, Some(&model), crate::devices::gpus::Holder::Machine(&machine.id)).await?
    } else {
        Vec::new()
    };
    let create = CommandBody::ZcloudCreate(ZcloudMachine {
        machine_id: machine.id.clone().into(),
        name: ask.name.clone(),
        cpu_cores: ask.cpu_cores,
        memory_bytes: ask.memory_bytes,
        disk_bytes: ask.disk_bytes,
        gpu_count: ask.gpu_count,
        gpu_model: model.clone(),
        passthrough: ask.passthrough,
        gpus: held.into_iter().map(|g| g.uuid).collect(),
    });
    crate::devices::commands::queue(&txn, &CommandId::new(), &free.host.id, machine.id.as_str(), &create).await?;
    // On another owner's host it is a rental: held from the wallet now (409, nothing made, when the
    // wallet cannot), charged by the minute.
    if let Some(provider) = owner_of(&free.host).filter(|p| *p != owner) {
        rental::start(cx, &txn, &free.host, &machine, &owner, &provider, &auth.user_id, &ask).await?;
    }
    txn.commit().await?;
    device_view(&cx.db, &machine).await
}

/// A company and one of its administrators are the same people: a machine of one on the other's
/// host would move the company's coins to the person (as for app rentals), so such a host is not
/// offered.
async fn within_company(conn: &impl ConnectionTrait, owner: &Owner, host: &devices::Model) -> Result<bool, AppError> {
    let Some(provider) = owner_of(host) else { return Ok(true) };
    Ok(match (owner, &provider) {
        (Owner::Company(c), Owner::User(u)) | (Owner::User(u), Owner::Company(c)) => {
            crate::iam::auth::membership(conn, c, u).await?.is_some_and(|m| m.role == crate::db::enums::Role::Admin)
        }
        _ => false,
    })
}

