//! Apps on devices: installs and rentals as containers on real boxes, the installation state
//! machine, the watchdog, AI compute, the image archives the market holds for agents. See
//! docs/apps.md. The agent's side is src/agent/.

pub mod access;
pub mod copies;
pub mod extend;
pub mod gpus;
pub mod images;
pub mod install;
pub mod lifecycle;
pub mod lite;
pub mod manifest;
pub mod meter;
pub mod model;
pub mod money;
pub mod notify;
pub mod rental;
pub mod reports;
pub mod reservations;
pub mod routes;
pub mod seen;
pub mod snapshots;
pub mod state;
pub mod taking;
pub mod watchdog;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use sea_orm::{ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, PaginatorTrait, QueryFilter, QuerySelect};
use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::config::AppsConfig;
use crate::db::entity::installations;
use crate::db::enums::InstallKind;
use crate::error::AppError;
use crate::ids::{AppId, CompanyId, DeviceId, UserId};
use crate::jobs::{Runs, repeated};

/// What the apps rules use.
#[derive(Clone)]
pub struct AppsCtx {
    pub db: DatabaseConnection,
    pub settings: Arc<AppsConfig>,
    pub manifests: Arc<manifest::Manifests>,
    /// Where image archives are kept (`<data_dir>`).
    pub data_dir: PathBuf,
    /// The market's settings: its fee is the share of a rental, fixed when it starts.
    pub market_settings: crate::settings::LiveSettings,
    /// Whether a box is reserved for an order (answered by orders).
    pub reservations: reservations::DeviceReservations,
    /// The public data version: a box online or offline, shared or not (the offers cache's key).
    pub public: crate::public::PublicData,
    /// The Rent dialog's answers, kept a moment (src/apps/rental.rs).
    pub offers: Arc<rental::OfferAnswers>,
}

/// The watchdog, the rental meter and the rentals' ending notices.
pub fn jobs(cx: &AppsCtx) -> Vec<Result<Job, JobSchedulerError>> {
    let every = Duration::from_secs((cx.settings.action_timeout_secs / 4).clamp(1, 15));
    let cx2 = cx.clone();
    let (db, grace) = (cx.db.clone(), chrono::Duration::hours(i64::from(cx.settings.suspended_grace_hours)));
    let meter = repeated(&cx.db, "apps.rental_meter", Duration::from_secs(15), Runs::Shared, move || {
        let db = db.clone();
        async move {
            match rental::meter(&db, crate::db::now(), grace).await {
                Ok(n) if n > 0 => tracing::info!(rentals = n, "rentals ended or suspended"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "rental meter failed");
                    crate::jobs::failed();
                }
            }
            if let Err(e) = extend::ending_notices(&db, crate::db::now()).await {
                tracing::warn!(error = %e, "rental ending notices failed");
                crate::jobs::failed();
            }
        }
    });
    let cx3 = cx.clone();
    let snapshots = repeated(&cx.db, "apps.snapshots", Duration::from_secs(60), Runs::Shared, move || {
        let cx = cx3.clone();
        async move {
            match snapshots::sweep(&cx).await {
                Ok(n) if n > 0 => tracing::info!(snapshots = n, "snapshots noticed, removed or taken"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "snapshots job failed");
                    crate::jobs::failed();
                }
            }
        }
    });
    vec![meter, snapshots, repeated(&cx.db, "apps.watchdog", every, Runs::Shared, move || {
        let cx = cx2.clone();
        async move {
            match watchdog::run(&cx.db, &cx.settings).await {
                Ok(n) if n > 0 => tracing::info!(installations = n, "stuck installations failed by the watchdog"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "apps watchdog failed");
                    crate::jobs::failed();
                }
            }
        }
    })]
}

/// An account with a rented app still held cannot be deleted (docs/api.md `apps_rented`).
pub struct AppsRented;

#[async_trait::async_trait]
impl crate::iam::deletion::DeletionCheck for AppsRented {
    async fn blocks(&self, txn: &DatabaseTransaction, user_id: &UserId) -> Result<Option<&'static str>, AppError> {
        let n = installations::Entity::find()
            .filter(installations::Column::OwnerUserId.eq(user_id))
            .filter(installations::Column::OwnerCompanyId.is_null())
            .filter(installations::Column::Kind.eq(InstallKind::Rent))
            .filter(installations::Column::ActiveKey.is_not_null())
            .count(txn)
            .await?;
        Ok((n > 0).then_some("apps_rented"))
    }
}

/// A rental's (or an own installation's) ledger title: its app on its box, "Terraria on Alice's
/// box" (`billing::titles`).
pub struct RentalTitles;

#[async_trait::async_trait]
impl crate::billing::titles::Titler for RentalTitles {
    fn ref_type(&self) -> &'static str {
        "rental"
    }

    async fn titles(&self, conn: &sea_orm::DatabaseExecutor<'_>, ids: &[String], lang: crate::lang::Lang) -> Result<Vec<(String, String)>, AppError> {
        let rows = installations::Entity::find().filter(installations::Column::Id.is_in(ids.iter().cloned())).all(conn).await?;
        let app_ids: Vec<AppId> = rows.iter().map(|r| r.app_id.clone()).collect();
        let device_ids: Vec<DeviceId> = rows.iter().map(|r| r.device_id.clone()).collect();
        let app_names = crate::market::apps::names(conn, &app_ids, lang).await?;
        let device_names = crate::devices::binding::names(conn, &device_ids).await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let app = app_names.get(&r.app_id).cloned().unwrap_or_else(|| r.app_id.clone().into());
                let title = match device_names.get(&r.device_id) {
                    Some(d) if lang == crate::lang::Lang::Zh => format!("{app}（{d}）"),
                    Some(d) => format!("{app} on {d}"),
                    None => app,
                };
                (r.id.into_string(), title)
            })
            .collect())
    }

    /// The person who rented (or installed) it: a company's bill names them.
    async fn makers(&self, conn: &sea_orm::DatabaseExecutor<'_>, ids: &[String]) -> Result<Vec<(String, UserId)>, AppError> {
        Ok(installations::Entity::find()
            .select_only()
            .columns([installations::Column::Id, installations::Column::CreatedBy])
            .filter(installations::Column::Id.is_in(ids.iter().cloned()))
            .into_tuple()
            .all(conn)
            .await?)
    }
}

/// A company holding AI compute (its installations, own or rented, not yet removed, of AI
/// compute and AI server apps) cannot be deleted (`ai_compute_held`).
pub struct AiComputeHeld;

#[async_trait::async_trait]
impl crate::companies::resources::CompanyResources for AiComputeHeld {
    async fn held(&self, txn: &DatabaseTransaction, company_id: &CompanyId) -> Result<Option<&'static str>, AppError> {
        let ai = crate::market::apps::ids_of_types(txn, &crate::db::enums::DisplayType::AI).await?;
        let n = installations::Entity::find()
            .filter(installations::Column::OwnerCompanyId.eq(company_id))
            .filter(installations::Column::ActiveKey.is_not_null())
            .filter(installations::Column::AppId.is_in(ai))
            .count(txn)
            .await?;
        Ok((n > 0).then_some("ai_compute_held"))
    }
}
