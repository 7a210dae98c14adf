//! The data a public page needs for its first paint, put into the page state under
//! `data.<page>` (see docs/ui-contract.md). Signed-in pages get none: they load after hydration.
//! `data.notFound = true` tells the UI that the page's subject does not exist: it renders the
//! 404 page and the server answers 404.
//!
//! The renderer does not know the domains: each domain with public pages (market, nearby)
//! registers a [`PageData`] source when the server is assembled (src/state.rs).

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::lang::Lang;

#[async_trait::async_trait]
pub trait PageData: Send + Sync {
    /// Adds the keys of `page` (the desktop path: `/m/market` arrives as `/market`) to `data`.
    async fn fill(&self, page: &str, params: &[(String, String)], lang: Lang, data: &mut Map<String, Value>);
}

/// Every registered source, asked in order.
#[derive(Clone, Default)]
pub struct PageSources(Arc<Vec<Arc<dyn PageData>>>);

impl PageSources {
    pub fn new(sources: Vec<Arc<dyn PageData>>) -> Self {
        PageSources(Arc::new(sources))
    }

    pub async fn for_page(&self, path: &str, query: Option<&str>, lang: Lang) -> Value {
        let mut data = Map::new();
        let params: Vec<(String, String)> = query
            .map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
            .unwrap_or_default();
        let path = if path.len() > 1 { path.trim_end_matches('/') } else { path };
        // The phone pages (/m/market, /m/nearby, …) show the same data as the desktop ones.
        let page = path.strip_prefix("/m").filter(|p| p.starts_with('/')).unwrap_or(path);
        for source in self.0.iter() {
            source.fill(page, &params, lang, &mut data).await;
        }
        Value::Object(data)
    }
}
