//! Server rendering: every page's first HTML is rendered by React inside the process (QuickJS,
//! see pool.rs) with the data of public pages, cached per (url, language, theme, device class,
//! data version), and hydrated by the browser.

pub mod bundle;
pub mod data;
mod document;
pub mod documents;
mod phone;
pub mod pool;

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use lru::LruCache;
use serde::Serialize;
use serde_json::{Value, json};

use crate::config::Config;
use crate::lang::Lang;
use crate::encoded::Encoded;
use crate::error::{AppError, Msg};
use crate::public::PublicData;
use crate::settings::LiveSettings;
use data::PageSources;
use bundle::{Assets, ClientFiles, Manifest};
use pool::{PoolOptions, RenderError, RenderPool};

pub struct Ssr {
    pool: RenderPool,
    cache: Mutex<LruCache<String, Arc<CachedPage>>>,
    manifest: Manifest,
    /// The client configuration but the download links (which the market's settings give).
    client_config: Value,
    /// The market's settings: the download links, and part of every cache key.
    market_settings: LiveSettings,
    product_name: String,
    /// Bumped whenever data shown on public pages changes; part of every cache key.
    public: PublicData,
    /// The domains' first-paint data of public pages.
    sources: PageSources,
}

struct CachedPage {
    status: StatusCode,
    /// The whole document, shared by every answer that sends it (no copy per request), and its
    /// compressed forms, each made once when a browser first asks for it.
    html: Encoded,
    /// Kept in the render cache (a client-rendered fallback is made per request: the compression
    /// middleware compresses it as any other answer).
    cached: bool,
}

/// How the page's markup was produced, in the `X-Render` response header.
#[derive(Clone, Copy)]
enum RenderKind {
    Server,
    Cache,
    /// The pool was saturated or the render failed: an empty root the client renders itself.
    Client,
}

impl Ssr {
    pub fn new(config: &Config, public: PublicData, market_settings: LiveSettings, sources: PageSources) -> Ssr {
        let opts = PoolOptions {
            threads: config.ssr_threads(),
            queue: config.ssr.queue,
            deadline: Duration::from_millis(config.ssr.deadline_ms),
            memory_limit_bytes: config.ssr.memory_limit_mb * 1024 * 1024,
        };
        let cap = NonZeroUsize::new(config.ssr.cache_entries.max(1)).expect("max(1)");
        Ssr {
            pool: RenderPool::start(bundle::SERVER_JS, opts),
            cache: Mutex::new(LruCache::new(cap)),
            manifest: bundle::manifest(),
            client_config: client_config(config),
            market_settings,
            product_name: config.product_name.clone(),
            public,
            sources,
        }
    }

    fn client_config_now(&self) -> Value {
        let mut c = self.client_config.clone();
        let d = self.market_settings.current().download_links.clone();
        c["downloadLinks"] = json!({ "windows": d.windows, "mac": d.mac, "android": d.android, "ios": "" });
        c
    }

    /// Waits (a bounded time) until the runtimes have loaded and no render is in flight, so
    /// warming never takes a place in the queue a visitor needs. False when the pool stayed busy.
    async fn idle(&self) -> bool {
        for _ in 0..250 {
            if self.pool.idle() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }
}

/// The part of the configuration the browser needs (the download links are added per render,
/// from the market's settings: [`Ssr::client_config_now`]).
fn client_config(config: &Config) -> Value {
    json!({
        "map": {
            "tileUrl": config.map.tile_url,
            "attribution": config.map.tile_attribution,
            "center": {"lat": config.map.default_lat, "lng": config.map.default_lng},
            "zoom": config.map.default_zoom,
        },
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PageState<'a> {
    lang: Lang,
    theme: &'static str,
    product_name: &'a str,
    is_mobile: bool,
    url: &'a str,
    config: &'a Value,
    data: Value,
}

/// Whether the request comes from a phone (its user agent; phone.rs).
pub fn is_phone(headers: &HeaderMap) -> bool {
    headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).is_some_and(phone::is_phone_agent)
}

/// Where the server sends a page request before rendering, if anywhere.
pub fn redirect_for(path: &str, query: Option<&str>, phone: bool) -> Option<String> {
    let with_query = |to: &str| match query {
        Some(q) if !q.is_empty() => format!("{to}?{q}"),
        _ => to.to_string(),
    };
    let path = if path.len() > 1 { path.trim_end_matches('/') } else { path };
    match path {
        "/" => return Some(with_query("/market")),
        "/auth" => return Some(with_query("/auth/signin")),
        "/m" => return Some(with_query("/m/market")),
        _ => {}
    }
    if phone && !path.starts_with("/m/") && !phone::is_exempt(path) {
        // The phone page showing the same thing keeps the query (`/market/details?id=` →
        // `/m/market/details?id=`); other pages land on the mobile market in the same language.
        if let Some(mobile) = phone::twin(path) {
            return Some(with_query(mobile));
        }
        let language = query
            .into_iter()
            .flat_map(|q| url::form_urlencoded::parse(q.as_bytes()))
            .find(|(k, v)| k == "language" && Lang::parse(v).is_some())
            .map(|(_, v)| format!("?language={v}"));
        return Some(format!("/m/market{}", language.unwrap_or_default()));
    }
    None
}

/// The page language: `?language=`, then the `zm_lang` cookie the client keeps in step with
/// its stored setting, then `Accept-Language`.
pub fn page_lang(query: Option<&str>, headers: &HeaderMap) -> Lang {
    if let Some(q) = query {
        for (k, v) in url::form_urlencoded::parse(q.as_bytes()) {
            if k == "language"
                && let Some(l) = Lang::parse(&v) {
                    return l;
                }
        }
    }
    let cookie_lang = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().strip_prefix("zm_lang="))
        .find_map(Lang::parse);
    cookie_lang.unwrap_or_else(|| Lang::from_headers(headers))
}

/// The fallback handler: every path that is not an API call, a bundle file or an asset is a page.
/// Takes the request whole: extracting its URI and headers would copy them.
pub async fn page(State(ssr): State<Arc<Ssr>>, req: Request) -> Response {
    let (method, uri, headers) = (req.method(), req.uri(), req.headers());
    if method != Method::GET && method != Method::HEAD {
        return AppError::Refused(Msg::MethodNotAllowed).into_response();
    }
    let path = uri.path();
    let query = uri.query();
    let phone = is_phone(headers);
    if let Some(to) = redirect_for(path, query, phone) {
        return found(&to);
    }
    let lang = page_lang(query, headers);
    let url = match query {
        Some(q) => format!("{path}?{q}"),
        None => path.to_string(),
    };
    // Read from the database: a write on another instance shows on the next page here.
    let version = ssr.public.current().await;
    let (page, kind, render_ms) = ssr.page_for(PageKey { url: &url, lang, phone }, version, false).await;
    html_response(&page, kind, render_ms, headers)
}

/// What a rendered page depends on besides the public data version.
#[derive(Clone, Copy)]
struct PageKey<'a> {
    /// Path and query.
    url: &'a str,
    lang: Lang,
    phone: bool,
}

impl PageKey<'_> {
    fn path(&self) -> &str {
        self.url.split_once('?').map_or(self.url, |(p, _)| p)
    }
    fn query(&self) -> Option<&str> {
        self.url.split_once('?').map(|(_, q)| q)
    }
    fn theme(&self) -> &'static str {
        if self.path() == "/nearby/map" { "light" } else { "dark" }
    }
    /// `settings`: the market settings' generation (the download links are in every page).
    /// Built by appending, not `format!` (its machinery cost 2,500 instructions of `/market`'s
    /// 44,000 from the render cache).
    fn cache_key(&self, version: u64, settings: u64) -> String {
        let mut numbers = itoa::Buffer::new();
        let mut key = String::with_capacity(48 + self.url.len());
        for part in [self.lang.code(), "|", self.theme(), if self.phone { "|1|" } else { "|0|" }, numbers.format(version), "."] {
            key.push_str(part);
        }
        key.push_str(numbers.format(settings));
        key.push('|');
        key.push_str(self.url);
        key
    }
}

/// The public pages rendered ahead of their first visitor: at start-up and after every change of
/// public data (desktop and phone, both languages).
const WARM: [(&str, bool); 3] = [("/market", false), ("/nearby", false), ("/m/market", true)];

impl Ssr {
    /// The page from the cache, or rendered now (and cached when the render succeeded).
    /// `ahead`: a render ahead of visitors (warming), made only while the pool is idle.
    async fn page_for(&self, key: PageKey<'_>, version: u64, ahead: bool) -> (Arc<CachedPage>, RenderKind, Option<f64>) {
        let cache_key = key.cache_key(version, self.market_settings.generation());
        if let Some(page) = self.cache.lock().ok().and_then(|mut c| c.get(&cache_key).cloned()) {
            return (page, RenderKind::Cache, None);
        }
        let (lang, theme) = (key.lang, key.theme());
        let data = self.sources.for_page(key.path(), key.query(), lang).await;
        let state = PageState { lang, theme, product_name: &self.product_name, is_mobile: key.phone, url: key.url, config: &self.client_config_now(), data };
        let state_json = serde_json::to_string(&state).unwrap_or_else(|_| "{}".into());
        if ahead && !self.idle().await {
            return (Arc::new(CachedPage { status: StatusCode::OK, html: Encoded::default(), cached: false }), RenderKind::Client, None);
        }
        let started = std::time::Instant::now();
        let rendered = if ahead {
            self.pool.render_ahead(key.url.to_string(), state_json.clone()).await
        } else {
            self.pool.render(key.url.to_string(), state_json.clone()).await
        };
        match rendered {
            Ok(r) => {
                let render_ms = started.elapsed().as_secs_f64() * 1000.0;
                let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::OK);
                let html = document::page(&self.manifest, lang, theme, &r.title, &document::description(lang, &self.product_name), Some(&r.html), &state_json);
                let page = Arc::new(CachedPage { status, html: Encoded::new(html), cached: true });
                if let Ok(mut c) = self.cache.lock() {
                    c.put(cache_key, page.clone());
                }
                (page, RenderKind::Server, Some(render_ms))
            }
            Err(e) => {
                if !matches!(e, RenderError::Saturated) {
                    tracing::warn!(url = %key.url, error = %e, "server render failed, client will render");
                }
                let html = document::page(&self.manifest, lang, theme, &self.product_name, &document::description(lang, &self.product_name), None, &state_json);
                (Arc::new(CachedPage { status: StatusCode::OK, html: Encoded::new(html), cached: false }), RenderKind::Client, None)
            }
        }
    }

    /// True when `url` is in the cache for the current public data version (for tests and
    /// operators: what the next visitor would get without a render).
    pub fn is_cached(&self, url: &str, lang: Lang, phone: bool) -> bool {
        let key = PageKey { url, lang, phone }.cache_key(self.public.version(), self.market_settings.generation());
        self.cache.lock().is_ok_and(|c| c.contains(&key))
    }

    /// Renders the [`WARM`] pages for the current version, unless cached already.
    pub async fn warm(&self) {
        // As a visitor's request would (this also takes in the shared version at start-up).
        let version = self.public.current().await;
        for (url, phone) in WARM {
            for lang in [Lang::En, Lang::Zh] {
                self.page_for(PageKey { url, lang, phone }, version, true).await;
            }
        }
    }
}

/// Keeps the [`WARM`] pages rendered: now, and after each change of public data (made here or,
/// seen through the database, on another instance; a burst of changes costs one round).
pub fn keep_warm(ssr: Arc<Ssr>) -> tokio::task::JoinHandle<()> {
    let mut changes = ssr.public.subscribe();
    tokio::spawn(async move {
        ssr.warm().await;
        while changes.changed().await.is_ok() {
            tokio::time::sleep(Duration::from_millis(500)).await;
            changes.borrow_and_update();
            ssr.warm().await;
        }
    })
}

fn html_response(page: &CachedPage, kind: RenderKind, render_ms: Option<f64>, request: &HeaderMap) -> Response {
    // A cached page is sent in the encoding asked (compressed once); another is compressed by
    // the middleware, which names Accept-Encoding in its own Vary.
    let mut res = if page.cached {
        page.html.response(request, "Accept-Language, Cookie, User-Agent, Accept-Encoding")
    } else {
        let mut r = crate::encoded::answer(page.html.raw().clone());
        r.headers_mut().insert(header::VARY, HeaderValue::from_static("Accept-Language, Cookie, User-Agent"));
        r
    };
    *res.status_mut() = page.status;
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    // The document is small and changes with data and deployments: never cached long.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        "x-render",
        HeaderValue::from_static(match kind {
            RenderKind::Server => "server",
            RenderKind::Cache => "cache",
            RenderKind::Client => "client",
        }),
    );
    // Time spent waiting for and running the render (queue + QuickJS), for benchmarks and ops.
    if let Some(ms) = render_ms
        && let Ok(v) = HeaderValue::from_str(&format!("render;dur={ms:.2}")) {
            h.insert("server-timing", v);
        }
    res
}

/// A 302 to a path of ours.
fn found(to: &str) -> Response {
    match HeaderValue::from_str(to) {
        Ok(v) => (StatusCode::FOUND, [(header::LOCATION, v)]).into_response(),
        Err(_) => not_found(),
    }
}

/// `/static/<file>`: the hashed browser bundle, cached for a year.
pub async fn static_file(Path(file): Path<String>) -> Response {
    match ClientFiles::get(&file) {
        Some(f) => embedded(f, "public, max-age=31536000, immutable"),
        None => not_found(),
    }
}

/// `/assets/<path>`: icons, map data, guides. Not hashed: cached for a day; asked for with its
/// current version (`?v=`, `bundle::asset_version`: app icons) it never changes, cached for good.
pub async fn asset_file(Path(file): Path<String>, uri: Uri) -> Response {
    let versioned = uri
        .query()
        .into_iter()
        .flat_map(|q| url::form_urlencoded::parse(q.as_bytes()))
        .any(|(k, v)| k == "v" && bundle::asset_version(&file).is_some_and(|current| current == v));
    match Assets::get(&file) {
        Some(f) if versioned => embedded(f, "public, max-age=31536000, immutable"),
        Some(f) => embedded(f, "public, max-age=86400"),
        None => not_found(),
    }
}

/// `/manifest.webmanifest` (document::web_manifest).
pub async fn web_manifest(State(ssr): State<Arc<Ssr>>) -> Response {
    let body = document::web_manifest(&ssr.product_name);
    ([(header::CONTENT_TYPE, "application/manifest+json"), (header::CACHE_CONTROL, "public, max-age=3600")], body).into_response()
}

pub async fn favicon() -> Response {
    match Assets::get("icons/favicon.svg") {
        Some(f) => embedded(f, "public, max-age=86400"),
        None => not_found(),
    }
}

fn embedded(file: rust_embed::EmbeddedFile, cache: &'static str) -> Response {
    let mime = file.metadata.mimetype().to_string();
    let etag = format!("\"{}\"", hex::encode(&file.metadata.sha256_hash()[..16]));
    let mut res = Response::new(Body::from(file.data.into_owned()));
    let h = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&mime) {
        h.insert(header::CONTENT_TYPE, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    res
}

/// A missing file is the table's 404, never a page.
fn not_found() -> Response {
    AppError::Refused(Msg::NotFound).into_response()
}
