//! Devices: agent-registered boxes and server groups, Z-CLOUD machines, the server side of the
//! agent protocol and the public nearby list. See docs/devices.md. The agent program that runs
//! on a box is src/agent/.

pub mod access;
pub mod binding;
pub mod commands;
pub mod gpus;
pub mod guards;
pub mod install;
pub mod machines;
pub mod model;
pub mod nearby;
pub mod notify;
pub mod presence;
pub mod agent_api;
pub mod quiet;
pub mod rows;
pub mod rental;
pub mod routes;
pub mod sharing;
pub mod telemetry;
pub mod verify;
pub mod zcloud;

use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::config::DevicesConfig;
use crate::jobs::{Runs, repeated};
use crate::public::PublicData;
use crate::ratelimit::SharedLimit;

/// Boxes online now and every box there is (the operator's overview).
pub async fn counts(conn: &impl sea_orm::ConnectionTrait) -> Result<(u64, u64), crate::error::AppError> {
    use crate::db::entity::devices;
    use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
    let online = devices::Entity::find().filter(devices::Column::Status.eq(crate::db::enums::DeviceStatus::Online)).count(conn).await?;
    Ok((online, devices::Entity::find().count(conn).await?))
}

/// What the device rules use.
#[derive(Clone)]
pub struct DevicesCtx {
    pub db: DatabaseConnection,
    pub settings: Arc<DevicesConfig>,
    /// Where the nearby list is measured from when the visitor gives no point (the map centre).
    pub map_centre: (f64, f64),
    /// Bumped when what visitors see (the nearby list) changes.
    pub public: PublicData,
    /// Agent registrations per client IP (`devices.register_ip_burst`), shared by the instances.
    pub register_limit: Arc<SharedLimit>,
    /// Other domains' part of each heartbeat (apps).
    pub listeners: agent_api::AgentListeners,
    /// Other domains' say before a device's sharing changes or it is unlinked (apps).
    pub guards: guards::DeviceGuards,
    /// Nearby answers by query under the public data version (every write visitors see moves it).
    pub nearby_answers: Arc<nearby::Answers>,
    /// Heartbeat write transactions running in this instance (`model::AGENT_WRITERS` at once).
    pub agent_writers: Arc<tokio::sync::Semaphore>,
    /// The presence of this instance's boxes whose beats changed nothing, until the next flush.
    pub quiet: Arc<quiet::Pending>,
    /// Beats over channels waiting for their rows' batched read (`quiet::judge_beats`).
    pub asks: Arc<quiet::Asks>,
    /// The market's settings: its fee is the share of a Z-CLOUD rental, fixed when it starts.
    pub market_settings: crate::settings::LiveSettings,
    /// `/install.sh` and the agent's download (install.rs).
    pub installer: Arc<install::Installer>,
}

impl DevicesCtx {
    pub fn new(
        db: DatabaseConnection,
        settings: &DevicesConfig,
        map_centre: (f64, f64),
        public: PublicData,
        listeners: agent_api::AgentListeners,
        guards: guards::DeviceGuards,
        market_settings: crate::settings::LiveSettings,
        installer: install::Installer,
    ) -> Self {
        let register_limit = SharedLimit::new("agent_register_ip", settings.register_ip_burst, Duration::from_secs(settings.register_ip_refill_secs));
        DevicesCtx {
            db,
            settings: Arc::new(settings.clone()),
            map_centre,
            public,
            register_limit: Arc::new(register_limit),
            listeners,
            guards,
            nearby_answers: Arc::new(nearby::Answers::new(1024)),
            agent_writers: Arc::new(tokio::sync::Semaphore::new(model::AGENT_WRITERS)),
            quiet: Default::default(),
            asks: Default::default(),
            market_settings,
            installer: Arc::new(installer),
        }
    }
}

/// The devices' background job: marks devices offline when their heartbeats stop.
pub fn jobs(cx: &DevicesCtx) -> Vec<Result<Job, JobSchedulerError>> {
    // Often enough that a device is offline within a few seconds of `offline_after_secs`.
    let every = Duration::from_secs((cx.settings.offline_after_secs / 3).clamp(1, 15));
    let cx2 = cx.clone();
    vec![repeated(&cx.db, "devices.mark_offline", every, Runs::Shared, move || {
        let cx = cx2.clone();
        async move {
            match agent_api::mark_offline(&cx).await {
                Ok(n) if n > 0 => tracing::info!(devices = n, "devices marked offline"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "offline marking failed");
                    crate::jobs::failed();
                }
            }
        }
    }), {
        let db = cx.db.clone();
        repeated(&cx.db, "devices.zcloud_meter", Duration::from_secs(60), Runs::Shared, move || {
            let db = db.clone();
            async move {
                match rental::meter(&db, crate::db::now()).await {
                    Ok(n) if n > 0 => tracing::info!(rentals = n, "zcloud rentals ended"),
                    Ok(_) => {}
                    Err(e) => {
                    tracing::warn!(error = %e, "zcloud meter failed");
                    crate::jobs::failed();
                }
                }
            }
        })
    }, {
        let db = cx.db.clone();
        repeated(&cx.db, "devices.prune_samples", Duration::from_secs(60), Runs::Shared, move || {
            let db = db.clone();
            async move {
                match telemetry::prune(&db, crate::db::now()).await {
                    Ok(n) if n > 0 => tracing::debug!(rows = n, "device samples pruned"),
                    Ok(_) => {}
                    Err(e) => {
                    tracing::warn!(error = %e, "pruning device samples failed");
                    crate::jobs::failed();
                }
                }
            }
        })
    }, {
        let limit = cx.register_limit.clone();
        repeated(&cx.db, "devices.limiter_retain", Duration::from_secs(300), Runs::PerInstance, move || {
            let limit = limit.clone();
            async move { limit.retain_recent() }
        })
    }]
}
