//! The public market: catalogue (seeded from assets/, served from an in-memory index), search,
//! download links (and nearby, with the devices).

pub mod apps;
pub mod fit;
pub mod icons;
pub mod index;
pub mod model;
pub mod offers;
pub mod routes;
pub mod seed;
pub mod service;
pub mod ssr;

use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use serde_json::{Map, Value};
use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::jobs::{Runs, repeated};
use crate::lang::Lang;
use crate::public::PublicData;
use crate::ssr::data::PageData;

/// How often the index is compared with the database (other instances' or hand-made changes).
pub const RELOAD_EVERY: Duration = Duration::from_secs(30);

/// What the market's rules use.
#[derive(Clone)]
pub struct MarketCtx {
    pub db: DatabaseConnection,
    pub catalogue: Arc<index::Catalogue>,
    /// The market's settings (the client download links).
    pub market_settings: crate::settings::LiveSettings,
    pub public: PublicData,
}

/// Reloads the index whenever public data changes (here or, seen through the database, on
/// another instance), so every instance serves the same catalogue. Runs until the process ends.
pub fn follow_public(cx: &MarketCtx) {
    let cx = cx.clone();
    let mut changes = cx.public.subscribe();
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            // A burst of changes (heartbeats) costs one reload.
            tokio::time::sleep(Duration::from_millis(250)).await;
            changes.borrow_and_update();
            match cx.catalogue.reload(&cx.db).await {
                // Pages rendered between the change and this reload showed the old index (the
                // old offers): they are rendered again. The next reload finds nothing new.
                Ok(true) => cx.public.changed_here(),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "market reload failed");
                    crate::jobs::failed();
                }
            }
        }
    });
}

/// The market's background jobs.
pub fn jobs(cx: &MarketCtx) -> Vec<Result<Job, JobSchedulerError>> {
    // Each instance keeps its own index and render cache.
    let cx2 = cx.clone();
    vec![repeated(&cx.db, "market.reload", RELOAD_EVERY, Runs::PerInstance, move || {
        let cx = cx2.clone();
        async move {
            match service::refresh(&cx).await {
                Ok(true) => tracing::info!("market catalogue changed in the database: index reloaded"),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "market reload failed");
                    crate::jobs::failed();
                }
            }
        }
    })]
}

/// First-paint data of the market pages.
#[async_trait::async_trait]
impl PageData for MarketCtx {
    async fn fill(&self, page: &str, params: &[(String, String)], lang: Lang, data: &mut Map<String, Value>) {
        ssr::fill(&self.catalogue, page, params, lang, data);
    }
}
