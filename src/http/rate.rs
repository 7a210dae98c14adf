//! Slow request bodies (issue 29, finding 7): a body must keep a minimum rate, and (issue 43,
//! item 7) an address's slow bodies count across its connections.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// The error a [`MinRate`] body ends with.
#[derive(Debug)]
pub struct BodyTooSlow;

impl std::fmt::Display for BodyTooSlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body arrived too slowly")
    }
}

impl std::error::Error for BodyTooSlow {}

/// True when `e` (a body rejection) came from a [`MinRate`] body.
pub(super) fn too_slow(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut at = Some(e);
    while let Some(err) = at {
        if err.is::<BodyTooSlow>() {
            return true;
        }
        at = err.source();
    }
    false
}

/// What slow request bodies cost each client address, across its connections (issue 43, item
/// 7): a client that drops every slow body just before its grace ends and reconnects (9 s of
/// a 10 s grace) was never cut, and held its connections as long as it liked. Each body that
/// ended below the minimum rate (cut, or taking more than [`COUNTED_AFTER_SECS`] beyond what its
/// bytes pay for) adds its unpaid time to its address's debt; a new body of that address gets
/// the grace less the debt (at least [`GRACE_FLOOR`]), so a reconnecting slow client keeps being
/// cut. A debt is forgiven at [`FORGIVEN_PER_SEC`] seconds a second.
pub struct SlowBodies {
    grace: Duration,
    debts: Mutex<HashMap<IpAddr, Debt>>,
    /// Whether any debt was ever noted: until then a request takes no lock here.
    noted: AtomicBool,
}

struct Debt {
    secs: f64,
    at: Instant,
}

/// Unpaid time a body may take without counting (a slow first packet, a busy client).
pub const COUNTED_AFTER_SECS: f64 = 1.0;
/// Debt forgiven per second.
pub const FORGIVEN_PER_SEC: f64 = 0.1;
/// The least grace any body gets.
pub const GRACE_FLOOR: Duration = Duration::from_secs(1);
/// Addresses remembered at most (the forgiven ones go first; beyond, a new one is not noted).
const MAX_ADDRESSES: usize = 65_536;

impl SlowBodies {
    pub fn new(grace: Duration) -> Arc<SlowBodies> {
        Arc::new(SlowBodies { grace, debts: Mutex::new(HashMap::new()), noted: AtomicBool::new(false) })
    }

    fn owed(d: &Debt, now: Instant) -> f64 {
        (d.secs - now.saturating_duration_since(d.at).as_secs_f64() * FORGIVEN_PER_SEC).max(0.0)
    }

    /// The grace of a body of `ip` starting now.
    pub fn grace_for(&self, ip: IpAddr) -> Duration {
        if !self.noted.load(Ordering::Relaxed) {
            return self.grace;
        }
        let Ok(debts) = self.debts.lock() else { return self.grace };
        let owed = debts.get(&ip).map_or(0.0, |d| Self::owed(d, Instant::now()));
        let floor = GRACE_FLOOR.min(self.grace);
        self.grace.saturating_sub(Duration::from_secs_f64(owed)).max(floor)
    }

    /// A body of `ip` ended (read to its end, cut, or dropped) `unpaid` seconds behind the rate.
    fn ended(&self, ip: IpAddr, unpaid: f64, cut: bool) {
        if !(cut || unpaid > COUNTED_AFTER_SECS) {
            return;
        }
        let Ok(mut debts) = self.debts.lock() else { return };
        let now = Instant::now();
        if debts.len() >= MAX_ADDRESSES && !debts.contains_key(&ip) {
            debts.retain(|_, d| Self::owed(d, now) > 0.0);
            if debts.len() >= MAX_ADDRESSES {
                return;
            }
        }
        self.noted.store(true, Ordering::Relaxed);
        let d = debts.entry(ip).or_insert(Debt { secs: 0.0, at: now });
        d.secs = Self::owed(d, now) + unpaid.max(0.0);
        d.at = now;
    }
}

/// A request body that must arrive at `rate` bytes a second at least, averaged from its first
/// read, once it has taken `grace`: a client sending a byte every two seconds cannot hold a
/// connection (and a handler) for as long as its body lasts. Time runs only while someone reads
/// the body; a slower body ends with [`BodyTooSlow`] (408), and its connection is closed. With
/// [`MinRate::counted`], the grace is what its address has left ([`SlowBodies`]).
pub struct MinRate<B> {
    inner: B,
    rate: u64,
    grace: std::time::Duration,
    started: Option<tokio::time::Instant>,
    bytes: u64,
    due: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
    /// The address's ledger, told once when the body ends.
    ledger: Option<(Arc<SlowBodies>, IpAddr)>,
    cut: bool,
}

impl<B> MinRate<B> {
    pub fn new(inner: B, rate: u64, grace: std::time::Duration) -> Self {
        MinRate { inner, rate: rate.max(1), grace, started: None, bytes: 0, due: None, ledger: None, cut: false }
    }

    /// The same, counted against `ip`'s slow bodies: its grace is what the address has left.
    pub fn counted(inner: B, rate: u64, ledger: &Arc<SlowBodies>, ip: IpAddr) -> Self {
        let grace = ledger.grace_for(ip);
        MinRate { inner, rate: rate.max(1), grace, started: None, bytes: 0, due: None, ledger: Some((ledger.clone(), ip)), cut: false }
    }

    /// Tells the ledger how far behind the rate the body ended (once).
    fn settle(&mut self) {
        if let (Some((ledger, ip)), Some(started)) = (self.ledger.take(), self.started) {
            let unpaid = started.elapsed().as_secs_f64() - self.bytes as f64 / self.rate as f64;
            ledger.ended(ip, unpaid, self.cut);
        }
    }
}

impl<B> Drop for MinRate<B> {
    fn drop(&mut self) {
        self.settle();
    }
}

impl<B> hyper::body::Body for MinRate<B>
where
    B: hyper::body::Body<Data = axum::body::Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = axum::body::Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        use std::future::Future;
        use std::task::Poll;
        let this = &mut *self;
        let started = *this.started.get_or_insert_with(tokio::time::Instant::now);
        match std::pin::Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.bytes += data.len() as u64;
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.settle();
                Poll::Ready(Some(Err(e.into())))
            }
            Poll::Ready(None) => {
                this.settle();
                Poll::Ready(None)
            }
            Poll::Pending => {
                // When the bytes read so far stop being enough.
                let due = started + this.grace + std::time::Duration::from_secs_f64(this.bytes as f64 / this.rate as f64);
                let sleep = this.due.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
                if sleep.deadline() != due {
                    sleep.as_mut().reset(due);
                }
                if sleep.as_mut().poll(cx).is_ready() {
                    this.cut = true;
                    this.settle();
                    return Poll::Ready(Some(Err(Box::new(BodyTooSlow))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

