//! The rental meter's arithmetic: seconds at an hourly price, in cents, the fraction of a cent
//! carried (the ledger's carry, `billing::fees::carry`): over a rental's life its captures add up
//! to `floor(price × seconds charged / 3600)`, however its seconds were split.

use chrono::{DateTime, Utc};

use crate::apps::model::AppStatus;
use crate::db::entity::installations;

/// The cents of seconds `k .. k + s` of a meter at `per_hour` cents an hour: what the ledger's
/// carry makes of them when the seconds before them were charged at the same price.
pub fn cents(per_hour: i64, k: i64, s: i64) -> i64 {
    let at = |secs: i64| (i128::from(per_hour) * i128::from(secs) / 3600) as i64;
    at(k + s) - at(k)
}

/// The seconds a rental's running meter has not charged yet, up to `at`: never past its paid time
/// nor past its box's last report (`seen`). 0 while the meter is paused.
pub fn unmetered_secs(r: &installations::Model, at: DateTime<Utc>, seen: Option<DateTime<Utc>>) -> i64 {
    let (Some(from), Some(seen)) = (r.metered_until, seen) else { return 0 };
    let until = r.rent_ends_at.map_or(at, |e| e.min(at)).min(seen);
    (until - from).num_seconds().max(0)
}

/// Coins the running rental has used since its last capture (shown as `unbilled`), as the next
/// capture will charge them.
pub fn unbilled(r: &installations::Model, at: DateTime<Utc>, seen: Option<DateTime<Utc>>) -> i64 {
    let Some(price) = r.rent_price_per_hour.filter(|_| r.status == AppStatus::Running) else { return 0 };
    cents(price, r.rent_seconds, unmetered_secs(r, at, seen))
}

#[cfg(test)]
mod tests {
    use super::cents;

    #[test]
    fn seconds_add_up_to_the_hourly_price() {
        for price in [1, 7, 59, 60, 61, 600, 3599, 12345] {
            assert_eq!((0..3600).map(|k| cents(price, k, 1)).sum::<i64>(), price);
            assert_eq!(cents(price, 0, 3600), price);
            assert_eq!(cents(price, 1717, 3600), price);
            assert_eq!(cents(price, 3, 25) + cents(price, 28, 35), cents(price, 3, 60));
        }
        // Minutes as the meter charged them before: the same figures.
        assert_eq!(cents(600, 5 * 60, 7 * 60), 600 * 12 / 60 - 600 * 5 / 60);
    }
}
