//! Identity rules: sign-up and verification, sign-in, sessions and refresh-token rotation,
//! company context, account. No HTTP types here.

use std::net::IpAddr;

use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, Set,
};

use crate::app::AppState;
use crate::db::entity::{companies, company_members, email_verifications, refresh_tokens, sessions, users};
use crate::db::{new_id, now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::model::*;
use crate::iam::password;
use crate::iam::tokens::{self, ACCESS, Claims};
use crate::mail::Mail;

pub const PERSONAL: &str = "user";

/// Who is calling, from a verified access token and a live session.
#[derive(Debug, Clone)]
pub struct Auth {
    pub user_id: String,
    pub session_id: String,
    /// "user" or a company id.
    pub sme_id: String,
    /// user, admin or member, as it is now (a changed role applies at once).
    pub user_type: String,
}

impl Auth {
    pub fn company(&self) -> Option<&str> {
        (self.sme_id != PERSONAL).then_some(self.sme_id.as_str())
    }
    pub fn is_admin(&self) -> bool {
        self.user_type == "admin"
    }
}

/// Resolves an access token to the caller; `None` when the token or its session is not valid.
pub async fn authenticate(state: &AppState, token: &str) -> Result<Option<Auth>, AppError> {
    let Some(claims) = state.keys.verify(token) else { return Ok(None) };
    let Some(session) = sessions::Entity::find_by_id(claims.sid.clone()).one(&state.db).await? else { return Ok(None) };
    if session.revoked_at.is_some() || session.expires_at <= now() || session.user_id != claims.sub {
        return Ok(None);
    }
    let user_type = if claims.sme == PERSONAL {
        "user".to_string()
    } else {
        match membership(&state.db, &claims.sme, &claims.sub).await? {
            Some(m) => m.role,
            None => return Ok(None), // removed from the company since
        }
    };
    Ok(Some(Auth { user_id: claims.sub, session_id: claims.sid, sme_id: claims.sme, user_type }))
}

pub async fn membership(db: &impl ConnectionTrait, company_id: &str, user_id: &str) -> Result<Option<company_members::Model>, AppError> {
    Ok(company_members::Entity::find_by_id((company_id.to_string(), user_id.to_string())).one(db).await?)
}

// ---- sign-up and verification ----

pub async fn register(state: &AppState, req: RegisterRequest) -> Result<RegisterResponse, AppError> {
    let email = Email::parse(req.email.as_deref())?;
    let password = Password::parse("password", req.password.as_deref())?;
    if req.confirm_password.as_deref().unwrap_or("").is_empty() {
        return Err(AppError::invalid("confirm_password", Msg::PasswordRequired));
    }
    if req.confirm_password.as_deref() != Some(password.as_str()) {
        return Err(AppError::invalid("confirm_password", Msg::PasswordMismatch));
    }
    let given_name = match req.username.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(n) => Some(Username::parse(Some(n))?),
    };
    if req.agree != Some(true) {
        return Err(AppError::invalid("agree", Msg::AgreementRequired));
    }
    let verify = state.config.auth.email_verification;
    let hash = password::hash(password.as_str().to_string()).await?;

    let txn = write_txn(&state.db).await?;
    let existing = users::Entity::find().filter(users::Column::Email.eq(email.as_str())).one(&txn).await?;
    let t = now();
    let user_id = match existing {
        // A verified account keeps its owner.
        Some(u) if u.email_verified_at.is_some() || !verify => return Err(AppError::conflict(Msg::EmailTaken)),
        // An unverified sign-up may be repeated: new password, new link.
        Some(u) => {
            let id = u.id.clone();
            let mut a: users::ActiveModel = u.into();
            a.password_hash = Set(hash);
            if let Some(name) = given_name {
                a.name = Set(name.into_string());
            }
            a.updated_at = Set(t);
            a.update(&txn).await?;
            email_verifications::Entity::delete_many().filter(email_verifications::Column::UserId.eq(id.clone())).exec(&txn).await?;
            id
        }
        None => {
            let id = new_id();
            users::ActiveModel {
                id: Set(id.clone()),
                email: Set(email.as_str().to_string()),
                name: Set(given_name.unwrap_or_else(|| Username::from_email(&email)).into_string()),
                password_hash: Set(hash),
                email_verified_at: Set(if verify { None } else { Some(t) }),
                avatar: Set(None),
                avatar_type: Set(None),
                avatar_version: Set(0),
                created_at: Set(t),
                updated_at: Set(t),
            }
            .insert(&txn)
            .await
            .map_err(|e| match e.sql_err() {
                Some(sea_orm::SqlErr::UniqueConstraintViolation(_)) => AppError::conflict(Msg::EmailTaken),
                _ => e.into(),
            })?;
            id
        }
    };
    if verify {
        let token = tokens::random_token();
        email_verifications::ActiveModel {
            token_hash: Set(tokens::hash_token(&token)),
            user_id: Set(user_id),
            expires_at: Set(t + Duration::seconds(state.config.auth.verification_ttl_secs as i64)),
            used_at: Set(None),
            created_at: Set(t),
        }
        .insert(&txn)
        .await?;
        let link = format!("{}/email-verified?token={token}", state.config.server.public_url.trim_end_matches('/'));
        let product = &state.config.product_name;
        let hours = state.config.auth.verification_ttl_secs / 3600;
        let body = format!(
            "Welcome to {product}!\n\nOpen this link to verify your email address:\n{link}\n\n\
             The link is valid for {hours} hours. If you did not sign up, ignore this message.\n\n\
             欢迎使用 {product}！\n\n请打开以下链接验证您的邮箱：\n{link}\n\n链接 {hours} 小时内有效。如果不是您本人注册，请忽略本邮件。\n"
        );
        let subject = format!("Verify your email address / 验证您的邮箱 - {product}");
        state.mailer.enqueue(&txn, Mail { to: email.as_str(), subject: &subject, body: &body, link: Some(&link) }).await?;
    }
    txn.commit().await?;
    if verify {
        state.mailer.wake();
    }
    Ok(RegisterResponse { email: email.as_str().to_string(), verification_required: verify })
}

pub async fn verify_email(state: &AppState, token: Option<&str>) -> Result<EmailOnly, AppError> {
    let token = token.map(str::trim).filter(|t| !t.is_empty()).ok_or(AppError::invalid("token", Msg::VerificationInvalid))?;
    let txn = write_txn(&state.db).await?;
    let Some(v) = email_verifications::Entity::find_by_id(tokens::hash_token(token)).one(&txn).await? else {
        return Err(AppError::invalid("token", Msg::VerificationInvalid));
    };
    let Some(user) = users::Entity::find_by_id(v.user_id.clone()).one(&txn).await? else {
        return Err(AppError::invalid("token", Msg::VerificationInvalid));
    };
    if v.used_at.is_some() {
        // Opening the link twice is fine.
        return Ok(EmailOnly { email: user.email });
    }
    if v.expires_at <= now() {
        return Err(AppError::conflict(Msg::VerificationExpired));
    }
    let t = now();
    let email = user.email.clone();
    let mut u: users::ActiveModel = user.into();
    u.email_verified_at = Set(Some(t));
    u.updated_at = Set(t);
    u.update(&txn).await?;
    let mut v: email_verifications::ActiveModel = v.into();
    v.used_at = Set(Some(t));
    v.update(&txn).await?;
    txn.commit().await?;
    Ok(EmailOnly { email })
}

// ---- sign-in and sessions ----

pub async fn login(state: &AppState, ip: IpAddr, req: LoginRequest) -> Result<Session, AppError> {
    let email = Email::parse(req.email.as_deref())?;
    let pass = Password::presented("password", req.password.as_deref())?;
    state.login_limiter.attempt(ip, email.as_str()).map_err(|s| AppError::TooManyRequests { retry_after_secs: s })?;
    let user = users::Entity::find().filter(users::Column::Email.eq(email.as_str())).one(&state.db).await?;
    if !password::verify(pass, user.as_ref().map(|u| u.password_hash.clone())).await {
        state.login_limiter.failed(email.as_str());
        return Err(AppError::Unauthorized(Msg::CredentialsIncorrect));
    }
    let user = user.ok_or(AppError::Unauthorized(Msg::CredentialsIncorrect))?;
    if state.config.auth.email_verification && user.email_verified_at.is_none() {
        return Err(AppError::Forbidden(Msg::EmailNotVerified));
    }
    let txn = write_txn(&state.db).await?;
    let t = now();
    let session_id = new_id();
    sessions::ActiveModel {
        id: Set(session_id.clone()),
        user_id: Set(user.id.clone()),
        sme_id: Set(PERSONAL.into()),
        created_at: Set(t),
        expires_at: Set(t + Duration::seconds(state.config.auth.session_ttl_secs as i64)),
        revoked_at: Set(None),
        revoke_reason: Set(None),
    }
    .insert(&txn)
    .await?;
    let refresh = new_refresh_token(&txn, &session_id).await?;
    txn.commit().await?;
    build_session(state, &user, &session_id, PERSONAL, "user", refresh).await
}

async fn new_refresh_token(conn: &impl ConnectionTrait, session_id: &str) -> Result<String, AppError> {
    let token = tokens::random_token();
    refresh_tokens::ActiveModel {
        token_hash: Set(tokens::hash_token(&token)),
        session_id: Set(session_id.to_string()),
        created_at: Set(now()),
        used_at: Set(None),
    }
    .insert(conn)
    .await?;
    Ok(token)
}

fn access_token(state: &AppState, user_id: &str, session_id: &str, sme: &str, user_type: &str) -> Result<(String, i64), AppError> {
    let iat = now().timestamp();
    let exp = iat + state.config.auth.access_token_ttl_secs as i64;
    let claims = Claims {
        sub: user_id.into(),
        sme: sme.into(),
        user_type: user_type.into(),
        sid: session_id.into(),
        typ: ACCESS.into(),
        iat,
        exp,
    };
    Ok((state.keys.sign(&claims)?, exp))
}

async fn build_session(
    state: &AppState,
    user: &users::Model,
    session_id: &str,
    sme: &str,
    user_type: &str,
    refresh: String,
) -> Result<Session, AppError> {
    let (token, exp) = access_token(state, &user.id, session_id, sme, user_type)?;
    Ok(Session {
        token,
        refresh_token: refresh,
        access_token_expire: exp,
        sme_id: sme.into(),
        user_type: user_type.into(),
        user_info: user_info(user),
        organization_list: organizations(&state.db, &user.id).await?,
    })
}

pub fn avatar_url(user: &users::Model) -> String {
    let version = if user.avatar.is_some() { user.avatar_version.max(1) } else { user.avatar_version };
    avatar_path(&user.id, version)
}

/// The avatar URL of a person from their id and avatar version (0: no avatar, empty URL), for
/// readers that do not load the image bytes.
pub fn avatar_path(user_id: &str, avatar_version: i32) -> String {
    if avatar_version > 0 { format!("/api/iam/v1/avatars/{user_id}?v={avatar_version}") } else { String::new() }
}

fn user_info(user: &users::Model) -> UserInfo {
    UserInfo { name: user.name.clone(), avatar_url: avatar_url(user), email: user.email.clone() }
}

/// The organization list: the personal pseudo-organization first, then the companies joined.
pub async fn organizations(db: &DatabaseConnection, user_id: &str) -> Result<Vec<Organization>, AppError> {
    let mut list = vec![Organization { id: PERSONAL.into(), name: "Personal".into(), network_id: String::new(), owner: user_id.into() }];
    let memberships = company_members::Entity::find()
        .filter(company_members::Column::UserId.eq(user_id))
        .order_by_asc(company_members::Column::JoinedAt)
        .all(db)
        .await?;
    if memberships.is_empty() {
        return Ok(list);
    }
    let ids: Vec<String> = memberships.iter().map(|m| m.company_id.clone()).collect();
    let mut found = companies::Entity::find().filter(companies::Column::Id.is_in(ids.clone())).all(db).await?;
    found.sort_by_key(|c| ids.iter().position(|i| *i == c.id));
    list.extend(found.into_iter().map(|c| Organization { id: c.id, name: c.name, network_id: c.network_id, owner: c.owner_id }));
    Ok(list)
}

/// Exchanges a refresh token for a new pair. A token is good once; presenting it again
/// revokes its whole family, except within the grace window (two tabs that raced), where the
/// late tab gets its own successor.
pub async fn refresh(state: &AppState, presented: Option<&str>) -> Result<RefreshResponse, AppError> {
    let presented = presented.filter(|t| !t.is_empty()).ok_or(AppError::Unauthorized(Msg::RefreshTokenInvalid))?;
    let hash = tokens::hash_token(presented);
    let txn = write_txn(&state.db).await?;
    let Some(rt) = refresh_tokens::Entity::find_by_id(hash.clone()).one(&txn).await? else {
        return Err(AppError::Unauthorized(Msg::RefreshTokenInvalid));
    };
    let Some(session) = sessions::Entity::find_by_id(rt.session_id.clone()).one(&txn).await? else {
        return Err(AppError::Unauthorized(Msg::RefreshTokenInvalid));
    };
    let t = now();
    if session.revoked_at.is_some() || session.expires_at <= t {
        return Err(AppError::Unauthorized(Msg::RefreshTokenInvalid));
    }
    if let Some(used_at) = rt.used_at {
        let grace = Duration::seconds(state.config.auth.refresh_grace_secs as i64);
        if t - used_at > grace {
            revoke_session(&txn, &session.id, "refresh_token_reused").await?;
            txn.commit().await?;
            tracing::warn!(session_id = %session.id, "refresh token reused: session revoked");
            return Err(AppError::Unauthorized(Msg::RefreshTokenReused));
        }
    } else {
        refresh_tokens::Entity::update_many()
            .col_expr(refresh_tokens::Column::UsedAt, t.into())
            .filter(refresh_tokens::Column::TokenHash.eq(hash))
            .exec(&txn)
            .await?;
    }
    let next = new_refresh_token(&txn, &session.id).await?;
    let user_type = if session.sme_id == PERSONAL {
        "user".to_string()
    } else {
        match membership(&txn, &session.sme_id, &session.user_id).await? {
            Some(m) => m.role,
            None => {
                // No longer in that company: back to the personal context.
                sessions::Entity::update_many()
                    .col_expr(sessions::Column::SmeId, PERSONAL.into())
                    .filter(sessions::Column::Id.eq(session.id.clone()))
                    .exec(&txn)
                    .await?;
                "user".to_string()
            }
        }
    };
    let sme = if user_type == "user" { PERSONAL.to_string() } else { session.sme_id.clone() };
    txn.commit().await?;
    let (access, exp) = access_token(state, &session.user_id, &session.id, &sme, &user_type)?;
    Ok(RefreshResponse { access_token: access, refresh_token: next, access_token_expire: exp })
}

async fn revoke_session(conn: &impl ConnectionTrait, session_id: &str, reason: &str) -> Result<(), AppError> {
    sessions::Entity::update_many()
        .col_expr(sessions::Column::RevokedAt, now().into())
        .col_expr(sessions::Column::RevokeReason, reason.into())
        .filter(sessions::Column::Id.eq(session_id))
        .filter(sessions::Column::RevokedAt.is_null())
        .exec(conn)
        .await?;
    Ok(())
}

pub async fn switch(state: &AppState, auth: &Auth, req: SwitchRequest) -> Result<Session, AppError> {
    let sme = req.sme_id.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).ok_or(AppError::invalid("smeId", Msg::CompanyIdRequired))?;
    let user = users::Entity::find_by_id(auth.user_id.clone()).one(&state.db).await?.ok_or(AppError::Unauthorized(Msg::SessionExpired))?;
    let user_type = if sme == PERSONAL {
        "user".to_string()
    } else {
        match membership(&state.db, &sme, &auth.user_id).await? {
            Some(m) => m.role,
            None => return Err(AppError::Forbidden(Msg::NotCompanyMember)),
        }
    };
    let txn = write_txn(&state.db).await?;
    sessions::Entity::update_many()
        .col_expr(sessions::Column::SmeId, sme.clone().into())
        .filter(sessions::Column::Id.eq(auth.session_id.clone()))
        .exec(&txn)
        .await?;
    let refresh = new_refresh_token(&txn, &auth.session_id).await?;
    txn.commit().await?;
    build_session(state, &user, &auth.session_id, &sme, &user_type, refresh).await
}

pub async fn logout(state: &AppState, auth: &Auth) -> Result<(), AppError> {
    revoke_session(&state.db, &auth.session_id, "logout").await
}

// ---- account ----

async fn user_of(state: &AppState, auth: &Auth) -> Result<users::Model, AppError> {
    users::Entity::find_by_id(auth.user_id.clone()).one(&state.db).await?.ok_or(AppError::Unauthorized(Msg::SessionExpired))
}

fn profile_of(u: &users::Model) -> Profile {
    Profile { id: u.id.clone(), email: u.email.clone(), name: u.name.clone(), avatar_url: avatar_url(u), created_at: u.created_at.to_rfc3339() }
}

pub async fn profile(state: &AppState, auth: &Auth) -> Result<Profile, AppError> {
    Ok(profile_of(&user_of(state, auth).await?))
}

pub async fn update_name(state: &AppState, auth: &Auth, req: ProfileInfoRequest) -> Result<Profile, AppError> {
    let name = Username::parse(req.name.as_deref())?;
    let user = user_of(state, auth).await?;
    let mut a: users::ActiveModel = user.into();
    a.name = Set(name.into_string());
    a.updated_at = Set(now());
    let u = a.update(&state.db).await?;
    Ok(profile_of(&u))
}

pub async fn change_password(state: &AppState, auth: &Auth, req: ChangePasswordRequest) -> Result<(), AppError> {
    let old = Password::presented("old_password", req.old_password.as_deref())?;
    let new = Password::parse("new_password", req.new_password.as_deref())?;
    if req.confirm_password.as_deref().unwrap_or("").is_empty() {
        return Err(AppError::invalid("confirm_password", Msg::PasswordRequired));
    }
    if req.confirm_password.as_deref() != Some(new.as_str()) {
        return Err(AppError::invalid("confirm_password", Msg::PasswordMismatch));
    }
    let user = user_of(state, auth).await?;
    if !password::verify(old, Some(user.password_hash.clone())).await {
        return Err(AppError::invalid("old_password", Msg::PasswordIncorrect));
    }
    let hash = password::hash(new.as_str().to_string()).await?;
    let txn = write_txn(&state.db).await?;
    let user_id = user.id.clone();
    let mut a: users::ActiveModel = user.into();
    a.password_hash = Set(hash);
    a.updated_at = Set(now());
    a.update(&txn).await?;
    // Every other session of this user ends.
    sessions::Entity::update_many()
        .col_expr(sessions::Column::RevokedAt, now().into())
        .col_expr(sessions::Column::RevokeReason, "password_changed".into())
        .filter(sessions::Column::UserId.eq(user_id))
        .filter(sessions::Column::Id.ne(auth.session_id.clone()))
        .filter(sessions::Column::RevokedAt.is_null())
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(())
}

pub const AVATAR_MAX_BYTES: usize = 3 * 1024 * 1024;

/// The image type of `bytes` by its content (not its name), when it is one we accept.
pub fn avatar_type(bytes: &[u8]) -> Option<&'static str> {
    let kind = infer::get(bytes)?;
    match kind.mime_type() {
        m @ ("image/jpeg" | "image/png" | "image/webp" | "image/gif") => Some(m),
        _ => None,
    }
}

pub async fn set_avatar(state: &AppState, auth: &Auth, bytes: Vec<u8>) -> Result<AvatarResponse, AppError> {
    if bytes.is_empty() {
        return Err(AppError::invalid("file", Msg::AvatarMissing));
    }
    if bytes.len() > AVATAR_MAX_BYTES {
        return Err(AppError::TooLarge(Msg::AvatarTooLarge));
    }
    let mime = avatar_type(&bytes).ok_or(AppError::Unsupported(Msg::AvatarType))?;
    let user = user_of(state, auth).await?;
    let version = user.avatar_version + 1;
    let mut a: users::ActiveModel = user.into();
    a.avatar = Set(Some(bytes));
    a.avatar_type = Set(Some(mime.to_string()));
    a.avatar_version = Set(version);
    a.updated_at = Set(now());
    let u = a.update(&state.db).await?;
    Ok(AvatarResponse { avatar_url: avatar_url(&u) })
}

pub async fn avatar(state: &AppState, user_id: &str) -> Result<(Vec<u8>, String), AppError> {
    let u = users::Entity::find_by_id(user_id.to_string()).one(&state.db).await?.ok_or(AppError::NotFound(Msg::NotFound))?;
    match (u.avatar, u.avatar_type) {
        (Some(bytes), Some(t)) => Ok((bytes, t)),
        _ => Err(AppError::NotFound(Msg::NotFound)),
    }
}

/// Why the account cannot be deleted now. Each area adds its check as its tables exist.
pub async fn deletion_blockers(db: &impl ConnectionTrait, user_id: &str) -> Result<Vec<String>, AppError> {
    let mut reasons = Vec::new();
    if crate::devices::service::linked_count(db, user_id).await? > 0 {
        reasons.push("devices_linked".to_string());
    }
    let companies = company_members::Entity::find().filter(company_members::Column::UserId.eq(user_id)).count(db).await?;
    if companies > 0 {
        reasons.push("companies_joined".to_string());
    }
    Ok(reasons)
}

pub async fn account_check(state: &AppState, auth: &Auth) -> Result<AccountCheck, AppError> {
    let reasons = deletion_blockers(&state.db, &auth.user_id).await?;
    Ok(AccountCheck { deletable: reasons.is_empty(), reasons })
}

pub async fn delete_account(state: &AppState, auth: &Auth, req: DeleteAccountRequest) -> Result<(), AppError> {
    let pass = Password::presented("password", req.password.as_deref())?;
    let user = user_of(state, auth).await?;
    if !password::verify(pass, Some(user.password_hash.clone())).await {
        return Err(AppError::invalid("password", Msg::PasswordIncorrect));
    }
    let txn = write_txn(&state.db).await?;
    let reasons = deletion_blockers(&txn, &user.id).await?;
    if !reasons.is_empty() {
        return Err(AppError::Conflict { msg: Msg::AccountNotDeletable, data: Some(serde_json::json!({ "reasons": reasons })) });
    }
    users::Entity::delete_by_id(user.id).exec(&txn).await?;
    txn.commit().await?;
    Ok(())
}

/// Deletes sessions past their absolute lifetime (or revoked more than a day ago) and
/// verification links past their expiry. Returns how many rows went.
pub async fn cleanup_expired(db: &DatabaseConnection) -> Result<u64, AppError> {
    let t: DateTime<Utc> = now();
    let s = sessions::Entity::delete_many()
        .filter(Condition::any().add(sessions::Column::ExpiresAt.lte(t)).add(sessions::Column::RevokedAt.lte(t - Duration::days(1))))
        .exec(db)
        .await?;
    let v = email_verifications::Entity::delete_many().filter(email_verifications::Column::ExpiresAt.lte(t)).exec(db).await?;
    Ok(s.rows_affected + v.rows_affected)
}
