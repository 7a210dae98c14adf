//! Where the lines go: a buffer in memory a thread of its own writes out (issue 42, item 5).

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

/// How long a line waits at most before it is written.
const FLUSH_EVERY: Duration = Duration::from_millis(20);
/// Bytes waiting that wake the writer before its time.
const WAKE_AT: usize = 256 * 1024;
/// Bytes waiting beyond which a request that logs waits for the writer (none is dropped).
const WAIT_AT: usize = 8 * 1024 * 1024;

/// Where lines go: a buffer in memory that [`LogWriter::start`]'s thread writes out.
#[derive(Clone)]
pub struct LogWriter(Arc<Pending>);

struct Pending {
    lines: Mutex<Waiting>,
    /// Tells the writer thread to write now (past [`WAKE_AT`], or stopping).
    wake: Condvar,
    /// Tells requests waiting past [`WAIT_AT`] that the buffer was taken.
    room: Condvar,
}

#[derive(Default)]
struct Waiting {
    bytes: Vec<u8>,
    stopping: bool,
}

/// Writes what is left and stops the writer thread when dropped.
pub struct LogGuard {
    pending: Arc<Pending>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LogWriter {
    /// The writer and the thread writing its lines to `out`.
    pub fn start(out: impl std::io::Write + Send + 'static) -> (LogWriter, LogGuard) {
        let pending = Arc::new(Pending { lines: Mutex::new(Waiting::default()), wake: Condvar::new(), room: Condvar::new() });
        let thread = {
            let pending = pending.clone();
            std::thread::Builder::new().name("zmarket-log".into()).spawn(move || write_out(&pending, out)).ok()
        };
        (LogWriter(pending.clone()), LogGuard { pending, thread })
    }

    fn append(&self, line: &[u8]) {
        let mut w = self.0.lines.lock().unwrap_or_else(PoisonError::into_inner);
        while w.bytes.len() >= WAIT_AT && !w.stopping {
            self.0.wake.notify_one();
            w = self.0.room.wait(w).unwrap_or_else(PoisonError::into_inner);
        }
        let before = w.bytes.len();
        w.bytes.extend_from_slice(line);
        if before < WAKE_AT && w.bytes.len() >= WAKE_AT {
            self.0.wake.notify_one();
        }
    }
}

/// The writer thread: takes the buffer (leaving it an empty one of the same size) and writes it.
fn write_out(pending: &Pending, mut out: impl std::io::Write) {
    let mut taken = Vec::new();
    loop {
        let stopping = {
            let mut w = pending.lines.lock().unwrap_or_else(PoisonError::into_inner);
            if w.bytes.len() < WAKE_AT && !w.stopping {
                w = pending.wake.wait_timeout(w, FLUSH_EVERY).unwrap_or_else(PoisonError::into_inner).0;
            }
            std::mem::swap(&mut w.bytes, &mut taken);
            pending.room.notify_all();
            w.stopping
        };
        if !taken.is_empty() {
            let _ = out.write_all(&taken).and_then(|()| out.flush());
            // Keep the room of an ordinary interval's lines, not of a burst's.
            taken.clear();
            taken.shrink_to(WAKE_AT);
        }
        if stopping {
            return;
        }
    }
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        if let Ok(mut w) = self.pending.lines.lock() {
            w.stopping = true;
        }
        self.pending.wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What the fmt layer writes one event's line through (it writes the whole line at once).
pub struct LineOut<'a>(&'a LogWriter);

impl std::io::Write for LineOut<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.append(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LineOut<'a>;

    fn make_writer(&'a self) -> LineOut<'a> {
        LineOut(self)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    #[derive(Clone, Default)]
    pub(in crate::telemetry) struct Captured(pub(in crate::telemetry) Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Captured;
        fn make_writer(&'a self) -> Captured {
            self.clone()
        }
    }

    /// A disk slower than the lines come: each write takes 30 ms.
    struct Slow(Captured);

    impl std::io::Write for Slow {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            std::thread::sleep(Duration::from_millis(30));
            self.0.write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_writer_writes_every_line_in_order_soon_and_all_at_the_end() {
        let out = Captured::default();
        let (writer, guard) = LogWriter::start(Slow(out.clone()));
        use std::io::Write as _;
        writer.make_writer().write_all(b"first\n").unwrap();
        // Written within its interval, without the guard's help.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while out.0.lock().unwrap().is_empty() {
            assert!(std::time::Instant::now() < deadline, "a line waited more than 5 s");
            std::thread::sleep(Duration::from_millis(5));
        }
        // Four threads write 16 MB, more than the buffer holds before a writer waits for the
        // slow disk: nothing lost, each thread's lines in its order.
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let writer = writer.clone();
                std::thread::spawn(move || {
                    let x = "x".repeat(1000);
                    for i in 0..4000 {
                        writer.make_writer().write_all(format!("{t}:{i} {x}\n").as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        writer.make_writer().write_all(b"last\n").unwrap();
        drop(guard);
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert!(text.starts_with("first\n") && text.ends_with("last\n"));
        let mut next = [0usize; 4];
        for line in text.lines().skip(1).take(16_000) {
            let (t, i) = line.split_once(' ').unwrap().0.split_once(':').unwrap();
            let (t, i): (usize, usize) = (t.parse().unwrap(), i.parse().unwrap());
            assert_eq!(i, next[t], "thread {t}");
            next[t] += 1;
        }
        assert_eq!(next, [4000; 4]);
    }
}
