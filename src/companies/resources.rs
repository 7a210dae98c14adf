//! The seam between companies and the domains that own resources (devices, apps, AI compute).
//!
//! Companies own `resource_assignments`; the devices and apps domains read it through
//! [`assigned_resource_ids`] to show a member only what is assigned to them. In the other
//! direction, companies ask those domains whether a resource belongs to a company and whether
//! anything still blocks a company's deletion. AI compute answers 0 until the apps domain exists
//! (docs/companies.md, "Seams").

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder};

use crate::db::entity::{apps, devices, installations, resource_assignments};
use crate::db::enums::Role;
use crate::error::AppError;
use crate::companies::model::ResourceType;

/// How many devices (of the devices domain) the company owns, or whether it owns the one named `id`.
async fn company_device_count(db: &impl ConnectionTrait, company_id: &str, id: Option<&str>) -> Result<u64, AppError> {
    let mut q = devices::Entity::find().filter(devices::Column::OwnerCompanyId.eq(company_id));
    if let Some(id) = id {
        q = q.filter(devices::Column::Id.eq(id));
    }
    Ok(q.count(db).await?)
}

/// Whether `id` names a resource of `company` that may be assigned to its members.
///
/// - device: a device bound in the company's context (the devices domain's `owner_company_id`).
/// - app: an app listed in the market (the company may use any listed app).
pub async fn resource_owned_by_company(
    db: &impl ConnectionTrait,
    kind: ResourceType,
    id: &str,
    company_id: &str,
) -> Result<bool, AppError> {
    Ok(match kind {
        ResourceType::Device => company_device_count(db, company_id, Some(id)).await? > 0,
        ResourceType::App => apps::Entity::find_by_id(id.to_string()).one(db).await?.is_some_and(|a| a.listed),
    })
}

/// How many devices are linked to the company.
pub async fn company_devices_linked(db: &impl ConnectionTrait, company_id: &str) -> Result<u64, AppError> {
    company_device_count(db, company_id, None).await
}

/// How many AI compute resources the company holds: its installations (own or rented, not yet
/// removed) of AI compute and AI server apps (the apps domain's table, read here as companies
/// may not call apps).
pub async fn company_ai_compute_held(db: &impl ConnectionTrait, company_id: &str) -> Result<u64, AppError> {
    let ai: Vec<String> = apps::Entity::find()
        .filter(apps::Column::DisplayType.is_in(["AI compute", "AI server"]))
        .all(db)
        .await?
        .into_iter()
        .map(|a| a.id)
        .collect();
    Ok(installations::Entity::find()
        .filter(installations::Column::OwnerCompanyId.eq(company_id))
        .filter(installations::Column::ActiveKey.is_not_null())
        .filter(installations::Column::AppId.is_in(ai))
        .count(db)
        .await?)
}

/// The ids of the resources of `kind` that `company_id` assigned to `user_id`, oldest first.
/// For the devices and apps domains: a member sees only these.
pub async fn assigned_resource_ids(
    db: &impl ConnectionTrait,
    company_id: &str,
    user_id: &str,
    kind: ResourceType,
) -> Result<Vec<String>, AppError> {
    Ok(resource_assignments::Entity::find()
        .filter(resource_assignments::Column::CompanyId.eq(company_id))
        .filter(resource_assignments::Column::UserId.eq(user_id))
        .filter(resource_assignments::Column::ResourceType.eq(kind))
        .order_by_asc(resource_assignments::Column::AssignedAt)
        .all(db)
        .await?
        .into_iter()
        .map(|a| a.resource_id)
        .collect())
}

/// Whether `user_id` may use resource `id` of `company_id`: an admin may use all of the
/// company's resources, a member only those assigned to them.
pub async fn member_may_use(
    db: &impl ConnectionTrait,
    company_id: &str,
    user_id: &str,
    role: Role,
    kind: ResourceType,
    id: &str,
) -> Result<bool, AppError> {
    if role == Role::Admin {
        return resource_owned_by_company(db, kind, id, company_id).await;
    }
    Ok(resource_assignments::Entity::find_by_id((company_id.to_string(), kind, id.to_string(), user_id.to_string()))
        .one(db)
        .await?
        .is_some())
}

/// A resource left its company (a device unlinked, an app released): its assignments go.
/// For the owning domains, inside their transaction.
pub async fn resource_released(db: &impl ConnectionTrait, kind: ResourceType, id: &str) -> Result<(), AppError> {
    resource_assignments::Entity::delete_many()
        .filter(resource_assignments::Column::ResourceType.eq(kind))
        .filter(resource_assignments::Column::ResourceId.eq(id))
        .exec(db)
        .await?;
    Ok(())
}
