//! First-paint data of the market pages (docs/ui-contract.md, ui/README.md "state.data shapes"):
//! each is the data of the matching API call with limit 24, in the page language.

use serde_json::{Map, Value, json};

use crate::market::index::Catalogue;
use crate::lang::Lang;
use crate::market::model::{DEFAULT_LIMIT, Filter, Shelf, category_filter};
use crate::market::service;
use crate::ids::AppId;

/// Adds the market keys for `path` (already without the `/m` prefix of the phone pages).
/// A query the API would refuse gives no key: the page then fetches and shows the API's error.
/// An unknown app id sets `notFound`, which makes the page a 404.
pub fn fill(market: &Catalogue, path: &str, params: &[(String, String)], lang: Lang, data: &mut Map<String, Value>) {
    let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    match path {
        "/market" => {
            if let Ok(category) = category_filter(param("category")) {
                let filter = Filter { category, ..Default::default() };
                let list = service::page_values(market, &filter, DEFAULT_LIMIT, lang);
                if category.is_none() {
                    // The home of the market shows the chosen apps above the list.
                    let top = Filter { category: Some(Shelf::TopPicks), ..Default::default() };
                    let mut picks = service::page_values(market, &top, DEFAULT_LIMIT, lang);
                    refer_to_listed(&mut picks, &list);
                    data.insert("marketTopPicks".into(), picks);
                }
                data.insert("market".into(), list);
            }
        }
        "/market/more" => {
            if let Ok(filter) = Filter::new(param("keyword"), param("category"), param("display_type"), param("tier")) {
                data.insert("marketMore".into(), service::page_values(market, &filter, DEFAULT_LIMIT, lang));
            }
        }
        "/market/details" => match param("id").and_then(|id| service::app_value(market, &AppId::from(id), lang)) {
            Some(app) => {
                data.insert("marketDetails".into(), json!(app));
            }
            None => {
                data.insert("notFound".into(), Value::Bool(true));
            }
        },
        _ => {}
    }
}

/// Replaces each card of `page` that `list` also carries by its id (a string where a card was),
/// so the market's home does not send the top picks twice: ui `stores/boot.tsx` puts the cards
/// back from `market`. The picks outside the list's first page stay whole.
fn refer_to_listed(page: &mut Value, list: &Value) {
    let listed: std::collections::HashSet<&str> =
        list["items"].as_array().into_iter().flatten().filter_map(|card| card["id"].as_str()).collect();
    for card in page["items"].as_array_mut().into_iter().flatten() {
        if let Some(id) = card["id"].as_str().filter(|id| listed.contains(id)) {
            *card = Value::String(id.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_cards_are_sent_as_their_ids() {
        let list = json!({"items": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}], "total": 9});
        let mut picks = json!({"items": [{"id": "b", "name": "B"}, {"id": "z", "name": "Z"}], "total": 2});
        refer_to_listed(&mut picks, &list);
        assert_eq!(picks, json!({"items": ["b", {"id": "z", "name": "Z"}], "total": 2}));
    }
}
