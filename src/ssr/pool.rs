//! A pool of render threads, each owning one QuickJS runtime with the server bundle loaded.
//! Handlers hand a job to a bounded queue and await the answer; when the queue is full they
//! are told at once (and fall back to client rendering) instead of waiting.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rquickjs::{Context, Function, Runtime};
use serde::Deserialize;
use tokio::sync::oneshot;

/// What `zmarketRender` answers.
#[derive(Debug, Clone, Deserialize)]
pub struct Rendered {
    pub html: String,
    pub status: u16,
    pub title: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("render queue full")]
    Saturated,
    #[error("render failed: {0}")]
    Failed(String),
    #[error("render pool stopped")]
    Stopped,
}

struct Job {
    url: String,
    state_json: String,
    reply: oneshot::Sender<Result<Rendered, RenderError>>,
}

#[derive(Clone)]
pub struct RenderPool {
    tx: SyncSender<Job>,
    /// Threads whose runtime has loaded (a render queued before then waits for the load).
    loaded: Arc<AtomicUsize>,
    threads: usize,
}

#[derive(Debug, Clone)]
pub struct PoolOptions {
    pub threads: usize,
    pub queue: usize,
    pub deadline: Duration,
    pub memory_limit_bytes: usize,
}

impl RenderPool {
    /// Starts the threads. Each loads its runtime right away, in the background, so start-up
    /// of the server does not wait for the bundle to be evaluated.
    pub fn start(script: &'static str, opts: PoolOptions) -> RenderPool {
        let (tx, rx) = sync_channel::<Job>(opts.queue);
        let rx = Arc::new(Mutex::new(rx));
        let loaded = Arc::new(AtomicUsize::new(0));
        for i in 0..opts.threads.max(1) {
            let rx = rx.clone();
            let loaded = loaded.clone();
            let opts = opts.clone();
            std::thread::Builder::new()
                .name(format!("render-{i}"))
                .spawn(move || worker(script, rx, opts, loaded))
                .expect("spawning a render thread");
        }
        RenderPool { tx, loaded, threads: opts.threads.max(1) }
    }

    /// True once every thread's runtime has loaded.
    pub fn loaded(&self) -> bool {
        self.loaded.load(Ordering::SeqCst) >= self.threads
    }

    pub async fn render(&self, url: String, state_json: String) -> Result<Rendered, RenderError> {
        let (reply, rx) = oneshot::channel();
        match self.tx.try_send(Job { url, state_json, reply }) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => return Err(RenderError::Saturated),
            Err(TrySendError::Disconnected(_)) => return Err(RenderError::Stopped),
        }
        rx.await.unwrap_or(Err(RenderError::Stopped))
    }
}

fn worker(script: &'static str, rx: Arc<Mutex<Receiver<Job>>>, opts: PoolOptions, loaded: Arc<AtomicUsize>) {
    let mut engine: Option<Engine> = Engine::new(script, &opts)
        .map_err(|e| tracing::error!(error = %e, "render runtime failed to load"))
        .ok();
    loaded.fetch_add(1, Ordering::SeqCst);
    loop {
        let job = {
            let Ok(guard) = rx.lock() else { return };
            match guard.recv() {
                Ok(job) => job,
                Err(_) => return, // pool dropped
            }
        };
        if job.reply.is_closed() {
            continue; // the request went away while queued
        }
        if engine.is_none() {
            engine = Engine::new(script, &opts).map_err(|e| tracing::error!(error = %e, "render runtime failed to load")).ok();
        }
        let result = match engine.as_mut() {
            Some(e) => e.render(&job.url, &job.state_json),
            None => Err(RenderError::Failed("render runtime unavailable".into())),
        };
        if let Err(err) = &result {
            // A failed render may leave the runtime in any state (out of memory, interrupted):
            // rebuild it for the next job.
            tracing::warn!(url = %job.url, error = %err, "render failed; rebuilding the runtime");
            engine = None;
        }
        let _ = job.reply.send(result);
    }
}

struct Engine {
    runtime: Runtime,
    context: Context,
    /// Milliseconds since `epoch` after which the running render is interrupted; 0 = none.
    deadline: Arc<AtomicU64>,
    epoch: Instant,
    timeout: Duration,
}

impl Engine {
    fn new(script: &'static str, opts: &PoolOptions) -> Result<Engine, RenderError> {
        let fail = |e: rquickjs::Error| RenderError::Failed(format!("runtime: {e}"));
        let runtime = Runtime::new().map_err(fail)?;
        runtime.set_memory_limit(opts.memory_limit_bytes);
        runtime.set_max_stack_size(1024 * 1024);
        let deadline = Arc::new(AtomicU64::new(0));
        let epoch = Instant::now();
        {
            let deadline = deadline.clone();
            runtime.set_interrupt_handler(Some(Box::new(move || {
                let d = deadline.load(Ordering::Relaxed);
                d != 0 && epoch.elapsed().as_millis() as u64 > d
            })));
        }
        let context = Context::full(&runtime).map_err(fail)?;
        let engine = Engine { runtime, context, deadline, epoch, timeout: opts.deadline };
        let started = Instant::now();
        engine.context.with(|ctx| -> Result<(), RenderError> {
            let log = Function::new(ctx.clone(), |level: String, msg: String| match level.as_str() {
                "error" => tracing::error!(target: "zmarket::ssr::js", "{msg}"),
                "warn" => tracing::warn!(target: "zmarket::ssr::js", "{msg}"),
                _ => tracing::debug!(target: "zmarket::ssr::js", "{msg}"),
            })
            .map_err(fail)?;
            ctx.globals().set("__zmLog", log).map_err(fail)?;
            ctx.eval::<(), _>(CONSOLE_SHIM).map_err(|e| js_error(&ctx, e))?;
            ctx.eval::<(), _>(script).map_err(|e| js_error(&ctx, e))?;
            Ok(())
        })?;
        engine.drain_jobs();
        tracing::debug!(ms = started.elapsed().as_millis() as u64, "render runtime loaded");
        Ok(engine)
    }

    fn render(&mut self, url: &str, state_json: &str) -> Result<Rendered, RenderError> {
        let limit = self.epoch.elapsed() + self.timeout;
        self.deadline.store(limit.as_millis() as u64, Ordering::Relaxed);
        let out = self.context.with(|ctx| -> Result<String, RenderError> {
            let render: Function = ctx
                .globals()
                .get("zmarketRender")
                .map_err(|_| RenderError::Failed("the server bundle defines no zmarketRender".into()))?;
            render.call::<_, String>((url, state_json)).map_err(|e| js_error(&ctx, e))
        });
        self.drain_jobs();
        self.deadline.store(0, Ordering::Relaxed);
        let out = out?;
        serde_json::from_str::<Rendered>(&out).map_err(|e| RenderError::Failed(format!("bad render result: {e}")))
    }

    fn drain_jobs(&self) {
        while self.runtime.is_job_pending() {
            if self.runtime.execute_pending_job().is_err() {
                break;
            }
        }
    }
}

fn js_error(ctx: &rquickjs::Ctx<'_>, e: rquickjs::Error) -> RenderError {
    if let rquickjs::Error::Exception = e {
        let v = ctx.catch();
        let text = v
            .as_exception()
            .map(|ex| format!("{} {}", ex.message().unwrap_or_default(), ex.stack().unwrap_or_default()))
            .or_else(|| v.as_string().and_then(|s| s.to_string().ok()))
            .unwrap_or_else(|| format!("{v:?}"));
        RenderError::Failed(text)
    } else {
        RenderError::Failed(e.to_string())
    }
}

/// `console` for the bundle: warnings and errors reach our log.
const CONSOLE_SHIM: &str = r#"
(function () {
  var fmt = function (args) {
    return Array.prototype.map.call(args, function (a) {
      if (typeof a === 'string') return a;
      try { return JSON.stringify(a); } catch (e) { return String(a); }
    }).join(' ');
  };
  globalThis.console = {
    log: function () { __zmLog('debug', fmt(arguments)); },
    info: function () { __zmLog('debug', fmt(arguments)); },
    debug: function () { __zmLog('debug', fmt(arguments)); },
    warn: function () { __zmLog('warn', fmt(arguments)); },
    error: function () { __zmLog('error', fmt(arguments)); }
  };
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = r#"
        var calls = 0;
        globalThis.zmarketRender = function (url, state) {
          calls++;
          if (url === '/boom') throw new Error('boom');
          if (url === '/loop') { for (;;) {} }
          if (url === '/hog') { var a = []; for (;;) a.push(new Array(100000).fill(1)); }
          return JSON.stringify({ html: '<p>' + url + ' ' + JSON.parse(state).n + '</p>', status: url === '/missing' ? 404 : 200, title: 't' });
        };
    "#;

    fn pool() -> RenderPool {
        RenderPool::start(SCRIPT, PoolOptions { threads: 1, queue: 4, deadline: Duration::from_millis(200), memory_limit_bytes: 32 << 20 })
    }

    #[tokio::test]
    async fn renders_and_reports_status() {
        let p = pool();
        let r = p.render("/a".into(), r#"{"n":1}"#.into()).await.unwrap();
        assert_eq!((r.html.as_str(), r.status), ("<p>/a 1</p>", 200));
        assert_eq!(p.render("/missing".into(), r#"{"n":2}"#.into()).await.unwrap().status, 404);
    }

    #[tokio::test]
    async fn a_throwing_render_fails_and_the_next_one_works() {
        let p = pool();
        let e = p.render("/boom".into(), "{}".into()).await.unwrap_err();
        assert!(e.to_string().contains("boom"), "{e}");
        assert!(p.render("/ok".into(), r#"{"n":3}"#.into()).await.is_ok());
    }

    #[tokio::test]
    async fn an_endless_render_is_interrupted_at_the_deadline() {
        let p = pool();
        assert!(p.render("/loop".into(), "{}".into()).await.is_err());
        assert_eq!(p.render("/ok".into(), r#"{"n":4}"#.into()).await.unwrap().html, "<p>/ok 4</p>");
    }

    #[tokio::test]
    async fn a_render_over_the_memory_limit_fails_and_the_runtime_is_rebuilt() {
        let p = RenderPool::start(SCRIPT, PoolOptions { threads: 1, queue: 4, deadline: Duration::from_secs(5), memory_limit_bytes: 16 << 20 });
        assert!(p.render("/hog".into(), "{}".into()).await.is_err());
        assert!(p.render("/ok".into(), r#"{"n":5}"#.into()).await.is_ok());
    }

    #[tokio::test]
    async fn a_full_queue_answers_saturated_at_once() {
        let p = RenderPool::start(SCRIPT, PoolOptions { threads: 1, queue: 1, deadline: Duration::from_millis(300), memory_limit_bytes: 32 << 20 });
        let slow = (0..6).map(|_| p.render("/loop".into(), "{}".into()));
        let results = futures::future::join_all(slow).await;
        assert!(results.iter().any(|r| matches!(r, Err(RenderError::Saturated))));
    }
}
