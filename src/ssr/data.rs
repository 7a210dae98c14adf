//! The data a public page needs for its first paint, put into the page state under
//! `data.<page>` (see docs/ui-contract.md). Signed-in pages get none: they load after hydration.

use serde_json::{Map, Value};

use crate::app::AppState;
use crate::http::Lang;

pub async fn for_page(app: &AppState, path: &str, query: Option<&str>, lang: Lang) -> Value {
    let data = Map::new();
    let _ = (app, path, query, lang);
    Value::Object(data)
}
