//! Other domains' say before an owner changes a device: its sharing settings (mode, rentable,
//! price) or its unlinking (the box leaves the market: powered off for it). The apps domain
//! answers for the Lite App rules. Registered in server::prepare; each guard runs inside the
//! change's transaction, after the device row is read, and refuses with the error to answer.

use std::sync::Arc;

use sea_orm::DatabaseTransaction;

use crate::db::entity::devices;
use crate::error::AppError;

/// What the owner is about to do to the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceChange {
    /// PUT /devices/{id}/sharing.
    Sharing,
    /// DELETE /devices/{id}: unlinked, so powered off as far as the market knows.
    Unlink,
}

#[async_trait::async_trait]
pub trait DeviceGuard: Send + Sync {
    async fn check(&self, txn: &DatabaseTransaction, device: &devices::Model, change: DeviceChange) -> Result<(), AppError>;
}

/// Every registered guard, asked in order; the first refusal is the answer.
#[derive(Clone, Default)]
pub struct DeviceGuards(pub Arc<Vec<Arc<dyn DeviceGuard>>>);

impl DeviceGuards {
    pub fn new(guards: Vec<Arc<dyn DeviceGuard>>) -> Self {
        DeviceGuards(Arc::new(guards))
    }

    pub async fn check(&self, txn: &DatabaseTransaction, device: &devices::Model, change: DeviceChange) -> Result<(), AppError> {
        for g in self.0.iter() {
            g.check(txn, device, change).await?;
        }
        Ok(())
    }
}
