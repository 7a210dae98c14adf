//! The agent's side of the channel's streams (src/protocol/frames.rs): each `open` becomes a
//! task that connects the stream to what it names on this box (a container's declared port, an
//! allowed port of the box, a shell in a container, a container's log) and moves bytes both
//! ways, sending only what the market granted and granting the market what was written here.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use futures::{Stream, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::tcp::OwnedReadHalf;
use tokio::sync::{Semaphore, mpsc};
use tokio_tungstenite::tungstenite::Message;

use crate::apps::{AppRunner, container};
use crate::containers::Runtime;
use zmarket_protocol::frames::{self, CloseReason, FIRST_CHUNK, Flow, FromAgent, LogLine, LogStream, MAX_CHUNK, Target, WINDOW};

type Reader = Pin<Box<dyn Stream<Item = Result<Bytes, ()>> + Send>>;
type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// What the streams of this box may reach.
pub struct Reach {
    pub runner: AppRunner,
    /// Ports of the box itself its owner may reach (`[agent] tcp_ports`).
    pub tcp_ports: Vec<u16>,
    /// Where each (installation, container port) was reached, with the runner's generation
    /// then: a web page's requests each open a stream, and asking Docker costs milliseconds.
    /// It holds until an operation on an installation begins or ends
    /// ([`AppRunner::generation`]) or the address refuses a connection.
    pub ports: Mutex<HashMap<(String, u16), (SocketAddr, u64)>>,
}

impl Reach {
    pub fn new(runner: AppRunner, tcp_ports: Vec<u16>) -> Reach {
        Reach { runner, tcp_ports, ports: Mutex::new(HashMap::new()) }
    }

    /// The address remembered for the installation's container port, while it holds.
    fn known_address(&self, key: &(String, u16)) -> Option<SocketAddr> {
        let now = self.runner.generation();
        self.ports.lock().unwrap().get(key).filter(|(_, generation)| *generation == now).map(|(p, _)| *p)
    }
}

/// The streams open on one connection of the channel.
pub struct Streams {
    out: mpsc::Sender<Message>,
    reach: Arc<Reach>,
    open: Mutex<HashMap<u32, Ctl>>,
}

struct Ctl {
    credit: Arc<Semaphore>,
    input: mpsc::UnboundedSender<Input>,
    task: tokio::task::AbortHandle,
}

enum Input {
    Data(Bytes),
    Resize(u16, u16),
    /// The market's side is done.
    End,
}

/// Where a stream's bytes come from: a TCP connection, read straight into the frame that
/// carries them, or items (a shell's output, log lines), cut into frames.
enum Source {
    Tcp(OwnedReadHalf),
    Items { reader: Reader, left: Bytes },
}

impl Source {
    /// Reads what comes next into `frame` (emptied first), after the stream's 4-byte id: at most
    /// `want` bytes. `None` once the source ended. Cancel-safe: nothing is lost when another
    /// branch of a `select!` wins.
    async fn fill(&mut self, id: u32, frame: &mut BytesMut, want: usize) -> Option<usize> {
        frame.clear();
        frame.reserve(4 + want);
        frame.put_u32(id);
        match self {
            Source::Tcp(r) => match r.read_buf(&mut (&mut *frame).limit(want)).await {
                Ok(0) | Err(_) => None,
                Ok(n) => Some(n),
            },
            Source::Items { reader, left } => {
                while left.is_empty() {
                    *left = reader.next().await?.ok()?;
                }
                let piece = left.split_to(left.len().min(want));
                frame.extend_from_slice(&piece);
                Some(piece.len())
            }
        }
    }
}

/// The size of a stream's next read: doubled while reads fill it (a bulk transfer's frames grow
/// to [`MAX_CHUNK`]), halved back while they come in under a quarter of it.
fn next_chunk(chunk: usize, got: usize) -> usize {
    if got >= chunk {
        (chunk * 2).min(MAX_CHUNK)
    } else if got < chunk / 4 {
        (chunk / 2).max(FIRST_CHUNK)
    } else {
        chunk
    }
}

async fn send(out: &mpsc::Sender<Message>, frame: &FromAgent) -> bool {
    match serde_json::to_string(frame) {
        Ok(t) => out.send(Message::Text(t.into())).await.is_ok(),
        Err(_) => false,
    }
}

impl Streams {
    pub fn new(out: mpsc::Sender<Message>, reach: Arc<Reach>) -> Arc<Streams> {
        Arc::new(Streams { out, reach, open: Mutex::new(HashMap::new()) })
    }

    pub fn open(self: &Arc<Self>, id: u32, target: Target) {
        let credit = Arc::new(Semaphore::new(WINDOW as usize));
        let (tx, rx) = mpsc::unbounded_channel();
        let me = self.clone();
        let c = credit.clone();
        let task = tokio::spawn(async move {
            let reason = me.run(id, target, c, rx).await;
            me.open.lock().unwrap().remove(&id);
            send(&me.out, &FromAgent::Close { stream: id, reason }).await;
        });
        let mut open = self.open.lock().unwrap();
        if let Some(old) = open.insert(id, Ctl { credit, input: tx, task: task.abort_handle() }) {
            old.task.abort();
        }
    }

    /// The market granted `bytes` more: a market of version 1 grants at most a [`WINDOW`] at a
    /// time, a newer one more while the stream's window grows (never past [`frames::MAX_WINDOW`]: [`frames::granted`]).
    pub fn window(&self, id: u32, bytes: u32) {
        if let Some(c) = self.open.lock().unwrap().get(&id) {
            c.credit.add_permits(frames::granted(c.credit.available_permits(), bytes));
        }
    }

    /// Bytes of a stream from the market (a slice of the message they came in: no copy).
    pub fn data(&self, id: u32, bytes: Bytes) {
        if let Some(c) = self.open.lock().unwrap().get(&id) {
            let _ = c.input.send(Input::Data(bytes));
        }
    }

    pub fn resize(&self, id: u32, cols: u16, rows: u16) {
        if let Some(c) = self.open.lock().unwrap().get(&id) {
            let _ = c.input.send(Input::Resize(cols, rows));
        }
    }

    pub fn close(&self, id: u32) {
        if let Some(c) = self.open.lock().unwrap().get(&id) {
            let _ = c.input.send(Input::End);
        }
    }

    /// The channel is gone: every stream stops.
    pub fn stop_all(&self) {
        for (_, c) in self.open.lock().unwrap().drain() {
            c.task.abort();
        }
    }

    async fn run(&self, id: u32, target: Target, credit: Arc<Semaphore>, mut input: mpsc::UnboundedReceiver<Input>) -> CloseReason {
        let half_close = matches!(target, Target::App { .. } | Target::Host { .. });
        let (mut source, mut writer, shell) = match self.connect(target).await {
            Ok(x) => x,
            Err(reason) => return reason,
        };
        if !send(&self.out, &FromAgent::Opened { stream: id }).await {
            return CloseReason::ChannelLost;
        }
        // Two frames read into in turn (each one's allocation comes back once the channel wrote
        // what it carried, so a bulk stream reuses them rather than touching fresh memory), the
        // size of the next read, and what the market sent that was written here.
        let mut frames = [BytesMut::new(), BytesMut::new()];
        let mut turn = 0;
        let mut chunk = FIRST_CHUNK;
        let mut flow = Flow::new();
        loop {
            // Read no more than the market granted (a small read when little is granted, so
            // that the frame is never held back for a grant).
            let want = chunk.min(credit.available_permits().max(FIRST_CHUNK));
            tokio::select! {
                got = source.fill(id, &mut frames[turn], want) => match got {
                    Some(n) => {
                        let Ok(permit) = credit.acquire_many(n as u32).await else { return CloseReason::Done };
                        permit.forget();
                        if self.out.send(Message::Binary(frames[turn].split().freeze())).await.is_err() {
                            return CloseReason::ChannelLost;
                        }
                        turn = 1 - turn;
                        chunk = next_chunk(chunk, n);
                    }
                    None => return CloseReason::Done,
                },
                inp = input.recv() => match inp {
                    Some(Input::Data(b)) => {
                        let Some(w) = writer.as_mut() else { continue };
                        flow.arrived(b.len());
                        if w.write_all(&b).await.is_err() || w.flush().await.is_err() {
                            return CloseReason::Done;
                        }
                        for bytes in flow.took(b.len(), Instant::now()) {
                            send(&self.out, &FromAgent::Window { stream: id, bytes }).await;
                        }
                    }
                    Some(Input::Resize(cols, rows)) => {
                        if let Some((rt, exec)) = &shell {
                            let _ = rt.resize_shell(exec, cols, rows).await;
                        }
                    }
                    Some(Input::End) | None => {
                        if let Some(mut w) = writer.take() {
                            let _ = w.shutdown().await;
                        }
                        if !half_close {
                            return CloseReason::Done;
                        }
                    }
                },
            }
        }
    }

    /// Connects to what the stream names.
    async fn connect(&self, target: Target) -> Result<(Source, Option<Writer>, Option<(Runtime, String)>), CloseReason> {
        match target {
            Target::Host { port } => {
                if !self.reach.tcp_ports.contains(&port) {
                    return Err(CloseReason::PortNotAllowed);
                }
                let (r, w) = tcp(("127.0.0.1", port)).await?;
                Ok((Source::Tcp(r), Some(w), None))
            }
            Target::App { installation, port } => {
                if !self.reach.runner.declares(&installation, port).ok_or(CloseReason::NotFound)? {
                    return Err(CloseReason::PortNotAllowed);
                }
                let key = (installation.clone(), port);
                // No Docker call while the container's address is known (a refused connection
                // asks again: the container may have moved).
                if let Some(addr) = self.reach.known_address(&key)
                    && let Ok((r, w)) = tcp(addr).await
                {
                    return Ok((Source::Tcp(r), Some(w), None));
                }
                let generation = self.reach.runner.generation();
                let rt = runtime(&self.reach.runner).await?;
                let seen = rt.inspect(&container(&installation)).await.map_err(|_| CloseReason::Failed)?.ok_or(CloseReason::NotFound)?;
                if seen.state != bollard::models::ContainerStateStatusEnum::RUNNING {
                    return Err(CloseReason::NotRunning);
                }
                let published = SocketAddr::from(([127, 0, 0, 1], *seen.ports.get(&format!("{port}/tcp")).ok_or(CloseReason::Refused)?));
                // The container's own address first (no proxy between); the published port when
                // that address cannot be reached from here (rootless Docker, another namespace).
                let inside = match seen.address.map(|ip| SocketAddr::new(ip, port)) {
                    Some(a) => tokio::time::timeout(DIRECT_CONNECT, tcp(a)).await.ok().and_then(Result::ok).map(|c| (a, c)),
                    None => None,
                };
                let (addr, (r, w)) = match inside {
                    Some(reached) => reached,
                    None => (published, tcp(published).await?),
                };
                self.reach.ports.lock().unwrap().insert(key, (addr, generation));
                Ok((Source::Tcp(r), Some(w), None))
            }
            Target::Exec { installation, cols, rows } => {
                if !self.reach.runner.runs(&installation) {
                    return Err(CloseReason::NotFound);
                }
                let rt = runtime(&self.reach.runner).await?;
                let name = container(&installation);
                let seen = rt.inspect(&name).await.map_err(|_| CloseReason::Failed)?.ok_or(CloseReason::NotFound)?;
                if seen.state != bollard::models::ContainerStateStatusEnum::RUNNING {
                    return Err(CloseReason::NotRunning);
                }
                let (exec, shell) = rt.shell(&name, cols, rows).await.map_err(|_| CloseReason::Failed)?;
                let output: Reader = Box::pin(shell.output.map(|item| item.map(|o| o.into_bytes()).map_err(|_| ())));
                Ok((Source::Items { reader: output, left: Bytes::new() }, Some(shell.input), Some((rt, exec))))
            }
            Target::Logs { installation, tail, follow } => {
                if !self.reach.runner.runs(&installation) {
                    return Err(CloseReason::NotFound);
                }
                let rt = runtime(&self.reach.runner).await?;
                let name = container(&installation);
                rt.inspect(&name).await.map_err(|_| CloseReason::Failed)?.ok_or(CloseReason::NotFound)?;
                let lines = rt.logs(&name, tail, follow).map(|item| match item {
                    Ok(o) => Ok(log_line(o)),
                    Err(_) => Err(()),
                });
                Ok((Source::Items { reader: Box::pin(lines), left: Bytes::new() }, None, None))
            }
        }
    }
}

async fn runtime(runner: &AppRunner) -> Result<Runtime, CloseReason> {
    Runtime::connect(runner.docker_socket()).await.map_err(|_| CloseReason::DockerUnavailable)
}

/// How long a connection to a container's own address may take before the published port is
/// used instead (an address this host cannot route to would wait for TCP's own timeout).
const DIRECT_CONNECT: Duration = Duration::from_millis(500);

async fn tcp(addr: impl tokio::net::ToSocketAddrs) -> Result<(OwnedReadHalf, Writer), CloseReason> {
    let s = tokio::net::TcpStream::connect(addr).await.map_err(|_| CloseReason::Refused)?;
    let _ = s.set_nodelay(true);
    let (r, w) = s.into_split();
    Ok((r, Box::pin(w)))
}

/// One Docker log record as the line the market reads: `<timestamp> <text>` split, the
/// stream named.
fn log_line(o: bollard::container::LogOutput) -> Bytes {
    use bollard::container::LogOutput as O;
    let (stream, message) = match o {
        O::StdErr { message } => (LogStream::Stderr, message),
        O::StdOut { message } | O::Console { message } | O::StdIn { message } => (LogStream::Stdout, message),
    };
    let text = String::from_utf8_lossy(&message);
    let text = text.trim_end_matches(['\n', '\r']);
    let (ts, text) = match text.split_once(' ') {
        Some((ts, rest)) if ts.len() >= 20 && ts.as_bytes()[4] == b'-' => (ts.to_string(), rest.to_string()),
        _ => (String::new(), text.to_string()),
    };
    let mut line = serde_json::to_vec(&LogLine { ts, stream, text }).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_grow_while_they_fill_and_shrink_back() {
        let mut chunk = FIRST_CHUNK;
        let mut seen = vec![chunk];
        for _ in 0..10 {
            chunk = next_chunk(chunk, chunk);
            seen.push(chunk);
        }
        assert_eq!(&seen[..4], &[FIRST_CHUNK, 2 * FIRST_CHUNK, 4 * FIRST_CHUNK, MAX_CHUNK]);
        assert_eq!(chunk, MAX_CHUNK, "never past MAX_CHUNK");
        assert_eq!(next_chunk(MAX_CHUNK, MAX_CHUNK / 2), MAX_CHUNK, "a read half full keeps the size");
        let mut chunk = MAX_CHUNK;
        for _ in 0..10 {
            chunk = next_chunk(chunk, 100);
        }
        assert_eq!(chunk, FIRST_CHUNK, "small reads bring it back, never under FIRST_CHUNK");
    }

    /// A TCP source reads straight into the frame, after the stream's id, at most what is
    /// asked.
    #[tokio::test]
    async fn a_tcp_source_reads_into_the_frame_after_the_stream_id() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let serving = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            s.write_all(&vec![9u8; 100_000]).await.unwrap();
        });
        let (r, _w) = tcp(("127.0.0.1", port)).await.unwrap();
        serving.await.unwrap();
        let mut source = Source::Tcp(r);
        let mut frame = BytesMut::new();
        let mut total = 0;
        while let Some(n) = source.fill(7, &mut frame, FIRST_CHUNK).await {
            assert!(n > 0 && n <= FIRST_CHUNK);
            assert_eq!(frame.len(), 4 + n);
            assert_eq!(&frame[..4], &7u32.to_be_bytes());
            assert!(frame[4..].iter().all(|b| *b == 9));
            total += n;
            drop(frame.split().freeze());
        }
        assert_eq!(total, 100_000);
    }

    /// The host port of a container is remembered until an operation on an installation
    /// begins or ends.
    #[test]
    fn a_remembered_port_holds_until_the_installations_move() {
        let dir = std::env::temp_dir().join(format!("zmarket-streams-test-{}", std::process::id()));
        let runner = AppRunner::new(
            crate::apps::AppsOptions {
                server: "http://127.0.0.1:1".into(),
                state_dir: dir.clone(),
                registry_mirror: String::new(),
                docker_socket: "/nonexistent.sock".into(),
                public_host: "127.0.0.1".into(),
                gpu_runtime: false,
            },
            "secret",
        );
        let reach = Reach::new(runner.clone(), vec![]);
        let key = ("inst".to_string(), 80);
        let addr = SocketAddr::from(([172, 17, 0, 2], 80));
        reach.ports.lock().unwrap().insert(key.clone(), (addr, runner.generation()));
        assert_eq!(reach.known_address(&key), Some(addr));
        assert_eq!(reach.known_address(&key), Some(addr), "asked again, still no Docker call");
        runner.moved();
        assert_eq!(reach.known_address(&key), None, "an operation moved the installations: Docker is asked again");
        let _ = std::fs::remove_dir_all(dir);
    }
}
