//! The connections to a box's apps kept alive between requests (`connect::proxy::forward_kept`
//! takes and puts them): each an HTTP/1.1 connection over a stream of the box's channel
//! (src/connect/hub.rs), and so a connection of the agent to the container.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use hyper::client::conn::http1::SendRequest;
use tokio::sync::Semaphore;

/// Whether a stream ended (the agent closed it, or its channel is gone).
pub struct StreamEnd(pub(crate) Arc<Semaphore>);

impl StreamEnd {
    pub fn ended(&self) -> bool {
        self.0.is_closed()
    }
}

/// How long a kept-alive connection to an app waits for its next request.
const KEPT_FOR: Duration = Duration::from_secs(30);
/// Kept-alive connections waiting, at most, for one app's port.
const KEPT_PER_APP: usize = 8;

/// The connections to a box's apps kept alive between requests, by (installation, port): each
/// an HTTP/1.1 connection over a stream of the box's channel, and so a connection of the agent
/// to the container. A request takes one waiting here rather than opening a stream (a round trip
/// to the box, and a connection to the container); one the app closed, or that waited past
/// [`KEPT_FOR`], is dropped. They go with the channel (each is a stream of it).
#[derive(Default)]
pub struct Kept {
    idle: Mutex<HashMap<(String, u16), Vec<Waiting>>>,
}

/// A kept connection, since when it waits, and whether its stream ended.
type Waiting = (SendRequest<Body>, Instant, StreamEnd);

impl Kept {
    /// A connection waiting for (installation, port), ready for a request.
    pub fn take(&self, key: &(String, u16)) -> Option<(SendRequest<Body>, StreamEnd)> {
        let mut idle = self.idle.lock().unwrap();
        let list = idle.get_mut(key)?;
        let mut found = None;
        while let Some((sender, at, end)) = list.pop() {
            if at.elapsed() < KEPT_FOR && sender.is_ready() && !end.ended() {
                found = Some((sender, end));
                break;
            }
        }
        if list.is_empty() {
            idle.remove(key);
        }
        found
    }

    pub fn put(&self, key: (String, u16), sender: SendRequest<Body>, end: StreamEnd) {
        if end.ended() {
            return;
        }
        let mut idle = self.idle.lock().unwrap();
        let list = idle.entry(key).or_default();
        list.retain(|(s, at, end)| at.elapsed() < KEPT_FOR && !s.is_closed() && !end.ended());
        if list.len() < KEPT_PER_APP {
            list.push((sender, Instant::now(), end));
        }
    }

    /// Connections waiting now (open, and not past [`KEPT_FOR`]).
    pub fn waiting(&self) -> usize {
        self.idle.lock().unwrap().values().flatten().filter(|(s, at, end)| at.elapsed() < KEPT_FOR && !s.is_closed() && !end.ended()).count()
    }
}
