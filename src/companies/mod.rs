//! Companies (sme in the API): creation, membership by invitation or application, members,
//! resource allocation to members, deletion, and the history of all of it.

pub mod allocation;
pub mod company;
pub mod history;
pub mod lookup;
pub mod membership;
pub mod model;
pub mod resources;
pub mod routes;

use std::sync::Arc;
use std::time::Duration;

use sea_orm::{ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, PaginatorTrait, QueryFilter};
use tokio_cron_scheduler::{Job, JobSchedulerError};

use crate::config::Site;
use crate::db::entity::company_members;
use crate::error::AppError;
use crate::iam::auth::Auth;
use crate::iam::deletion::DeletionCheck;
use crate::jobs::{Runs, repeated};
use crate::mail::Mailer;
use crate::notifications::{StatsSource, count_of, model::Stats};
use crate::ids::UserId;
use sea_orm::sea_query::Expr;

/// What the company rules use.
#[derive(Clone)]
pub struct CompaniesCtx {
    pub db: DatabaseConnection,
    pub site: Arc<Site>,
    pub mailer: Mailer,
    pub invitation_ttl_secs: u64,
    /// The other domains' answers about a company's resources (devices, apps, AI compute).
    pub resources: resources::Resources,
}

/// Companies' background jobs: invitations past their expiry become `expired`.
pub fn jobs(cx: &CompaniesCtx) -> Vec<Result<Job, JobSchedulerError>> {
    let db = cx.db.clone();
    vec![repeated(&cx.db, "sme.expire_invitations", Duration::from_secs(600), Runs::Shared, move || {
        let db = db.clone();
        async move {
            match membership::expire_invitations(&db).await {
                Ok(n) if n > 0 => tracing::info!(rows = n, "company invitations expired"),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "invitation expiry failed");
                    crate::jobs::failed();
                }
            }
        }
    })]
}

/// An account that belongs to a company cannot be deleted (`companies_joined`).
pub struct CompaniesJoined;

#[async_trait::async_trait]
impl DeletionCheck for CompaniesJoined {
    async fn blocks(&self, txn: &DatabaseTransaction, user_id: &UserId) -> Result<Option<&'static str>, AppError> {
        let n = company_members::Entity::find().filter(company_members::Column::UserId.eq(user_id)).count(txn).await?;
        Ok((n > 0).then_some("companies_joined"))
    }
}

/// `member_records_unread` of the notification stats.
pub struct MemberRecordsUnread;

impl StatsSource for MemberRecordsUnread {
    fn counts(&self, auth: &Auth) -> Vec<(&'static str, Expr)> {
        membership::member_records_unread_counts(auth).into_iter().map(|(name, q)| (name, count_of(q))).collect()
    }
    fn fill(&self, count: &dyn Fn(&str) -> u64, stats: &mut Stats) {
        stats.member_records_unread = count(membership::OWN_UNREAD) + count(membership::ADMIN_UNREAD);
    }
}
