//! The public board's first paint: `/on-demand` is server-rendered with the open demands the
//! page would load after hydration (the same query: the first 50, distances from the map centre),
//! under `data.onDemand` (docs/ui-contract.md). Posting, taking, cancelling and expiring a demand
//! bump the public data version, so the render cache never shows a stale board.

use serde_json::{Map, Value};

use crate::lang::Lang;
use crate::orders::OrdersCtx;
use crate::orders::demands;
use crate::orders::model::BoardQuery;
use crate::ssr::data::PageData;

/// The board page's size (the UI's `fetchBoard` asks for the same).
pub const BOARD_PAGE: u64 = 50;

#[async_trait::async_trait]
impl PageData for OrdersCtx {
    async fn fill(&self, page: &str, _params: &[(String, String)], lang: Lang, data: &mut Map<String, Value>) {
        if page != "/on-demand" {
            return;
        }
        let (lat, lng) = self.map_centre;
        match demands::board(self, BoardQuery { lat: Some(lat), lng: Some(lng) }, (0, BOARD_PAGE), lang).await {
            Ok(list) => {
                if let Ok(v) = serde_json::to_value(list) {
                    data.insert("onDemand".into(), v);
                }
            }
            // The page still renders; the board loads after hydration.
            Err(e) => tracing::warn!(error = %e, "on-demand board page data"),
        }
    }
}
