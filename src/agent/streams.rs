//! The agent's side of the channel's streams (src/protocol/frames.rs): each `open` becomes a
//! task that connects the stream to what it names on this box (a container's declared port, an
//! allowed port of the box, a shell in a container, a container's log) and moves bytes both
//! ways, sending only what the market granted and granting the market what was written here.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Semaphore, mpsc};
use tokio_tungstenite::tungstenite::Message;

use crate::apps::{AppRunner, container};
use crate::containers::Runtime;
use zmarket_protocol::frames::{self, CloseReason, FromAgent, LogLine, LogStream, MAX_CHUNK, Target, WINDOW};

type Reader = Pin<Box<dyn Stream<Item = Result<Bytes, ()>> + Send>>;
type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// What the streams of this box may reach.
pub struct Reach {
    pub runner: AppRunner,
    /// Ports of the box itself its owner may reach (`[agent] tcp_ports`).
    pub tcp_ports: Vec<u16>,
    /// The host port of each (installation, container port) seen lately: a web page's requests
    /// each open a stream, and asking Docker every time costs milliseconds.
    pub ports: Mutex<HashMap<(String, u16), (u16, std::time::Instant)>>,
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

    pub fn window(&self, id: u32, bytes: u32) {
        if let Some(c) = self.open.lock().unwrap().get(&id) {
            c.credit.add_permits((bytes as usize).min(WINDOW as usize));
        }
    }

    pub fn data(&self, id: u32, bytes: &[u8]) {
        if let Some(c) = self.open.lock().unwrap().get(&id) {
            let _ = c.input.send(Input::Data(Bytes::copy_from_slice(bytes)));
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
        let (mut reader, mut writer, shell) = match self.connect(target).await {
            Ok(x) => x,
            Err(reason) => return reason,
        };
        if !send(&self.out, &FromAgent::Opened { stream: id }).await {
            return CloseReason::ChannelLost;
        }
        loop {
            tokio::select! {
                got = reader.next() => match got {
                    Some(Ok(b)) => {
                        for piece in b.chunks(MAX_CHUNK) {
                            let Ok(permit) = credit.acquire_many(piece.len() as u32).await else { return CloseReason::Done };
                            permit.forget();
                            if self.out.send(Message::Binary(frames::data(id, piece).into())).await.is_err() {
                                return CloseReason::ChannelLost;
                            }
                        }
                    }
                    Some(Err(())) | None => return CloseReason::Done,
                },
                inp = input.recv() => match inp {
                    Some(Input::Data(b)) => {
                        let Some(w) = writer.as_mut() else { continue };
                        if w.write_all(&b).await.is_err() || w.flush().await.is_err() {
                            return CloseReason::Done;
                        }
                        send(&self.out, &FromAgent::Window { stream: id, bytes: b.len() as u32 }).await;
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
    async fn connect(&self, target: Target) -> Result<(Reader, Option<Writer>, Option<(Runtime, String)>), CloseReason> {
        match target {
            Target::Host { port } => {
                if !self.reach.tcp_ports.contains(&port) {
                    return Err(CloseReason::PortNotAllowed);
                }
                let (r, w) = tcp(port).await?;
                Ok((r, Some(w), None))
            }
            Target::App { installation, port } => {
                let m = self.reach.runner.manifest_of(&installation).ok_or(CloseReason::NotFound)?;
                let key = (installation.clone(), port);
                let known = self.reach.ports.lock().unwrap().get(&key).filter(|(_, at)| at.elapsed() < crate::apps::PORT_FRESH).map(|(p, _)| *p);
                if let Some(host_port) = known
                    && let Ok((r, w)) = tcp(host_port).await
                {
                    return Ok((r, Some(w), None));
                }
                let declared = m.ports.iter().find(|p| p.container == port && p.protocol == "tcp").ok_or(CloseReason::PortNotAllowed)?;
                let rt = runtime(&self.reach.runner).await?;
                let seen = rt.inspect(&container(&installation)).await.map_err(|_| CloseReason::Failed)?.ok_or(CloseReason::NotFound)?;
                if seen.state != bollard::models::ContainerStateStatusEnum::RUNNING {
                    return Err(CloseReason::NotRunning);
                }
                let host_port = *seen.ports.get(&format!("{}/tcp", declared.container)).ok_or(CloseReason::Refused)?;
                self.reach.ports.lock().unwrap().insert(key, (host_port, std::time::Instant::now()));
                let (r, w) = tcp(host_port).await?;
                Ok((r, Some(w), None))
            }
            Target::Exec { installation, cols, rows } => {
                self.reach.runner.manifest_of(&installation).ok_or(CloseReason::NotFound)?;
                let rt = runtime(&self.reach.runner).await?;
                let name = container(&installation);
                let seen = rt.inspect(&name).await.map_err(|_| CloseReason::Failed)?.ok_or(CloseReason::NotFound)?;
                if seen.state != bollard::models::ContainerStateStatusEnum::RUNNING {
                    return Err(CloseReason::NotRunning);
                }
                let (exec, shell) = rt.shell(&name, cols, rows).await.map_err(|_| CloseReason::Failed)?;
                let output: Reader = Box::pin(shell.output.map(|item| item.map(|o| o.into_bytes()).map_err(|_| ())));
                Ok((output, Some(shell.input), Some((rt, exec))))
            }
            Target::Logs { installation, tail, follow } => {
                self.reach.runner.manifest_of(&installation).ok_or(CloseReason::NotFound)?;
                let rt = runtime(&self.reach.runner).await?;
                let name = container(&installation);
                rt.inspect(&name).await.map_err(|_| CloseReason::Failed)?.ok_or(CloseReason::NotFound)?;
                let lines = rt.logs(&name, tail, follow).map(|item| match item {
                    Ok(o) => Ok(log_line(o)),
                    Err(_) => Err(()),
                });
                Ok((Box::pin(lines), None, None))
            }
        }
    }
}

async fn runtime(runner: &AppRunner) -> Result<Runtime, CloseReason> {
    Runtime::connect(runner.docker_socket()).await.map_err(|_| CloseReason::DockerUnavailable)
}

async fn tcp(port: u16) -> Result<(Reader, Writer), CloseReason> {
    let s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.map_err(|_| CloseReason::Refused)?;
    let _ = s.set_nodelay(true);
    let (r, w) = s.into_split();
    let reader = futures::stream::unfold(r, |mut r| async move {
        let mut chunk = vec![0u8; MAX_CHUNK];
        match r.read(&mut chunk).await {
            Ok(0) | Err(_) => None,
            Ok(n) => {
                chunk.truncate(n);
                Some((Ok(Bytes::from(chunk)), r))
            }
        }
    });
    Ok((Box::pin(reader), Box::pin(w)))
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
