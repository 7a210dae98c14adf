//! Times the server bundle's render of a URL with a given page state, in process (no HTTP, no
//! queue): `cargo run --release --example ssr_probe -- URL STATE.json [N] [BUNDLE.js]`. Without
//! BUNDLE.js, the bundle embedded in the binary; with one (e.g. `ui/dist/server.js` after
//! `cd ui && node build.mjs dist`), that file: a change to the UI is measured without a Rust build.
//! STATE.json is a page's `zm-state` (the `<script id="zm-state">` of a rendered page).
use std::time::{Duration, Instant};

use zmarket::ssr::pool::{PoolOptions, RenderPool};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let url = args[1].clone();
    let state = std::fs::read_to_string(&args[2]).unwrap();
    let n: usize = args.get(3).map_or(50, |s| s.parse().unwrap());
    let script: &'static str = match args.get(4) {
        Some(path) => Box::leak(std::fs::read_to_string(path).unwrap().into_boxed_str()),
        None => zmarket::ssr::bundle::SERVER_JS,
    };
    let pool = RenderPool::start(script, PoolOptions { threads: 1, queue: 4, deadline: Duration::from_secs(5), memory_limit_bytes: 256 << 20 });
    let mut times = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let r = pool.render(url.clone(), state.clone()).await.unwrap();
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        assert!(r.html.len() > 100);
        if std::env::var_os("PROBE_PRINT").is_some() {
            println!("{}", &r.html[..r.html.len().min(300)]);
        }
    }
    let first = times[0];
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("{url}: first {first:.1} ms, median {:.2} ms, min {:.2} ms", times[times.len() / 2], times[0]);
}
