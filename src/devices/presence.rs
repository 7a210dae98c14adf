//! A box's reliability, measured by the market (docs/market.md §Offers): the hours it was heard
//! from over the last 30 days, kept on its own row as a ring of 720 bits (bit `hour % 720`, hours
//! since the Unix epoch) with the last hour marked. A beat marks its hour once (one write an hour
//! at most); an offer reads the uptime from the row it already has, with no query of its own.

use chrono::{DateTime, Utc};

/// Hours the ring remembers: 30 days.
pub const HOURS: i64 = 30 * 24;
const BYTES: usize = (HOURS as usize).div_ceil(8);

/// Hours since the Unix epoch of `at`.
pub fn hour_of(at: DateTime<Utc>) -> i64 {
    at.timestamp().div_euclid(3600)
}

fn bit(h: i64) -> (usize, u8) {
    let p = h.rem_euclid(HOURS) as usize;
    (p / 8, 1 << (p % 8))
}

/// The ring after a beat at `at`, or `None` when that hour is already marked (nothing to write).
/// The hours between the last mark and this one were silent: their bits are cleared. A clock that
/// went back marks nothing.
pub fn mark(ring: Option<&[u8]>, last: Option<i64>, at: DateTime<Utc>) -> Option<(Vec<u8>, i64)> {
    let h = hour_of(at);
    let mut bits = match (ring, last) {
        (Some(r), Some(l)) if r.len() == BYTES => {
            if h <= l {
                return None;
            }
            let mut bits = r.to_vec();
            if h - l >= HOURS {
                bits.fill(0);
            } else {
                for s in l + 1..h {
                    let (i, m) = bit(s);
                    bits[i] &= !m;
                }
            }
            bits
        }
        _ => vec![0; BYTES],
    };
    let (i, m) = bit(h);
    bits[i] |= m;
    Some((bits, h))
}

/// The share (0-1) of the last `days` days (at most 30) the box was heard from, counted from when
/// it was bound; `None` for a box bound less than a day ago (or not bound).
pub fn uptime(ring: Option<&[u8]>, last: Option<i64>, bound_at: Option<DateTime<Utc>>, now: DateTime<Utc>, days: i64) -> Option<f64> {
    let bound = bound_at?;
    if now - bound < chrono::Duration::days(1) {
        return None;
    }
    let nowh = hour_of(now);
    let span = (days * 24).min(HOURS).min(nowh - hour_of(bound) + 1).max(1);
    let heard = match (ring, last) {
        (Some(r), Some(l)) if r.len() == BYTES => {
            // Hours after the last mark were silent; bits older than the ring's reach are gone.
            let to = nowh.min(l);
            let from = (nowh - span + 1).max(l - HOURS + 1);
            (from..=to)
                .filter(|&h| {
                    let (i, m) = bit(h);
                    r[i] & m != 0
                })
                .count() as i64
        }
        _ => 0,
    };
    Some((heard as f64 / span as f64).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone};

    fn at(h: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(h * 3600 + 17, 0).unwrap()
    }

    /// Marks the hours `hs` (ascending) in a fresh ring.
    fn heard(hs: &[i64]) -> (Option<Vec<u8>>, Option<i64>) {
        let (mut ring, mut last) = (None::<Vec<u8>>, None);
        for &h in hs {
            if let Some((r, l)) = mark(ring.as_deref(), last, at(h)) {
                ring = Some(r);
                last = Some(l);
            }
        }
        (ring, last)
    }

    #[test]
    fn an_hour_is_marked_once() {
        let (ring, last) = heard(&[500_000]);
        assert!(mark(ring.as_deref(), last, at(500_000) + Duration::minutes(30)).is_none());
        assert!(mark(ring.as_deref(), last, at(499_999)).is_none(), "a clock that went back marks nothing");
        assert!(mark(ring.as_deref(), last, at(500_001)).is_some());
    }

    #[test]
    fn uptime_counts_heard_hours_since_bound() {
        let start = 500_000;
        let bound = Some(at(start));
        // Heard every hour for two days, then silent for a day.
        let (ring, last) = heard(&(start..start + 48).collect::<Vec<_>>());
        let now = at(start + 71);
        assert_eq!(uptime(ring.as_deref(), last, bound, now, 7), Some(48.0 / 72.0));
        assert_eq!(uptime(ring.as_deref(), last, bound, now, 30), Some(48.0 / 72.0));
        // Not a day since it was bound: no figure yet.
        assert_eq!(uptime(ring.as_deref(), last, Some(at(start + 60)), now, 7), None);
        assert_eq!(uptime(ring.as_deref(), last, None, now, 7), None);
    }

    #[test]
    fn silent_hours_between_marks_are_cleared_and_old_bits_forgotten() {
        let start = 600_000;
        let bound = Some(at(start));
        // Heard for the whole 30 days, then silent 10 days, then heard one hour.
        let mut hs: Vec<i64> = (start..start + HOURS).collect();
        hs.push(start + HOURS + 240);
        let (ring, last) = heard(&hs);
        let now = at(start + HOURS + 240);
        // The last 7 days: only the one hour.
        assert_eq!(uptime(ring.as_deref(), last, bound, now, 7), Some(1.0 / 168.0));
        // The last 30 days (hours start+241 ..= start+960): 479 heard before the silence, and the one.
        assert_eq!(uptime(ring.as_deref(), last, bound, now, 30), Some(480.0 / 720.0));
        // A year of silence: nothing heard.
        let later = at(start + HOURS + 240 + 9000);
        assert_eq!(uptime(ring.as_deref(), last, bound, later, 30), Some(0.0));
        let (r2, l2) = mark(ring.as_deref(), last, later).unwrap();
        assert_eq!(uptime(Some(&r2), Some(l2), bound, later, 30), Some(1.0 / 720.0));
    }

    #[test]
    fn always_heard_is_one() {
        let start = 700_000;
        let (ring, last) = heard(&(start..start + 1000).collect::<Vec<_>>());
        let now = at(start + 999);
        assert_eq!(uptime(ring.as_deref(), last, Some(at(start)), now, 7), Some(1.0));
        assert_eq!(uptime(ring.as_deref(), last, Some(at(start)), now, 30), Some(1.0));
    }
}
