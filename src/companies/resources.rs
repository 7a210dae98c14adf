//! The seam between companies and the domains that own resources (devices, apps, AI compute).
//!
//! Companies own `resource_assignments`; the devices and apps domains read it through
//! [`assigned_resource_ids`] to show a member only what is assigned to them. In the other
//! direction, companies ask those domains (which sit left of companies on the chain) through the
//! [`Resources`] registry, assembled in server::prepare: whether a resource belongs to a company,
//! what it is called, and whether anything still blocks a company's deletion
//! (docs/companies.md, "Seams").

use std::sync::Arc;

use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseExecutor, DatabaseTransaction, EntityTrait, QueryFilter, QueryOrder};

use crate::db::entity::resource_assignments;
use crate::db::enums::Role;
use crate::error::AppError;
use crate::ids::{CompanyId, UserId};
use crate::companies::model::ResourceType;
use crate::lang::Lang;

/// A domain's answers about the resources of a company it keeps. Each answer is "not mine" by
/// default: a domain answers only for what it owns.
#[async_trait::async_trait]
pub trait CompanyResources: Send + Sync {
    /// Whether `id` names a resource of `kind` of `company_id` that may be assigned to its
    /// members; `None` when `kind` is not this domain's.
    async fn assignable(&self, _conn: &DatabaseExecutor<'_>, _kind: ResourceType, _id: &str, _company_id: &CompanyId) -> Result<Option<bool>, AppError> {
        Ok(None)
    }
    /// What the resources of `kind` among `ids` are called in `lang`, by id.
    async fn names(&self, _conn: &DatabaseExecutor<'_>, _kind: ResourceType, _ids: &[String], _lang: Lang) -> Result<Vec<(String, String)>, AppError> {
        Ok(Vec::new())
    }
    /// What the company still holds of this domain that keeps it from being deleted: the
    /// reason's stable name in DELETE /sme's 409 `data.reasons` (docs/companies.md).
    async fn held(&self, _txn: &DatabaseTransaction, _company_id: &CompanyId) -> Result<Option<&'static str>, AppError> {
        Ok(None)
    }
}

/// Every registered domain's answers, asked in order.
#[derive(Clone, Default)]
pub struct Resources(pub Arc<Vec<Arc<dyn CompanyResources>>>);

impl Resources {
    pub fn new(sources: Vec<Arc<dyn CompanyResources>>) -> Self {
        Resources(Arc::new(sources))
    }

    /// Whether `id` names a resource of `company_id` that may be assigned to its members:
    /// - device: a device bound in the company's context;
    /// - app: an app listed in the market (the company may use any listed app).
    pub async fn assignable(&self, conn: &DatabaseExecutor<'_>, kind: ResourceType, id: &str, company_id: &CompanyId) -> Result<bool, AppError> {
        for s in self.0.iter() {
            if let Some(yes) = s.assignable(conn, kind, id, company_id).await? {
                return Ok(yes);
            }
        }
        Ok(false)
    }

    /// What the resources of `kind` among `ids` are called, by id (an unknown one is left out).
    pub async fn names(&self, conn: &DatabaseExecutor<'_>, kind: ResourceType, ids: &[String], lang: Lang) -> Result<Vec<(String, String)>, AppError> {
        let mut out = Vec::new();
        for s in self.0.iter() {
            out.extend(s.names(conn, kind, ids, lang).await?);
        }
        Ok(out)
    }

    /// Why the company cannot be deleted now (`devices_linked`, `ai_compute_held`), in the
    /// registry's order; empty when nothing blocks it.
    pub async fn held(&self, txn: &DatabaseTransaction, company_id: &CompanyId) -> Result<Vec<&'static str>, AppError> {
        let mut out = Vec::new();
        for s in self.0.iter() {
            out.extend(s.held(txn, company_id).await?);
        }
        Ok(out)
    }
}

/// The ids of the resources of `kind` that `company_id` assigned to `user_id`, oldest first.
/// For the devices and apps domains: a member sees only these.
pub async fn assigned_resource_ids(
    db: &impl ConnectionTrait,
    company_id: &CompanyId,
    user_id: &UserId,
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
    db: &sea_orm::DatabaseConnection,
    resources: &Resources,
    company_id: &CompanyId,
    user_id: &UserId,
    role: Role,
    kind: ResourceType,
    id: &str,
) -> Result<bool, AppError> {
    if role == Role::Admin {
        return resources.assignable(&db.into(), kind, id, company_id).await;
    }
    Ok(resource_assignments::Entity::find_by_id((company_id.clone(), kind, id.to_string(), user_id.clone()))
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
