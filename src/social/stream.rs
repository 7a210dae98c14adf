//! The body of `GET /api/cim/v1/events`: a Server-Sent Events stream that sends the person's
//! event log from where the client left off, then each event as it is committed.
//!
//! It opens with one control event:
//! - `ready` `{"last": n, "resumed": bool}`: the stream is live. Without `Last-Event-ID` it carries
//!   `id: n` (the client's starting point; load the current state after it); with a resumable
//!   `Last-Event-ID` it has no id and the missed events follow.
//! - `resync` `{"last": n}` with `id: n`: the events after `Last-Event-ID` are no longer kept (or
//!   the id is unknown): reload everything, then carry on from `n`.
//!
//! Then `message`, `friend_request`, `friend`, `read` and `notification` events, each with its id.
//! The stream ends after `social.stream_max_secs` (the client reconnects with `Last-Event-ID`).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use sea_orm::DatabaseConnection;
use serde_json::json;
use tokio::time::Instant;

use crate::events::hub::Subscription;
use crate::events::{self, Cursor};
use crate::ids::UserId;

/// Read from the log per query.
const BATCH: u64 = 100;
/// How soon a client reconnects after the stream ends or breaks.
const RETRY: Duration = Duration::from_secs(3);

struct Live {
    db: DatabaseConnection,
    sub: Subscription,
    user_id: UserId,
    /// The last event id sent.
    seen: i64,
    pending: VecDeque<Event>,
    ends: Instant,
}

fn event_of(row: events::Logged) -> Event {
    Event::default().id(row.seq.to_string()).event(events::kind_name(row.kind)).data(row.payload)
}

/// The opening control event and the id the stream continues after.
pub fn opening(cursor: Cursor, last_event_id: Option<i64>) -> (Event, i64) {
    let last = cursor.last;
    match last_event_id {
        None => (Event::default().id(last.to_string()).event("ready").data(json!({"last": last, "resumed": false}).to_string()), last),
        Some(seen) if cursor.can_resume(seen) => {
            (Event::default().event("ready").data(json!({"last": last, "resumed": true}).to_string()), seen)
        }
        Some(_) => (Event::default().id(last.to_string()).event("resync").data(json!({"last": last}).to_string()), last),
    }
}

/// The stream of one connection. `sub` must have been taken before `cursor` was read, so that
/// nothing committed in between goes unnoticed.
pub fn sse(
    db: DatabaseConnection,
    sub: Subscription,
    user_id: UserId,
    cursor: Cursor,
    last_event_id: Option<i64>,
    keep_alive: Duration,
    max_life: Duration,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let (first, seen) = opening(cursor, last_event_id);
    let live = Live { db, sub, user_id, seen, pending: VecDeque::from([first.retry(RETRY)]), ends: Instant::now() + max_life };
    let stream = futures::stream::unfold(live, next);
    Sse::new(stream).keep_alive(KeepAlive::new().interval(keep_alive).text("keep-alive"))
}

async fn next(mut live: Live) -> Option<(Result<Event, Infallible>, Live)> {
    loop {
        if let Some(e) = live.pending.pop_front() {
            return Some((Ok(e), live));
        }
        // Mark what we know as seen before reading, so a commit during the read wakes us again.
        live.sub.changes.borrow_and_update();
        match events::after(&live.db, &live.user_id, live.seen, BATCH).await {
            Ok(rows) if !rows.is_empty() => {
                for row in rows {
                    live.seen = row.seq;
                    live.pending.push_back(event_of(row));
                }
                continue;
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "event stream cannot read the log; the client will reconnect");
                return None;
            }
        }
        tokio::select! {
            changed = live.sub.changes.changed() => if changed.is_err() { return None },
            _ = tokio::time::sleep_until(live.ends) => return None,
        }
    }
}

/// `Last-Event-ID` as sent by a browser (a number; anything else is ignored).
pub fn parse_last_event_id(raw: Option<&str>) -> Option<i64> {
    raw.map(str::trim).filter(|s| !s.is_empty()).and_then(|s| s.parse::<i64>().ok()).filter(|n| *n >= 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_event_id_is_a_number() {
        assert_eq!(parse_last_event_id(Some(" 12 ")), Some(12));
        assert_eq!(parse_last_event_id(Some("x")), None);
        assert_eq!(parse_last_event_id(Some("-1")), None);
        assert_eq!(parse_last_event_id(None), None);
    }

    #[test]
    fn opening_picks_ready_or_resync() {
        let c = Cursor { last: 7, oldest_kept: Some(5) };
        assert_eq!(opening(c, None).1, 7);
        assert_eq!(opening(c, Some(4)).1, 4, "resumes: 5, 6, 7 follow");
        assert_eq!(opening(c, Some(2)).1, 7, "3 and 4 are gone: resync");
        assert_eq!(opening(c, Some(9)).1, 7, "unknown id: resync");
    }
}
