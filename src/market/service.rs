//! Market rules: list, search and details answered from the in-memory index; the seed at
//! start-up; the reload after writes.

use std::sync::Arc;

use crate::ids::AppId;
use crate::error::{AppError, Msg};
use crate::http::Page;
use crate::lang::Lang;
use crate::market::MarketCtx;
use crate::market::index::Catalogue;
use crate::market::model::{AppDetails, DEFAULT_LIMIT, Filter, ListQuery, SearchQuery, category_filter};

pub use crate::market::index::Answer;
use crate::market::index::AnswerKey;

/// `GET /market/applications`: the listed apps in listing order, optionally of one category.
pub fn list(market: &Catalogue, q: &ListQuery, page: Page, lang: Lang) -> Result<Arc<Answer>, AppError> {
    let (offset, limit) = page.checked(DEFAULT_LIMIT)?;
    let filter = Filter { category: category_filter(q.category.as_deref())?, ..Default::default() };
    Ok(answer_list(market, &filter, offset, limit, lang, "list"))
}

/// `GET /market/search`.
pub fn search(market: &Catalogue, q: &SearchQuery, page: Page, lang: Lang) -> Result<Arc<Answer>, AppError> {
    let (offset, limit) = page.checked(DEFAULT_LIMIT)?;
    // Its OpenAPI document lists the values of these two, so a blank one is refused like an
    // unknown one (the market page's own query string stays lenient: a blank filter is none).
    for (field, value) in [("display_type", &q.display_type), ("tier", &q.tier)] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(AppError::invalid(field, Msg::InvalidField(field)));
        }
    }
    let filter = Filter::new(q.keyword.as_deref(), q.category.as_deref(), q.display_type.as_deref(), q.tier.as_deref())?;
    Ok(answer_list(market, &filter, offset, limit, lang, "search"))
}

fn answer_list(market: &Catalogue, filter: &Filter, offset: u64, limit: u64, lang: Lang, call: &'static str) -> Arc<Answer> {
    let key = AnswerKey::List { lang, call, filter: filter.clone(), offset, limit };
    market.get().answer(key, |index| index.page_json(&index.select(filter), offset, limit, lang))
}

/// `GET /market/applications/{id}`.
pub fn details(market: &Catalogue, id: &AppId, lang: Lang) -> Result<Arc<Answer>, AppError> {
    let index = market.get();
    let json = index.get_json(id, lang).ok_or(AppError::Refused(Msg::AppNotFound))?;
    Ok(index.answer(AnswerKey::App { lang, id: id.to_string() }, |_| json.to_string()))
}

/// What an app card never shows (ui `AppCardData`): left out of the list pages' first HTML, which
/// every first visit downloads (the details page fetches its own).
pub const NOT_ON_CARDS: &[&str] = &["description", "requirements", "kind", "version", "top_pick"];

/// For the server-rendered pages: one page of a filter as the cards show it, the list call's
/// answer without the fields of [`NOT_ON_CARDS`], so the page state does not carry what only the
/// details page shows (the market's home: 58 → 41 KB, 10.8 → 6.0 KB gzip).
pub fn page_values(market: &Catalogue, filter: &Filter, limit: u64, lang: Lang) -> serde_json::Value {
    let index = market.get();
    let selection = index.select(filter);
    let cards: Vec<serde_json::Value> = index
        .page(&selection, 0, limit, lang)
        .into_iter()
        .map(|app| {
            let mut card = serde_json::to_value(app).unwrap_or_default();
            if let Some(fields) = card.as_object_mut() {
                for field in NOT_ON_CARDS {
                    fields.remove(*field);
                }
            }
            card
        })
        .collect();
    serde_json::json!({ "items": cards, "total": selection.len() })
}

pub fn app_value(market: &Catalogue, id: &AppId, lang: Lang) -> Option<AppDetails> {
    market.get().get(id, lang).cloned()
}

/// Re-reads the catalogue after a write (or on the periodic check) and refreshes the
/// server-rendered pages when it changed.
pub async fn refresh(cx: &MarketCtx) -> Result<bool, AppError> {
    let changed = cx.catalogue.reload(&cx.db).await?;
    if changed {
        cx.public.changed();
    }
    Ok(changed)
}
