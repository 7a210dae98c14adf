//! "Public data changed": the version every cache of public pages is keyed by. A domain whose
//! write changes what visitors see (the market, the nearby list) calls [`PublicData::changed`];
//! the server renderer reads [`PublicData::version`]. Per process for now (see
//! docs/architecture.md: the hardening issue makes it coherent across instances).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Debug)]
pub struct PublicData(Arc<AtomicU64>);

impl Default for PublicData {
    fn default() -> Self {
        PublicData(Arc::new(AtomicU64::new(1)))
    }
}

impl PublicData {
    /// Call after any write that changes what a public page shows.
    pub fn changed(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    pub fn version(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}
