//! The rental meter's arithmetic: whole minutes at an hourly price, spread as the wallet's
//! `minute_price` spreads them (any 60 consecutive minutes cost exactly the hourly price).

use chrono::{DateTime, Utc};

use crate::apps::model::AppStatus;
use crate::db::entity::installations;

/// The price of minutes `k .. k + m` (0-based) at `per_hour` cents an hour.
pub fn cost(per_hour: i64, k: i64, m: i64) -> i64 {
    per_hour * (k + m) / 60 - per_hour * k / 60
}

/// Coins the running rental has used since its last posting (shown as `unbilled`): whole
/// minutes at its price, as the next posting will charge them.
pub fn unbilled(r: &installations::Model, at: DateTime<Utc>) -> i64 {
    let (Some(price), Some(from)) = (r.rent_price_per_hour, r.metered_until) else { return 0 };
    if r.status != AppStatus::Running {
        return 0;
    }
    let until = r.rent_ends_at.map_or(at, |e| e.min(at));
    let minutes = ((until - from).num_seconds() / 60).max(0);
    let k = r.rent_minutes;
    cost(price, k, minutes)
}

#[cfg(test)]
mod tests {
    use super::cost;

    #[test]
    fn minutes_add_up_to_the_hourly_price() {
        for price in [1, 7, 59, 60, 61, 600, 12345] {
            assert_eq!((0..60).map(|k| cost(price, k, 1)).sum::<i64>(), price);
            assert_eq!(cost(price, 0, 60), price);
            assert_eq!(cost(price, 17, 60), price);
            assert_eq!(cost(price, 3, 5) + cost(price, 8, 7), cost(price, 3, 12));
        }
    }
}
