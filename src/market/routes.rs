//! Public market endpoints (`/api/ebs/v1`): parse, call, answer. List answers carry an ETag and
//! answer `If-None-Match` with 304.

use std::sync::Arc;

use axum::extract::{FromRef, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::ids::AppId;
use crate::market::MarketCtx;
use crate::error::{ApiResult, AppError, Envelope, ok};
use crate::http::{ApiPath, ApiQuery, List, Page};
use crate::lang::Lang;
use crate::market::model::{App, AppDetails, LangQuery, ListQuery, SearchQuery, answer_lang};
use crate::market::service::{self, Answer};

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    MarketCtx: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(download_links))
        .routes(routes!(applications))
        .routes(routes!(application))
        .routes(routes!(search))
        .routes(routes!(app_icon))
}

/// An app's icon uploaded in the operator's console (the app's `icon_url` names it with its
/// version; cached for good).
#[utoipa::path(get, path = "/api/ebs/v1/market/icons/{id}", tag = "market", params(("id" = String, Path)),
    responses((status = 200, content_type = "image/*"), (status = 404)))]
async fn app_icon(State(cx): State<MarketCtx>, ApiPath(id): ApiPath<AppId>) -> Result<Response, AppError> {
    let (bytes, mime) = crate::market::icons::load(&cx.db, &id).await?.ok_or(AppError::Refused(crate::error::Msg::NotFound))?;
    let mut res = axum::body::Body::from(bytes).into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_str(&mime).map_err(|e| AppError::Internal(e.into()))?);
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    Ok(res)
}

/// Download links of the desktop and mobile clients (iOS has none).
#[derive(Debug, Serialize, ToSchema)]
pub struct DownloadLinks {
    pub windows: String,
    pub mac: String,
    pub android: String,
    pub ios: String,
}

/// The client download links (the operator's settings).
#[utoipa::path(get, path = "/api/ebs/v1/download/links", tag = "market",
    responses((status = 200, body = Envelope<DownloadLinks>)))]
async fn download_links(State(cx): State<MarketCtx>) -> ApiResult<DownloadLinks> {
    let s = cx.market_settings.current();
    let d = &s.download_links;
    ok(DownloadLinks { windows: d.windows.clone(), mac: d.mac.clone(), android: d.android.clone(), ios: String::new() })
}

/// The market's apps in listing order (24 a page by default); `category=top_picks` gives the
/// chosen apps. Texts are in `?language=` or else the `Accept-Language` language. Cacheable:
/// an ETag, and 304 for a matching `If-None-Match`.
#[utoipa::path(get, path = "/api/ebs/v1/market/applications", tag = "market", params(ListQuery, Page, LangQuery),
    responses((status = 200, body = Envelope<List<App>>), (status = 304, description = "not modified"),
        (status = 400, description = "invalid category or pagination")))]
async fn applications(
    State(cx): State<MarketCtx>,
    lang: Lang,
    ApiQuery(q): ApiQuery<ListQuery>,
    ApiQuery(page): ApiQuery<Page>,
    ApiQuery(l): ApiQuery<LangQuery>,
    req: Request,
) -> Result<Response, AppError> {
    let lang = answer_lang(l.language.as_deref(), lang)?;
    Ok(respond(req.headers(), service::list(&cx.catalogue, &q, page, lang)?))
}

/// One app (404 "App not found" for an unknown id).
#[utoipa::path(get, path = "/api/ebs/v1/market/applications/{id}", tag = "market",
    params(("id" = String, Path, description = "the app id (its catalogue slug)"), LangQuery),
    responses((status = 200, body = Envelope<AppDetails>), (status = 304, description = "not modified"),
        (status = 404, description = "no such app")))]
async fn application(
    State(cx): State<MarketCtx>,
    lang: Lang,
    ApiPath(id): ApiPath<AppId>,
    ApiQuery(q): ApiQuery<LangQuery>,
    req: Request,
) -> Result<Response, AppError> {
    let lang = answer_lang(q.language.as_deref(), lang)?;
    Ok(respond(req.headers(), service::details(&cx.catalogue, &id, lang)?))
}

/// Search by keyword (English and Chinese names and summaries, publisher; case-insensitive; all
/// words must match), category, display type and tier, paged. Best matches first.
#[utoipa::path(get, path = "/api/ebs/v1/market/search", tag = "market", params(SearchQuery, Page, LangQuery),
    responses((status = 200, body = Envelope<List<App>>), (status = 304, description = "not modified"),
        (status = 400, description = "invalid filter value, keyword too long or bad pagination")))]
async fn search(
    State(cx): State<MarketCtx>,
    lang: Lang,
    ApiQuery(q): ApiQuery<SearchQuery>,
    ApiQuery(page): ApiQuery<Page>,
    ApiQuery(l): ApiQuery<LangQuery>,
    req: Request,
) -> Result<Response, AppError> {
    let lang = answer_lang(l.language.as_deref(), lang)?;
    Ok(respond(req.headers(), service::search(&cx.catalogue, &q, page, lang)?))
}

/// What a market answer depends on besides its URL (the 304 names it too).
const VARY: &str = "Accept-Language, Accept-Encoding";

/// The answer, or 304 when the client holds it already.
fn respond(headers: &HeaderMap, answer: Arc<Answer>) -> Response {
    let mut res = if crate::http::not_modified(headers, &answer.etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = answer.body.response(headers, VARY);
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r
    };
    let h = res.headers_mut();
    h.insert(header::ETAG, answer.etag.clone());
    // Public data: any cache may keep it but must revalidate (cheap: a 304).
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, no-cache"));
    if !h.contains_key(header::VARY) {
        h.insert(header::VARY, HeaderValue::from_static(VARY));
    }
    res
}
