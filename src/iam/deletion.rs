//! Why an account cannot be deleted yet (docs/api.md: `devices_linked`, `apps_rented`,
//! `balance_outstanding`, `companies_joined`). Identity does not know the other domains: each one
//! that can block a deletion registers a [`DeletionCheck`] when the server is assembled
//! (src/state.rs), and identity asks them all.

use std::sync::Arc;

use sea_orm::DatabaseTransaction;

use crate::error::AppError;
use crate::ids::UserId;

#[async_trait::async_trait]
pub trait DeletionCheck: Send + Sync {
    /// The reason this domain blocks deleting `user_id`'s account, if it does. Runs inside the
    /// deleting transaction (or a read transaction for the check call).
    async fn blocks(&self, txn: &DatabaseTransaction, user_id: &UserId) -> Result<Option<&'static str>, AppError>;
}

/// Every registered check, in order.
#[derive(Clone, Default)]
pub struct DeletionChecks(Arc<Vec<Arc<dyn DeletionCheck>>>);

impl DeletionChecks {
    pub fn new(checks: Vec<Arc<dyn DeletionCheck>>) -> Self {
        DeletionChecks(Arc::new(checks))
    }
    pub async fn reasons(&self, txn: &DatabaseTransaction, user_id: &UserId) -> Result<Vec<String>, AppError> {
        let mut reasons = Vec::new();
        for check in self.0.iter() {
            if let Some(r) = check.blocks(txn, user_id).await? {
                reasons.push(r.to_string());
            }
        }
        Ok(reasons)
    }
}
