//! H: the bare axum server of bench/all.py. `bare 127.0.0.1:PORT` answers "ok" on `/`.

use axum::{Router, routing::get};

#[tokio::main]
async fn main() {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:3999".into());
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    let app = Router::new().route("/", get(|| async { "ok" }));
    axum::serve(listener, app).await.expect("serve");
}
