//! Icons uploaded in the operator's console (`app_icons`, m0023), served at
//! `/api/ebs/v1/market/icons/{id}?v=<version>`: the version is the content's hash, so an answer
//! may be cached for good and a new icon is a new URL.

use sea_orm::{ConnectionTrait, EntityTrait};

use crate::ids::AppId;
use crate::db::entity::app_icons;
use crate::error::AppError;

/// The `icon` an app row holds for its uploaded icon (a path: `market::model::icon_url` uses it
/// as it is).
pub fn path(app_id: &str, version: &str) -> String {
    format!("/api/ebs/v1/market/icons/{app_id}?v={version}")
}

/// The icon's bytes and content type.
pub async fn load(conn: &impl ConnectionTrait, app_id: &AppId) -> Result<Option<(Vec<u8>, String)>, AppError> {
    Ok(app_icons::Entity::find_by_id(app_id.to_string()).one(conn).await?.map(|i| (i.data, i.content_type)))
}
