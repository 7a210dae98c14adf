//! Renting an app on another owner's device. The money moves only through the wallet's ledger
//! (holds, captures by the minute, the provider's credit less the market fee), which lands with
//! the wallet work; until then this holds the meter's arithmetic.

use chrono::{DateTime, Utc};

use crate::db::entity::installations;

/// Coins used since the last posting and not billed yet: whole minutes of running time at the
/// rental's price (a minute not running is not charged; the meter advances only while running).
pub fn unbilled(r: &installations::Model, at: DateTime<Utc>) -> i64 {
    let (Some(price), Some(from)) = (r.rent_price_per_hour, r.metered_until) else { return 0 };
    if r.status != crate::apps::model::AppStatus::Running {
        return 0;
    }
    let until = r.rent_ends_at.map_or(at, |e| e.min(at));
    let minutes = (until - from).num_minutes().max(0);
    price * minutes / 60
}
