//! Who is calling: the `Auth` extractor (a Bearer access token whose session is alive), the
//! context the caller acts in (personal, or a company with a role), and `Admin` (a company
//! administrator in that company's context).

use std::sync::Arc;

use axum::extract::{FromRef, FromRequestParts};
use axum::http::header;
use axum::http::request::Parts;
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait};
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::db::entity::{company_members, sessions};
use crate::db::enums::Role;
use crate::db::now;
use crate::error::{AppError, Msg};
use crate::iam::tokens::Keys;
use crate::versions::{VersionedCache, Versions};

/// The `smeId` of the personal context.
pub const PERSONAL: &str = "user";

/// Where the caller acts: as a person, or in a company with their role there (as it is now: a
/// changed role applies at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Context {
    Personal,
    Company { id: String, role: Role },
}

/// The `userType` of SPEC.md §3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum UserType {
    User,
    Admin,
    Member,
}

impl UserType {
    pub fn as_str(self) -> &'static str {
        match self {
            UserType::User => "user",
            UserType::Admin => "admin",
            UserType::Member => "member",
        }
    }
}

impl Context {
    /// The context a token's `sme` claim names, for a person with that role (None: personal).
    pub fn of(sme: &str, role: Option<Role>) -> Context {
        match role {
            Some(role) if sme != PERSONAL => Context::Company { id: sme.to_string(), role },
            _ => Context::Personal,
        }
    }
    /// `"user"` or the company id.
    pub fn sme_id(&self) -> &str {
        match self {
            Context::Personal => PERSONAL,
            Context::Company { id, .. } => id,
        }
    }
    pub fn user_type(&self) -> UserType {
        match self {
            Context::Personal => UserType::User,
            Context::Company { role: Role::Admin, .. } => UserType::Admin,
            Context::Company { role: Role::Member, .. } => UserType::Member,
        }
    }
}

/// Who is calling, from a verified access token and a live session.
#[derive(Debug, Clone)]
pub struct Auth {
    pub user_id: String,
    pub session_id: String,
    pub context: Context,
}

impl Auth {
    /// The company of the current context, if any.
    pub fn company(&self) -> Option<&str> {
        match &self.context {
            Context::Personal => None,
            Context::Company { id, .. } => Some(id),
        }
    }
    /// An administrator of the company of the current context.
    pub fn is_admin(&self) -> bool {
        matches!(self.context, Context::Company { role: Role::Admin, .. })
    }
    pub fn user_type(&self) -> UserType {
        self.context.user_type()
    }
}

/// What resolving a token needs: the signing keys, the sessions table, and the tokens resolved
/// lately (kept under the shared `sessions` version, src/versions.rs).
#[derive(Clone)]
pub struct Sessions {
    pub keys: Arc<Keys>,
    pub db: DatabaseConnection,
    pub versions: Versions,
    pub resolved: Arc<Resolved>,
}

impl Sessions {
    pub fn new(keys: Arc<Keys>, db: DatabaseConnection, versions: Versions) -> Self {
        Sessions { keys, db, versions, resolved: Arc::new(Resolved::new(RESOLVED_CAPACITY)) }
    }
}

/// Sessions resolved under one `sessions` version (what the token's session and membership rows
/// said then), by (session id, context claim): (user id, expiry, context). Any write that could
/// change an answer (a session revoked or deleted, a membership changed or removed) moves the
/// version in its own transaction (m0014), so the cache never answers for a session that a
/// committed write ended. Expiry is checked per request.
pub type Resolved = VersionedCache<(String, String), (String, DateTime<Utc>, Context)>;

/// At most this many resolved sessions are kept per instance.
const RESOLVED_CAPACITY: usize = 50_000;

pub async fn membership(db: &impl ConnectionTrait, company_id: &str, user_id: &str) -> Result<Option<company_members::Model>, AppError> {
    Ok(company_members::Entity::find_by_id((company_id.to_string(), user_id.to_string())).one(db).await?)
}

impl Sessions {
    /// Resolves an access token to the caller; `None` when the token or its session is not valid.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Auth>, AppError> {
        let Some(claims) = self.keys.verify(token) else { return Ok(None) };
        // Read before the rows: an entry stored under this version reflects every write it counts.
        let version = self.versions.fresh().await?.sessions;
        let key = (claims.sid.clone(), claims.sme.clone());
        if let Some((user, expires_at, context)) = self.resolved.get(version, &key) {
            if user == claims.sub && expires_at > now() {
                return Ok(Some(Auth { user_id: claims.sub, session_id: claims.sid, context }));
            }
        }
        let Some(session) = sessions::Entity::find_by_id(claims.sid.clone()).one(&self.db).await? else { return Ok(None) };
        if session.revoked_at.is_some() || session.expires_at <= now() || session.user_id != claims.sub {
            return Ok(None);
        }
        let context = if claims.sme == PERSONAL {
            Context::Personal
        } else {
            match membership(&self.db, &claims.sme, &claims.sub).await? {
                Some(m) => Context::Company { id: claims.sme.clone(), role: m.role },
                None => return Ok(None), // removed from the company since
            }
        };
        self.resolved.put(version, key, (claims.sub.clone(), session.expires_at, context.clone()));
        Ok(Some(Auth { user_id: claims.sub, session_id: claims.sid, context }))
    }
}

/// The subprotocol prefix that carries a token on a browser's WebSocket (browsers cannot set
/// headers there): `new WebSocket(url, ["zmarket", "zmarket.bearer." + token])`.
pub const WS_BEARER: &str = "zmarket.bearer.";

/// The caller's token: `Authorization: Bearer …`, or on a WebSocket handshake the
/// `zmarket.bearer.…` subprotocol.
pub fn bearer(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        // The scheme is case-insensitive (RFC 9110 §11.1).
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .or_else(|| {
            parts
                .headers
                .get(header::SEC_WEBSOCKET_PROTOCOL)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(',').map(str::trim).find_map(|p| p.strip_prefix(WS_BEARER)))
        })
}

impl<S: Send + Sync> FromRequestParts<S> for Auth
where
    Sessions: FromRef<S>,
{
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or(AppError::Unauthorized(Msg::Unauthorized))?;
        Sessions::from_ref(state).authenticate(token).await?.ok_or(AppError::Unauthorized(Msg::SessionExpired))
    }
}

/// The caller in a company context as its administrator (403 otherwise).
pub struct Admin(pub Auth);

impl<S: Send + Sync> FromRequestParts<S> for Admin
where
    Sessions: FromRef<S>,
{
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let auth = Auth::from_request_parts(parts, state).await?;
        if auth.is_admin() { Ok(Admin(auth)) } else { Err(AppError::Forbidden(Msg::NotAdmin)) }
    }
}
