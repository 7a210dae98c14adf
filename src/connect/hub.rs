//! This instance's agent channels and the streams multiplexed over them (frames:
//! src/protocol/frames.rs). A [`Link`] is one device's open channel here; an [`AgentStream`] is
//! one stream on it (a TCP connection, a shell, a log) with its flow control: the market sends
//! only as many bytes as the agent granted, and grants the agent more only as the stream's
//! reader takes them, so a reader that stops reading stops its stream and nothing else.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::{Message, Utf8Bytes};
use bytes::Bytes;
use tokio::sync::{Notify, Semaphore, mpsc, oneshot};

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use zmarket_protocol::frames::{self, CloseReason, Flow, MAX_CHUNK, MAX_STREAMS, Target, ToAgent, WINDOW};

/// How long the agent has to open a stream.
const OPEN_WAIT: Duration = Duration::from_secs(15);
/// Messages queued for one channel's writer before senders wait.
const OUT_QUEUE: usize = 256;

/// Every channel open on this instance, by device id.
#[derive(Clone)]
pub struct Channels(Arc<Inner>);

struct Inner {
    /// This instance's name in `devices.channel_instance`.
    instance: String,
    /// Where the other instances reach this one.
    internal_url: String,
    links: Mutex<HashMap<String, Arc<Link>>>,
    next_conn: AtomicU64,
    /// A channel opened (the command watcher sleeps while there is none).
    opened: Notify,
}

impl Channels {
    pub fn new(internal_url: &str) -> Channels {
        Channels(Arc::new(Inner {
            instance: uuid::Uuid::now_v7().simple().to_string(),
            internal_url: internal_url.to_string(),
            links: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(1),
            opened: Notify::new(),
        }))
    }

    pub fn instance(&self) -> &str {
        &self.0.instance
    }

    /// Registers a new channel of `device_id` (replacing an older one of the same device) and
    /// hands back the link with the receiving end of its writer's queue.
    pub fn attach(&self, device_id: &str) -> (Arc<Link>, mpsc::Receiver<Message>) {
        let (tx, rx) = mpsc::channel(OUT_QUEUE);
        let conn = self.0.next_conn.fetch_add(1, Ordering::Relaxed);
        let link = Arc::new(Link {
            device_id: device_id.to_string(),
            token: format!("{}:{conn} {}", self.0.instance, self.0.internal_url),
            out: tx,
            streams: Mutex::new(HashMap::new()),
            next_stream: AtomicU32::new(1),
            commands: Notify::new(),
            pushed: Mutex::new(HashSet::new()),
            replaced: Notify::new(),
            kept: Default::default(),
        });
        let old = self.0.links.lock().unwrap().insert(device_id.to_string(), link.clone());
        if let Some(old) = old {
            old.lost();
            // One channel per box (issue 43, item 1): the older socket closes, not only its streams.
            old.replaced.notify_one();
        }
        self.0.opened.notify_one();
        (link, rx)
    }

    /// The channel closed: forgets it (unless a newer one of the device replaced it) and ends
    /// its streams. True when it was the device's current channel.
    pub fn detach(&self, link: &Arc<Link>) -> bool {
        let mut links = self.0.links.lock().unwrap();
        let current = links.get(&link.device_id).is_some_and(|l| Arc::ptr_eq(l, link));
        if current {
            links.remove(&link.device_id);
        }
        drop(links);
        link.lost();
        current
    }

    /// The device's channel on this instance.
    pub fn get(&self, device_id: &str) -> Option<Arc<Link>> {
        self.0.links.lock().unwrap().get(device_id).cloned()
    }

    /// Devices with a channel here, at most `n` from the `from`-th on (in the map's order, which
    /// holds while no channel opens or closes): the watcher looks at a slice a time.
    pub fn devices(&self, from: usize, n: usize) -> Vec<Arc<Link>> {
        self.0.links.lock().unwrap().values().skip(from).take(n).cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.0.links.lock().unwrap().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Resolves when a channel opens.
    pub async fn opened(&self) {
        self.0.opened.notified().await
    }
}

/// One device's channel on this instance.
pub struct Link {
    pub device_id: String,
    /// `<instance>:<connection> <internal url>`, recorded in `devices.channel_instance` while it
    /// is open (src/connect/forward.rs reads it).
    pub token: String,
    out: mpsc::Sender<Message>,
    streams: Mutex<HashMap<u32, Slot>>,
    next_stream: AtomicU32,
    /// Pending commands may be waiting: the channel's loop looks.
    pub commands: Notify,
    /// Command ids sent on this connection (a command is sent again only with a beat's answer).
    pushed: Mutex<HashSet<String>>,
    /// A newer channel of the device replaced this one: its loop closes the socket.
    pub replaced: Notify,
    /// Kept-alive connections to the apps of the box, over streams of this channel.
    pub kept: crate::connect::kept::Kept,
}

struct Slot {
    tx: mpsc::UnboundedSender<Chunk>,
    /// Bytes the market may still send to the agent on this stream.
    credit: Arc<Semaphore>,
    /// What the agent was granted, sent, and the reader took (src/protocol/frames.rs [`Flow`]).
    flow: Arc<std::sync::Mutex<Flow>>,
    opened: Option<oneshot::Sender<Result<(), CloseReason>>>,
}

enum Chunk {
    Data(Bytes),
    End(CloseReason),
}

impl Link {
    /// Queues a control frame for the agent; false when the channel is gone.
    pub async fn send(&self, frame: &ToAgent) -> bool {
        let Ok(text) = serde_json::to_string(frame) else { return false };
        self.send_text(text.into()).await
    }

    /// Queues a control frame already written (an answer kept for the next beats).
    pub async fn send_text(&self, text: Utf8Bytes) -> bool {
        self.out.send(Message::Text(text)).await.is_ok()
    }

    /// Queues a control frame without waiting: when the writer's queue is full, a task waits
    /// for room (a grant or a close must not be lost, and a reader's poll cannot wait).
    pub fn send_soon(&self, frame: &ToAgent) {
        let Ok(text) = serde_json::to_string(frame) else { return };
        if let Err(mpsc::error::TrySendError::Full(m)) = self.out.try_send(Message::Text(text.into())) {
            let out = self.out.clone();
            tokio::spawn(async move {
                let _ = out.send(m).await;
            });
        }
    }

    /// Queues a ping unless the writer's queue is full (then the channel is not idle anyway).
    pub fn ping(&self) {
        let _ = self.out.try_send(Message::Ping(Bytes::new()));
    }

    /// Command ids not sent on this connection yet, marked as sent.
    pub fn unsent(&self, ids: impl IntoIterator<Item = String>) -> Vec<String> {
        let mut pushed = self.pushed.lock().unwrap();
        ids.into_iter().filter(|id| pushed.insert(id.clone())).collect()
    }

    pub fn was_pushed(&self, id: &str) -> bool {
        self.pushed.lock().unwrap().contains(id)
    }

    /// Opens a stream to `target`; the agent's refusal comes back as its reason.
    pub async fn open(self: &Arc<Self>, target: Target) -> Result<AgentStream, CloseReason> {
        let (tx, rx) = mpsc::unbounded_channel();
        let (opened_tx, opened_rx) = oneshot::channel();
        let credit = Arc::new(Semaphore::new(WINDOW as usize));
        let flow = Arc::new(Mutex::new(Flow::new()));
        let id = {
            let mut streams = self.streams.lock().unwrap();
            if streams.len() >= MAX_STREAMS {
                return Err(CloseReason::TooMany);
            }
            let mut id = self.next_stream.fetch_add(1, Ordering::Relaxed);
            while streams.contains_key(&id) || id == 0 {
                id = self.next_stream.fetch_add(1, Ordering::Relaxed);
            }
            streams.insert(id, Slot { tx, credit: credit.clone(), flow: flow.clone(), opened: Some(opened_tx) });
            id
        };
        let stream = AgentStream { link: self.clone(), id, rx, credit, flow, done: false };
        if !self.send(&ToAgent::Open { stream: id, target }).await {
            return Err(CloseReason::ChannelLost);
        }
        match tokio::time::timeout(OPEN_WAIT, opened_rx).await {
            Ok(Ok(Ok(()))) => Ok(stream),
            Ok(Ok(Err(reason))) => Err(reason),
            Ok(Err(_)) => Err(CloseReason::ChannelLost),
            Err(_) => Err(CloseReason::Failed),
        }
    }

    /// The agent opened a stream.
    pub fn on_opened(&self, stream: u32) {
        if let Some(slot) = self.streams.lock().unwrap().get_mut(&stream)
            && let Some(tx) = slot.opened.take()
        {
            let _ = tx.send(Ok(()));
        }
    }

    /// The agent took `bytes` more of what the market sent (an agent of version 1 grants what
    /// it wrote; a newer one more while the stream's window grows, never past [`frames::MAX_WINDOW`]: [`frames::granted`]).
    pub fn on_window(&self, stream: u32, bytes: u32) {
        if let Some(slot) = self.streams.lock().unwrap().get(&stream) {
            slot.credit.add_permits(frames::granted(slot.credit.available_permits(), bytes));
        }
    }

    /// The agent ended a stream (or refused to open it).
    pub fn on_close(&self, stream: u32, reason: CloseReason) {
        if let Some(mut slot) = self.streams.lock().unwrap().remove(&stream) {
            end(&mut slot, reason);
        }
    }

    /// Bytes of a stream from the agent (a slice of the message they came in: no copy). An
    /// agent that sends more than it was granted breaks the protocol: the stream ends (and the
    /// market tells the agent).
    pub async fn on_data(&self, stream: u32, bytes: Bytes) {
        let broken = {
            let mut streams = self.streams.lock().unwrap();
            let Some(slot) = streams.get(&stream) else { return };
            if !slot.flow.lock().unwrap().arrived(bytes.len()) {
                if let Some(mut slot) = streams.remove(&stream) {
                    end(&mut slot, CloseReason::Protocol);
                }
                true
            } else {
                let _ = slot.tx.send(Chunk::Data(bytes));
                false
            }
        };
        if broken {
            self.send(&ToAgent::Close { stream }).await;
        }
    }

    /// The channel is gone: every stream on it ends.
    fn lost(&self) {
        let mut streams = self.streams.lock().unwrap();
        for (_, mut slot) in streams.drain() {
            end(&mut slot, CloseReason::ChannelLost);
        }
    }

    /// Streams open now.
    pub fn streams(&self) -> usize {
        self.streams.lock().unwrap().len()
    }
}

fn end(slot: &mut Slot, reason: CloseReason) {
    if let Some(tx) = slot.opened.take() {
        let _ = tx.send(Err(reason));
    }
    let _ = slot.tx.send(Chunk::End(reason));
    slot.credit.close();
}

/// One stream over a device's channel, as the market's side holds it. Dropping it closes it.
pub struct AgentStream {
    link: Arc<Link>,
    id: u32,
    rx: mpsc::UnboundedReceiver<Chunk>,
    credit: Arc<Semaphore>,
    flow: Arc<Mutex<Flow>>,
    done: bool,
}

impl AgentStream {
    /// The next bytes from the agent; `Err` with the reason once the stream ended.
    pub async fn recv(&mut self) -> Result<Bytes, CloseReason> {
        if self.done {
            return Err(CloseReason::Done);
        }
        match self.rx.recv().await {
            Some(Chunk::Data(b)) => {
                let grants = self.flow.lock().unwrap().took(b.len(), Instant::now());
                for bytes in grants {
                    self.link.send(&ToAgent::Window { stream: self.id, bytes }).await;
                }
                Ok(b)
            }
            Some(Chunk::End(reason)) => {
                self.done = true;
                Err(reason)
            }
            None => {
                self.done = true;
                Err(CloseReason::ChannelLost)
            }
        }
    }

    /// Sends bytes to the agent, waiting for its grants.
    pub async fn send(&self, bytes: &[u8]) -> Result<(), CloseReason> {
        for chunk in bytes.chunks(MAX_CHUNK) {
            let permit = self.credit.acquire_many(chunk.len() as u32).await.map_err(|_| CloseReason::Done)?;
            permit.forget();
            self.link.out.send(Message::Binary(frames::data(self.id, chunk).into())).await.map_err(|_| CloseReason::ChannelLost)?;
        }
        Ok(())
    }

    /// A terminal's new size.
    pub async fn resize(&self, cols: u16, rows: u16) {
        self.link.send(&ToAgent::Resize { stream: self.id, cols, rows }).await;
    }

    /// The stream as a byte pipe (for hyper and for copying), [`StreamIo`].
    pub fn into_io(self) -> StreamIo {
        StreamIo { stream: self, left: Bytes::new(), sending: None, shut: false }
    }
}

/// An [`AgentStream`] as a byte pipe for hyper and for copying: a read takes the agent's
/// bytes as they came (a slice of their message), a write becomes one data message (waiting
/// for the agent's grant): no task and no buffer between.
pub struct StreamIo {
    stream: AgentStream,
    /// What the last read left of the agent's bytes.
    left: Bytes,
    /// A write taken and not queued on the channel yet (waiting for a grant, or for room).
    sending: Option<Pin<Box<dyn Future<Output = Result<(), ()>> + Send>>>,
    shut: bool,
}

impl StreamIo {
    /// What tells whether the stream ended, kept apart from it.
    pub fn end(&self) -> crate::connect::kept::StreamEnd {
        crate::connect::kept::StreamEnd(self.stream.credit.clone())
    }

    fn poll_sending(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let Some(f) = self.sending.as_mut() else { return Poll::Ready(Ok(())) };
        let r = std::task::ready!(f.as_mut().poll(cx));
        self.sending = None;
        Poll::Ready(r.map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe)))
    }
}

impl tokio::io::AsyncRead for StreamIo {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut tokio::io::ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let me = &mut *self;
        while me.left.is_empty() {
            if me.stream.done {
                return Poll::Ready(Ok(()));
            }
            match std::task::ready!(me.stream.rx.poll_recv(cx)) {
                Some(Chunk::Data(b)) => {
                    let grants = me.stream.flow.lock().unwrap().took(b.len(), Instant::now());
                    for bytes in grants {
                        me.stream.link.send_soon(&ToAgent::Window { stream: me.stream.id, bytes });
                    }
                    me.left = b;
                }
                Some(Chunk::End(_)) | None => me.stream.done = true,
            }
        }
        let n = me.left.len().min(buf.remaining());
        buf.put_slice(&me.left.split_to(n));
        Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for StreamIo {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        let me = &mut *self;
        std::task::ready!(me.poll_sending(cx))?;
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let n = data.len().min(MAX_CHUNK);
        let msg = Message::Binary(frames::data(me.stream.id, &data[..n]).into());
        let out = me.stream.link.out.clone();
        match me.stream.credit.clone().try_acquire_many_owned(n as u32) {
            Ok(permit) => {
                permit.forget();
                match out.try_send(msg) {
                    Ok(()) => return Poll::Ready(Ok(n)),
                    Err(mpsc::error::TrySendError::Closed(_)) => return Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into())),
                    Err(mpsc::error::TrySendError::Full(msg)) => me.sending = Some(Box::pin(async move { out.send(msg).await.map_err(|_| ()) })),
                }
            }
            Err(_) => {
                let credit = me.stream.credit.clone();
                me.sending = Some(Box::pin(async move {
                    credit.acquire_many_owned(n as u32).await.map_err(|_| ())?.forget();
                    out.send(msg).await.map_err(|_| ())
                }));
            }
        }
        // Taken: it leaves once granted; a flush or the next write waits for that.
        let _ = me.poll_sending(cx);
        Poll::Ready(Ok(n))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_sending(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let me = &mut *self;
        std::task::ready!(me.poll_sending(cx))?;
        if !me.shut {
            // The local side is done writing: the agent's side sees the end.
            me.shut = true;
            me.stream.link.send_soon(&ToAgent::Close { stream: me.stream.id });
        }
        Poll::Ready(Ok(()))
    }
}

impl Drop for AgentStream {
    fn drop(&mut self) {
        let had = self.link.streams.lock().unwrap().remove(&self.id).is_some();
        if had {
            let frame = serde_json::to_string(&ToAgent::Close { stream: self.id }).unwrap_or_default();
            let _ = self.link.out.try_send(Message::Text(frame.into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zmarket_protocol::frames::{ToAgent, parse_data};

    fn frame(m: Message) -> Option<ToAgent> {
        match m {
            Message::Text(t) => serde_json::from_str(&t).ok(),
            _ => None,
        }
    }

    #[tokio::test]
    async fn a_stream_opens_carries_bytes_with_credit_and_ends() {
        let channels = Channels::new("http://127.0.0.1:1");
        let (link, mut out) = channels.attach("D");
        let l = link.clone();
        let opening = tokio::spawn(async move { l.open(Target::Host { port: 22 }).await });
        let Some(ToAgent::Open { stream, .. }) = frame(out.recv().await.unwrap()) else { panic!("open expected") };
        link.on_opened(stream);
        let s = opening.await.unwrap().unwrap();
        // The market sends at most WINDOW bytes until the agent grants more.
        let big = vec![7u8; WINDOW as usize + 10];
        let sending = tokio::spawn(async move {
            s.send(&big).await.unwrap();
            s
        });
        let mut got = 0usize;
        while got < WINDOW as usize {
            match out.recv().await.unwrap() {
                Message::Binary(b) => got += parse_data(&b).unwrap().1.len(),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(got, WINDOW as usize);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(out.try_recv().is_err(), "nothing beyond the window before a grant");
        link.on_window(stream, 10);
        let Message::Binary(b) = out.recv().await.unwrap() else { panic!() };
        assert_eq!(parse_data(&b).unwrap().1.len(), 10);
        let mut s = sending.await.unwrap();
        link.on_data(stream, Bytes::from_static(b"hi")).await;
        assert_eq!(&s.recv().await.unwrap()[..], b"hi");
        link.on_close(stream, CloseReason::Refused);
        assert_eq!(s.recv().await, Err(CloseReason::Refused));
        assert_eq!(link.streams(), 0);
    }

    #[tokio::test]
    async fn more_than_granted_breaks_the_stream_and_a_lost_channel_ends_all() {
        let channels = Channels::new("http://127.0.0.1:1");
        let (link, mut out) = channels.attach("D");
        let l = link.clone();
        let opening = tokio::spawn(async move { l.open(Target::Host { port: 22 }).await });
        let Some(ToAgent::Open { stream, .. }) = frame(out.recv().await.unwrap()) else { panic!() };
        link.on_opened(stream);
        let mut s = opening.await.unwrap().unwrap();
        link.on_data(stream, Bytes::from(vec![0u8; WINDOW as usize])).await;
        link.on_data(stream, Bytes::from_static(b"x")).await;
        assert!(s.recv().await.is_ok());
        assert_eq!(s.recv().await, Err(CloseReason::Protocol));
        // A refused open, then the channel lost while another stream is open.
        let l = link.clone();
        let opening = tokio::spawn(async move { l.open(Target::Host { port: 23 }).await });
        // The broken stream's close (beside the reader's grant for the chunk it took), then the open.
        let mut closed = false;
        let stream = loop {
            match frame(out.recv().await.unwrap()) {
                Some(ToAgent::Close { .. }) => closed = true,
                Some(ToAgent::Open { stream, .. }) => break stream,
                _ => {}
            }
        };
        assert!(closed, "the market tells the agent the broken stream is closed");
        link.on_close(stream, CloseReason::PortNotAllowed);
        assert_eq!(opening.await.unwrap().err(), Some(CloseReason::PortNotAllowed));
        let l = link.clone();
        let opening = tokio::spawn(async move { l.open(Target::Host { port: 22 }).await });
        let Some(ToAgent::Open { stream, .. }) = frame(out.recv().await.unwrap()) else { panic!() };
        link.on_opened(stream);
        let mut s = opening.await.unwrap().unwrap();
        assert!(channels.detach(&link));
        assert_eq!(s.recv().await, Err(CloseReason::ChannelLost));
        assert!(channels.get("D").is_none());
    }
}
