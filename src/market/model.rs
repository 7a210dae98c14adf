//! Market types: the seed catalogue file, the app as the API answers it, the query of a list.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::db::entity::apps;
use crate::db::enums::parse_any_case;
use crate::error::{AppError, Msg};
use crate::lang::Lang;

pub use crate::db::enums::{AppKind, Category, DisplayType, Tier};

/// The category filter value that selects the chosen apps; not a stored category.
pub const TOP_PICKS: &str = "top_picks";
/// Longest keyword accepted by the search, in characters.
pub const KEYWORD_MAX_CHARS: usize = 100;
/// Default page size of the market lists (the UI's first page).
pub const DEFAULT_LIMIT: u64 = 24;

// ---------- the seed catalogue (assets/catalogue/apps.json, see assets/README.md) ----------

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogueFile {
    pub version: i32,
    pub apps: Vec<SeedApp>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Text {
    pub en: String,
    pub zh: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Requirements {
    pub cpu_cores: i32,
    pub memory_bytes: i64,
    pub disk_bytes: i64,
    pub gpu_count: i32,
    /// For an app that needs GPUs: the lowest CUDA version its image runs on ("12.4"); null when
    /// its image brings no CUDA of its own (docs/gpus.md).
    #[serde(default)]
    pub cuda: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedApp {
    pub slug: String,
    pub version: String,
    pub name: Text,
    pub summary: Text,
    pub description: Text,
    pub icon: String,
    #[serde(flatten)]
    pub class: Classification,
    pub price_per_hour: i64,
    pub publisher: String,
    #[serde(default)]
    pub top_pick: bool,
    pub requirements: Requirements,
}

// ---------- the catalogue's fields, in groups ----------

/// Declares a group of an app's fields once, in the three forms the code uses:
/// - `$Whole`, every field: flattened into the catalogue's fields (`AppFields`), the console's
///   app (`OpsApp`) and, where the group is not per language, the market's app (`App`);
/// - `$Request`, what a request to the console may give (`AppRequest` flattens it): each field
///   an option, as the JSON spells it (text; its schema names the field's type);
/// - `$Edit`, what a checked request changes (`AppEdit`): each field an option of its type,
///   which [`apply`](Self::apply) writes over a whole.
macro_rules! field_group {
    (
        $(#[$meta:meta])*
        $Whole:ident, $Request:ident, $Edit:ident {
            $( $(#[$doc:meta])* $field:ident: $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
        pub struct $Whole {
            $( $(#[$doc])* pub $field: $ty, )*
        }

        #[doc = concat!("The fields of `", stringify!($Whole), "` a request gives (each one it leaves out stays as it is).")]
        #[derive(Debug, Clone, Default, Deserialize, ToSchema)]
        pub struct $Request {
            $( $(#[$doc])* #[schema(value_type = Option<$ty>)] pub $field: Option<String>, )*
        }

        #[doc = concat!("The fields of `", stringify!($Whole), "` a checked request changes.")]
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct $Edit {
            $( pub $field: Option<$ty>, )*
        }

        impl $Edit {
            /// Writes the fields it changes over `whole`.
            pub fn apply(self, whole: &mut $Whole) {
                $( if let Some(v) = self.$field { whole.$field = v; } )*
            }
        }
    };
}

field_group! {
    /// An app's texts in both languages (the market answers each in the caller's language).
    AppTexts, AppTextsRequest, AppTextsEdit {
        name_en: String,
        name_zh: String,
        summary_en: String,
        summary_zh: String,
        description_en: String,
        description_zh: String,
    }
}

field_group! {
    /// Where the market shelves an app: each a choice from one of the market's lists.
    Classification, ClassificationRequest, ClassificationEdit {
        category: Category,
        display_type: DisplayType,
        tier: Tier,
        kind: AppKind,
    }
}

impl From<&apps::Model> for AppTexts {
    fn from(m: &apps::Model) -> AppTexts {
        AppTexts {
            name_en: m.name_en.clone(),
            name_zh: m.name_zh.clone(),
            summary_en: m.summary_en.clone(),
            summary_zh: m.summary_zh.clone(),
            description_en: m.description_en.clone(),
            description_zh: m.description_zh.clone(),
        }
    }
}

impl From<&apps::Model> for Classification {
    fn from(m: &apps::Model) -> Classification {
        Classification { category: m.category, display_type: m.display_type, tier: m.tier, kind: m.kind }
    }
}

impl From<&apps::Model> for Requirements {
    fn from(m: &apps::Model) -> Requirements {
        Requirements { cpu_cores: m.cpu_cores, memory_bytes: m.memory_bytes, disk_bytes: m.disk_bytes, gpu_count: m.gpu_count, cuda: m.cuda.clone() }
    }
}

/// The fields of an app that the catalogue provides and a person may change. The seed update
/// compares them one by one (docs/market.md); they are stored as JSON in `apps.seed_fields`, a
/// flat object whose keys are the column names (the groups are flattened into it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppFields {
    pub position: i32,
    #[serde(flatten)]
    pub texts: AppTexts,
    pub icon: String,
    #[serde(flatten)]
    pub class: Classification,
    pub price_per_hour: i64,
    pub publisher: String,
    pub version: String,
    pub top_pick: bool,
    #[serde(flatten)]
    pub requirements: Requirements,
}

impl AppFields {
    pub fn from_seed(a: &SeedApp, position: i32) -> AppFields {
        AppFields {
            position,
            texts: AppTexts {
                name_en: a.name.en.clone(),
                name_zh: a.name.zh.clone(),
                summary_en: a.summary.en.clone(),
                summary_zh: a.summary.zh.clone(),
                description_en: a.description.en.clone(),
                description_zh: a.description.zh.clone(),
            },
            icon: a.icon.clone(),
            class: a.class.clone(),
            price_per_hour: a.price_per_hour,
            publisher: a.publisher.clone(),
            version: a.version.clone(),
            top_pick: a.top_pick,
            requirements: a.requirements.clone(),
        }
    }

    /// The row's values of these fields (the JSON field names are the column names).
    pub fn from_row(m: &apps::Model) -> anyhow::Result<AppFields> {
        Ok(serde_json::from_value(serde_json::to_value(m)?)?)
    }

    /// A row to write: `row` (every column as JSON) with these fields over it. These fields and
    /// the columns named in `also` are set (an update writes only those: a column the catalogue
    /// does not own, such as `listed`, is never written back); an insert writes every column.
    pub fn into_row(&self, row: serde_json::Value, also: &[&str]) -> anyhow::Result<apps::ActiveModel> {
        use sea_orm::ActiveModelTrait;
        use std::str::FromStr;
        let (serde_json::Value::Object(mut row), serde_json::Value::Object(fields)) = (row, serde_json::to_value(self)?) else {
            anyhow::bail!("an app row and its fields are JSON objects");
        };
        let written: Vec<String> = fields.keys().cloned().chain(also.iter().map(|k| k.to_string())).collect();
        row.extend(fields);
        let mut active = apps::ActiveModel::from(serde_json::from_value::<apps::Model>(serde_json::Value::Object(row))?);
        for key in &written {
            let col = apps::Column::from_str(key).map_err(|_| anyhow::anyhow!("apps has no column {key:?}"))?;
            active.reset(col);
        }
        Ok(active)
    }
}

// ---------- the API's app ----------

/// An app of the market, with its texts in the request language.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct App {
    pub id: String,
    pub name: String,
    pub summary: String,
    pub description: String,
    /// `/assets/icons/apps/<id>.svg?v=<version>` for catalogue apps (cached for good).
    pub icon_url: String,
    #[serde(flatten)]
    #[schema(inline)]
    pub class: Classification,
    /// What renting it costs now: the cheapest online rentable offer that fits it and how many
    /// there are (the catalogue's own price is charged by no one and not shown: docs/market.md).
    pub price_per_hour: Price,
    pub publisher: String,
    pub version: String,
    /// Shown under the `top_picks` category filter.
    pub top_pick: bool,
    pub requirements: Requirements,
}

/// `{from, offers}`: the cheapest offer's price per hour in cents (null when there is none) and
/// how many offers there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct Price {
    pub from: Option<i64>,
    pub offers: u32,
}

/// An online device its owner shares for rent, on which the app fits now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Offer {
    pub device_id: String,
    pub device_name: String,
    /// The GPUs of the device (their names), empty when it has none.
    pub gpus: Vec<String>,
    /// Cents of the coin per hour: exactly what a rental of this offer holds and charges.
    pub price_per_hour: i64,
}

impl Offer {
    pub fn of(d: &crate::db::entity::devices::Model) -> Offer {
        Offer {
            device_id: d.id.clone().into(),
            device_name: d.name.clone(),
            gpus: crate::devices::gpus::gpus_of(d).into_iter().map(|g| g.name).collect(),
            price_per_hour: d.price_per_hour,
        }
    }
}

/// One app with its offers, cheapest first (`GET /market/applications/{id}`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AppDetails {
    #[serde(flatten)]
    pub app: App,
    pub offers: Vec<Offer>,
}

impl App {
    pub fn from_row(m: &apps::Model, lang: Lang, offers: &[Offer]) -> App {
        let (name, summary, description) = match lang {
            Lang::En => (&m.name_en, &m.summary_en, &m.description_en),
            Lang::Zh => (&m.name_zh, &m.summary_zh, &m.description_zh),
        };
        App {
            id: m.id.clone().into(),
            name: name.clone(),
            summary: summary.clone(),
            description: description.clone(),
            icon_url: icon_url(&m.icon),
            class: Classification::from(m),
            price_per_hour: Price { from: offers.first().map(|o| o.price_per_hour), offers: offers.len() as u32 },
            publisher: m.publisher.clone(),
            version: m.version.clone(),
            top_pick: m.top_pick,
            requirements: Requirements::from(m),
        }
    }
}

/// An icon path under assets/ is served at `/assets/<path>?v=<its version>` (cached for good,
/// issue 26); a URL is used as it is.
pub fn icon_url(icon: &str) -> String {
    if icon.starts_with('/') || icon.starts_with("http://") || icon.starts_with("https://") {
        icon.to_string()
    } else {
        match crate::ssr::bundle::asset_version(icon) {
            Some(v) => format!("/assets/{icon}?v={v}"),
            None => format!("/assets/{icon}"),
        }
    }
}

// ---------- queries ----------

// The market calls take their pagination (`crate::http::Page`, default 24) and language
// ([`LangQuery`]) as separate extractors of the same query string.

/// `GET /market/applications`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// AI, Metaverse, Game, Work, Home, Others, Z-CLOUD, or top_picks.
    pub category: Option<String>,
}

/// `GET /market/search`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Matched case-insensitively against the English and Chinese names and summaries and the
    /// publisher; several words must all match.
    pub keyword: Option<String>,
    pub category: Option<String>,
    #[param(inline, value_type = Option<DisplayType>)]
    pub display_type: Option<String>,
    #[param(inline, value_type = Option<Tier>)]
    pub tier: Option<String>,
}

/// `?language=` of the market calls.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LangQuery {
    /// en or zh; without it, `Accept-Language` decides.
    pub language: Option<String>,
}

/// What the category filter selects: the apps of a stored category, or the chosen apps
/// (`top_picks`, which is not a stored category).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shelf {
    TopPicks,
    Category(Category),
}

/// A checked filter: every value is one of the known ones, the keyword lowercased and split.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Filter {
    pub terms: Vec<String>,
    pub category: Option<Shelf>,
    pub display_type: Option<DisplayType>,
    pub tier: Option<Tier>,
}

/// A filter value: none when absent or blank, else what `find` makes of it (in any case), else
/// refused.
fn pick<T>(field: &'static str, value: Option<&str>, find: impl Fn(&str) -> Option<T>) -> Result<Option<T>, AppError> {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else { return Ok(None) };
    find(v).map(Some).ok_or(AppError::invalid(field, Msg::InvalidField(field)))
}

pub fn category_filter(value: Option<&str>) -> Result<Option<Shelf>, AppError> {
    pick("category", value, |v| {
        // "top picks" (with a space) is accepted too (docs/product.md §3).
        if v.eq_ignore_ascii_case(TOP_PICKS) || v.eq_ignore_ascii_case("top picks") {
            Some(Shelf::TopPicks)
        } else {
            parse_any_case(v).map(Shelf::Category)
        }
    })
}

impl Filter {
    pub fn new(
        keyword: Option<&str>,
        category: Option<&str>,
        display_type: Option<&str>,
        tier: Option<&str>,
    ) -> Result<Filter, AppError> {
        let keyword = keyword.unwrap_or("").trim();
        if keyword.chars().count() > KEYWORD_MAX_CHARS {
            return Err(AppError::invalid("keyword", Msg::KeywordTooLong));
        }
        Ok(Filter {
            terms: keyword.to_lowercase().split_whitespace().map(str::to_string).collect(),
            category: category_filter(category)?,
            display_type: pick("display_type", display_type, parse_any_case)?,
            tier: pick("tier", tier, parse_any_case)?,
        })
    }
}

/// The answer's language: `?language=` when given, else `Accept-Language`.
pub fn answer_lang(query: Option<&str>, header: Lang) -> Result<Lang, AppError> {
    match query.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(header),
        Some(v) => Lang::parse(v).ok_or(AppError::invalid("language", Msg::InvalidField("language"))),
    }
}
