//! The account: profile, username, password, avatar, deletion. No HTTP types here.

use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set, TransactionTrait};

use crate::db::entity::users;
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::IamCtx;
use crate::iam::auth::Auth;
use crate::iam::model::*;
use crate::ids::UserId;

// ---- account ----

/// Everyone with an account, and those who joined since `since` (the operator's overview).
pub async fn people_counts(conn: &impl sea_orm::ConnectionTrait, since: chrono::DateTime<chrono::Utc>) -> Result<(u64, u64), AppError> {
    use sea_orm::PaginatorTrait;
    let all = users::Entity::find().count(conn).await?;
    let new = users::Entity::find().filter(users::Column::CreatedAt.gte(since)).count(conn).await?;
    Ok((all, new))
}

async fn user_of(cx: &IamCtx, auth: &Auth) -> Result<users::Model, AppError> {
    users::Entity::find_by_id(auth.user_id.clone()).one(&cx.db).await?.ok_or(AppError::Refused(Msg::SessionExpired))
}

fn profile_of(u: &users::Model) -> Profile {
    Profile { id: u.id.clone().into(), email: u.email.clone(), name: u.name.clone(), avatar_url: avatar_url(u), created_at: u.created_at.to_rfc3339() }
}

/// Profiles by user id, kept while the `profiles` version stands (every instance's cache empties
/// when any profile changes anywhere: they change rarely and are read on every page).
pub type Profiles = crate::versions::VersionedCache<String, Profile>;

/// How many profiles an instance keeps before it starts again.
pub const PROFILES_KEPT: usize = 10_000;

pub async fn profile(cx: &IamCtx, auth: &Auth) -> Result<Profile, AppError> {
    // Read before the row: a profile stored under this version reflects every change it counts.
    let version = cx.versions.fresh().await?.profiles;
    if let Some(p) = cx.profiles.get(version, auth.user_id.as_str()) {
        return Ok(p);
    }
    let p = profile_of(&user_of(cx, auth).await?);
    cx.profiles.put(version, auth.user_id.to_string(), p.clone());
    Ok(p)
}

pub async fn update_name(cx: &IamCtx, auth: &Auth, name: Username) -> Result<Profile, AppError> {
    let user = user_of(cx, auth).await?;
    let mut a: users::ActiveModel = user.into();
    a.name = Set(name.into_string());
    a.updated_at = Set(now());
    let u = a.update(&cx.db).await?;
    Ok(profile_of(&u))
}

pub async fn change_password(cx: &IamCtx, auth: &Auth, req: PasswordChange) -> Result<(), AppError> {
    let PasswordChange { old, new } = req;
    let user = user_of(cx, auth).await?;
    if !cx.hasher.verify(old, Some(user.password_hash.clone())).await? {
        return Err(AppError::invalid("old_password", Msg::PasswordIncorrect));
    }
    let hash = cx.hasher.hash(new.as_str().to_string()).await?;
    let txn = write_txn(&cx.db).await?;
    let user_id = user.id.clone();
    let mut a: users::ActiveModel = user.into();
    a.password_hash = Set(hash);
    a.updated_at = Set(now());
    a.update(&txn).await?;
    // Every other session of this user ends.
    crate::iam::sessions::end_all(&txn, &user_id, Some(&auth.session_id), "password_changed", now()).await?;
    // And every API key: it was made under the old password (issue 43, item 4).
    crate::iam::api_keys::revoke_all(&txn, &user_id).await?;
    // And every browser remembered for two-factor sign-in.
    crate::iam::two_factor::forget_browsers(&txn, &user_id).await?;
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

pub async fn set_avatar(cx: &IamCtx, auth: &Auth, bytes: Vec<u8>) -> Result<AvatarResponse, AppError> {
    if bytes.is_empty() {
        return Err(AppError::invalid("file", Msg::AvatarMissing));
    }
    if bytes.len() > AVATAR_MAX_BYTES {
        return Err(AppError::Refused(Msg::AvatarTooLarge));
    }
    let mime = avatar_type(&bytes).ok_or(AppError::Refused(Msg::AvatarType))?;
    let user = user_of(cx, auth).await?;
    let version = user.avatar_version + 1;
    let mut a: users::ActiveModel = user.into();
    a.avatar = Set(Some(bytes));
    a.avatar_type = Set(Some(mime.to_string()));
    a.avatar_version = Set(version);
    a.updated_at = Set(now());
    let u = a.update(&cx.db).await?;
    Ok(AvatarResponse { avatar_url: avatar_url(&u) })
}

pub async fn avatar(cx: &IamCtx, user_id: &UserId) -> Result<(Vec<u8>, String), AppError> {
    let u = users::Entity::find_by_id(user_id.to_string()).one(&cx.db).await?.ok_or(AppError::Refused(Msg::NotFound))?;
    match (u.avatar, u.avatar_type) {
        (Some(bytes), Some(t)) => Ok((bytes, t)),
        _ => Err(AppError::Refused(Msg::NotFound)),
    }
}

/// Whether the account can be deleted now: every domain that can block it is asked
/// (src/iam/deletion.rs).
pub async fn account_check(cx: &IamCtx, auth: &Auth) -> Result<AccountCheck, AppError> {
    let txn = cx.db.begin().await?;
    let reasons = cx.deletion.reasons(&txn, &auth.user_id).await?;
    txn.rollback().await?;
    Ok(AccountCheck { deletable: reasons.is_empty(), reasons })
}

pub async fn delete_account(cx: &IamCtx, auth: &Auth, req: DeletionConfirmed) -> Result<(), AppError> {
    let pass = req.password;
    let user = user_of(cx, auth).await?;
    if !cx.hasher.verify(pass, Some(user.password_hash.clone())).await? {
        return Err(AppError::invalid("password", Msg::PasswordIncorrect));
    }
    let txn = write_txn(&cx.db).await?;
    let reasons = cx.deletion.reasons(&txn, &user.id).await?;
    if !reasons.is_empty() {
        return Err(AppError::Explained { msg: Msg::AccountNotDeletable, data: serde_json::json!({ "reasons": reasons }) });
    }
    users::Entity::delete_by_id(user.id).exec(&txn).await?;
    txn.commit().await?;
    Ok(())
}

