//! Whose installations a caller sees and manages, and an installation as the API answers it.
//! No HTTP types here.

use std::collections::HashMap;

use sea_orm::{ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter};

use crate::ids::{AppId, CompanyId, DeviceId, InstallationId};
use crate::apps::lifecycle::{Role, actions};
use crate::apps::model::*;
use crate::companies::model::ResourceType;
use crate::companies::resources::assigned_resource_ids;
use crate::db::entity::{apps, devices, installations};
use crate::devices::access::Owner;
use crate::db::enums::DeviceStatus;
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::lang::Lang;

/// The installations a caller sees in the current context.
pub enum Scope {
    Owner(Owner),
    /// A company member: the company's installations of the apps assigned to them.
    Member { company: String, apps: Vec<String> },
}

impl Scope {
    pub fn role(&self) -> Role {
        match self {
            Scope::Owner(_) => Role::Owner,
            Scope::Member { .. } => Role::Member,
        }
    }
}

pub async fn scope(conn: &impl ConnectionTrait, auth: &Auth) -> Result<Scope, AppError> {
    Ok(match auth.company() {
        None => Scope::Owner(Owner::User(auth.user_id.clone())),
        Some(c) if auth.is_admin() => Scope::Owner(Owner::Company(CompanyId::from(c))),
        Some(c) => Scope::Member { company: c.to_string(), apps: assigned_resource_ids(conn, c, &auth.user_id, ResourceType::App).await? },
    })
}

/// The owner an install or rent acts for; members may not install or rent.
pub fn installer(auth: &Auth) -> Result<Owner, AppError> {
    match auth.company() {
        None => Ok(Owner::User(auth.user_id.clone())),
        Some(c) if auth.is_admin() => Ok(Owner::Company(CompanyId::from(c))),
        Some(_) => Err(AppError::Refused(Msg::NoPermissionApps)),
    }
}

pub fn owned_by(owner: &Owner) -> Condition {
    match owner {
        Owner::User(u) => Condition::all()
            .add(installations::Column::OwnerUserId.eq(u.as_str()))
            .add(installations::Column::OwnerCompanyId.is_null()),
        Owner::Company(c) => Condition::all().add(installations::Column::OwnerCompanyId.eq(c.as_str())),
    }
}

pub fn condition(scope: &Scope) -> Condition {
    match scope {
        Scope::Owner(o) => owned_by(o),
        Scope::Member { company, apps } => Condition::all()
            .add(installations::Column::OwnerCompanyId.eq(company.as_str()))
            .add(installations::Column::AppId.is_in(apps.clone())),
    }
}

/// An installation the caller sees (404 otherwise).
pub async fn visible(conn: &impl ConnectionTrait, auth: &Auth, id: &InstallationId) -> Result<(installations::Model, Scope), AppError> {
    let s = scope(conn, auth).await?;
    let row = installations::Entity::find_by_id(id.to_string())
        .filter(condition(&s))
        .one(conn)
        .await?
        .ok_or(AppError::Refused(Msg::InstallationNotFound))?;
    Ok((row, s))
}

/// The catalogue rows and devices an answer about `rows` names, read once.
pub struct Names {
    apps: HashMap<AppId, apps::Model>,
    devices: HashMap<DeviceId, devices::Model>,
    /// The GPUs each installation holds.
    gpus: HashMap<InstallationId, Vec<crate::devices::model::HeldGpu>>,
    /// Who reads: the actions offered are theirs.
    role: Role,
    /// The box's side reads (its manager's device page): a rental's address on the box's network
    /// is theirs to see; a renter never gets it (issue 44 item 7).
    box_side: bool,
}

impl Names {
    pub async fn load(conn: &impl ConnectionTrait, rows: &[installations::Model]) -> Result<Names, AppError> {
        let app_ids: Vec<AppId> = rows.iter().map(|r| r.app_id.clone()).collect();
        let device_ids: Vec<DeviceId> = rows.iter().map(|r| r.device_id.clone()).collect();
        let apps = apps::Entity::find().filter(apps::Column::Id.is_in(app_ids)).all(conn).await?;
        let devices = devices::Entity::find().filter(devices::Column::Id.is_in(device_ids)).all(conn).await?;
        let ids: Vec<InstallationId> = rows.iter().filter(|r| r.gpu_count > 0).map(|r| r.id.clone()).collect();
        Ok(Names {
            apps: apps.into_iter().map(|a| (a.id.clone(), a)).collect(),
            devices: devices.into_iter().map(|d| (d.id.clone(), d)).collect(),
            gpus: crate::devices::gpus::held_by(conn, &ids).await?,
            role: Role::Owner,
            box_side: false,
        })
    }
    /// Read by the box's manager (every installation on their box, renters' too).
    pub fn for_box_side(mut self) -> Names {
        self.box_side = true;
        self
    }
    pub fn for_role(mut self, role: Role) -> Names {
        self.role = role;
        self
    }
    pub fn app(&self, id: &AppId) -> Option<&apps::Model> {
        self.apps.get(id)
    }
    pub fn device(&self, id: &DeviceId) -> Option<&devices::Model> {
        self.devices.get(id)
    }
}

/// A stored reason (a code with its figures; older rows: prose or the server's
/// `zm:timeout:…`) in the reader's language, with its stable name.
pub fn reason_of(raw: Option<&str>, lang: Lang) -> Option<(String, String)> {
    let r = Reason::from_stored(raw?);
    Some((r.code.as_str().to_string(), zmarket_protocol::reasons::reason_text(&r, lang == Lang::Zh)))
}

pub fn reason_text(raw: Option<&str>, lang: Lang) -> Option<String> {
    reason_of(raw, lang).map(|(_, text)| text)
}

pub fn to_installation(r: &installations::Model, names: &Names, lang: Lang) -> Installation {
    let app = names.app(&r.app_id);
    let device = names.device(&r.device_id);
    let app_name = app.map(|a| if lang == Lang::Zh { a.name_zh.clone() } else { a.name_en.clone() }).unwrap_or_else(|| r.app_id.clone().into());
    let device_status = device.map(|d| sea_orm::ActiveEnum::to_value(&d.status.shown())).unwrap_or_else(|| "offline".into());
    let device_online = device.is_some_and(|d| d.status == DeviceStatus::Online);
    let update_available = app.map(|a| a.version.clone()).filter(|v| !v.is_empty() && *v != r.version && r.status != AppStatus::NotInstall);
    // An offline box says so, unless the installation has a reason of its own.
    let (code, reason) = match reason_of(r.status_reason.as_deref(), lang) {
        Some((c, t)) => (Some(c), Some(t)),
        None if !device_online && r.status != AppStatus::NotInstall => {
            let off = Reason::new(ReasonCode::DeviceOffline);
            (Some(off.code.as_str().to_string()), Some(zmarket_protocol::reasons::reason_text(&off, lang == Lang::Zh)))
        }
        None => (None, None),
    };
    let offered = actions(r.status, r.kind, device_online, names.role)
        .into_iter()
        .filter(|a| *a != Action::Update || update_available.is_some())
        .collect();
    let rental = (r.kind == InstallKind::Rent).then(|| Rental {
        price_per_hour: r.rent_price_per_hour.unwrap_or(0),
        started_at: r.rent_started_at,
        ends_at: r.rent_ends_at,
        billed: r.billed,
        unbilled: crate::apps::meter::unbilled(r, crate::db::now(), device.and_then(|d| d.last_seen_at)),
        extendable: names.role == Role::Owner && crate::apps::lifecycle::extendable(r, crate::db::now()),
    });
    Installation {
        id: r.id.clone().into(),
        app_id: r.app_id.clone().into(),
        app_name,
        icon_url: app.map(|a| crate::market::model::icon_url(&a.icon)).unwrap_or_default(),
        display_type: app.map(|a| sea_orm::ActiveEnum::to_value(&a.display_type)).unwrap_or_default(),
        device_id: r.device_id.clone().into(),
        device_name: device.map(|d| d.name.clone()).unwrap_or_default(),
        device_status,
        kind: r.kind,
        status: r.status,
        desired: r.desired,
        progress: r.progress,
        status_reason: reason,
        status_reason_code: code,
        device_online,
        version: r.version.clone(),
        update_available,
        openable: matches!(r.status, AppStatus::Running | AppStatus::Updating) && r.open_url.is_some(),
        open_url: if matches!(r.status, AppStatus::Running | AppStatus::Updating) && (r.kind != InstallKind::Rent || names.box_side) { r.open_url.clone() } else { None },
        actions: offered,
        created_at: r.created_at,
        updated_at: r.updated_at,
        rental,
        gpus: names.gpus.get(&r.id).cloned().unwrap_or_default(),
    }
}


