//! This instance's open event streams and how they learn that something new was committed to the
//! event log (src/events).
//!
//! The database is the truth: a stream only ever sends what it reads from the event log (events
//! after the last id it sent). The hub merely wakes the streams of a person when their log grew:
//! - PostgreSQL: one LISTEN connection per instance; every event's transaction sends a NOTIFY
//!   (`<user id> <seq>`), delivered at commit to every instance, whoever wrote it.
//! - SQLite (one instance): a watcher reads which people got events since the last row it saw,
//!   every `social.poll_ms` and at once when a social call of this instance committed (`nudge`).
//!
//! After a lost LISTEN connection every stream is woken once, so nothing committed meanwhile
//! waits for the next event.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sea_orm::{DatabaseConnection, DbBackend};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use crate::events;

struct Person {
    /// The newest event id this instance knows of for the person.
    newest: watch::Sender<i64>,
    streams: usize,
}

pub struct Hub {
    people: Mutex<HashMap<String, Person>>,
    nudge: Notify,
    streams_per_user: usize,
    open: AtomicUsize,
}

/// One open stream's place in the hub; leaving is dropping it.
pub struct Subscription {
    hub: Arc<Hub>,
    user_id: String,
    pub changes: watch::Receiver<i64>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.hub.leave(&self.user_id);
    }
}

impl Hub {
    pub fn new(streams_per_user: u32) -> Arc<Hub> {
        Arc::new(Hub {
            people: Mutex::new(HashMap::new()),
            nudge: Notify::new(),
            streams_per_user: streams_per_user as usize,
            open: AtomicUsize::new(0),
        })
    }

    /// A new stream for `user_id`; `None` when they already hold `streams_per_user` here.
    pub fn subscribe(self: &Arc<Self>, user_id: &str) -> Option<Subscription> {
        let mut people = self.people.lock().unwrap_or_else(|e| e.into_inner());
        let person = people
            .entry(user_id.to_string())
            .or_insert_with(|| Person { newest: watch::Sender::new(0), streams: 0 });
        if person.streams >= self.streams_per_user {
            return None;
        }
        person.streams += 1;
        self.open.fetch_add(1, Ordering::Relaxed);
        Some(Subscription { hub: self.clone(), user_id: user_id.to_string(), changes: person.newest.subscribe() })
    }

    fn leave(&self, user_id: &str) {
        let mut people = self.people.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = people.get_mut(user_id) {
            p.streams = p.streams.saturating_sub(1);
            if p.streams == 0 {
                people.remove(user_id);
            }
        }
        self.open.fetch_sub(1, Ordering::Relaxed);
    }

    /// The person's log reached `seq`: wake their streams here, if any.
    pub fn published(&self, user_id: &str, seq: i64) {
        let people = self.people.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = people.get(user_id) {
            p.newest.send_if_modified(|v| {
                let newer = seq > *v;
                if newer {
                    *v = seq;
                }
                newer
            });
        }
    }

    /// Every stream here looks at its log again.
    pub fn wake_everyone(&self) {
        let people = self.people.lock().unwrap_or_else(|e| e.into_inner());
        for p in people.values() {
            p.newest.send_modify(|_| {});
        }
    }

    /// A social call of this instance committed events: look now rather than at the next poll
    /// (SQLite; on PostgreSQL the NOTIFY of the commit does it).
    pub fn nudge(&self) {
        self.nudge.notify_one();
    }

    /// Streams open on this instance.
    pub fn open_streams(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }
}

/// Starts this instance's watcher of the event log (see the module comment); abort it at shutdown.
pub fn start(hub: Arc<Hub>, db: DatabaseConnection, database_url: String, poll: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        if db.get_database_backend() == DbBackend::Postgres {
            listen(hub, &database_url).await
        } else {
            watch_sqlite(hub, db, poll).await
        }
    })
}

async fn listen(hub: Arc<Hub>, url: &str) {
    use sea_orm::sqlx::postgres::PgListener;
    loop {
        match PgListener::connect(url).await {
            Ok(mut listener) => match listener.listen(events::CHANNEL).await {
                Ok(()) => {
                    hub.wake_everyone();
                    loop {
                        match listener.try_recv().await {
                            Ok(Some(n)) => {
                                if let Some((user, seq)) = parse_announcement(n.payload()) {
                                    hub.published(user, seq);
                                }
                            }
                            // The connection was lost and is back: catch up on what was missed.
                            Ok(None) => hub.wake_everyone(),
                            Err(e) => {
                                tracing::warn!(error = %e, "event listener failed, reconnecting");
                                break;
                            }
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "LISTEN failed"),
            },
            Err(e) => tracing::warn!(error = %e, "event listener cannot connect"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// `"<user id> <seq>"` as sent by `events::append`.
fn parse_announcement(payload: &str) -> Option<(&str, i64)> {
    let (user, seq) = payload.rsplit_once(' ')?;
    Some((user, seq.parse().ok()?))
}

async fn watch_sqlite(hub: Arc<Hub>, db: DatabaseConnection, poll: Duration) {
    let mut seen = loop {
        match events::last_row_id(&db).await {
            Ok(id) => break id,
            Err(e) => tracing::warn!(error = %e, "event watcher cannot read the log"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    loop {
        tokio::select! {
            _ = hub.nudge.notified() => {}
            _ = tokio::time::sleep(poll) => {}
        }
        match events::written_since(&db, seen).await {
            Ok((people, top)) => {
                for (user, seq) in people {
                    hub.published(&user, seq);
                }
                seen = top;
            }
            Err(e) => tracing::warn!(error = %e, "event watcher cannot read the log"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_parse() {
        assert_eq!(parse_announcement("0190-ab 42"), Some(("0190-ab", 42)));
        assert_eq!(parse_announcement("nope"), None);
        assert_eq!(parse_announcement("u x"), None);
    }

    #[tokio::test]
    async fn streams_per_person_are_bounded_and_released() {
        let hub = Hub::new(2);
        let a = hub.subscribe("a").unwrap();
        let b = hub.subscribe("a").unwrap();
        assert!(hub.subscribe("a").is_none());
        assert!(hub.subscribe("b").is_some());
        assert_eq!(hub.open_streams(), 2, "the one for b was dropped at once");
        drop(a);
        let mut c = hub.subscribe("a").unwrap();
        hub.published("a", 3);
        assert!(c.changes.has_changed().unwrap());
        assert_eq!(*c.changes.borrow_and_update(), 3);
        hub.published("a", 2);
        assert!(!c.changes.has_changed().unwrap(), "an older id wakes nobody");
        hub.wake_everyone();
        assert!(c.changes.has_changed().unwrap());
        drop((b, c));
        assert_eq!(hub.open_streams(), 0);
        assert!(hub.people.lock().unwrap().is_empty());
    }
}
