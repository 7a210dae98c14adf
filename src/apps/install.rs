//! Installing an app on one of one's own devices, the requirement check, a person's actions on
//! an installation, and the lists. No HTTP types here.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde_json::json;

use crate::devices::model::DeviceId;
use crate::ids::{AppId, CommandId, InstallationId, UserId};
use crate::apps::AppsCtx;
use crate::apps::access::{Names, condition, installer, reason_of, scope, to_installation, visible};
use crate::apps::lifecycle::{self, Allowed, Event, command_of};
use crate::apps::model::*;
use zmarket_protocol::heartbeat::CommandBody;
use crate::apps::state::{self, Change};
use crate::db::entity::{app_images, apps, devices, installation_events, installations};
use crate::db::enums::{DeviceStatus, DisplayType, SharingMode};
use crate::db::{now, write_txn};
use crate::devices::access::{Owner, owned_by};
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::iam::auth::Auth;
use crate::lang::Lang;
use crate::market::fit::{self, Room, Standing, Unfit};
use zmarket_protocol::heartbeat::Spec;


/// Where a device stands now (src/market/fit.rs): one read of its installations and of its GPU holds.
async fn standing(conn: &impl ConnectionTrait, d: &devices::Model) -> Result<Standing, AppError> {
    Ok(Standing::load(conn, std::slice::from_ref(d)).await?.remove(&d.id).unwrap_or_default())
}

/// What a device has left: its spec less what its installations hold.
pub async fn free_on(conn: &impl ConnectionTrait, d: &devices::Model) -> Result<Capacity, AppError> {
    Ok(capacity(standing(conn, d).await?.free))
}

/// A box's spec as a renter reads it: its GPUs with their memory and CUDA, without their UUIDs.
fn offer_spec(d: &devices::Model, gpus: &crate::devices::gpus::BoxGpus) -> Spec {
    Spec {
        cpu_cores: d.cpu_cores,
        memory_bytes: d.memory_bytes,
        disk_bytes: d.disk_bytes,
        gpus: gpus.list().map(|g| zmarket_protocol::gpus::Gpu { uuid: None, ..g.clone() }).collect(),
        gpu_runtime: d.gpu_runtime,
    }
}

/// The share of the last 7 and 30 days the market heard from `d` (src/devices/presence.rs).
fn reliability(d: &devices::Model, at: chrono::DateTime<chrono::Utc>) -> Reliability {
    let up = |days| crate::devices::presence::uptime(d.presence.as_deref(), d.presence_hour, d.bound_at, at, days);
    Reliability { uptime_7d: up(7), uptime_30d: up(30) }
}

fn capacity(r: Room) -> Capacity {
    Capacity { cpu_cores: r.cpu_cores, memory_bytes: r.memory_bytes, disk_bytes: r.disk_bytes, gpu_count: r.gpu_count }
}

fn room(c: Capacity) -> Room {
    Room { cpu_cores: c.cpu_cores, memory_bytes: c.memory_bytes, disk_bytes: c.disk_bytes, gpu_count: c.gpu_count }
}

pub fn needs(app: &apps::Model) -> Capacity {
    capacity(Room::of_app(app))
}

pub fn gaps(need: Capacity, free: Capacity) -> Vec<Gap> {
    fit::short(room(need), room(free)).into_iter().map(|(f, n, h)| Gap { field: f.to_string(), need: n.into(), have: h.into() }).collect()
}

/// How `d` fits `app` now, and the refusal when it does not: the market's rule
/// (src/market/fit.rs), with the device's free capacity, GPUs and installations read here.
async fn judged(conn: &impl ConnectionTrait, app: &apps::Model, d: &devices::Model) -> Result<(Option<AppError>, DeviceFit), AppError> {
    Ok(judge(app, d, &standing(conn, d).await?))
}

/// How `d`, standing as it does, fits `app`, and the refusal when it does not.
pub fn judge(app: &apps::Model, d: &devices::Model, standing: &Standing) -> (Option<AppError>, DeviceFit) {
    let free = capacity(standing.free);
    let gpus = &standing.gpus;
    let mut fit = DeviceFit {
        device_id: d.id.clone().into(),
        device_name: d.name.clone(),
        device_status: sea_orm::ActiveEnum::to_value(&d.status.shown()),
        fits: true,
        reason: None,
        gaps: Vec::new(),
        free,
        gpus: gpus.list().map(|g| g.name.clone()).collect(),
        gpus_free: standing.gpus_free,
        verified: gpus.verified(),
        cuda: gpus.cuda().map(|c| c.to_string()),
        price_per_hour: None,
        spec: offer_spec(d, gpus),
        reliability: reliability(d, now()),
        distance_km: None,
        location: None,
    };
    let Some(why) = fit::unfit(app, d, standing) else { return (None, fit) };
    fit.fits = false;
    fit.reason = Some(why.code().to_string());
    let err = match why {
        Unfit::Offline => AppError::Refused(Msg::DeviceNotRunning),
        Unfit::NoGpuForLiteApp => AppError::Refused(Msg::LiteAppNeedsGpu),
        Unfit::NoGpuRuntime => AppError::Refused(Msg::NoGpuRuntime),
        Unfit::Installed => AppError::Refused(Msg::AppAlreadyInstalled),
        Unfit::NoFreeGpu => AppError::Refused(Msg::NoFreeGpu),
        Unfit::GpuFailedCheck => AppError::Refused(Msg::GpuFailedCheck),
        Unfit::CudaTooOld { need, have } => {
            let (need, have) = (need.to_string(), have.to_string());
            fit.gaps = vec![Gap { field: "cuda".into(), need: need.clone().into(), have: have.clone().into() }];
            AppError::Explained { msg: Msg::CudaTooOld(need, have), data: json!({ "gaps": fit.gaps }) }
        }
        Unfit::Short(_) => {
            let g = gaps(needs(app), free);
            let data = json!({ "gaps": g });
            let figure = |v: &serde_json::Value| v.as_i64().unwrap_or(0);
            let msg = Msg::RequirementsShort(g.iter().map(|x| (field_name(&x.field), figure(&x.need), figure(&x.have))).collect());
            fit.gaps = g;
            AppError::Explained { msg, data }
        }
    };
    (Some(err), fit)
}

/// Why `device` cannot take `app` now, if it cannot (with how it fits, for the dialogs).
pub async fn unfit(conn: &impl ConnectionTrait, app: &apps::Model, d: &devices::Model) -> Result<Option<(AppError, DeviceFit)>, AppError> {
    let (err, fit) = judged(conn, app, d).await?;
    Ok(err.map(|e| (e, fit)))
}

fn field_name(f: &str) -> &'static str {
    match f {
        "cpu_cores" => "cpu_cores",
        "memory_bytes" => "memory_bytes",
        "disk_bytes" => "disk_bytes",
        _ => "gpu_count",
    }
}

pub fn active_key(device_id: &DeviceId, app_id: &AppId) -> String {
    format!("{device_id}/{app_id}")
}

/// The listed app with an install manifest (404 for an unknown app, 409 for one without manifest).
pub async fn installable(cx: &AppsCtx, conn: &impl ConnectionTrait, app_id: &AppId) -> Result<(apps::Model, Manifest), AppError> {
    let app = apps::Entity::find_by_id(app_id.to_string())
        .filter(apps::Column::Listed.eq(true))
        .one(conn)
        .await?
        .ok_or(AppError::Refused(Msg::AppNotFound))?;
    let manifest = cx.manifests.of(&app).ok_or(AppError::Refused(Msg::AppNotInstallable))?;
    Ok((app, manifest))
}

/// Holds the device row until the transaction ends (a row lock on PostgreSQL; SQLite's writer
/// lock already serializes), so two installs cannot both take its last free capacity.
pub async fn lock_device(conn: &impl ConnectionTrait, id: &DeviceId) -> Result<(), AppError> {
    devices::Entity::update_many()
        .col_expr(devices::Column::UpdatedAt, Expr::col(devices::Column::UpdatedAt))
        .filter(devices::Column::Id.eq(id))
        .exec(conn)
        .await?;
    Ok(())
}

/// The archive of `image` the market holds, if any.
async fn archive_of(conn: &impl ConnectionTrait, image: &str) -> Result<Option<ArchiveRef>, AppError> {
    let archives = app_images::Entity::find().order_by_desc(app_images::Column::CreatedAt).all(conn).await?;
    Ok(archives.into_iter().find(|a| serde_json::from_str::<Vec<String>>(&a.tags).unwrap_or_default().iter().any(|t| t == image)).map(|a| {
        ArchiveRef { path: format!("/api/agent/v1/images/{}", a.sha256), sha256: a.sha256, size: a.size_bytes }
    }))
}

/// What the container may use: what the installation holds on its device.
pub fn limits_of(row: &installations::Model) -> Limits {
    Limits { cpu_cores: row.cpu_cores, memory_bytes: row.memory_bytes, gpu_count: row.gpu_count }
}

/// The install command's payload: the manifest, the limits and, when the market holds its
/// image, the archive.
pub async fn install_payload(conn: &impl ConnectionTrait, row: &installations::Model, manifest: &Manifest) -> Result<CommandBody, AppError> {
    let archive = archive_of(conn, &manifest.image).await?;
    let gpus = crate::devices::gpus::keys_of(conn, &row.id).await?;
    Ok(CommandBody::AppInstall(InstallPayload {
        installation_id: row.id.clone().into(),
        app_id: row.app_id.clone().into(),
        manifest: manifest.clone(),
        archive,
        limits: limits_of(row),
        gpus,
        restore: None,
    }))
}

/// A new installation row in `preparing`, with its install command queued.
pub struct NewInstallation<'a> {
    pub owner: &'a Owner,
    pub created_by: &'a UserId,
    pub kind: InstallKind,
    pub app: &'a apps::Model,
    pub manifest: &'a Manifest,
    pub device: &'a devices::Model,
    /// A restore: the snapshot's data and version.
    pub from: Option<&'a crate::apps::model::Restore>,
}

pub async fn create(conn: &impl ConnectionTrait, n: NewInstallation<'_>) -> Result<installations::Model, AppError> {
    let id = InstallationId::new();
    let command_id = CommandId::new();
    let t = now();
    let need = needs(n.app);
    let (user, company) = match n.owner {
        Owner::User(u) => (Some(u.clone()), None),
        Owner::Company(c) => (None, Some(c.clone())),
    };
    let row = installations::ActiveModel {
        id: Set(id.clone()),
        app_id: Set(n.app.id.clone()),
        device_id: Set(n.device.id.clone()),
        owner_user_id: Set(user),
        owner_company_id: Set(company),
        created_by: Set(n.created_by.clone()),
        kind: Set(n.kind),
        status: Set(AppStatus::Preparing),
        desired: Set(Desired::Running),
        progress: Set(None),
        status_reason: Set(None),
        version: Set(n.from.map(|f| f.version.clone()).unwrap_or_else(|| n.app.version.clone())),
        open_url: Set(None),
        command_id: Set(Some(command_id.clone())),
        state_since: Set(t),
        active_key: Set(Some(active_key(&n.device.id, &n.app.id))),
        cpu_cores: Set(need.cpu_cores),
        memory_bytes: Set(need.memory_bytes),
        disk_bytes: Set(need.disk_bytes),
        gpu_count: Set(need.gpu_count),
        rent_price_per_hour: Set(None),
        rent_hours: Set(None),
        rent_started_at: Set(None),
        rent_ends_at: Set(None),
        rent_end_noticed: Set(None),
        hold_id: Set(None),
        rent_provider: Set(None),
        rent_fee_percent: Set(None),
        rent_seconds: Set(0),
        billed: Set(0),
        metered_until: Set(None),
        created_at: Set(t),
        updated_at: Set(t),
    }
    .insert(conn)
    .await?;
    crate::versions::standing_changed();
    // The GPUs it needs, by UUID, in the transaction that reserved the box's capacity.
    crate::devices::gpus::assign(conn, n.device, need.gpu_count, None, crate::devices::gpus::Holder::Installation(&id)).await?;
    let mut payload = install_payload(conn, &row, n.manifest).await?;
    if let (CommandBody::AppInstall(p), Some(f)) = (&mut payload, n.from) {
        p.restore = Some(f.refs.clone());
    }
    crate::devices::commands::queue(conn, &command_id, &n.device.id, id.as_str(), &payload).await?;
    state::record(conn, &id, AppStatus::Preparing, None, &row.version).await?;
    Ok(row)
}

/// Places `app_id` on `device` for `owner` inside the caller's transaction: the app must be
/// installable, the device row is locked and must fit the app (409 naming what is short), and
/// the installation starts in `preparing` with its install command queued. For other domains
/// (orders: the demanded app on the provider's device, `kind` rent for the demander).
pub async fn place(
    cx: &AppsCtx,
    conn: &impl ConnectionTrait,
    owner: &Owner,
    created_by: &UserId,
    kind: InstallKind,
    app_id: &AppId,
    device: &devices::Model,
    from: Option<&crate::apps::model::Restore>,
) -> Result<installations::Model, AppError> {
    let (app, manifest) = installable(cx, conn, app_id).await?;
    lock_device(conn, &device.id).await?;
    if let Some((err, _)) = unfit(conn, &app, device).await? {
        return Err(err);
    }
    let manifest = from.map(|f| &f.manifest).unwrap_or(&manifest);
    create(conn, NewInstallation { owner, created_by, kind, app: &app, manifest, device, from }).await
}

/// Installs an app on a device of the caller's context (`own`).
pub async fn install(cx: &AppsCtx, auth: &Auth, ask: InstallAsk, lang: Lang) -> Result<Installation, AppError> {
    let owner = installer(auth)?;
    let txn = write_txn(&cx.db).await?;
    installable(cx, &txn, &ask.app_id).await?;
    let device = devices::Entity::find_by_id(ask.device_id.clone())
        .filter(owned_by(&owner))
        .one(&txn)
        .await?
        .ok_or(AppError::Refused(Msg::DeviceNotFound))?;
    let row = place(cx, &txn, &owner, &auth.user_id, InstallKind::Own, &ask.app_id, &device, None).await?;
    let names = Names::load(&txn, std::slice::from_ref(&row)).await?;
    txn.commit().await?;
    Ok(to_installation(&row, &names, lang))
}

/// A person's action on an installation they see: allowed by the one rule of
/// [`lifecycle::allowed`] (403 for what is not theirs, 409 for what the state or an offline box
/// does not allow). On an offline box, a removal or a cancel is over at once here; the box
/// carries out what is left when it returns.
pub async fn act(cx: &AppsCtx, auth: &Auth, id: &InstallationId, action: Action, lang: Lang) -> Result<Installation, AppError> {
    let txn = write_txn(&cx.db).await?;
    let (row, scope) = visible(&txn, auth, id).await?;
    let device = devices::Entity::find_by_id(row.device_id.clone()).one(&txn).await?;
    let online = device.as_ref().is_some_and(|d| d.status == DeviceStatus::Online);
    let app = apps::Entity::find_by_id(row.app_id.clone()).one(&txn).await?;
    let refused = || AppError::Refused(Msg::ActionNotAllowed(action.words(), row.status.words()));
    match lifecycle::allowed(row.status, action, row.kind, online, scope.role()) {
        Allowed::Yes => {}
        Allowed::NotYours => return Err(AppError::Refused(Msg::NoPermissionApps)),
        Allowed::NotInState => return Err(refused()),
        Allowed::Offline => {
            let ai = app.as_ref().is_some_and(|a| a.display_type.is_ai());
            return Err(AppError::Refused(match action {
                _ if ai => Msg::AiComputeOffline,
                Action::Start | Action::Resume | Action::Restart => Msg::AppOffline,
                _ => Msg::DeviceNotRunning,
            }));
        }
    }
    if matches!(action, Action::Start | Action::Resume | Action::Restart) {
        crate::apps::money::may_run(&txn, &row).await?;
    }
    let (kind, desired) = command_of(action, row.desired);
    let command = match action {
        Action::Retry => {
            let (_, manifest) = installable(cx, &txn, &row.app_id).await?;
            Some(install_payload(&txn, &row, &manifest).await?)
        }
        Action::Update => Some(update_payload(cx, &txn, &row, app.as_ref()).await?),
        // A snapshot of its data (docs/data.md): listed at once, made by the box.
        Action::Snapshot => Some(crate::apps::taking::begin(cx, &txn, &row, SnapshotKind::Manual, &auth.user_id).await?),
        // Cancelling: what was sent is withdrawn; an install leaves a removal for the box.
        Action::Cancel => {
            let removing = matches!(row.status, AppStatus::Uninstalling | AppStatus::Deleting | AppStatus::ShuttingDown);
            if let (Some(c), false) = (&row.command_id, removing) {
                crate::devices::commands::withdraw(&txn, c, "cancelled").await?;
            }
            let installing = matches!(row.status, AppStatus::Preparing | AppStatus::Downloading | AppStatus::Installing | AppStatus::Installed);
            (installing && device.is_some()).then(|| CommandBody::app(kind.into(), row.id.as_str())).flatten()
        }
        _ if device.is_none() => None,
        _ => CommandBody::app(kind.into(), row.id.as_str()),
    };
    let reason = (action == Action::Cancel).then(|| Reason::new(ReasonCode::Cancelled).stored());
    let moved = state::apply(&txn, &row, Event::Act(action), Change { command, desired: Some(desired), reason, ..Default::default() })
        .await?
        .ok_or_else(refused)?;
    // Removed on an offline box (or one that was unlinked): over here now; the removal stays
    // queued for the box.
    let updated = if action == Action::Uninstall && !online {
        state::apply(&txn, &moved, Event::Done(Desired::Removed), Change::default()).await?.ok_or_else(refused)?
    } else {
        moved
    };
    let names = Names::load(&txn, std::slice::from_ref(&updated)).await?.for_role(scope.role());
    txn.commit().await?;
    Ok(to_installation(&updated, &names, lang))
}

/// An update's payload: the catalogue's version and manifest now (409 when the installation
/// already runs it).
async fn update_payload(cx: &AppsCtx, conn: &impl ConnectionTrait, row: &installations::Model, app: Option<&apps::Model>) -> Result<CommandBody, AppError> {
    let app = app.ok_or(AppError::Refused(Msg::AppNotFound))?;
    if app.version.is_empty() || app.version == row.version {
        return Err(AppError::Refused(Msg::NoUpdate));
    }
    let manifest = cx.manifests.of(app).ok_or(AppError::Refused(Msg::AppNotInstallable))?;
    Ok(CommandBody::AppUpdate(UpdatePayload {
        installation_id: row.id.clone().into(),
        archive: archive_of(conn, &manifest.image).await?,
        manifest,
        version: app.version.clone(),
        from_version: row.version.clone(),
        limits: limits_of(row),
        gpus: crate::devices::gpus::keys_of(conn, &row.id).await?,
    }))
}

/// The states an installation went through, newest first, with the reason in the reader's
/// language and the version it ran.
pub async fn history(cx: &AppsCtx, auth: &Auth, id: &InstallationId, offset: u64, limit: u64, lang: Lang) -> Result<List<StateEvent>, AppError> {
    let (row, _) = visible(&cx.db, auth, id).await?;
    let q = installation_events::Entity::find().filter(installation_events::Column::InstallationId.eq(row.id.clone()));
    let total = q.clone().count(&cx.db).await?;
    let rows = q
        .order_by_desc(installation_events::Column::CreatedAt)
        .order_by_desc(installation_events::Column::Id)
        .offset(offset)
        .limit(limit)
        .all(&cx.db)
        .await?;
    Ok(List { items: rows.into_iter().map(|e| state_event(e, lang)).collect(), total })
}

fn state_event(e: installation_events::Model, lang: Lang) -> StateEvent {
    let (reason_code, reason) = match reason_of(e.reason.as_deref(), lang) {
        Some((c, t)) => (Some(c), Some(t)),
        None => (None, None),
    };
    StateEvent { status: e.status, reason_code, reason, version: e.version, at: e.created_at }
}

pub async fn list(cx: &AppsCtx, auth: &Auth, status: Option<AppStatus>, offset: u64, limit: u64, lang: Lang) -> Result<List<Installation>, AppError> {
    let s = scope(&cx.db, auth).await?;
    let role = s.role();
    let mut q = installations::Entity::find().filter(condition(&s));
    q = match status {
        Some(st) => q.filter(installations::Column::Status.eq(st)),
        None => q.filter(installations::Column::Status.ne(AppStatus::NotInstall)),
    };
    let total = q.clone().count(&cx.db).await?;
    let rows = q.order_by_desc(installations::Column::CreatedAt).order_by_desc(installations::Column::Id).offset(offset).limit(limit).all(&cx.db).await?;
    let names = Names::load(&cx.db, &rows).await?.for_role(role);
    Ok(List { items: rows.iter().map(|r| to_installation(r, &names, lang)).collect(), total })
}

pub async fn details(cx: &AppsCtx, auth: &Auth, id: &InstallationId, lang: Lang) -> Result<InstallationDetails, AppError> {
    let (row, scope) = visible(&cx.db, auth, id).await?;
    let names = Names::load(&cx.db, std::slice::from_ref(&row)).await?.for_role(scope.role());
    let history = installation_events::Entity::find()
        .filter(installation_events::Column::InstallationId.eq(row.id.clone()))
        .order_by_asc(installation_events::Column::CreatedAt)
        .order_by_asc(installation_events::Column::Id)
        .all(&cx.db)
        .await?
        .into_iter()
        .map(|e| state_event(e, lang))
        .collect();
    let holds = Capacity { cpu_cores: row.cpu_cores, memory_bytes: row.memory_bytes, disk_bytes: row.disk_bytes, gpu_count: row.gpu_count };
    Ok(InstallationDetails { installation: to_installation(&row, &names, lang), history, holds })
}

/// How each of the caller's devices fits an app (the install dialog).
pub async fn fit_mine(cx: &AppsCtx, auth: &Auth, app_id: &AppId) -> Result<Vec<DeviceFit>, AppError> {
    let owner = installer(auth)?;
    let (app, _) = installable(cx, &cx.db, app_id).await?;
    let mine = devices::Entity::find().filter(owned_by(&owner)).order_by_asc(devices::Column::Name).all(&cx.db).await?;
    let mut out = Vec::new();
    for d in mine {
        out.push(fit_of(&cx.db, &app, &d).await?);
    }
    Ok(out)
}

pub async fn fit_of(conn: &impl ConnectionTrait, app: &apps::Model, d: &devices::Model) -> Result<DeviceFit, AppError> {
    Ok(judged(conn, app, d).await?.1)
}

/// Whether a device may be rented out now: online, rentable, not dedicated.
pub fn rentable(d: &devices::Model) -> Result<(), AppError> {
    if !d.rentable || d.sharing_mode == SharingMode::Dedicated {
        return Err(AppError::Refused(if d.sharing_mode == SharingMode::Dedicated { Msg::SharingModeForbids } else { Msg::DeviceNotRentable }));
    }
    if d.status != DeviceStatus::Online {
        return Err(AppError::Refused(Msg::DeviceNotRunning));
    }
    Ok(())
}

/// The apps on a device its manager sees (the device page's "Installed apps"): every
/// installation on it, the owner's and the renters'.
pub async fn on_device(cx: &AppsCtx, auth: &Auth, device_id: &DeviceId, lang: Lang) -> Result<List<Installation>, AppError> {
    let owner = crate::devices::access::manager(auth)?;
    let d = devices::Entity::find_by_id(device_id.to_string())
        .filter(owned_by(&owner))
        .one(&cx.db)
        .await?
        .ok_or(AppError::Refused(Msg::DeviceNotFound))?;
    let rows = installations::Entity::find()
        .filter(installations::Column::DeviceId.eq(d.id))
        .filter(installations::Column::Status.ne(AppStatus::NotInstall))
        .order_by_desc(installations::Column::CreatedAt)
        .all(&cx.db)
        .await?;
    let names = Names::load(&cx.db, &rows).await?.for_box_side();
    let items: Vec<Installation> = rows.iter().map(|r| to_installation(r, &names, lang)).collect();
    Ok(List { total: items.len() as u64, items })
}

/// AI compute and AI server installations of the caller's context, with endpoint and GPUs.
pub async fn aicompute(cx: &AppsCtx, auth: &Auth, lang: Lang) -> Result<List<AiCompute>, AppError> {
    let ai_apps: Vec<AppId> = apps::Entity::find()
        .filter(apps::Column::DisplayType.is_in(DisplayType::AI))
        .all(&cx.db)
        .await?
        .into_iter()
        .map(|a| a.id)
        .collect();
    let s = scope(&cx.db, auth).await?;
    let rows = installations::Entity::find()
        .filter(condition(&s))
        .filter(installations::Column::AppId.is_in(ai_apps))
        .filter(installations::Column::Status.ne(AppStatus::NotInstall))
        .order_by_desc(installations::Column::CreatedAt)
        .all(&cx.db)
        .await?;
    let names = Names::load(&cx.db, &rows).await?;
    let items: Vec<AiCompute> = rows
        .iter()
        .map(|r| {
            let inst = to_installation(r, &names, lang);
            AiCompute { endpoint: inst.open_url.clone(), gpus: inst.gpus.clone(), installation: inst }
        })
        .collect();
    Ok(List { total: items.len() as u64, items })
}
