//! The written documents shown as pages: the Terms of Use, the Privacy Policy and the user guide
//! (`/terms-of-use`, `/privacy-policy`, `/guide`). Each is an HTML fragment per language, shipped
//! in `assets/documents/` (embedded); the operator replaces one by putting
//! `<data_dir>/documents/<name>.<lang>.html` (or `<name>.html` for every language) in place.
//! `{product}` in a text becomes the product name. The page gets it as `data.document`.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::lang::Lang;
use crate::ssr::bundle::Assets;
use crate::ssr::data::PageData;

/// Page path → document name.
pub const DOCUMENTS: [(&str, &str); 3] = [("/terms-of-use", "terms-of-use"), ("/privacy-policy", "privacy-policy"), ("/guide", "guide")];

/// Longest operator file read (a document, not a dump).
const MAX_BYTES: u64 = 1024 * 1024;

pub struct Documents {
    pub dir: PathBuf,
    pub product_name: String,
}

impl Documents {
    pub fn new(data_dir: &std::path::Path, product_name: &str) -> Self {
        Documents { dir: data_dir.join("documents"), product_name: product_name.to_string() }
    }

    /// The document's HTML in `lang` and whether the operator provided it.
    pub async fn text(&self, name: &str, lang: Lang) -> Option<(String, bool)> {
        for file in [format!("{name}.{}.html", lang.code()), format!("{name}.html")] {
            if let Some(text) = read_small(&self.dir.join(&file)).await {
                return Some((self.fill(&text), true));
            }
        }
        let embedded = Assets::get(&format!("documents/{name}.{}.html", lang.code()))?;
        Some((self.fill(&String::from_utf8_lossy(&embedded.data)), false))
    }

    fn fill(&self, text: &str) -> String {
        text.replace("{product}", &self.product_name)
    }
}

async fn read_small(path: &std::path::Path) -> Option<String> {
    let meta = tokio::fs::metadata(path).await.ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return None;
    }
    match tokio::fs::read_to_string(path).await {
        Ok(text) => Some(text),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "operator document unreadable, the default is shown");
            None
        }
    }
}

#[async_trait::async_trait]
impl PageData for Documents {
    async fn fill(&self, page: &str, _params: &[(String, String)], lang: Lang, data: &mut Map<String, Value>) {
        let Some((_, name)) = DOCUMENTS.iter().find(|(path, _)| *path == page) else { return };
        if let Some((html, custom)) = self.text(name, lang).await {
            data.insert("document".into(), json!({ "name": name, "html": html, "custom": custom }));
        }
    }
}
