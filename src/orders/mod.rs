//! Demands and orders: a person posts a compute demand (its price × hours held on their wallet),
//! providers see who can take it and why not (one matcher), one takes it atomically with a
//! qualifying device (reserved for the order, the demanded app installed on it through the apps
//! service), the demander confirms it runs, the hold pays the provider by the minute, and the
//! order finishes or fails with its hold released and its device freed. See docs/orders.md.

pub mod demands;
pub mod flow;
pub mod machine;
pub mod matcher;
pub mod model;
pub mod money;
pub mod notify;
pub mod page;
pub mod routes;
pub mod take;
pub mod view;

use std::sync::Arc;
use std::time::Duration;

use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::apps::AppsCtx;
use crate::config::OrdersConfig;
use crate::error::{AppError, Msg};
use crate::ids::{DeviceId, UserId};
use crate::iam::auth::Auth;
use crate::jobs::{Runs, repeated};

/// What the order rules use.
#[derive(Clone)]
pub struct OrdersCtx {
    pub db: sea_orm::DatabaseConnection,
    pub settings: Arc<OrdersConfig>,
    /// The apps service: the catalogue's install manifests, installing on the provider's device.
    pub apps: AppsCtx,
    /// The market's settings: its fee is the share of an order, fixed when it is posted.
    pub market_settings: crate::settings::LiveSettings,
    /// Bumped when the public board (/on-demand) changes: a demand posted, taken, cancelled or expired.
    pub public: crate::public::PublicData,
    /// Where the board measures distances from before a visitor shares a location (the map centre).
    pub map_centre: (f64, f64),
}

/// Demands are for individual operation only (docs/product.md §1): a company context answers 403.
pub fn personal(auth: &Auth) -> Result<UserId, AppError> {
    match auth.company() {
        None => Ok(auth.user_id.clone()),
        Some(_) => Err(AppError::Refused(Msg::DemandsPersonalOnly)),
    }
}

/// The order job: time-outs, apps that started or failed, the meter, the hours' end, and the
/// removal of the app once an order is over.
pub fn jobs(cx: &OrdersCtx) -> Vec<Result<Job, JobSchedulerError>> {
    let db = cx.db.clone();
    let settings = cx.settings.clone();
    let public = cx.public.clone();
    vec![repeated(&cx.db, "orders.sweep", Duration::from_secs(cx.settings.sweep_secs.max(1)), Runs::Shared, move || {
        let (db, settings, public) = (db.clone(), settings.clone(), public.clone());
        async move {
            match flow::sweep(&db, &settings, crate::db::now()).await {
                Ok(n) if n > 0 => {
                    // An expired demand leaves the board.
                    public.changed();
                    tracing::info!(orders = n, "orders moved by the sweep")
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "order sweep failed");
                    crate::jobs::failed();
                }
            }
        }
    })]
}

/// An order's ledger title: "Order: <its name>" (`billing::titles`).
pub struct OrderTitles;

#[async_trait::async_trait]
impl crate::billing::titles::Titler for OrderTitles {
    fn ref_type(&self) -> &'static str {
        "order"
    }

    async fn titles(&self, conn: &sea_orm::DatabaseExecutor<'_>, ids: &[String], lang: crate::lang::Lang) -> Result<Vec<(String, String)>, crate::error::AppError> {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

        use crate::db::entity::orders;
        let rows = orders::Entity::find().filter(orders::Column::Id.is_in(ids.iter().cloned())).all(conn).await?;
        Ok(rows
            .into_iter()
            .map(|o| {
                let title = if lang == crate::lang::Lang::Zh { format!("订单：{}", o.name) } else { format!("Order: {}", o.name) };
                (o.id.into_string(), title)
            })
            .collect())
    }
}

/// Which boxes are reserved for an order (`orders.reserved_device_id`), for the apps domain: a
/// reserved box is not rented meanwhile.
pub struct OrderReservations;

#[async_trait::async_trait]
impl crate::apps::reservations::Reservations for OrderReservations {
    async fn reserved(&self, conn: &sea_orm::DatabaseExecutor<'_>, device_ids: &[DeviceId]) -> Result<Vec<DeviceId>, sea_orm::DbErr> {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

        use crate::db::entity::orders;
        let rows = orders::Entity::find().filter(orders::Column::ReservedDeviceId.is_in(device_ids.iter().cloned())).all(conn).await?;
        Ok(rows.into_iter().filter_map(|o| o.reserved_device_id).collect())
    }
}
