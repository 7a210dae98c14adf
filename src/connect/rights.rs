//! Open streams and the right to them (issue 43, item 2): a terminal, a tunnel or a followed log
//! belongs to the caller as they opened it (person, session or API key, context) and to what it
//! reaches (an installation, a box). This instance's watcher looks at every open stream once a
//! second: the caller's session or key must still be live, the person not suspended, a company
//! context still theirs (`Sessions::still_holds`), and the door must still open (the rental not
//! ended, the app still assigned to the member, still running). A stream that lost its right is
//! told to close, with its reason, within the next look (at most about 2 s); every instance
//! watches its own streams, and the rows it reads are the ones every instance writes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::connect::ConnectCtx;
use crate::connect::access::{door, owned_device};
use crate::devices::model::DeviceId;
use crate::iam::auth::Auth;
use crate::ids::InstallationId;

/// What a stream reaches.
#[derive(Clone)]
pub enum Reach {
    /// A shell or a port of an installation (it must run).
    Running(InstallationId),
    /// An installation's log (its container must exist).
    Log(InstallationId),
    /// A port of the caller's own box.
    Device(DeviceId),
}

struct Held {
    auth: Auth,
    reach: Reach,
    lost: Arc<Notify>,
}

/// The streams open on this instance, watched.
#[derive(Clone, Default)]
pub struct Rights(Arc<Inner>);

#[derive(Default)]
struct Inner {
    open: Mutex<HashMap<u64, Held>>,
    next: AtomicU64,
}

/// One watched stream: [`Watched::lost`] resolves once its right is gone; dropping it stops the
/// watch.
pub struct Watched {
    id: u64,
    rights: Rights,
    lost: Arc<Notify>,
}

impl Watched {
    pub async fn lost(&self) {
        self.lost.notified().await
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.rights.0.open.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
    }
}

impl Rights {
    pub fn watch(&self, auth: &Auth, reach: Reach) -> Watched {
        let id = self.0.next.fetch_add(1, Ordering::Relaxed);
        let lost = Arc::new(Notify::new());
        self.0.open.lock().unwrap_or_else(|e| e.into_inner()).insert(id, Held { auth: auth.clone(), reach, lost: lost.clone() });
        Watched { id, rights: self.clone(), lost }
    }

    fn snapshot(&self) -> Vec<(Auth, Reach, Arc<Notify>)> {
        self.0.open.lock().unwrap_or_else(|e| e.into_inner()).values().map(|h| (h.auth.clone(), h.reach.clone(), h.lost.clone())).collect()
    }
}

/// Whether the caller may still hold a stream to `reach`. A database error keeps the stream
/// (the next look asks again).
async fn holds(cx: &ConnectCtx, auth: &Auth, reach: &Reach) -> bool {
    if let Ok(false) = cx.sessions.still_holds(auth).await {
        return false;
    }
    let denied = |e: &crate::error::AppError| e.status().is_client_error();
    match reach {
        Reach::Running(id) => match door(cx, auth, id).await {
            Ok(d) => d.running().is_ok(),
            Err(e) => !denied(&e),
        },
        Reach::Log(id) => match door(cx, auth, id).await {
            Ok(d) => d.has_container(),
            Err(e) => !denied(&e),
        },
        Reach::Device(id) => match owned_device(cx, auth, id).await {
            Ok(_) => true,
            Err(e) => !denied(&e),
        },
    }
}

/// This instance's watcher (abort it at shutdown).
pub fn start_watcher(cx: ConnectCtx) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(1));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            for (auth, reach, lost) in cx.rights.snapshot() {
                if !holds(&cx, &auth, &reach).await {
                    // A stored permit: the stream sees it even between its awaits.
                    lost.notify_one();
                }
            }
        }
    })
}
