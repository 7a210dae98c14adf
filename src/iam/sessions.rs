//! Sign-in and sessions: password sign-in, refresh-token rotation (a reused token revokes its
//! family), switching context, sign-out, and the expiry clean-up. No HTTP types here.

use std::net::IpAddr;

use chrono::{DateTime, Duration, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set};

use crate::db::entity::{companies, company_members, email_verifications, refresh_tokens, sessions, users};
use crate::db::{for_update, new_id, now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::IamCtx;
use crate::iam::auth::{Auth, Context, PERSONAL, membership};
use crate::iam::model::*;
use crate::iam::tokens::{self, ACCESS, Claims};
use crate::ids::{CompanyId, UserId};

// ---- sign-in and sessions ----

/// The password sign-in. With two-factor sign-in on (and this browser not remembered, `remembered`
/// being its cookie's token) it answers 401 `two_factor_required` with a challenge instead
/// (`two_factor::sign_in`).
pub async fn login(cx: &IamCtx, ip: IpAddr, req: Credentials, remembered: Option<&str>) -> Result<Session, AppError> {
    let Credentials { email, password: pass } = req;
    cx.limiter.login_attempt(ip, email.as_str()).await?;
    let user = users::Entity::find().filter(users::Column::Email.eq(email.as_str())).one(&cx.db).await?;
    if !cx.hasher.verify(pass, user.as_ref().map(|u| u.password_hash.clone())).await? {
        cx.limiter.login_failed(ip, email.as_str()).await?;
        return Err(AppError::Refused(Msg::CredentialsIncorrect));
    }
    let user = user.ok_or(AppError::Refused(Msg::CredentialsIncorrect))?;
    if cx.settings.email_verification && user.email_verified_at.is_none() {
        return Err(AppError::Refused(Msg::EmailNotVerified));
    }
    if user.suspended_at.is_some() {
        return Err(AppError::Refused(Msg::AccountSuspended(user.suspended_reason.clone().unwrap_or_default())));
    }
    crate::iam::two_factor::sign_in::after_password(cx, &user, remembered).await?;
    open(cx, &user).await
}

/// The sign-in's second step (two-factor sign-in on): the challenge and a code open a session;
/// the remembered-browser token too when asked (`two_factor::sign_in`).
pub async fn login_second_step(cx: &IamCtx, ip: IpAddr, req: crate::iam::two_factor::model::SecondStep) -> Result<(Session, Option<String>), AppError> {
    let (user, remember) = crate::iam::two_factor::sign_in::second_step(cx, ip, req).await?;
    Ok((open(cx, &user).await?, remember))
}

/// A new session (personal context) for a person whose sign-in succeeded.
async fn open(cx: &IamCtx, user: &users::Model) -> Result<Session, AppError> {
    let txn = write_txn(&cx.db).await?;
    let t = now();
    let session_id = new_id();
    sessions::ActiveModel {
        id: Set(session_id.clone()),
        user_id: Set(user.id.clone()),
        sme_id: Set(PERSONAL.into()),
        created_at: Set(t),
        expires_at: Set(t + Duration::seconds(cx.settings.session_ttl_secs as i64)),
        revoked_at: Set(None),
        revoke_reason: Set(None),
    }
    .insert(&txn)
    .await?;
    let refresh = new_refresh_token(&txn, &session_id).await?;
    txn.commit().await?;
    build_session(cx, user, &session_id, &Context::Personal, refresh).await
}

async fn new_refresh_token(conn: &impl ConnectionTrait, session_id: &str) -> Result<String, AppError> {
    let token = tokens::random_token();
    store_refresh_token(conn, session_id, &token).await?;
    Ok(token)
}

async fn store_refresh_token(conn: &impl ConnectionTrait, session_id: &str, token: &str) -> Result<(), AppError> {
    refresh_tokens::ActiveModel {
        token_hash: Set(tokens::hash_token(token)),
        session_id: Set(session_id.to_string()),
        created_at: Set(now()),
        used_at: Set(None),
    }
    .insert(conn)
    .await?;
    Ok(())
}

fn access_token(cx: &IamCtx, user_id: &UserId, session_id: &str, context: &Context) -> Result<(String, i64), AppError> {
    let iat = now().timestamp();
    let exp = iat + cx.settings.access_token_ttl_secs as i64;
    let claims = Claims {
        sub: user_id.into(),
        sme: context.sme_id().into(),
        user_type: context.user_type().as_str().into(),
        sid: session_id.into(),
        typ: ACCESS.into(),
        iat,
        exp,
    };
    Ok((cx.keys.sign(&claims)?, exp))
}

async fn build_session(
    cx: &IamCtx,
    user: &users::Model,
    session_id: &str,
    context: &Context,
    refresh: String,
) -> Result<Session, AppError> {
    let (token, exp) = access_token(cx, &user.id, session_id, context)?;
    Ok(Session {
        token,
        refresh_token: refresh,
        access_token_expire: exp,
        sme_id: context.sme_id().into(),
        user_type: context.user_type(),
        user_info: user_info(user),
        organization_list: organizations(&cx.db, &user.id).await?,
    })
}

fn user_info(user: &users::Model) -> UserInfo {
    UserInfo { name: user.name.clone(), avatar_url: avatar_url(user), email: user.email.clone() }
}

/// The organization list: the personal pseudo-organization first, then the companies joined.
pub async fn organizations(db: &DatabaseConnection, user_id: &UserId) -> Result<Vec<Organization>, AppError> {
    let mut list = vec![Organization { id: PERSONAL.into(), name: "Personal".into(), network_id: String::new(), owner: user_id.into() }];
    let memberships = company_members::Entity::find()
        .filter(company_members::Column::UserId.eq(user_id))
        .order_by_asc(company_members::Column::JoinedAt)
        .all(db)
        .await?;
    if memberships.is_empty() {
        return Ok(list);
    }
    let ids: Vec<CompanyId> = memberships.iter().map(|m| m.company_id.clone()).collect();
    let mut found = companies::Entity::find().filter(companies::Column::Id.is_in(ids.clone())).all(db).await?;
    found.sort_by_key(|c| ids.iter().position(|i| *i == c.id));
    list.extend(found.into_iter().map(|c| Organization { id: c.id.into(), name: c.name, network_id: c.network_id, owner: c.owner_id.into() }));
    Ok(list)
}

/// Exchanges a refresh token for a new pair. A token is good once; presenting it again
/// revokes its whole family, except within the grace window (two tabs that raced), where the
/// late tab gets the *same* successor as the first (derived from the token: `Keys::successor`),
/// so one token never mints more than one live successor.
pub async fn refresh(cx: &IamCtx, presented: Option<&str>) -> Result<RefreshResponse, AppError> {
    let presented = presented.filter(|t| !t.is_empty()).ok_or(AppError::Refused(Msg::RefreshTokenInvalid))?;
    let hash = tokens::hash_token(presented);
    let txn = write_txn(&cx.db).await?;
    // Locked: two tabs presenting the same token at once are decided one after the other.
    let Some(rt) = for_update(&txn, refresh_tokens::Entity::find_by_id(hash.clone())).one(&txn).await? else {
        return Err(AppError::Refused(Msg::RefreshTokenInvalid));
    };
    let Some(session) = sessions::Entity::find_by_id(rt.session_id.clone()).one(&txn).await? else {
        return Err(AppError::Refused(Msg::RefreshTokenInvalid));
    };
    let t = now();
    if session.revoked_at.is_some() || session.expires_at <= t {
        return Err(AppError::Refused(Msg::RefreshTokenInvalid));
    }
    let next = cx.keys.successor(presented);
    if let Some(used_at) = rt.used_at {
        let grace = Duration::seconds(cx.settings.refresh_grace_secs as i64);
        if t - used_at > grace {
            revoke_session(&txn, &session.id, "refresh_token_reused").await?;
            txn.commit().await?;
            tracing::warn!(session_id = %session.id, "refresh token reused: session revoked");
            return Err(AppError::Refused(Msg::RefreshTokenReused));
        }
        // Within the window: the successor already stored is answered again.
    } else {
        refresh_tokens::Entity::update_many()
            .col_expr(refresh_tokens::Column::UsedAt, t.into())
            .filter(refresh_tokens::Column::TokenHash.eq(hash))
            .exec(&txn)
            .await?;
        store_refresh_token(&txn, &session.id, &next).await?;
    }
    let context = if session.sme_id == PERSONAL {
        Context::Personal
    } else {
        match membership(&txn, &CompanyId::from(&session.sme_id), &session.user_id).await? {
            Some(m) => Context::Company { id: session.sme_id.clone().into(), role: m.role },
            None => {
                // No longer in that company: back to the personal context.
                sessions::Entity::update_many()
                    .col_expr(sessions::Column::SmeId, PERSONAL.into())
                    .filter(sessions::Column::Id.eq(session.id.clone()))
                    .exec(&txn)
                    .await?;
                Context::Personal
            }
        }
    };
    txn.commit().await?;
    let (access, exp) = access_token(cx, &session.user_id, &session.id, &context)?;
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

/// Ends every live session of person `user_id` at `at` with `reason` (a password changed or
/// reset, a suspension), but `except` (the caller's own, kept after a password change). The
/// `sessions` version moves (m0014's triggers), so every instance refuses the tokens on their next
/// call. Answers how many ended.
pub async fn end_all(conn: &impl ConnectionTrait, user_id: &UserId, except: Option<&str>, reason: &str, at: DateTime<Utc>) -> Result<u64, AppError> {
    let mut q = sessions::Entity::update_many()
        .col_expr(sessions::Column::RevokedAt, at.into())
        .col_expr(sessions::Column::RevokeReason, reason.into())
        .filter(sessions::Column::UserId.eq(user_id))
        .filter(sessions::Column::RevokedAt.is_null());
    if let Some(keep) = except {
        q = q.filter(sessions::Column::Id.ne(keep));
    }
    Ok(q.exec(conn).await?.rows_affected)
}

pub async fn switch(cx: &IamCtx, auth: &Auth, SwitchTo(sme): SwitchTo) -> Result<Session, AppError> {
    // An API key keeps the context it was created in.
    let session_id = auth.session()?.to_string();
    let user = users::Entity::find_by_id(auth.user_id.clone()).one(&cx.db).await?.ok_or(AppError::Refused(Msg::SessionExpired))?;
    let context = if sme == PERSONAL {
        Context::Personal
    } else {
        match membership(&cx.db, &CompanyId::from(&sme), &auth.user_id).await? {
            Some(m) => Context::Company { id: sme.clone().into(), role: m.role },
            None => return Err(AppError::Refused(Msg::NotCompanyMember)),
        }
    };
    let txn = write_txn(&cx.db).await?;
    sessions::Entity::update_many()
        .col_expr(sessions::Column::SmeId, sme.into())
        .filter(sessions::Column::Id.eq(session_id.clone()))
        .exec(&txn)
        .await?;
    let refresh = new_refresh_token(&txn, &session_id).await?;
    txn.commit().await?;
    build_session(cx, &user, &session_id, &context, refresh).await
}

pub async fn logout(cx: &IamCtx, auth: &Auth) -> Result<(), AppError> {
    // An API key is revoked, not signed out.
    revoke_session(&cx.db, auth.session()?, "logout").await
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
    let r = crate::db::entity::password_resets::Entity::delete_many()
        .filter(crate::db::entity::password_resets::Column::ExpiresAt.lte(t))
        .exec(db)
        .await?;
    Ok(s.rows_affected + v.rows_affected + r.rows_affected)
}
