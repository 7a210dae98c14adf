//! The data a public page needs for its first paint, put into the page state under
//! `data.<page>` (see docs/ui-contract.md). Signed-in pages get none: they load after hydration.

use serde_json::{Map, Value};

use crate::app::AppState;
use crate::http::Lang;

pub async fn for_page(app: &AppState, path: &str, query: Option<&str>, lang: Lang) -> Value {
    let mut data = Map::new();
    let _ = lang;
    // /nearby and /nearby/details (and their /m/ variants): `nearby`, `nearbyDetails`.
    if let Some((key, value)) = crate::devices::service::page_data(app, path, query).await {
        data.insert(key.to_string(), value);
    }
    Value::Object(data)
}
