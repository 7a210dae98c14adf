use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;
use crate::error::{ApiResult, Envelope, ok};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(download_links))
}

/// Download links of the desktop and mobile clients (iOS has none).
#[derive(Debug, Serialize, ToSchema)]
pub struct DownloadLinks {
    pub windows: String,
    pub mac: String,
    pub android: String,
    pub ios: String,
}

/// The client download links, from configuration.
#[utoipa::path(get, path = "/api/ebs/v1/download/links", tag = "market",
    responses((status = 200, body = Envelope<DownloadLinks>)))]
async fn download_links(State(state): State<AppState>) -> ApiResult<DownloadLinks> {
    let d = &state.config.downloads;
    ok(DownloadLinks { windows: d.windows.clone(), mac: d.mac.clone(), android: d.android.clone(), ios: String::new() })
}
