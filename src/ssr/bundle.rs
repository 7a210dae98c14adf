//! The UI bundles built by build.rs (or its placeholder) and the static assets, embedded.

use rust_embed::RustEmbed;
use serde::Deserialize;

/// The browser bundle: hashed file names, served at `/static/<file>`.
#[derive(RustEmbed)]
#[folder = "$OUT_DIR/ui/client"]
pub struct ClientFiles;

/// `assets/`: icons, the seed catalogue, map data, guides. Served at `/assets/<path>`.
#[derive(RustEmbed)]
#[folder = "assets/"]
#[exclude = "*.mjs"]
pub struct Assets;

/// The version of an embedded asset (the start of its content hash), for URLs that may be cached
/// for good: `/assets/<path>?v=<version>` (issue 26: app icons). None for a missing asset.
pub fn asset_version(path: &str) -> Option<String> {
    Assets::get(path).map(|f| hex::encode(&f.metadata.sha256_hash()[..6]))
}

/// The server bundle evaluated by each render runtime.
pub const SERVER_JS: &str = include_str!(concat!(env!("OUT_DIR"), "/ui/server.js"));

const MANIFEST_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/ui/manifest.json"));

#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    /// Entry script file name inside the client bundle.
    pub js: String,
    /// Entry stylesheet file name inside the client bundle (may be empty).
    #[serde(default)]
    pub css: String,
    /// The chunks the entry imports statically (transitively): named in the document so the
    /// browser fetches them at once, not one import level at a time (no waterfall).
    #[serde(default)]
    pub preload: Vec<String>,
    /// The document's only script (ui/src/boot.ts): it loads `js` and `preload` once the server's
    /// markup is painted. Empty in the SKIP_UI_BUILD placeholder (the document then names `js`).
    #[serde(default)]
    pub boot: String,
    /// The chunk of a language's messages, by language code (English is in the entry): preloaded
    /// by a page in that language, which hydrates only once they are there.
    #[serde(default)]
    pub messages: std::collections::BTreeMap<String, String>,
}

pub fn manifest() -> Manifest {
    serde_json::from_str(MANIFEST_JSON).expect("build.rs writes a valid manifest.json")
}
