//! The accept loop of `zmarket serve` (HTTP/1.1 over hyper), with the limits a public server
//! needs (issue 16, finding 4): a client must send its request headers within
//! `server.header_read_timeout_secs`; a connection on which nothing moves for
//! `server.idle_timeout_secs` is closed; at most `server.max_connections` are open at once (below
//! the open-file limit, so the database and data files always have descriptors left; beyond it
//! new connections wait in the kernel's queue) and at most `server.max_connections_per_ip` per
//! client address (beyond it a connection is closed at once; trusted proxies are exempt), so
//! one client holding sockets open cannot keep others, or `/healthz`, out.
//!
//! Issue 29: the header-read time-out runs from a request's first byte (and for a new
//! connection's first request from the connection), never while a kept-alive connection waits
//! between requests: such a connection closes only after `server.idle_timeout_secs` (finding 12,
//! an ECONNRESET when a client sent on a connection the server was closing). A request body must
//! keep `server.min_body_rate_bytes` (`http::MinRate`); an event stream gives its connection's
//! place back and takes one of `server.max_event_streams` instead (`http::EventStreamPlace`).
//!
//! Issue 43, item 1: a connection that becomes a WebSocket keeps both its places (the
//! connection's and its address's) for as long as the socket lives, and takes one of its kind's
//! (src/sockets.rs, `http::socket_place`). Item 7: the slow bodies of a client address are
//! counted across its connections (`http::SlowBodies`): one that drops each slow body just
//! before its grace and reconnects gets less grace each time, down to a second.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use crate::app::App;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::time::{Instant, Sleep};
use tower::Service;

use crate::client_ip::TrustedProxies;
use crate::config::Config;

/// The connection limits, from the configuration.
#[derive(Clone)]
pub struct ConnLimits {
    pub max: usize,
    pub per_ip: usize,
    pub header_read: Duration,
    pub idle: Duration,
    pub trusted: TrustedProxies,
    pub min_body_rate: u64,
    pub body_grace: Duration,
    pub streams: usize,
    /// WebSockets of each kind; of each kind per address; per owner (src/sockets.rs).
    pub sockets: (usize, usize, usize),
}

impl ConnLimits {
    pub fn from_config(c: &Config) -> Self {
        ConnLimits {
            max: c.connection_cap(),
            per_ip: c.server.max_connections_per_ip,
            header_read: Duration::from_secs(c.server.header_read_timeout_secs),
            idle: Duration::from_secs(c.server.idle_timeout_secs),
            trusted: TrustedProxies::new(&c.server.trusted_proxies).unwrap_or_default(),
            min_body_rate: c.server.min_body_rate_bytes,
            body_grace: Duration::from_secs(c.server.body_grace_secs),
            streams: c.event_stream_cap(),
            sockets: (c.socket_cap(), c.socket_cap_per_ip(), c.server.max_sockets_per_owner),
        }
    }
}

/// Serves `router` on `listener` until `shutdown` resolves; then stops accepting, lets the
/// requests in flight finish (up to 30 s) and returns.
pub async fn serve(listener: TcpListener, router: App, limits: ConnLimits, shutdown: impl Future<Output = ()> + Send + 'static) {
    let slots = Arc::new(Semaphore::new(limits.max));
    let streams = Arc::new(Semaphore::new(limits.streams));
    let per_ip = Arc::new(Mutex::new(HashMap::<IpAddr, usize>::new()));
    let sockets = crate::sockets::SocketCaps::new(limits.sockets.0, limits.sockets.1, limits.sockets.2);
    // Slow bodies counted per client address across its connections (issue 43, item 7).
    let slow = crate::http::SlowBodies::new(limits.body_grace);
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
            _ = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    // Out of descriptors or a connection reset before accept: pause, go on.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let Some(ip_slot) = IpSlot::take(&per_ip, peer.ip(), &limits) else {
            tracing::debug!(%peer, "too many connections from this address: closed");
            continue;
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let mut stop = stop_rx.clone();
        let (header_read, idle, rate) = (limits.header_read, limits.idle, limits.min_body_rate);
        let (slow, trusted, peer_ip) = (slow.clone(), limits.trusted.clone(), peer.ip());
        // The address's share goes with the connection: a WebSocket holding it keeps it (issue 43).
        let connection = crate::http::Conn::new(peer.ip(), limits.trusted.clone(), permit, streams.clone(), Box::new(ip_slot), sockets.clone());
        tokio::spawn(async move {
            let exchange = Arc::new(Exchange::default());
            let io = TokioIo::new(IdleIo::new(ReadAhead::new(stream), idle, header_read, exchange.clone()));
            let for_requests = connection.clone();
            // The connection's own copy of the stack (HTTP/1.1 answers one request at a time):
            // a request clones nothing every core shares (src/stack.rs, `Market`'s clone).
            let router = std::cell::RefCell::new(router);
            let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                req.extensions_mut().insert(for_requests.clone());
                let busy = Busy::new(&exchange);
                let upgraded = exchange.clone();
                let client = trusted.client_of(peer_ip, req.headers());
                let answer = router.borrow_mut().call(req.map(|b| axum::body::Body::new(crate::http::MinRate::counted(b, rate, &slow, client))));
                async move {
                    let res = answer.await;
                    // A WebSocket from here on: its frames are not requests, no head is awaited.
                    if res.as_ref().is_ok_and(|r| r.status() == hyper::StatusCode::SWITCHING_PROTOCOLS) {
                        upgraded.upgraded.store(true, Ordering::SeqCst);
                    }
                    drop(busy);
                    res
                }
            });
            // The header-read time-out is IdleIo's (it knows when a request begins); hyper's
            // would also close a kept-alive connection waiting between requests.
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(None)
                // A browser's cookies for a site reach ~740 KB (180 of 4 KB): an app origin drops
                // a bombed Cookie header instead of answering 431 (issue 43, item 3).
                .max_buf_size(MAX_HEAD_BYTES)
                .serve_connection(io, service)
                // WebSockets (the agent channel, terminals, tunnels, apps' own sockets).
                .with_upgrades();
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
            drop(connection);
        });
    }
    let _ = stop_tx.send(true);
    let all = u32::try_from(limits.max).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(Duration::from_secs(30), slots.acquire_many(all)).await;
}

/// The longest request head read (hyper's default is ~400 KB).
const MAX_HEAD_BYTES: usize = 1024 * 1024;

/// What the requests of a connection tell its socket.
#[derive(Default)]
struct Exchange {
    /// Requests whose head has arrived, ever.
    heads: AtomicUsize,
    /// Requests being answered now.
    busy: AtomicUsize,
    /// The connection became a WebSocket (101): only the idle limit applies.
    upgraded: std::sync::atomic::AtomicBool,
}

/// A request being answered on a connection.
struct Busy(Arc<Exchange>);

impl Busy {
    fn new(exchange: &Arc<Exchange>) -> Busy {
        exchange.heads.fetch_add(1, Ordering::SeqCst);
        exchange.busy.fetch_add(1, Ordering::SeqCst);
        Busy(exchange.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One of a client address's connections; given back when dropped.
struct IpSlot {
    map: Arc<Mutex<HashMap<IpAddr, usize>>>,
    ip: Option<IpAddr>,
}

impl IpSlot {
    fn take(map: &Arc<Mutex<HashMap<IpAddr, usize>>>, ip: IpAddr, limits: &ConnLimits) -> Option<IpSlot> {
        if limits.trusted.trusts(ip) {
            return Some(IpSlot { map: map.clone(), ip: None });
        }
        let mut m = map.lock().ok()?;
        let n = m.entry(ip).or_insert(0);
        if *n >= limits.per_ip {
            return None;
        }
        *n += 1;
        Some(IpSlot { map: map.clone(), ip: Some(ip) })
    }
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        if let (Some(ip), Ok(mut m)) = (self.ip, self.map.lock())
            && let Some(n) = m.get_mut(&ip)
        {
            *n -= 1;
            if *n == 0 {
                m.remove(&ip);
            }
        }
    }
}

/// A socket that fails with `TimedOut` once nothing has been read or written for `idle`, or
/// when a request's head has not arrived `header_read` after its first byte (a new connection's
/// first request: after the connection opened). It also gives hyper's own answer to a request
/// line over 64 KiB (a bare `414` with an empty body, written before any handler runs) the API's
/// envelope (issue 16, finding 8).
///
/// Both limits share one timer, set lazily (issue 28 item 2): a read or a write only notes the
/// time, and a new head only its deadline; the timer, armed at or before the earliest deadline,
/// looks again when it fires and is set anew unless a limit has passed. So a request costs no
/// timer-wheel update and no allocation here (before: two resets and a new boxed `Sleep`).
struct IdleIo<T> {
    inner: T,
    idle: Duration,
    header_read: Duration,
    /// The last read or write that moved bytes.
    moved_at: Instant,
    /// Awaited head: its deadline, with the count of heads when it began.
    head_due: Option<(Instant, usize)>,
    /// Fires at or before the earliest of `moved_at + idle` and the head's deadline.
    timer: Pin<Box<Sleep>>,
    exchange: Arc<Exchange>,
    /// Bytes of a replaced answer still to write.
    pending: Vec<u8>,
}

const URI_TOO_LONG: &str = r#"{"code":414,"data":null,"msg":"The request address is too long"}"#;

impl<T> IdleIo<T> {
    fn new(inner: T, idle: Duration, header_read: Duration, exchange: Arc<Exchange>) -> Self {
        let now = Instant::now();
        IdleIo {
            inner,
            idle,
            header_read,
            moved_at: now,
            head_due: Some((now + header_read, 0)),
            timer: Box::pin(tokio::time::sleep_until(now + idle.min(header_read))),
            exchange,
            pending: Vec::new(),
        }
    }
    /// Bytes arrived: with no request being answered they begin a request's head.
    fn head_bytes(&mut self) {
        if self.settle_head() {
            return;
        }
        if self.head_due.is_none() && self.exchange.busy.load(Ordering::SeqCst) == 0 {
            let due = self.moved_at + self.header_read;
            self.head_due = Some((due, self.exchange.heads.load(Ordering::SeqCst)));
            // The timer is usually due already (the last head's deadline or sooner).
            if self.timer.deadline() > due {
                self.timer.as_mut().reset(due);
            }
        }
    }
    /// Forgets the awaited head once it arrived (a head came since it began) or once the
    /// connection became a WebSocket (no heads from then on). True when upgraded.
    fn settle_head(&mut self) -> bool {
        let upgraded = self.exchange.upgraded.load(Ordering::SeqCst);
        let heads = self.exchange.heads.load(Ordering::SeqCst);
        if upgraded || self.head_due.is_some_and(|(_, at)| at != heads) {
            self.head_due = None;
        }
        upgraded
    }
    fn moved(&mut self) {
        self.moved_at = Instant::now();
    }
    /// With the socket waiting: has a limit passed? If not, the timer is left armed for the
    /// earliest deadline ahead.
    fn overdue(&mut self, cx: &mut Context<'_>) -> bool {
        while self.timer.as_mut().poll(cx).is_ready() {
            self.settle_head();
            let idle_due = self.moved_at + self.idle;
            let head_due = self.head_due.map(|(due, _)| due);
            let now = Instant::now();
            let next = head_due.map_or(idle_due, |d| d.min(idle_due));
            if next <= now {
                return true;
            }
            self.timer.as_mut().reset(next);
        }
        false
    }
    /// What a write to the socket answered: progress restarts the idle clock; waiting past the
    /// idle limit is the time-out.
    fn wrote(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match r {
            Poll::Ready(r) => {
                if matches!(r, Ok(n) if n > 0) {
                    self.moved();
                }
                Poll::Ready(r)
            }
            Poll::Pending if self.overdue(cx) => Poll::Ready(Err(timed_out())),
            Poll::Pending => Poll::Pending,
        }
    }
}

fn timed_out() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, "connection idle")
}

impl<T: AsyncRead + Unpin> AsyncRead for IdleIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if buf.filled().len() > before {
                    self.moved();
                    self.head_bytes();
                }
                Poll::Ready(r)
            }
            Poll::Pending if self.overdue(cx) => Poll::Ready(Err(timed_out())),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncWrite + Unpin> IdleIo<T> {
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            match Pin::new(&mut self.inner).poll_write(cx, &self.pending) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    self.pending.drain(..n);
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for IdleIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        if let Poll::Ready(Err(e)) = self.drain(cx) {
            return Poll::Ready(Err(e));
        }
        if !self.pending.is_empty() {
            return Poll::Pending;
        }
        if data.starts_with(b"HTTP/1.1 414 ") {
            self.pending = format!(
                "HTTP/1.1 414 URI Too Long\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{URI_TOO_LONG}",
                URI_TOO_LONG.len()
            )
            .into_bytes();
            if let Poll::Ready(Err(e)) = self.drain(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(data.len()));
        }
        let r = Pin::new(&mut self.inner).poll_write(cx, data);
        self.wrote(cx, r)
    }
    /// hyper writes a response's head and body with one `writev` when the socket takes vectors;
    /// without this it copies every body into its own buffer first (issue 18: a 56 KB page).
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        // The 414 answer (and anything while a replaced answer is pending) goes the one-buffer way.
        if !self.pending.is_empty() || bufs.first().is_some_and(|b| b.starts_with(b"HTTP/1.1 414 ")) {
            let first = bufs.iter().find(|b| !b.is_empty()).map_or(&[][..], |b| &b[..]);
            return self.poll_write(cx, first);
        }
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(cx, r)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Reads ahead for a reader that asks for little at a time (issue 42 item 3). A WebSocket reads
/// its socket in `connect::channel::READ_BUFFER` (4 KiB) pieces, kept small for the thousands of
/// idle agent channels; a tunnel's bulk then costs a `read` a 4 KiB. Once [`STREAK`] reads in a
/// row fill a small request, reads go into a buffer of [`AHEAD`] bytes here and requests are
/// served from it; a read that brings less than a quarter of it ends the streak and the buffer
/// is freed once served. An idle connection holds no buffer (one whose bulk just ended keeps it
/// until its next read brings a trickle); a large request is read into directly.
struct ReadAhead<T> {
    inner: T,
    ahead: Vec<u8>,
    /// What of `ahead` is still to serve.
    at: usize,
    /// Small requests in a row that a read filled.
    streak: u8,
}

/// What one read ahead takes at most.
const AHEAD: usize = 64 * 1024;
/// Small requests filled in a row before reads go ahead.
const STREAK: u8 = 4;

impl<T> ReadAhead<T> {
    fn new(inner: T) -> Self {
        ReadAhead { inner, ahead: Vec::new(), at: 0, streak: 0 }
    }

    /// Serves `buf` what it takes of the bytes read ahead; frees the buffer once it is served
    /// and the streak has ended.
    fn serve(&mut self, buf: &mut ReadBuf<'_>) {
        let n = buf.remaining().min(self.ahead.len() - self.at);
        buf.put_slice(&self.ahead[self.at..self.at + n]);
        self.at += n;
        if self.at == self.ahead.len() && self.streak == 0 {
            self.ahead = Vec::new();
            self.at = 0;
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ReadAhead<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.at < this.ahead.len() {
            this.serve(buf);
            return Poll::Ready(Ok(()));
        }
        let asked = buf.remaining();
        if asked == 0 {
            return Poll::Ready(Ok(()));
        }
        if asked >= AHEAD / 4 || this.streak < STREAK {
            let before = buf.filled().len();
            std::task::ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
            let got = buf.filled().len() - before;
            this.streak = if asked < AHEAD / 4 && got == asked { this.streak.saturating_add(1) } else { 0 };
            return Poll::Ready(Ok(()));
        }
        this.ahead.resize(AHEAD, 0);
        let mut ahead = ReadBuf::new(&mut this.ahead);
        let read = Pin::new(&mut this.inner).poll_read(cx, &mut ahead);
        let got = ahead.filled().len();
        this.ahead.truncate(got);
        this.at = 0;
        std::task::ready!(read)?;
        if got < AHEAD / 4 {
            this.streak = 0;
        }
        this.serve(buf);
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ReadAhead<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod read_ahead_tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Small reads of a bulk arrive whole and in order, through the buffer once the streak
    /// starts; the buffer is gone once a trickle follows.
    #[tokio::test]
    async fn small_reads_of_a_bulk_arrive_whole_and_the_buffer_goes_after() {
        let (mut tx, rx) = tokio::io::duplex(1 << 20);
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let sent = data.clone();
        let writer = tokio::spawn(async move {
            tx.write_all(&sent).await.unwrap();
            tx
        });
        let mut r = ReadAhead::new(rx);
        let mut got = Vec::new();
        let mut piece = [0u8; 4096];
        let mut went_ahead = false;
        while got.len() < data.len() {
            let n = r.read(&mut piece).await.unwrap();
            assert!(n > 0);
            got.extend_from_slice(&piece[..n]);
            went_ahead |= !r.ahead.is_empty();
        }
        assert_eq!(got, data);
        assert!(went_ahead, "a bulk read in small pieces goes through the buffer");
        let mut tx = writer.await.unwrap();
        tx.write_all(b"beat").await.unwrap();
        let n = r.read(&mut piece).await.unwrap();
        assert_eq!(&piece[..n], b"beat");
        assert!(r.ahead.is_empty() && r.ahead.capacity() == 0, "a trickle frees the buffer");
        drop(tx);
        assert_eq!(r.read(&mut piece).await.unwrap(), 0, "the end is passed on");
    }
}
