//! Lookups every company rule shares: the caller, a company, the caller's company.

use sea_orm::{ConnectionTrait, EntityTrait};

use crate::db::entity::{companies, users};
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;

pub(crate) const DEFAULT_PAGE: u64 = 20;

pub(crate) async fn user(conn: &impl ConnectionTrait, id: &str) -> Result<users::Model, AppError> {
    users::Entity::find_by_id(id.to_string()).one(conn).await?.ok_or(AppError::Unauthorized(Msg::SessionExpired))
}

pub(crate) async fn company(conn: &impl ConnectionTrait, id: &str) -> Result<companies::Model, AppError> {
    companies::Entity::find_by_id(id.to_string()).one(conn).await?.ok_or(AppError::NotFound(Msg::CompanyNotFound))
}

/// The caller's company (their token's `sme`), for calls any member may make.
pub(crate) fn company_id(auth: &Auth) -> Result<&str, AppError> {
    auth.company().ok_or(AppError::Forbidden(Msg::CompanyContextRequired))
}

pub(crate) fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339()
}
