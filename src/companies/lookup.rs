//! Lookups every company rule shares: the caller, a company, the caller's company.

use sea_orm::{ConnectionTrait, EntityTrait};

use crate::db::entity::companies;
use crate::db::enums::Role;
use crate::db::for_update;
use crate::error::{AppError, Msg};
use crate::iam::auth::{Auth, membership};
use crate::iam::people::{self, Person};
use crate::ids::{CompanyId, UserId};

pub(crate) const DEFAULT_PAGE: u64 = 20;

pub(crate) async fn user(conn: &impl ConnectionTrait, id: &UserId) -> Result<Person, AppError> {
    people::one(conn, id).await?.ok_or(AppError::Refused(Msg::SessionExpired))
}

pub(crate) async fn company(conn: &impl ConnectionTrait, id: &CompanyId) -> Result<companies::Model, AppError> {
    companies::Entity::find_by_id(id.clone()).one(conn).await?.ok_or(AppError::Refused(Msg::CompanyNotFound))
}

/// The company with its row locked until the transaction ends (`db::for_update`). Every rule
/// about a company's members (at least one admin, one application per person, one membership)
/// reads and writes under this lock, so two callers never both pass the same check on PostgreSQL.
pub(crate) async fn company_locked(conn: &impl ConnectionTrait, id: &CompanyId) -> Result<companies::Model, AppError> {
    for_update(conn, companies::Entity::find_by_id(id.clone())).one(conn).await?.ok_or(AppError::Refused(Msg::CompanyNotFound))
}

/// The caller's company, locked, with the caller still its administrator (the token was read
/// before the lock: a role taken away meanwhile counts).
pub(crate) async fn admin_company_locked(conn: &impl ConnectionTrait, auth: &Auth) -> Result<companies::Model, AppError> {
    let c = company_locked(conn, company_id(auth)?).await?;
    match membership(conn, &c.id, &auth.user_id).await? {
        Some(m) if m.role == Role::Admin => Ok(c),
        _ => Err(AppError::Refused(Msg::NotAdmin)),
    }
}

/// The caller's company (their token's `sme`), for calls any member may make.
pub(crate) fn company_id(auth: &Auth) -> Result<&CompanyId, AppError> {
    auth.company().ok_or(AppError::Refused(Msg::CompanyContextRequired))
}

pub(crate) fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339()
}
