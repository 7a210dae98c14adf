//! The console's requests and answers (API.md §Operator), checked before any rule runs.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{AppError, Msg};
use crate::http::Checked;

/// Who wrote: an operator (their id and email), or the command line.
#[derive(Debug, Clone)]
pub struct Actor {
    pub id: String,
    pub email: String,
}

impl Actor {
    pub fn command_line() -> Actor {
        Actor { id: String::new(), email: "command line".into() }
    }
}

/// What an operator did (the audit's `action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditAction {
    OperatorGrant,
    OperatorRevoke,
    UserSuspend,
    UserUnsuspend,
    UserGrant,
    AppCreate,
    AppUpdate,
    AppIcon,
    AppImage,
}

impl AuditAction {
    pub const ALL: [AuditAction; 9] = [
        Self::OperatorGrant,
        Self::OperatorRevoke,
        Self::UserSuspend,
        Self::UserUnsuspend,
        Self::UserGrant,
        Self::AppCreate,
        Self::AppUpdate,
        Self::AppIcon,
        Self::AppImage,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OperatorGrant => "operator.grant",
            Self::OperatorRevoke => "operator.revoke",
            Self::UserSuspend => "user.suspend",
            Self::UserUnsuspend => "user.unsuspend",
            Self::UserGrant => "user.grant",
            Self::AppCreate => "app.create",
            Self::AppUpdate => "app.update",
            Self::AppIcon => "app.icon",
            Self::AppImage => "app.image",
        }
    }
    pub fn parse(s: &str) -> Option<AuditAction> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// One operator write, newest first.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct AuditEntry {
    pub at: DateTime<Utc>,
    /// The operator's email (or "command line").
    pub operator: String,
    /// `operator.grant`, `operator.revoke`, `user.suspend`, `user.unsuspend`, `user.grant`,
    /// `app.create`, `app.update`, `app.icon`, `app.image`.
    pub action: String,
    /// What it was done to, e.g. `user:<id>`.
    pub target: String,
    /// `{before, after, …}`.
    #[schema(value_type = Object)]
    pub detail: Value,
}

#[derive(Debug, Clone, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Keep one action, e.g. `user.suspend`.
    pub action: Option<String>,
}

impl AuditQuery {
    pub fn checked(&self) -> Result<Option<AuditAction>, AppError> {
        match self.action.as_deref().map(str::trim) {
            None | Some("") => Ok(None),
            Some(a) => AuditAction::parse(a).map(Some).ok_or(AppError::invalid("action", Msg::AuditActionInvalid)),
        }
    }
}

#[derive(Debug, Clone, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UsersQuery {
    /// Part of an email or a name (case-insensitive).
    pub q: Option<String>,
}

pub const QUERY_MAX_CHARS: usize = 100;

impl UsersQuery {
    pub fn checked(&self) -> Result<Option<String>, AppError> {
        let q = self.q.as_deref().unwrap_or("").trim().to_lowercase();
        if q.chars().count() > QUERY_MAX_CHARS || q.chars().any(char::is_control) {
            return Err(AppError::invalid("q", Msg::InvalidField("q".into())));
        }
        Ok((!q.is_empty()).then_some(q))
    }
}

/// A person as the operator sees them.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct UserRow {
    pub id: String,
    pub email: String,
    pub name: String,
    pub verified: bool,
    pub suspended: bool,
    /// The reason given when suspended.
    pub suspended_reason: Option<String>,
    pub operator: bool,
    /// Cents of the personal wallet.
    pub balance: i64,
    /// Boxes they own personally.
    pub devices: u64,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct SuspendRequest {
    /// 1 to 500 characters, shown to the person when they try to sign in.
    pub reason: Option<String>,
}

pub const REASON_MAX_CHARS: usize = 500;

#[derive(Debug, Clone)]
pub struct Suspend {
    pub reason: String,
}

impl Checked for Suspend {
    type Body = SuspendRequest;
    fn check(req: SuspendRequest) -> Result<Suspend, AppError> {
        let reason = req.reason.unwrap_or_default().trim().to_string();
        let n = reason.chars().count();
        if n == 0 || n > REASON_MAX_CHARS || reason.chars().any(|c| c.is_control() && c != '\n') {
            return Err(AppError::invalid("reason", Msg::SuspendReasonInvalid));
        }
        Ok(Suspend { reason })
    }
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema, Default)]
pub struct UnsuspendRequest {
    /// Optional: why, for the audit.
    pub reason: Option<String>,
}

impl Checked for UnsuspendRequest {
    type Body = UnsuspendRequest;
    fn check(req: UnsuspendRequest) -> Result<UnsuspendRequest, AppError> {
        let reason = req.reason.unwrap_or_default().trim().to_string();
        if reason.chars().count() > REASON_MAX_CHARS || reason.chars().any(|c| c.is_control() && c != '\n') {
            return Err(AppError::invalid("reason", Msg::SuspendReasonInvalid));
        }
        Ok(UnsuspendRequest { reason: Some(reason) })
    }
}
