//! The seam between companies and the domains that own resources (devices, apps, AI compute).
//!
//! Companies own `resource_assignments`; the devices and apps domains read it through
//! [`assigned_resource_ids`] to show a member only what is assigned to them. In the other
//! direction, companies ask those domains whether a resource belongs to a company and whether
//! anything still blocks a company's deletion. Until those domains' tables exist, the answers
//! come from what exists today (see docs/companies.md, "Seams").

use std::collections::HashSet;
use std::sync::LazyLock;

use sea_orm::sea_query::{Alias, Expr, ExprTrait, Func, Query};
use sea_orm::{ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QueryOrder, Statement};

use crate::db::entity::resource_assignments;
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

/// Whether the devices domain's table exists yet. SEAM: the devices table (branch `devices`,
/// migration m0005_devices) is not merged into this branch; until it is, no device belongs to any
/// company. Once merged, the queries below become plain entity queries (docs/companies.md).
async fn devices_table_exists(db: &impl ConnectionTrait) -> Result<bool, AppError> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DbBackend::Sqlite => "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'devices'",
        _ => "SELECT count(*) FROM information_schema.tables WHERE table_name = 'devices' AND table_schema = current_schema()",
    };
    let row = db.query_one_raw(Statement::from_string(backend, sql)).await?;
    Ok(row.and_then(|r| r.try_get_by_index::<i64>(0).ok()).unwrap_or(0) > 0)
}

/// How many devices (of the devices domain, by its `owner_company_id`) the company owns, or
/// whether it owns the one named `id`.
async fn company_device_count(db: &impl ConnectionTrait, company_id: &str, id: Option<&str>) -> Result<u64, AppError> {
    if !devices_table_exists(db).await? {
        return Ok(0);
    }
    let mut q = Query::select();
    q.expr(Func::count(Expr::col(Alias::new("id"))))
        .from(Alias::new("devices"))
        .and_where(Expr::col(Alias::new("owner_company_id")).eq(company_id));
    if let Some(id) = id {
        q.and_where(Expr::col(Alias::new("id")).eq(id));
    }
    let row = db.query_one_raw(db.get_database_backend().build(&q)).await?;
    Ok(u64::try_from(row.and_then(|r| r.try_get_by_index::<i64>(0).ok()).unwrap_or(0)).unwrap_or(0))
}

/// Whether `id` names a resource of `company` that may be assigned to its members.
///
/// - device: a device linked to the company (see [`devices_table_exists`] for the seam).
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

/// How many devices are linked to the company (0 until the devices table is merged).
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
