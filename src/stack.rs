//! The middleware stack around the router (issue 28 item 2), written as two tower services with
//! concrete futures instead of `from_fn` layers (each of which cloned its state and the rest of
//! the stack, and boxed a `Next` and a future, on every request):
//!
//! - [`Edge`], outermost: the request id (kept when given, else a new one; sent back on the
//!   response), the request's span and log line, the panic guard, and the app origins and
//!   carried streams of connect (src/connect/web.rs), which are not the market's: they get
//!   neither its headers nor its compression.
//! - tower-http's compression.
//! - [`Market`]: the idempotency store, the answer's language (`error::localize` writes an
//!   `AppError`'s envelope in it) and the security headers (`http::SecurityHeaders`, values built
//!   once). The client's address is worked out only where asked (`http::ClientIp`, from the
//!   listener's `http::Conn`).
//!
//! The body limit is `DefaultBodyLimit` on the router's routes (src/app.rs). A request of the
//! market costs no allocation here beyond what the layers must keep (its id is a slice of a
//! buffer made 64 ids at a time; the headers are built once).

use std::any::Any;
use std::convert::Infallible;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use axum::BoxError;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use pin_project_lite::pin_project;
use tower::{Service, ServiceExt};
use tracing::Span;

use crate::billing::idempotency::IdempotencyStore;
use crate::connect::ConnectCtx;
use crate::connect::web::{self, Destination};
use crate::error::AppError;
use crate::http::{PathKind, SecurityHeaders};
use crate::lang::Lang;
use crate::telemetry::{REQUEST_ID, log_response, new_request_id, request_span};

// ---- the edge: request id, span and log line, panic guard, app origins ----

/// The outermost service (see the module).
#[derive(Clone)]
pub struct Edge<S> {
    inner: S,
    connect: Arc<ConnectCtx>,
}

impl<S> Edge<S> {
    pub fn new(inner: S, connect: ConnectCtx) -> Self {
        Edge { inner, connect: Arc::new(connect) }
    }
}

type Boxed = Pin<Box<dyn Future<Output = Response> + Send>>;

pin_project! {
    /// The answer of [`Edge`]: the market's future, or a boxed one for an app origin or a stream
    /// carried to another instance (the rare paths).
    pub struct EdgeFuture<F> {
        #[pin]
        kind: Kind<F>,
        span: Span,
        started: Instant,
        id: Option<HeaderValue>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F> {
        Market { #[pin] fut: F },
        Other { fut: Boxed },
        Panicked { panic: Option<Box<dyn Any + Send + 'static>> },
    }
}

impl<S, B> Service<Request> for Edge<S>
where
    S: Service<Request, Response = axum::http::Response<B>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = EdgeFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        let id = match req.headers().get(REQUEST_ID) {
            Some(given) => given.clone(),
            None => {
                let id = new_request_id();
                req.headers_mut().insert(REQUEST_ID, id.clone());
                id
            }
        };
        let span = request_span(&id, req.method(), req.uri().path());
        let started = Instant::now();
        let kind = {
            let _entered = span.enter();
            catch_unwind(AssertUnwindSafe(|| self.route(req))).unwrap_or_else(|panic| Kind::Panicked { panic: Some(panic) })
        };
        EdgeFuture { kind, span, started, id: Some(id) }
    }
}

impl<S, B> Edge<S>
where
    S: Service<Request, Response = axum::http::Response<B>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    fn route(&mut self, req: Request) -> Kind<S::Future> {
        match web::destination(&self.connect, &req) {
            Destination::Market => Kind::Market { fut: self.inner.call(req) },
            Destination::App(id) => {
                let cx = self.connect.clone();
                Kind::Other { fut: Box::pin(async move { web::serve(&cx, id, req).await }) }
            }
            Destination::MaybeElsewhere => {
                let cx = self.connect.clone();
                let market = self.inner.clone();
                Kind::Other {
                    fut: Box::pin(async move {
                        match web::carried(&cx, req).await {
                            Ok(res) => res,
                            Err(req) => match market.oneshot(req).await {
                                Ok(res) => res.map(Body::new),
                                Err(never) => match never {},
                            },
                        }
                    }),
                }
            }
        }
    }
}

impl<F, B> Future for EdgeFuture<F>
where
    F: Future<Output = Result<axum::http::Response<B>, Infallible>>,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = this.span.enter();
        let polled = match this.kind.project() {
            KindProj::Market { fut } => catch_unwind(AssertUnwindSafe(|| fut.poll(cx).map(|r| match r {
                Ok(res) => res.map(Body::new),
                Err(never) => match never {},
            }))),
            KindProj::Other { fut } => catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))),
            KindProj::Panicked { panic } => Err(panic.take().expect("polled after completion")),
        };
        let mut res = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(res)) => res,
            Err(_) => panic_response(),
        };
        if !res.headers().contains_key(REQUEST_ID)
            && let Some(id) = this.id.take()
        {
            res.headers_mut().insert(REQUEST_ID, id);
        }
        log_response(res.status(), *this.started);
        Poll::Ready(Ok(res))
    }
}

fn panic_response() -> Response {
    tracing::error!("handler panicked");
    AppError::Internal(anyhow::anyhow!("panic")).into_response()
}

// ---- the market: client address, idempotency store, language, security headers ----

/// The market's own layer, inside compression (see the module).
#[derive(Clone)]
pub struct Market<S> {
    inner: S,
    shared: Arc<Shared>,
}

struct Shared {
    security: SecurityHeaders,
    idempotency: IdempotencyStore,
}

impl<S> Market<S> {
    pub fn new(inner: S, security: SecurityHeaders, idempotency: IdempotencyStore) -> Self {
        Market { inner, shared: Arc::new(Shared { security, idempotency }) }
    }
}

pin_project! {
    pub struct MarketFuture<F> {
        #[pin]
        fut: F,
        lang: Lang,
        kind: PathKind,
        shared: Arc<Shared>,
    }
}

impl<S> Service<Request> for Market<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = MarketFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        req.extensions_mut().insert(self.shared.idempotency.clone());
        let lang = Lang::from_headers(req.headers());
        let kind = PathKind::of(req.uri().path());
        MarketFuture { fut: self.inner.call(req), lang, kind, shared: self.shared.clone() }
    }
}

impl<F> Future for MarketFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(res) = ready!(this.fut.poll(cx));
        let mut res = crate::error::localize(*this.lang, res);
        this.shared.security.apply(*this.kind, res.headers_mut());
        Poll::Ready(Ok(res))
    }
}
