//! The catalogue's rows as other domains ask about them (they never read `apps`, which this
//! domain owns: docs/architecture.md "Who owns which table").

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseExecutor, DbErr, EntityTrait, QueryFilter};

use crate::db::entity::apps;
use crate::db::enums::{DisplayType, ResourceType};
use crate::error::AppError;
use crate::ids::{AppId, CompanyId};
use crate::lang::Lang;

/// The ids of the apps of these display types (listed or not).
pub async fn ids_of_types(conn: &impl ConnectionTrait, types: &[DisplayType]) -> Result<Vec<AppId>, DbErr> {
    Ok(apps::Entity::find().filter(apps::Column::DisplayType.is_in(types.iter().copied())).all(conn).await?.into_iter().map(|a| a.id).collect())
}

/// What the apps among `ids` are called in `lang` (the English name where there is no Chinese
/// one), by id: a company's assignments and a rental's ledger title name them so.
pub async fn names(conn: &impl ConnectionTrait, ids: &[AppId], lang: Lang) -> Result<HashMap<AppId, String>, DbErr> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = apps::Entity::find().filter(apps::Column::Id.is_in(ids.iter().cloned())).all(conn).await?;
    Ok(rows.into_iter().map(|a| (a.id, if lang == Lang::Zh && !a.name_zh.is_empty() { a.name_zh } else { a.name_en })).collect())
}

/// The apps as company resources: a company may assign any listed app to its members, and the
/// assignments name it in the reader's language.
pub struct CompanyApps;

#[async_trait::async_trait]
impl crate::companies::resources::CompanyResources for CompanyApps {
    async fn assignable(&self, conn: &DatabaseExecutor<'_>, kind: ResourceType, id: &str, _company_id: &CompanyId) -> Result<Option<bool>, AppError> {
        if kind != ResourceType::App {
            return Ok(None);
        }
        Ok(Some(apps::Entity::find_by_id(id.to_string()).one(conn).await?.is_some_and(|a| a.listed)))
    }

    async fn names(&self, conn: &DatabaseExecutor<'_>, kind: ResourceType, ids: &[String], lang: Lang) -> Result<Vec<(String, String)>, AppError> {
        if kind != ResourceType::App {
            return Ok(Vec::new());
        }
        let ids: Vec<AppId> = ids.iter().map(AppId::from).collect();
        Ok(names(conn, &ids, lang).await?.into_iter().map(|(id, name)| (id.into_string(), name)).collect())
    }
}
