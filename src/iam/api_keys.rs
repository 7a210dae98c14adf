//! Personal API keys: create (shown once), list, revoke, and the hourly clean-up. Resolving a
//! presented key is `auth::Sessions::authenticate` (with access tokens). No HTTP types here.

use chrono::Duration;
use sea_orm::{ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set};

use crate::ids::{ApiKeyId, UserId};
use crate::db::entity::{api_keys, users};
use crate::db::{for_update, now, write_txn};
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::iam::IamCtx;
use crate::iam::auth::{Auth, Context, PERSONAL, is_operator};
use crate::iam::model::{ApiKey, ApiKeyCreated, NewApiKey};
use crate::iam::scopes::{self, Scope};
use crate::iam::tokens;

/// Live keys (neither revoked nor expired) a person may hold at once.
pub const MAX_LIVE_KEYS: u64 = 20;

/// Revoked keys are deleted this long after their revocation, expired ones this long after
/// their expiry (until then the list shows them expired).
const REVOKED_KEPT: Duration = Duration::days(1);
const EXPIRED_KEPT: Duration = Duration::days(7);

fn to_api_key(row: api_keys::Model) -> ApiKey {
    ApiKey {
        id: row.id.into(),
        name: row.name,
        prefix: row.prefix,
        sme_id: row.company_id.map_or_else(|| PERSONAL.to_string(), String::from),
        created_at: row.created_at,
        last_used_at: row.last_used_at,
        expires_at: row.expires_at,
        scopes: scopes::from_column(&row.scopes),
    }
}

/// A new key acting as the caller in the current context. Only a signed-in session may create
/// one (403 for an API key), at most [`MAX_LIVE_KEYS`] live at once (409). An `ops` key only by
/// an operator in their personal context (403), confirmed with their password (400).
pub async fn create(cx: &IamCtx, auth: &Auth, req: NewApiKey) -> Result<ApiKeyCreated, AppError> {
    auth.session()?;
    if req.scopes.contains(&Scope::Ops) {
        if auth.context != Context::Personal || !is_operator(&cx.db, &auth.user_id).await? {
            return Err(AppError::Refused(Msg::ApiKeyOpsOperatorOnly));
        }
        let password = req.password.clone().ok_or(AppError::invalid("password", Msg::ApiKeyOpsConfirm))?;
        let user = users::Entity::find_by_id(auth.user_id.clone()).one(&cx.db).await?.ok_or(AppError::Refused(Msg::SessionExpired))?;
        if !cx.hasher.verify(password, Some(user.password_hash)).await? {
            return Err(AppError::invalid("password", Msg::PasswordIncorrect));
        }
    }
    let txn = write_txn(&cx.db).await?;
    // The person locked first: two creations at once count one after the other.
    for_update(&txn, users::Entity::find_by_id(auth.user_id.clone())).one(&txn).await?.ok_or(AppError::Refused(Msg::SessionExpired))?;
    let t = now();
    let live = api_keys::Entity::find()
        .filter(api_keys::Column::UserId.eq(auth.user_id.clone()))
        .filter(api_keys::Column::RevokedAt.is_null())
        .filter(Condition::any().add(api_keys::Column::ExpiresAt.is_null()).add(api_keys::Column::ExpiresAt.gt(t)))
        .count(&txn)
        .await?;
    if live >= MAX_LIVE_KEYS {
        return Err(AppError::Refused(Msg::TooManyApiKeys(MAX_LIVE_KEYS)));
    }
    let (key, prefix) = tokens::api_key();
    let row = api_keys::ActiveModel {
        id: Set(ApiKeyId::new()),
        user_id: Set(auth.user_id.clone()),
        company_id: Set(auth.company().cloned()),
        name: Set(req.name),
        prefix: Set(prefix),
        key_hash: Set(tokens::hash_token(&key)),
        created_at: Set(t),
        last_used_at: Set(None),
        expires_at: Set(Some(req.expires_at)),
        revoked_at: Set(None),
        scopes: Set(scopes::to_column(&req.scopes)),
    }
    .insert(&txn)
    .await?;
    txn.commit().await?;
    let scopes = scopes::from_column(&row.scopes);
    Ok(ApiKeyCreated { id: row.id.into(), name: row.name, key, prefix: row.prefix, created_at: row.created_at, expires_at: row.expires_at, scopes })
}

/// Revokes every live key of a person, in the caller's transaction: a password changed or reset
/// ends them (issue 43, item 4), on every instance (m0016). Answers how many.
pub async fn revoke_all(txn: &impl ConnectionTrait, user_id: &UserId) -> Result<u64, AppError> {
    let done = api_keys::Entity::update_many()
        .col_expr(api_keys::Column::RevokedAt, now().into())
        .filter(api_keys::Column::UserId.eq(user_id))
        .filter(api_keys::Column::RevokedAt.is_null())
        .exec(txn)
        .await?;
    Ok(done.rows_affected)
}

/// The caller's keys not revoked (expired ones included), newest first.
pub async fn list(cx: &IamCtx, auth: &Auth, offset: u64, limit: u64) -> Result<List<ApiKey>, AppError> {
    let mine = api_keys::Entity::find().filter(api_keys::Column::UserId.eq(auth.user_id.clone())).filter(api_keys::Column::RevokedAt.is_null());
    let total = mine.clone().count(&cx.db).await?;
    let rows = mine
        .order_by_desc(api_keys::Column::CreatedAt)
        .order_by_desc(api_keys::Column::Id)
        .offset(offset)
        .limit(limit)
        .all(&cx.db)
        .await?;
    Ok(List { items: rows.into_iter().map(to_api_key).collect(), total })
}

/// Revokes one of the caller's keys: it stops working at once on every instance (the update
/// moves the `sessions` version, m0016). 404 for another person's key, an unknown or a revoked one.
pub async fn revoke(cx: &IamCtx, auth: &Auth, id: &ApiKeyId) -> Result<(), AppError> {
    let done = api_keys::Entity::update_many()
        .col_expr(api_keys::Column::RevokedAt, now().into())
        .filter(api_keys::Column::Id.eq(id))
        .filter(api_keys::Column::UserId.eq(auth.user_id.clone()))
        .filter(api_keys::Column::RevokedAt.is_null())
        .exec(&cx.db)
        .await?;
    if done.rows_affected == 0 {
        return Err(AppError::Refused(Msg::ApiKeyNotFound));
    }
    Ok(())
}

/// Deletes keys revoked more than a day ago and keys expired more than a week ago.
pub async fn cleanup(conn: &impl ConnectionTrait) -> Result<u64, AppError> {
    let t = now();
    let gone = api_keys::Entity::delete_many()
        .filter(
            Condition::any()
                .add(api_keys::Column::RevokedAt.lte(t - REVOKED_KEPT))
                .add(api_keys::Column::ExpiresAt.lte(t - EXPIRED_KEPT)),
        )
        .exec(conn)
        .await?;
    Ok(gone.rows_affected)
}
