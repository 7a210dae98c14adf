//! The `Auth` extractor: a Bearer access token whose session is alive.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;

use crate::app::AppState;
use crate::error::{AppError, Msg};
use crate::iam::service::{self, Auth};

pub fn bearer(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
}

impl FromRequestParts<AppState> for Auth {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or(AppError::Unauthorized(Msg::Unauthorized))?;
        service::authenticate(state, token).await?.ok_or(AppError::Unauthorized(Msg::SessionExpired))
    }
}

/// The caller in a company context as its administrator (403 otherwise).
pub struct Admin(pub Auth);

impl FromRequestParts<AppState> for Admin {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let auth = Auth::from_request_parts(parts, state).await?;
        if auth.company().is_some() && auth.is_admin() { Ok(Admin(auth)) } else { Err(AppError::Forbidden(Msg::NotAdmin)) }
    }
}
