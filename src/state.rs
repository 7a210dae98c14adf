//! The application state: every domain's context and the shared handles, composed once at
//! start-up (src/server.rs) and given to the router (src/app.rs). Only those two and the job
//! schedule name it: a handler receives its domain's context through axum's `FromRef`, and a
//! service takes only what it uses.

use std::sync::Arc;

use axum::extract::FromRef;
use sea_orm::DatabaseConnection;

use crate::apps::AppsCtx;
use crate::billing::BillingCtx;
use crate::billing::idempotency::IdempotencyStore;
use crate::companies::CompaniesCtx;
use crate::config::Config;
use crate::devices::DevicesCtx;
use crate::iam::IamCtx;
use crate::iam::auth::Sessions;
use crate::mail::Mailer;
use crate::market::MarketCtx;
use crate::notifications::NotificationsCtx;
use crate::orders::OrdersCtx;
use crate::public::PublicData;
use crate::social::SocialCtx;
use crate::ssr::Ssr;

#[derive(Clone, FromRef)]
pub struct AppState {
    pub config: Arc<Config>,
    pub db: DatabaseConnection,
    pub mailer: Mailer,
    pub public: PublicData,
    pub ssr: Arc<Ssr>,
    pub sessions: Sessions,
    pub iam: IamCtx,
    pub companies: CompaniesCtx,
    pub devices: DevicesCtx,
    pub apps: AppsCtx,
    pub orders: OrdersCtx,
    pub market: MarketCtx,
    pub notifications: NotificationsCtx,
    pub billing: BillingCtx,
    /// Answers kept for `Idempotency-Key` retries (installed on every request by src/app.rs).
    pub idempotency: IdempotencyStore,
    pub social: SocialCtx,
}
