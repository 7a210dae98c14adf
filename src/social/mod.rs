//! The social layer (`/api/cim/v1`): friends (requests by email, accept, decline, remove, block),
//! aliases and tags, direct messages between friends, and the live event stream that tells a
//! person's open tabs about all of it and about their new notifications (the log and the
//! wake-ups are the foundation module src/events). See docs/social.md.

pub mod blocks;
pub mod friends;
pub mod messages;
pub mod model;
pub mod requests;
pub mod routes;
pub mod shared;
pub mod stream;
pub mod tags;

use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::config::SocialConfig;
use crate::events::hub::Hub;
use crate::iam::auth::Auth;
use crate::jobs::{Runs, repeated};
use crate::notifications::{StatsSource, count_of, model::Stats};
use sea_orm::sea_query::Expr;

/// What the social rules use.
#[derive(Clone)]
pub struct SocialCtx {
    pub db: DatabaseConnection,
    pub settings: Arc<SocialConfig>,
    /// This instance's open event streams.
    pub hub: Arc<Hub>,
}

/// Hourly, the event log keeps only what replay needs (`social.events_keep_*`).
pub fn jobs(cx: &SocialCtx) -> Vec<Result<Job, JobSchedulerError>> {
    let (db, settings) = (cx.db.clone(), cx.settings.clone());
    vec![repeated(&cx.db, "social.prune_events", Duration::from_secs(3600), Runs::Shared, move || {
        let (db, settings) = (db.clone(), settings.clone());
        async move {
            match crate::events::prune(&db, settings.events_keep_per_user, settings.events_keep_days).await {
                Ok(n) if n > 0 => tracing::info!(events = n, "old events pruned"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "event pruning failed");
                    crate::jobs::failed();
                }
            }
        }
    })]
}

/// `pending_friend_requests_exists` of the notification stats.
pub struct PendingFriendRequests;

impl StatsSource for PendingFriendRequests {
    fn counts(&self, auth: &Auth) -> Vec<(&'static str, Expr)> {
        vec![(PENDING, count_of(requests::pending_for(&auth.user_id)))]
    }
    fn fill(&self, count: &dyn Fn(&str) -> u64, stats: &mut Stats) {
        stats.pending_friend_requests_exists = count(PENDING) > 0;
    }
}

const PENDING: &str = "friend_requests_pending";
