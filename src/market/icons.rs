//! Icons uploaded in the operator's console (`app_icons`, m0023), served at
//! `/api/ebs/v1/market/icons/{id}?v=<version>`: the version is the content's hash, so an answer
//! may be cached for good and a new icon is a new URL.

use sea_orm::{ActiveModelTrait, ConnectionTrait, EntityTrait, Set};

use crate::ids::AppId;
use crate::db::entity::app_icons;
use crate::error::AppError;

/// The `icon` an app row holds for its uploaded icon (a path: `market::model::icon_url` uses it
/// as it is).
pub fn path(app_id: &AppId, version: &str) -> String {
    format!("/api/ebs/v1/market/icons/{app_id}?v={version}")
}

/// Stores `bytes` (of type `mime`, checked by the caller) as app `app_id`'s icon, replacing the one
/// it had; `version` is the content's hash, the `?v=` of its URL.
pub async fn save(conn: &impl ConnectionTrait, app_id: &AppId, mime: &str, bytes: Vec<u8>, version: String) -> Result<(), AppError> {
    let existing = app_icons::Entity::find_by_id(app_id.to_string()).one(conn).await?;
    let row = app_icons::ActiveModel {
        app_id: Set(AppId::from(app_id)),
        content_type: Set(mime.to_string()),
        data: Set(bytes),
        version: Set(version),
        updated_at: Set(crate::db::now()),
    };
    match existing {
        Some(_) => row.update(conn).await?,
        None => row.insert(conn).await?,
    };
    Ok(())
}

/// The icon's bytes and content type.
pub async fn load(conn: &impl ConnectionTrait, app_id: &AppId) -> Result<Option<(Vec<u8>, String)>, AppError> {
    Ok(app_icons::Entity::find_by_id(app_id.to_string()).one(conn).await?.map(|i| (i.data, i.content_type)))
}
