//! Install manifests: how each catalogue app runs as a container (assets/catalogue/manifests.json,
//! embedded), plus an operator's file of replacements (`[apps] manifests`, e.g. images in a
//! private registry). Loaded and validated at start-up: every catalogue app must have one. The
//! operator's file is read again when it changes (a new image for an app, which with a newer
//! catalogue version makes "Update available" appear); a changed file that does not load is
//! refused with a warning and the manifests in use stay. An app published or edited in the
//! operator's console carries its own manifest in the database (`apps.manifest`), which wins
//! ([`Manifests::of`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};
use serde::Deserialize;

use crate::apps::model::Manifest;
use crate::ids::AppId;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    version: i32,
    manifests: HashMap<String, Manifest>,
}

/// Every installable app's manifest, by app id (the catalogue slug).
#[derive(Debug, Default)]
pub struct Manifests {
    all: RwLock<HashMap<String, Manifest>>,
    /// What to load again when the operator's file changes.
    source: Option<Source>,
}

#[derive(Debug)]
struct Source {
    embedded: String,
    path: PathBuf,
    catalogue: String,
    /// The file's modification time last loaded, and when it was last looked at.
    seen: Mutex<(Option<SystemTime>, Instant)>,
}

/// How often the operator's file is looked at (one `stat`).
const LOOK_EVERY: Duration = Duration::from_secs(1);

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl Manifests {
    /// The manifest an app installs with: the one published from the operator's console
    /// (`apps.manifest`, docs/apps.md "Published apps") when it has one, else the built-in or
    /// `[apps] manifests` one.
    pub fn of(&self, app: &crate::db::entity::apps::Model) -> Option<Manifest> {
        match app.manifest.as_deref() {
            Some(json) => serde_json::from_str(json)
                .map_err(|e| tracing::warn!(app = %app.id, error = %e, "the published install manifest does not load"))
                .ok(),
            None => self.get(&app.id),
        }
    }

    pub fn get(&self, app_id: &AppId) -> Option<Manifest> {
        self.refresh();
        self.all.read().unwrap().get(app_id.as_str()).cloned()
    }
    pub fn len(&self) -> usize {
        self.all.read().unwrap().len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn refresh(&self) {
        let Some(src) = &self.source else { return };
        let changed = {
            let mut seen = src.seen.lock().unwrap();
            if seen.1.elapsed() < LOOK_EVERY {
                return;
            }
            seen.1 = Instant::now();
            let now = modified(&src.path);
            (now != seen.0).then(|| {
                seen.0 = now;
            })
        };
        if changed.is_none() {
            return;
        }
        match read(&src.embedded, Some(&src.path), &src.catalogue) {
            Ok(all) => {
                tracing::info!(path = %src.path.display(), "install manifests changed: loaded again");
                *self.all.write().unwrap() = all;
            }
            Err(e) => tracing::warn!(path = %src.path.display(), error = %e, "install manifests changed but do not load: the ones in use stay"),
        }
    }
}

/// The manifests embedded in the binary.
pub fn embedded() -> anyhow::Result<String> {
    let file = crate::ssr::bundle::Assets::get("catalogue/manifests.json").context("assets/catalogue/manifests.json is embedded")?;
    String::from_utf8(file.data.into_owned()).context("manifests.json is UTF-8")
}

/// Parses the embedded manifests and the operator's replacements, and checks them against the
/// catalogue (`catalogue_json`: assets/catalogue/apps.json): one manifest per app, no manifest
/// for an app the catalogue does not have, each one valid.
pub fn load(embedded_json: &str, overrides: Option<&Path>, catalogue_json: &str) -> anyhow::Result<Manifests> {
    let seen = overrides.and_then(modified);
    let all = read(embedded_json, overrides, catalogue_json)?;
    let source = overrides.map(|p| Source {
        embedded: embedded_json.to_string(),
        path: p.to_path_buf(),
        catalogue: catalogue_json.to_string(),
        seen: Mutex::new((seen, Instant::now())),
    });
    Ok(Manifests { all: RwLock::new(all), source })
}

fn read(embedded_json: &str, overrides: Option<&Path>, catalogue_json: &str) -> anyhow::Result<HashMap<String, Manifest>> {
    let gpu_need = catalogue_gpu_needs(catalogue_json)?;
    let file: ManifestFile = serde_json::from_str(embedded_json).context("parsing assets/catalogue/manifests.json")?;
    if file.version != 1 {
        bail!("manifests.json: unknown format version {}", file.version);
    }
    let mut all = file.manifests;
    if let Some(path) = overrides {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading apps.manifests {}", path.display()))?;
        let extra: ManifestFile = serde_json::from_str(&text).with_context(|| format!("parsing apps.manifests {}", path.display()))?;
        all.extend(extra.manifests);
    }
    for (slug, needs_gpu) in &gpu_need {
        let m = all.get(slug).with_context(|| format!("the catalogue app {slug} has no install manifest"))?;
        validate(m, *needs_gpu).map_err(|e| anyhow::anyhow!("install manifest of {slug}: {e}"))?;
    }
    if let Some(unknown) = all.keys().find(|k| !gpu_need.contains_key(*k)) {
        bail!("install manifest for {unknown}, which is not in the catalogue");
    }
    Ok(all)
}

fn catalogue_gpu_needs(catalogue_json: &str) -> anyhow::Result<HashMap<String, bool>> {
    let v: serde_json::Value = serde_json::from_str(catalogue_json).context("parsing the catalogue")?;
    let apps = v["apps"].as_array().context("the catalogue lists apps")?;
    Ok(apps
        .iter()
        .filter_map(|a| Some((a["slug"].as_str()?.to_string(), a["requirements"]["gpu_count"].as_i64().unwrap_or(0) > 0)))
        .collect())
}

/// An image reference: `[registry/]path[:tag]` with a tag or a digest, no spaces, lower case path.
pub fn valid_image(image: &str) -> bool {
    let (name, tag) = match image.split_once('@') {
        Some((n, d)) => (n, d.strip_prefix("sha256:").filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))),
        None => match image.rsplit_once(':') {
            Some((n, t)) if !t.contains('/') => (n, Some(t).filter(|t| !t.is_empty() && t.len() <= 128)),
            _ => (image, None),
        },
    };
    let name_ok = !name.is_empty()
        && name.split('/').all(|part| {
            !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-:".contains(&b))
        });
    name_ok && tag.is_some() && !image.chars().any(char::is_whitespace)
}

pub fn validate(m: &Manifest, needs_gpu: bool) -> Result<(), String> {
    if !valid_image(&m.image) {
        return Err(format!("image {:?} is not a reference with a tag", m.image));
    }
    let mut seen = HashSet::new();
    for p in &m.ports {
        if p.container == 0 {
            return Err("port 0".into());
        }
        if p.protocol != "tcp" && p.protocol != "udp" {
            return Err(format!("protocol {:?} (tcp or udp)", p.protocol));
        }
        if !seen.insert((p.container, p.protocol.clone())) {
            return Err(format!("port {}/{} twice", p.container, p.protocol));
        }
        if p.web && p.protocol != "tcp" {
            return Err("the web port must be tcp".into());
        }
        if let Some(s) = &p.scheme
            && s != "http"
            && s != "https"
        {
            return Err(format!("scheme {s:?} (http or https)"));
        }
    }
    if m.ports.iter().filter(|p| p.web).count() > 1 {
        return Err("more than one web port".into());
    }
    for k in m.env.keys() {
        let mut b = k.bytes();
        let first = b.next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_');
        if !first || !b.all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            return Err(format!("environment name {k:?}"));
        }
    }
    let mut names = HashSet::new();
    for v in &m.volumes {
        let name_ok = !v.name.is_empty() && v.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !name_ok || !names.insert(v.name.clone()) {
            return Err(format!("volume name {:?}", v.name));
        }
        if !v.path.starts_with('/') || v.path.split('/').any(|s| s == "..") {
            return Err(format!("volume path {:?} (absolute, no ..)", v.path));
        }
    }
    if m.gpu != needs_gpu {
        return Err(format!("gpu is {} but the app's requirements {} a GPU", m.gpu, if needs_gpu { "need" } else { "do not need" }));
    }
    if let Some(h) = &m.health {
        if !h.path.starts_with('/') {
            return Err("the health path must start with /".into());
        }
        if !m.ports.iter().any(|p| p.web) {
            return Err("a health check needs a web port".into());
        }
    }
    if m.command.as_ref().is_some_and(|c| c.is_empty()) {
        return Err("an empty command".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalogue() -> String {
        crate::market::seed::embedded_catalogue().unwrap()
    }

    #[test]
    fn every_catalogue_app_has_a_valid_manifest() {
        let m = load(&embedded().unwrap(), None, &catalogue()).unwrap();
        assert_eq!(m.len(), 50);
        assert_eq!(m.get(&"grafana".into()).unwrap().image, "grafana/grafana:11.5.0");
    }

    #[test]
    fn a_missing_or_invalid_manifest_stops_start_up() {
        let mut v: serde_json::Value = serde_json::from_str(&embedded().unwrap()).unwrap();
        v["manifests"].as_object_mut().unwrap().remove("ollama");
        let e = load(&v.to_string(), None, &catalogue()).unwrap_err().to_string();
        assert!(e.contains("ollama has no install manifest"), "{e}");
        let mut v: serde_json::Value = serde_json::from_str(&embedded().unwrap()).unwrap();
        v["manifests"]["grafana"]["image"] = "Grafana Latest".into();
        assert!(load(&v.to_string(), None, &catalogue()).unwrap_err().to_string().contains("grafana"));
        let mut v: serde_json::Value = serde_json::from_str(&embedded().unwrap()).unwrap();
        v["manifests"]["grafana"]["gpu"] = true.into();
        assert!(load(&v.to_string(), None, &catalogue()).unwrap_err().to_string().contains("gpu"));
    }

    #[test]
    fn an_operator_file_replaces_a_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        std::fs::write(&path, r#"{"version":1,"manifests":{"grafana":{"image":"zmarket-test/httpd:1","ports":[{"container":80,"web":true}]}}}"#).unwrap();
        let m = load(&embedded().unwrap(), Some(&path), &catalogue()).unwrap();
        assert_eq!(m.get(&"grafana".into()).unwrap().image, "zmarket-test/httpd:1");
        std::fs::write(&path, r#"{"version":1,"manifests":{"nope":{"image":"a:1"}}}"#).unwrap();
        assert!(load(&embedded().unwrap(), Some(&path), &catalogue()).is_err());
    }

    #[test]
    fn image_references() {
        for ok in ["grafana/grafana:11.5.0", "ghcr.io/open-webui/open-webui:v0.5.10", "localhost:5000/a/b:1", "nextcloud:30.0.5"] {
            assert!(valid_image(ok), "{ok}");
        }
        for bad in ["", "grafana/grafana", "Grafana:1", "a b:1", "a:"] {
            assert!(!valid_image(bad), "{bad}");
        }
    }
}
