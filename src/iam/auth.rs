//! Who is calling: the `Auth` extractor (a Bearer access token whose session is alive, or a
//! personal API key that is live), the context the caller acts in (personal, or a company with a
//! role), and `Admin` (a company administrator in that company's context).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use axum::extract::{FromRef, FromRequestParts};
use axum::http::{Method, header};
use axum::http::request::Parts;
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter};
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::db::entity::{api_keys, company_members, sessions, two_factor, users};
use crate::db::enums::Role;
use crate::db::now;
use crate::error::{AppError, Msg};
use crate::ids::{ApiKeyId, CompanyId, UserId};
use crate::iam::scopes::{self as key_scopes, Needed, Scope};
use crate::iam::tokens::{self, Keys};
use crate::versions::{VersionedCache, Versions};

/// The `smeId` of the personal context.
pub const PERSONAL: &str = "user";

/// Where the caller acts: as a person, or in a company with their role there (as it is now: a
/// changed role applies at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Context {
    Personal,
    Company { id: CompanyId, role: Role },
}

/// The `userType` of docs/product.md §3.
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
            Some(role) if sme != PERSONAL => Context::Company { id: CompanyId::from(sme), role },
            _ => Context::Personal,
        }
    }
    /// `"user"` or the company id.
    pub fn sme_id(&self) -> &str {
        match self {
            Context::Personal => PERSONAL,
            Context::Company { id, .. } => id.as_str(),
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

/// Who is calling, from a verified access token and a live session, or from a live API key.
#[derive(Debug, Clone)]
pub struct Auth {
    pub user_id: UserId,
    /// The session of the access token; empty for an API key.
    pub session_id: String,
    pub context: Context,
    /// The id of the API key presented; None for an access token.
    pub api_key: Option<ApiKeyId>,
}

impl Auth {
    /// The company of the current context, if any.
    pub fn company(&self) -> Option<&CompanyId> {
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
    /// The session of a caller signed in with an access token; 403 for an API key (what only a
    /// signed-in person may do: create keys, switch context, sign out).
    pub fn session(&self) -> Result<&str, AppError> {
        match self.api_key {
            None => Ok(&self.session_id),
            Some(_) => Err(AppError::Refused(Msg::SessionRequired)),
        }
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
    pub resolved_keys: Arc<ResolvedKeys>,
    /// The operator's settings: while `two_factor_required_for_staff` is on, `Admin` and
    /// `Operator` refuse a caller without two-factor sign-in (403 `two_factor_enrolment_required`).
    pub market_settings: crate::settings::LiveSettings,
}

impl Sessions {
    pub fn new(keys: Arc<Keys>, db: DatabaseConnection, versions: Versions, market_settings: crate::settings::LiveSettings) -> Self {
        Sessions {
            keys,
            db,
            versions,
            resolved: Arc::new(Resolved::new(RESOLVED_CAPACITY)),
            resolved_keys: Arc::new(ResolvedKeys::new(RESOLVED_CAPACITY)),
            market_settings,
        }
    }
}

/// Sessions resolved under one `sessions` version (what the token's session and membership rows
/// said then), by (session id, context claim): (user id, expiry, context). Any write that could
/// change an answer (a session revoked or deleted, a membership changed or removed) moves the
/// version in its own transaction (m0014), so the cache never answers for a session that a
/// committed write ended. Expiry is checked per request.
pub type Resolved = VersionedCache<(String, String), (String, DateTime<Utc>, Context)>;

/// At most this many resolved sessions (and as many API keys) are kept per instance.
const RESOLVED_CAPACITY: usize = 50_000;

/// API keys resolved under one `sessions` version, by the key's hash: what its row and its
/// owner's membership said then. Revoking a key, changing its expiry, deleting it (its owner's
/// account, its company) and any membership change move the version (m0014, m0016), so a key
/// that a committed write ended is never answered from here. Expiry is checked per request.
pub type ResolvedKeys = VersionedCache<String, ResolvedKey>;

#[derive(Debug, Clone)]
pub struct ResolvedKey {
    pub id: ApiKeyId,
    pub user_id: UserId,
    pub expires_at: Option<DateTime<Utc>>,
    pub context: Context,
    /// What the key may do (`iam::scopes`).
    pub scopes: Arc<[Scope]>,
    /// When `last_used_at` was last written as far as this instance knows (epoch seconds; shared
    /// by the clones of this entry), so a busy key costs one write a minute, not one per request.
    pub used_at: Arc<AtomicI64>,
}

/// `last_used_at` is written at most this often per key (seconds).
pub const KEY_USE_GRANULARITY_SECS: i64 = 60;

pub async fn membership(db: &impl ConnectionTrait, company_id: &CompanyId, user_id: &UserId) -> Result<Option<company_members::Model>, AppError> {
    Ok(company_members::Entity::find_by_id((company_id.clone(), user_id.clone())).one(db).await?)
}

/// Whether the account is suspended (or gone). Suspending moves the `sessions` version (m0021), so
/// a resolved token or key cached before is read again.
async fn suspended(db: &impl ConnectionTrait, user_id: &UserId) -> Result<bool, AppError> {
    Ok(users::Entity::find_by_id(user_id.to_string()).one(db).await?.is_none_or(|u| u.suspended_at.is_some()))
}

/// Whether two-factor sign-in is on for this person (`iam::two_factor`).
pub async fn two_factor_on(db: &impl ConnectionTrait, user_id: &UserId) -> Result<bool, AppError> {
    Ok(two_factor::Entity::find_by_id(user_id.to_string()).one(db).await?.is_some_and(|r| r.enabled_at.is_some()))
}

/// Whether the operator's setting (`two_factor_required_for_staff`, `required_for_staff`) asks
/// this caller to turn two-factor sign-in on first: an operator (in their personal context) or a
/// company administrator (in the company's) without it.
pub async fn enrolment_required(db: &impl ConnectionTrait, required_for_staff: bool, auth: &Auth) -> Result<bool, AppError> {
    if !required_for_staff || two_factor_on(db, &auth.user_id).await? {
        return Ok(false);
    }
    Ok(match auth.context {
        Context::Company { .. } => auth.is_admin(),
        Context::Personal => is_operator(db, &auth.user_id).await?,
    })
}

/// Whether the person runs the market (`users.operator`).
pub async fn is_operator(db: &impl ConnectionTrait, user_id: &UserId) -> Result<bool, AppError> {
    Ok(users::Entity::find_by_id(user_id.to_string()).one(db).await?.is_some_and(|u| u.operator && u.suspended_at.is_none()))
}

impl Sessions {
    /// Resolves an access token or an API key (`zk_…`) to the caller; `None` when the token or
    /// its session (the key) is not valid.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Auth>, AppError> {
        Ok(self.resolve(token).await?.map(|(auth, _)| auth))
    }

    /// As [`Sessions::authenticate`], with an API key's scopes (None: an access token).
    async fn resolve(&self, token: &str) -> Result<Option<(Auth, Option<Arc<[Scope]>>)>, AppError> {
        if tokens::is_api_key(token) {
            return self.authenticate_key(token).await;
        }
        Ok(self.authenticate_token(token).await?.map(|auth| (auth, None)))
    }

    async fn authenticate_token(&self, token: &str) -> Result<Option<Auth>, AppError> {
        let Some(claims) = self.keys.verify(token) else { return Ok(None) };
        // Read before the rows: an entry stored under this version reflects every write it counts.
        let version = self.versions.fresh().await?.sessions;
        let key = (claims.sid.clone(), claims.sme.clone());
        if let Some((user, expires_at, context)) = self.resolved.get(version, &key)
            && user == claims.sub
            && expires_at > now()
        {
            return Ok(Some(Auth { user_id: claims.sub.into(), session_id: claims.sid, context, api_key: None }));
        }
        let Some(session) = sessions::Entity::find_by_id(claims.sid.clone()).one(&self.db).await? else { return Ok(None) };
        if session.revoked_at.is_some() || session.expires_at <= now() || session.user_id != claims.sub {
            return Ok(None);
        }
        if suspended(&self.db, &UserId::from(&claims.sub)).await? {
            return Ok(None);
        }
        let context = if claims.sme == PERSONAL {
            Context::Personal
        } else {
            let company = CompanyId::from(claims.sme.as_str());
            match membership(&self.db, &company, &UserId::from(claims.sub.as_str())).await? {
                Some(m) => Context::Company { id: company, role: m.role },
                None => return Ok(None), // removed from the company since
            }
        };
        self.resolved.put(version, key, (claims.sub.clone(), session.expires_at, context.clone()));
        Ok(Some(Auth { user_id: claims.sub.into(), session_id: claims.sid, context, api_key: None }))
    }

    /// Whether what `auth` was resolved from still holds (an open stream's recheck, issue 43
    /// item 2, src/connect/rights.rs): its session or API key is live, its person is not
    /// suspended, and a company context is still theirs. The access token's own expiry is not
    /// asked: a stream opened with a valid token lives as long as its session.
    pub async fn still_holds(&self, auth: &Auth) -> Result<bool, AppError> {
        let t = now();
        if let Some(key) = &auth.api_key {
            let Some(row) = api_keys::Entity::find_by_id(key.clone()).one(&self.db).await? else { return Ok(false) };
            if row.revoked_at.is_some() || row.expires_at.is_some_and(|e| e <= t) {
                return Ok(false);
            }
        } else {
            let Some(s) = sessions::Entity::find_by_id(auth.session_id.clone()).one(&self.db).await? else { return Ok(false) };
            if s.revoked_at.is_some() || s.expires_at <= t {
                return Ok(false);
            }
        }
        if suspended(&self.db, &auth.user_id).await? {
            return Ok(false);
        }
        if let Some(company) = auth.company()
            && membership(&self.db, company, &auth.user_id).await?.is_none()
        {
            return Ok(false);
        }
        Ok(true)
    }

    /// A personal API key: live (not revoked, not expired), acting as its owner in the context
    /// it was created in while the owner is still a member there.
    async fn authenticate_key(&self, key: &str) -> Result<Option<(Auth, Option<Arc<[Scope]>>)>, AppError> {
        let hash = tokens::hash_token(key);
        let version = self.versions.fresh().await?.sessions;
        let t = now();
        let resolved = match self.resolved_keys.get(version, &hash) {
            Some(k) => k,
            None => {
                let Some(row) = api_keys::Entity::find().filter(api_keys::Column::KeyHash.eq(hash.clone())).one(&self.db).await? else {
                    return Ok(None);
                };
                if row.revoked_at.is_some() || suspended(&self.db, &row.user_id).await? {
                    return Ok(None);
                }
                let context = match &row.company_id {
                    None => Context::Personal,
                    Some(company) => match membership(&self.db, company, &row.user_id).await? {
                        Some(m) => Context::Company { id: company.clone(), role: m.role },
                        None => return Ok(None), // removed from the company since
                    },
                };
                let used = row.last_used_at.map_or(i64::MIN, |u| u.timestamp());
                let scopes = key_scopes::from_column(&row.scopes).into();
                let k = ResolvedKey { id: row.id, user_id: row.user_id, expires_at: row.expires_at, context, scopes, used_at: Arc::new(AtomicI64::new(used)) };
                self.resolved_keys.put(version, hash, k.clone());
                k
            }
        };
        if resolved.expires_at.is_some_and(|e| e <= t) {
            return Ok(None);
        }
        self.touch_key(&resolved, t).await;
        let auth = Auth { user_id: resolved.user_id, session_id: String::new(), context: resolved.context, api_key: Some(resolved.id) };
        Ok(Some((auth, Some(resolved.scopes))))
    }

    /// Records a key's use, at most once a minute per key: this instance skips the write while its
    /// last known write is recent, and the conditional update skips it when another instance
    /// wrote within the minute.
    async fn touch_key(&self, key: &ResolvedKey, t: DateTime<Utc>) {
        let last = key.used_at.load(Ordering::Relaxed);
        let secs = t.timestamp();
        if secs.saturating_sub(last) < KEY_USE_GRANULARITY_SECS
            || key.used_at.compare_exchange(last, secs, Ordering::Relaxed, Ordering::Relaxed).is_err()
        {
            return;
        }
        let stale = t - chrono::Duration::seconds(KEY_USE_GRANULARITY_SECS);
        let written = api_keys::Entity::update_many()
            .col_expr(api_keys::Column::LastUsedAt, t.into())
            .filter(api_keys::Column::Id.eq(key.id.clone()))
            .filter(Condition::any().add(api_keys::Column::LastUsedAt.is_null()).add(api_keys::Column::LastUsedAt.lte(stale)))
            .exec(&self.db)
            .await;
        if let Err(e) = written {
            // The use itself is valid: it is only not recorded (the next minute tries again).
            key.used_at.store(last, Ordering::Relaxed);
            tracing::warn!(error = %e, key_id = %key.id, "recording an API key's use failed");
        }
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
        let token = bearer(parts).ok_or(AppError::Refused(Msg::Unauthorized))?;
        // A key is not a session: an unknown, revoked, expired or malformed one says so.
        let refused = if tokens::is_api_key(token) { Msg::ApiKeyInvalid } else { Msg::SessionExpired };
        let (auth, scopes) = Sessions::from_ref(state).resolve(token).await?.ok_or(AppError::Refused(refused))?;
        // A key answers only what its scopes cover (issue 43, item 4).
        if let Some(scopes) = scopes {
            match key_scopes::needed(&parts.method, parts.uri.path(), &parts.headers) {
                Needed::Scope(s) if scopes.contains(&s) => {}
                Needed::Scope(s) => return Err(AppError::Refused(Msg::ApiKeyScope(s.as_str()))),
                Needed::Session => return Err(AppError::Refused(Msg::SessionRequired)),
            }
        }
        // While the operator requires two-factor sign-in of staff, a company administrator
        // without it acts as one nowhere: not only behind `Admin`, but on every route that asks
        // `is_admin()` (assignments, the company's wallet, apps and boxes). Reading stays open,
        // and so do their own account (where they enrol), signing out and switching context.
        if auth.is_admin() && !matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS) && !open_to_unenrolled_staff(parts.uri.path()) {
            staff_enrolled(&Sessions::from_ref(state), &auth).await?;
        }
        Ok(auth)
    }
}

/// What an administrator the operator requires two-factor sign-in of may still change before
/// enrolling: their own account (enrolment is there), signing out, leaving the company context.
fn open_to_unenrolled_staff(path: &str) -> bool {
    path.starts_with("/api/iam/v1/account/") || matches!(path, "/api/iam/v1/logout" | "/api/iam/v1/switch")
}

/// 403 `two_factor_enrolment_required` for an operator or administrator without two-factor
/// sign-in while the operator requires it (issue 43, item 12).
async fn staff_enrolled(sessions: &Sessions, auth: &Auth) -> Result<(), AppError> {
    if enrolment_required(&sessions.db, sessions.market_settings.current().two_factor_required_for_staff, auth).await? {
        return Err(AppError::Refused(Msg::TwoFactorEnrolmentRequired));
    }
    Ok(())
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
        if !auth.is_admin() {
            return Err(AppError::Refused(Msg::NotAdmin));
        }
        staff_enrolled(&Sessions::from_ref(state), &auth).await?;
        Ok(Admin(auth))
    }
}

/// The caller is an operator of the market, acting in their personal context (403 otherwise:
/// people, company administrators and members alike). The flag is read on every call, so a
/// revoked operator is refused at once.
pub struct Operator(pub Auth);

impl<S: Send + Sync> FromRequestParts<S> for Operator
where
    Sessions: FromRef<S>,
{
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let auth = Auth::from_request_parts(parts, state).await?;
        let sessions = Sessions::from_ref(state);
        if auth.context == Context::Personal && is_operator(&sessions.db, &auth.user_id).await? {
            staff_enrolled(&sessions, &auth).await?;
            Ok(Operator(auth))
        } else {
            Err(AppError::Refused(Msg::NotOperator))
        }
    }
}
