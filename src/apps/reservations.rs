//! Whether a box is reserved for an order. Orders (left of apps on the chain) keeps that, so
//! apps asks through this registry: `orders::OrderReservations` answers, registered in
//! server::prepare. A rental refuses a reserved box and the rent dialog leaves it out.

use std::sync::Arc;

use sea_orm::{DatabaseExecutor, DbErr};
use crate::ids::DeviceId;

#[async_trait::async_trait]
pub trait Reservations: Send + Sync {
    /// Of `device_ids`, those reserved; read on `conn` (the caller's transaction when it has one).
    async fn reserved(&self, conn: &DatabaseExecutor<'_>, device_ids: &[DeviceId]) -> Result<Vec<DeviceId>, DbErr>;
}

/// Every registered answer; a box is reserved when one of them says so.
#[derive(Clone, Default)]
pub struct DeviceReservations(pub Arc<Vec<Arc<dyn Reservations>>>);

impl DeviceReservations {
    pub fn new(sources: Vec<Arc<dyn Reservations>>) -> Self {
        DeviceReservations(Arc::new(sources))
    }

    /// Of `device_ids`, those reserved.
    pub async fn reserved(&self, conn: &DatabaseExecutor<'_>, device_ids: &[DeviceId]) -> Result<Vec<DeviceId>, DbErr> {
        let mut out = Vec::new();
        for s in self.0.iter() {
            out.extend(s.reserved(conn, device_ids).await?);
        }
        Ok(out)
    }
}
