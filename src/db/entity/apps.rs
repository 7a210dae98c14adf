//! Owner: market.

use sea_orm::entity::prelude::*;

use crate::ids::AppId;
use serde::{Deserialize, Serialize};

use crate::db::enums::{AppKind, Category, DisplayType, Tier};

/// Serialize/Deserialize: the market's `AppFields` (what the catalogue provides) is read from
/// and written to a row through their shared JSON field names (src/market/model.rs).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, Serialize, Deserialize)]
#[sea_orm(table_name = "apps")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: AppId,
    pub position: i32,
    pub name_en: String,
    pub name_zh: String,
    pub summary_en: String,
    pub summary_zh: String,
    pub description_en: String,
    pub description_zh: String,
    pub icon: String,
    pub category: Category,
    pub display_type: DisplayType,
    pub tier: Tier,
    pub kind: AppKind,
    pub price_per_hour: i64,
    pub publisher: String,
    pub version: String,
    pub top_pick: bool,
    pub cpu_cores: i32,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    pub gpu_count: i32,
    /// The lowest CUDA version its image runs on ("12.4"), for apps that need GPUs.
    pub cuda: Option<String>,
    pub listed: bool,
    pub origin: String,
    pub seed_version: Option<String>,
    pub seed_fields: Option<String>,
    /// The install manifest published from the operator's console (JSON of
    /// `zmarket_protocol::apps::Manifest`, m0023); `None`: the built-in or `[apps] manifests` one.
    pub manifest: Option<String>,
    /// Moved by every change of the app (m0032): a stale edit is refused.
    #[serde(default)]
    pub revision: i64,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
