//! The application state: every domain's context and the shared handles, composed once at
//! start-up (src/server.rs) and given to the router (src/app.rs). Only those two and the job
//! schedule name it: a handler receives its domain's context through axum's `FromRef`, and a
//! service takes only what it uses.
//!
//! axum clones the state for every request (twice: the route, then the handler); the parts sit
//! behind one `Arc` so that clone is one atomic increment, not one per domain handle (it was the
//! largest single cost of a trivial request, issue 18).

use crate::settings::LiveSettings;
use std::sync::Arc;

use axum::extract::FromRef;
use sea_orm::DatabaseConnection;

use crate::apps::AppsCtx;
use crate::billing::BillingCtx;
use crate::billing::idempotency::IdempotencyStore;
use crate::companies::CompaniesCtx;
use crate::config::Config;
use crate::connect::ConnectCtx;
use crate::devices::DevicesCtx;
use crate::iam::IamCtx;
use crate::iam::auth::Sessions;
use crate::mail::Mailer;
use crate::market::MarketCtx;
use crate::notifications::NotificationsCtx;
use crate::ops::OpsCtx;
use crate::orders::OrdersCtx;
use crate::public::PublicData;
use crate::social::SocialCtx;
use crate::ssr::Ssr;

/// The state handed to the router: [`StateParts`] behind one `Arc`.
#[derive(Clone)]
pub struct AppState(Arc<StateParts>);

impl AppState {
    pub fn new(parts: StateParts) -> Self {
        AppState(Arc::new(parts))
    }
}

impl std::ops::Deref for AppState {
    type Target = StateParts;
    fn deref(&self) -> &StateParts {
        &self.0
    }
}

/// `FromRef<AppState>` for each part, as `#[derive(FromRef)]` gives for a plain struct.
macro_rules! parts {
    ($($field:ident: $ty:ty),* $(,)?) => {
        $(impl FromRef<AppState> for $ty {
            fn from_ref(state: &AppState) -> $ty {
                state.0.$field.clone()
            }
        })*
    };
}

parts! {
    config: Arc<Config>,
    db: DatabaseConnection,
    mailer: Mailer,
    public: PublicData,
    ssr: Arc<Ssr>,
    sessions: Sessions,
    iam: IamCtx,
    companies: CompaniesCtx,
    devices: DevicesCtx,
    apps: AppsCtx,
    orders: OrdersCtx,
    market: MarketCtx,
    notifications: NotificationsCtx,
    billing: BillingCtx,
    idempotency: IdempotencyStore,
    social: SocialCtx,
    connect: ConnectCtx,
    ops: OpsCtx,
}

pub struct StateParts {
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
    /// Answers kept for `Idempotency-Key` retries (put in a request that has a key by src/stack.rs).
    pub idempotency: IdempotencyStore,
    pub social: SocialCtx,
    pub connect: ConnectCtx,
    pub ops: OpsCtx,
    /// The market's settings in force here (src/settings.rs).
    pub market_settings: LiveSettings,
    /// This server's hold on its SQLite database (none on PostgreSQL), released with the state:
    /// `zmarket restore` refuses while it is held (`db::backup::InUse`).
    pub in_use: Option<crate::db::backup::InUse>,
}
