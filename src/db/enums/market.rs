//! The catalogue's choices (src/market/): an app's category, tier and kind. People type them in
//! any case (forms, query strings): [`super::parse_any_case`] reads them.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Where an app is shelved in the market (docs/product.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
pub enum Category {
    #[sea_orm(string_value = "AI")]
    #[serde(rename = "AI")]
    Ai,
    #[sea_orm(string_value = "Metaverse")]
    Metaverse,
    #[sea_orm(string_value = "Game")]
    Game,
    #[sea_orm(string_value = "Work")]
    Work,
    #[sea_orm(string_value = "Home")]
    Home,
    #[sea_orm(string_value = "Others")]
    Others,
    #[sea_orm(string_value = "Z-CLOUD")]
    #[serde(rename = "Z-CLOUD")]
    ZCloud,
}

/// How demanding an app is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    #[sea_orm(string_value = "high")]
    High,
    #[sea_orm(string_value = "standard")]
    Standard,
    #[sea_orm(string_value = "basic")]
    Basic,
}

/// How an app is offered: installed on one's own device (`own`) or rented (`rent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum AppKind {
    #[sea_orm(string_value = "own")]
    Own,
    #[sea_orm(string_value = "rent")]
    Rent,
}

/// What an app is, as its card says: the market's type filter, and what the install, rent and
/// order rules treat apart (a Lite App needs a GPU to share; AI apps open the AI door and hold a
/// company's AI compute).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
pub enum DisplayType {
    #[sea_orm(string_value = "Desktop")]
    Desktop,
    #[sea_orm(string_value = "Lite App")]
    #[serde(rename = "Lite App")]
    LiteApp,
    #[sea_orm(string_value = "NAS")]
    #[serde(rename = "NAS")]
    Nas,
    #[sea_orm(string_value = "AI compute")]
    #[serde(rename = "AI compute")]
    AiCompute,
    #[sea_orm(string_value = "Server")]
    Server,
    #[sea_orm(string_value = "Remote desktop")]
    #[serde(rename = "Remote desktop")]
    RemoteDesktop,
    #[sea_orm(string_value = "AI server")]
    #[serde(rename = "AI server")]
    AiServer,
    #[sea_orm(string_value = "Z-SERVER")]
    #[serde(rename = "Z-SERVER")]
    ZServer,
}

impl DisplayType {
    /// The AI apps: AI compute and AI server.
    pub const AI: [DisplayType; 2] = [DisplayType::AiCompute, DisplayType::AiServer];

    pub fn is_ai(self) -> bool {
        Self::AI.contains(&self)
    }
}
