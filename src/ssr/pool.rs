//! A pool of render threads, each owning one QuickJS runtime with the server bundle loaded.
//! Handlers hand a job to a bounded queue and await the answer; when the pool holds as many
//! visitors' renders as it has threads and places in the queue they are told at once (and fall
//! back to client rendering) instead of waiting. A render ahead of visitors (warming the cache)
//! is taken only while no visitor's render is held, and never counts against their places: a
//! visitor may wait behind it, never be refused for it.
//!
//! The bundle is parsed once per process: the first runtime compiles it to bytecode (without the
//! functions' source text, which QuickJS otherwise keeps in every runtime for `toString`), and
//! every runtime, the first included and any rebuilt after a failure, loads that bytecode. A runtime
//! idle for [`IDLE_GC`] collects its garbage and the process hands freed memory back to the system
//! (docs/performance.md).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rquickjs::{Context, Ctx, Function, Runtime, qjs};
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
    /// Given back when the job is answered or dropped.
    _place: Place,
}

/// One of the pool's places (a visitor's or the one ahead of visitors), held from admission
/// until the job is answered or dropped.
struct Place(Arc<AtomicUsize>);

impl Place {
    /// A place when fewer than `limit` are held.
    fn take(held: &Arc<AtomicUsize>, limit: usize) -> Option<Place> {
        held.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < limit).then_some(n + 1)).ok()?;
        Some(Place(held.clone()))
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Clone)]
pub struct RenderPool {
    tx: SyncSender<Job>,
    /// Threads whose runtime has loaded (a render queued before then waits for the load).
    loaded: Arc<AtomicUsize>,
    threads: usize,
    /// Visitors' renders queued or running, at most `threads + queue`.
    visitors: Arc<AtomicUsize>,
    /// Renders ahead of visitors queued or running, at most one.
    ahead: Arc<AtomicUsize>,
    capacity: usize,
}

#[derive(Debug, Clone)]
pub struct PoolOptions {
    pub threads: usize,
    pub queue: usize,
    pub deadline: Duration,
    pub memory_limit_bytes: usize,
}

/// A runtime with no job for this long collects its garbage (cycles the reference counts leave)
/// and the freed memory is returned to the system.
const IDLE_GC: Duration = Duration::from_secs(1);

/// The server bundle and, once the first runtime has compiled it, its bytecode (shared by the
/// pool's runtimes).
struct Bundle {
    script: &'static str,
    bytecode: OnceLock<Result<Vec<u8>, String>>,
}

impl RenderPool {
    /// Starts the threads. Each loads its runtime right away, in the background, so start-up
    /// of the server does not wait for the bundle to be evaluated.
    pub fn start(script: &'static str, opts: PoolOptions) -> RenderPool {
        let threads = opts.threads.max(1);
        let capacity = threads + opts.queue;
        // Room for every place (the visitors' and the one ahead): a send never finds it full.
        let (tx, rx) = sync_channel::<Job>(capacity + 1);
        let rx = Arc::new(Mutex::new(rx));
        let loaded = Arc::new(AtomicUsize::new(0));
        let bundle = Arc::new(Bundle { script, bytecode: OnceLock::new() });
        for i in 0..threads {
            let rx = rx.clone();
            let loaded = loaded.clone();
            let opts = opts.clone();
            let bundle = bundle.clone();
            std::thread::Builder::new()
                .name(format!("render-{i}"))
                .spawn(move || worker(&bundle, rx, opts, loaded))
                .expect("spawning a render thread");
        }
        RenderPool { tx, loaded, threads, visitors: Arc::default(), ahead: Arc::default(), capacity }
    }

    /// True once every thread's runtime has loaded.
    pub fn loaded(&self) -> bool {
        self.loaded.load(Ordering::SeqCst) >= self.threads
    }

    /// True when every runtime has loaded and no render is queued or running.
    pub fn idle(&self) -> bool {
        self.loaded() && self.visitors.load(Ordering::SeqCst) == 0 && self.ahead.load(Ordering::SeqCst) == 0
    }

    /// A visitor's render; `Saturated` at once when the visitors hold every place.
    pub async fn render(&self, url: String, state_json: String) -> Result<Rendered, RenderError> {
        let place = Place::take(&self.visitors, self.capacity).ok_or(RenderError::Saturated)?;
        self.send(url, state_json, place).await
    }

    /// A render ahead of visitors (warming): taken only while the pool is [idle](Self::idle),
    /// `Saturated` otherwise. A visitor arriving after it waits behind it, never refused for it.
    pub async fn render_ahead(&self, url: String, state_json: String) -> Result<Rendered, RenderError> {
        if !self.idle() {
            return Err(RenderError::Saturated);
        }
        let place = Place::take(&self.ahead, 1).ok_or(RenderError::Saturated)?;
        self.send(url, state_json, place).await
    }

    async fn send(&self, url: String, state_json: String, place: Place) -> Result<Rendered, RenderError> {
        let (reply, rx) = oneshot::channel();
        match self.tx.try_send(Job { url, state_json, reply, _place: place }) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => return Err(RenderError::Saturated),
            Err(TrySendError::Disconnected(_)) => return Err(RenderError::Stopped),
        }
        rx.await.unwrap_or(Err(RenderError::Stopped))
    }
}

fn worker(bundle: &Bundle, rx: Arc<Mutex<Receiver<Job>>>, opts: PoolOptions, loaded: Arc<AtomicUsize>) {
    let mut engine: Option<Engine> = Engine::new(bundle, &opts)
        .map_err(|e| tracing::error!(error = %e, "render runtime failed to load"))
        .ok();
    loaded.fetch_add(1, Ordering::SeqCst);
    // Garbage left since the last collection (the load's, then each render's).
    let mut dirty = true;
    loop {
        let job = {
            let Ok(guard) = rx.lock() else { return };
            match guard.recv_timeout(IDLE_GC) {
                Ok(job) => job,
                Err(RecvTimeoutError::Timeout) => {
                    drop(guard);
                    if dirty {
                        if let Some(e) = &engine {
                            e.runtime.run_gc();
                        }
                        release_free_memory();
                        dirty = false;
                    } else {
                        // Let a thread waiting for the queue have its turn (and its own collection).
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => return, // pool dropped
            }
        };
        if job.reply.is_closed() {
            continue; // the request went away while queued
        }
        dirty = true;
        let mut load_error = None;
        if engine.is_none() {
            engine = Engine::new(bundle, &opts)
                .map_err(|e| {
                    tracing::error!(error = %e, "render runtime failed to load");
                    load_error = Some(e);
                })
                .ok();
        }
        let result = match engine.as_mut() {
            Some(e) => e.render(&job.url, &job.state_json),
            None => Err(load_error.unwrap_or_else(|| RenderError::Failed("render runtime unavailable".into()))),
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

/// Hands the allocator's free pages back to the system (glibc keeps them per thread arena).
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

impl Engine {
    fn new(bundle: &Bundle, opts: &PoolOptions) -> Result<Engine, RenderError> {
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
            let bytecode = bundle.bytecode.get_or_init(|| {
                compile(&ctx, bundle.script).map_err(|e| match e {
                    RenderError::Failed(text) => text,
                    other => other.to_string(),
                })
            });
            let bytecode = bytecode.as_ref().map_err(|e| RenderError::Failed(e.clone()))?;
            run_bytecode(&ctx, bytecode)
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

/// The script compiled to bytecode, without the functions' source text (kept otherwise for
/// `Function.prototype.toString`, which the bundle does not use on its own functions).
fn compile(ctx: &Ctx<'_>, script: &str) -> Result<Vec<u8>, RenderError> {
    let source = std::ffi::CString::new(script).map_err(|_| RenderError::Failed("the server bundle contains a NUL byte".into()))?;
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `raw` is the live context of `ctx`; QuickJS wants the source NUL-terminated (it is)
    // and its length without the NUL; every value and buffer made here is freed here.
    unsafe {
        let flags = (qjs::JS_EVAL_TYPE_GLOBAL | qjs::JS_EVAL_FLAG_STRICT | qjs::JS_EVAL_FLAG_COMPILE_ONLY) as i32;
        let function = qjs::JS_Eval(raw, source.as_ptr(), script.len() as _, c"server.js".as_ptr(), flags);
        if qjs::JS_IsException(function) {
            return Err(js_error(ctx, rquickjs::Error::Exception));
        }
        let mut size: qjs::size_t = 0;
        let buf = qjs::JS_WriteObject(raw, &mut size, function, (qjs::JS_WRITE_OBJ_BYTECODE | qjs::JS_WRITE_OBJ_STRIP_SOURCE) as i32);
        qjs::JS_FreeValue(raw, function);
        if buf.is_null() {
            return Err(js_error(ctx, rquickjs::Error::Exception));
        }
        let bytes = std::slice::from_raw_parts(buf, size as usize).to_vec();
        qjs::js_free(raw, buf.cast());
        Ok(bytes)
    }
}

/// Loads bytecode made by [`compile`] (in this process, so trusted) and runs it.
fn run_bytecode(ctx: &Ctx<'_>, bytecode: &[u8]) -> Result<(), RenderError> {
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `raw` is the live context of `ctx`; JS_ReadObject copies what it needs from the
    // buffer; JS_EvalFunction takes the function and the result is freed here.
    unsafe {
        let function = qjs::JS_ReadObject(raw, bytecode.as_ptr(), bytecode.len() as _, qjs::JS_READ_OBJ_BYTECODE as i32);
        if qjs::JS_IsException(function) {
            return Err(js_error(ctx, rquickjs::Error::Exception));
        }
        let result = qjs::JS_EvalFunction(raw, function);
        if qjs::JS_IsException(result) {
            return Err(js_error(ctx, rquickjs::Error::Exception));
        }
        qjs::JS_FreeValue(raw, result);
    }
    Ok(())
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
    async fn every_thread_renders_from_the_shared_bytecode_and_keeps_its_state_through_idle_collections() {
        let p = RenderPool::start(SCRIPT, PoolOptions { threads: 2, queue: 8, deadline: Duration::from_secs(5), memory_limit_bytes: 32 << 20 });
        let first = futures::future::join_all((0..6).map(|i| p.render(format!("/p{i}"), format!(r#"{{"n":{i}}}"#)))).await;
        assert!(first.iter().all(|r| r.is_ok()), "{first:?}");
        // Idle long enough for each runtime to collect its garbage, then render again.
        tokio::time::sleep(IDLE_GC * 3).await;
        assert_eq!(p.render("/after".into(), r#"{"n":7}"#.into()).await.unwrap().html, "<p>/after 7</p>");
    }

    #[tokio::test]
    async fn a_bundle_that_does_not_compile_fails_every_render_with_its_error() {
        let p = RenderPool::start("globalThis.zmarketRender = function (", PoolOptions { threads: 2, queue: 4, deadline: Duration::from_secs(1), memory_limit_bytes: 32 << 20 });
        for _ in 0..2 {
            let e = p.render("/a".into(), "{}".into()).await.unwrap_err().to_string();
            assert!(e.starts_with("render failed: ") && e.contains("server.js:1:"), "{e}");
            assert!(!e.contains("render failed: render failed"), "{e}");
        }
    }

    async fn loaded(p: &RenderPool) {
        while !p.idle() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[tokio::test]
    async fn a_render_ahead_never_takes_a_visitors_place() {
        let p = RenderPool::start(SCRIPT, PoolOptions { threads: 1, queue: 1, deadline: Duration::from_millis(300), memory_limit_bytes: 32 << 20 });
        loaded(&p).await;
        // The one thread is busy ahead of visitors (until its deadline)...
        let ahead = p.render_ahead("/loop".into(), "{}".into());
        let visitors = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            // ...and no second render ahead is taken meanwhile...
            assert!(matches!(p.render_ahead("/a".into(), "{}".into()).await, Err(RenderError::Saturated)));
            // ...yet the thread and the queue's place are still the visitors': both wait, none is refused.
            futures::future::join(p.render("/v".into(), r#"{"n":1}"#.into()), p.render("/w".into(), r#"{"n":2}"#.into())).await
        };
        let (ahead, (v, w)) = tokio::join!(ahead, visitors);
        assert!(ahead.is_err());
        assert_eq!((v.unwrap().html, w.unwrap().html), ("<p>/v 1</p>".to_string(), "<p>/w 2</p>".to_string()));
        // A third visitor while two are held is refused, and a render ahead is not taken while a visitor is held.
        let (a, b, c, d) = tokio::join!(
            p.render("/loop".into(), "{}".into()),
            p.render("/loop".into(), "{}".into()),
            p.render("/x".into(), "{}".into()),
            p.render_ahead("/y".into(), "{}".into())
        );
        assert!(a.is_err() && b.is_err());
        assert!(matches!(c, Err(RenderError::Saturated)), "{c:?}");
        assert!(matches!(d, Err(RenderError::Saturated)), "{d:?}");
        loaded(&p).await;
    }

    #[tokio::test]
    async fn a_full_queue_answers_saturated_at_once() {
        let p = RenderPool::start(SCRIPT, PoolOptions { threads: 1, queue: 1, deadline: Duration::from_millis(300), memory_limit_bytes: 32 << 20 });
        let slow = (0..6).map(|_| p.render("/loop".into(), "{}".into()));
        let results = futures::future::join_all(slow).await;
        assert!(results.iter().any(|r| matches!(r, Err(RenderError::Saturated))));
    }
}
