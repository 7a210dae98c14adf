//! The seam between companies and the domains that own resources (devices, apps, AI compute).
//!
//! Companies own `resource_assignments`; the devices and apps domains read it through
//! [`assigned_resource_ids`] to show a member only what is assigned to them. In the other
//! direction, companies ask those domains whether a resource belongs to a company and whether
//! anything still blocks a company's deletion. Where a domain's tables do not exist yet (market
//! catalogue, AI compute), the answers come from what exists today (docs/companies.md, "Seams").

use std::collections::HashSet;
use std::sync::LazyLock;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder};

use crate::db::entity::{devices, resource_assignments};
use crate::error::AppError;
use crate::iam::sme::model::ResourceType;

/// The ids of the seed catalogue (its slugs). Interim source of app ids until the market's
/// catalogue table is merged.
static CATALOGUE_IDS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    #[derive(serde::Deserialize)]
    struct Catalogue {
        apps: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        slug: String,
    }
    crate::ssr::bundle::Assets::get("catalogue/apps.json")
        .and_then(|f| serde_json::from_slice::<Catalogue>(&f.data).ok())
        .map(|c| c.apps.into_iter().map(|a| a.slug).collect())
        .unwrap_or_default()
});

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
/// - app: SEAM: an app of the market catalogue (the company may use any catalogue app). Until the
///   market's catalogue table is merged, the ids are the seed catalogue's slugs.
pub async fn resource_owned_by_company(
    db: &impl ConnectionTrait,
    kind: ResourceType,
    id: &str,
    company_id: &str,
) -> Result<bool, AppError> {
    Ok(match kind {
        ResourceType::Device => company_device_count(db, company_id, Some(id)).await? > 0,
        ResourceType::App => CATALOGUE_IDS.contains(id),
    })
}

/// How many devices are linked to the company.
pub async fn company_devices_linked(db: &impl ConnectionTrait, company_id: &str) -> Result<u64, AppError> {
    company_device_count(db, company_id, None).await
}

/// How many AI compute resources the company holds. SEAM: 0 until AI compute (apps domain) exists.
pub async fn company_ai_compute_held(db: &impl ConnectionTrait, company_id: &str) -> Result<u64, AppError> {
    let _ = (db, company_id);
    Ok(0)
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
        .filter(resource_assignments::Column::ResourceType.eq(kind.as_str()))
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
    role: &str,
    kind: ResourceType,
    id: &str,
) -> Result<bool, AppError> {
    if role == crate::iam::sme::model::role::ADMIN {
        return resource_owned_by_company(db, kind, id, company_id).await;
    }
    Ok(resource_assignments::Entity::find_by_id((company_id.to_string(), kind.as_str().to_string(), id.to_string(), user_id.to_string()))
        .one(db)
        .await?
        .is_some())
}

/// A resource left its company (a device unlinked, an app released): its assignments go.
/// For the owning domains, inside their transaction.
pub async fn resource_released(db: &impl ConnectionTrait, kind: ResourceType, id: &str) -> Result<(), AppError> {
    resource_assignments::Entity::delete_many()
        .filter(resource_assignments::Column::ResourceType.eq(kind.as_str()))
        .filter(resource_assignments::Column::ResourceId.eq(id))
        .exec(db)
        .await?;
    Ok(())
}
