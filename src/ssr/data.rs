//! The data a public page needs for its first paint, put into the page state under
//! `data.<page>` (see docs/ui-contract.md). Signed-in pages get none: they load after hydration.
//! `data.notFound = true` tells the UI that the page's subject does not exist: it renders the
//! 404 page and the server answers 404.

use serde_json::{Map, Value};

use crate::app::AppState;
use crate::http::Lang;

pub async fn for_page(app: &AppState, path: &str, query: Option<&str>, lang: Lang) -> Value {
    let mut data = Map::new();
    let params: Vec<(String, String)> = query
        .map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let path = if path.len() > 1 { path.trim_end_matches('/') } else { path };
    // The phone pages (/m/market, /m/nearby, …) show the same data as the desktop ones.
    let page = path.strip_prefix("/m").filter(|p| p.starts_with('/')).unwrap_or(path);
    // /nearby and /nearby/details: `nearby`, `nearbyDetails`.
    if let Some((key, value)) = crate::devices::service::page_data(app, page, &params).await {
        data.insert(key.to_string(), value);
    }
    crate::market::ssr::fill(app, page, &params, lang, &mut data);
    Value::Object(data)
}
