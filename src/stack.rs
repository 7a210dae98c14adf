//! The middleware stack around the router (issue 28 item 2), written as two tower services with
//! concrete futures instead of `from_fn` layers (each of which cloned its state and the rest of
//! the stack, and boxed a `Next` and a future, on every request):
//!
//! - [`Edge`], outermost: the request id (kept when given, else a new one; sent back on the
//!   response), the request's context and log line, the panic guard, and the app origins and
//!   carried streams of connect (src/connect/web.rs), which are not the market's: they get
//!   neither its headers nor its compression.
//! - [`Compress`]: tower-http's compression, entered only when it can change the answer.
//! - [`Market`]: the body limit and the idempotency store (each only for a request that has a
//!   body, or a key), the answer's language (`error::localize` writes an `AppError`'s envelope in
//!   it) and the security headers (`http::SecurityHeaders`, values built once). The client's
//!   address is worked out only where asked (`http::ClientIp`, from the listener's `http::Conn`).
//!
//! A request of the market costs no allocation here beyond what the layers must keep (its id is a
//! slice of a buffer made 64 ids at a time; the headers are built once). A request's extensions
//! are the listener's `http::Conn` and axum's URL parameters (axum's matched path and original
//! URI, which nothing here reads, are left out by its features): a fifth entry made each request
//! grow its map once more, and every entry is an allocation.

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
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures::FutureExt;
use pin_project_lite::pin_project;
use tower::{Layer, Service, ServiceExt};
use tower_http::compression::{CompressionLayer, DefaultPredicate, Predicate};

use crate::billing::idempotency::IdempotencyStore;
use crate::connect::ConnectCtx;
use crate::connect::web::{self, Destination};
use crate::error::AppError;
use crate::http::{PathKind, SecurityHeaders};
use crate::lang::Lang;
use crate::observe::HttpMetrics;
use crate::telemetry::{REQUEST_ID, RequestContext, log_response, new_request_id, within};

// ---- the edge: request id, context and log line, panic guard, app origins ----

/// The outermost service (see the module).
#[derive(Clone)]
pub struct Edge<S> {
    inner: S,
    connect: Arc<ConnectCtx>,
    http: Arc<HttpMetrics>,
}

impl<S> Edge<S> {
    pub fn new(inner: S, connect: ConnectCtx, http: HttpMetrics) -> Self {
        Edge { inner, connect: Arc::new(connect), http: Arc::new(http) }
    }
}

type Boxed = Pin<Box<dyn Future<Output = Response> + Send>>;

pin_project! {
    /// The answer of [`Edge`]: the market's future, or a boxed one for an app origin or a stream
    /// carried to another instance (the rare paths).
    pub struct EdgeFuture<F> {
        #[pin]
        kind: Kind<F>,
        // The request its lines are logged for (current while the future is polled).
        request: Option<RequestContext>,
        started: Instant,
        http: Arc<HttpMetrics>,
        route: usize,
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

    fn call(&mut self, req: Request) -> Self::Future {
        let id = req.headers().get(REQUEST_ID).cloned().unwrap_or_else(new_request_id);
        let mut request = Some(RequestContext::new(id.clone(), req.method(), req.uri()));
        let started = Instant::now();
        let mut route = self.http.route(req.uri().path(), false);
        let kind = within(&mut request, || {
            catch_unwind(AssertUnwindSafe(|| self.route(req, &id, &mut route))).unwrap_or_else(|panic| Kind::Panicked { panic: Some(panic) })
        });
        EdgeFuture { kind, request, started, http: self.http.clone(), route }
    }
}

impl<S, B> Edge<S>
where
    S: Service<Request, Response = axum::http::Response<B>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    /// Where the request goes; `route` becomes the app origin's metrics label when it goes there.
    fn route(&mut self, mut req: Request, id: &HeaderValue, route: &mut usize) -> Kind<S::Future> {
        let destination = web::destination(&self.connect, &req);
        if !matches!(destination, Destination::Market) {
            // Carried on: the app, or the instance holding the device, is told the request's id.
            req.headers_mut().entry(REQUEST_ID).or_insert_with(|| id.clone());
        }
        match destination {
            Destination::Market => Kind::Market { fut: self.inner.call(req) },
            Destination::App(id) => {
                *route = self.http.route("", true);
                let cx = self.connect.clone();
                Kind::Other { fut: Box::pin(async move { web::serve(&cx, id.into(), req).await }) }
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
        let polled = within(this.request, || {
            let polled = match this.kind.project() {
                KindProj::Market { fut } => catch_unwind(AssertUnwindSafe(|| fut.poll(cx).map(|r| match r {
                    Ok(res) => res.map(Body::new),
                    Err(never) => match never {},
                }))),
                KindProj::Other { fut } => catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))),
                KindProj::Panicked { panic } => Err(panic.take().expect("polled after completion")),
            };
            let res = match polled {
                Ok(Poll::Pending) => return Poll::Pending,
                Ok(Poll::Ready(res)) => res,
                Err(_) => panic_response(),
            };
            let took = this.started.elapsed();
            log_response(res.status(), took);
            this.http.record(*this.route, res.status().as_u16(), took.as_secs_f64());
            Poll::Ready(res)
        });
        let mut res = std::task::ready!(polled);
        // The request's id goes back on the answer (unless the app or the holding instance set it).
        if !res.headers().contains_key(REQUEST_ID)
            && let Some(request) = this.request.take()
        {
            res.headers_mut().insert(REQUEST_ID, request.into_id());
        }
        Poll::Ready(Ok(res))
    }
}

fn panic_response() -> Response {
    tracing::error!("handler panicked");
    AppError::Internal(anyhow::anyhow!("panic")).into_response()
}

// ---- compression: tower-http's, entered only where it can change the answer ----

/// tower-http's compression (gzip and br, its default predicate), entered only when it can
/// change the answer. Its body type holds a brotli encoder's state inline (5.8 KB), so every
/// answer through it cost a 5.9 KB value to move and to box, compressed or not, and a request
/// naming encodings a `Vec` to rank them. An answer goes to tower-http when it is compressible
/// and the client names an encoding, or when the client's `Accept-Encoding` has a `q=0` (it may
/// refuse every encoding, which tower-http answers with 406). Otherwise tower-http would send it
/// unchanged, adding `Vary: accept-encoding` when it is compressible, and so does this (the
/// tests compare both on a matrix of requests and answers).
#[derive(Clone)]
pub struct Compress<S> {
    inner: S,
}

impl<S> Compress<S> {
    pub fn new(inner: S) -> Self {
        Compress { inner }
    }
}

pin_project! {
    pub struct CompressFuture<F> {
        #[pin]
        fut: F,
        accept: Option<HeaderValue>,
    }
}

impl<S> Service<Request> for Compress<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = CompressFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let accept = accepted_encodings(req.headers());
        CompressFuture { fut: self.inner.call(req), accept }
    }
}

impl<F> Future for CompressFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(mut res) = ready!(this.fut.poll(cx));
        // The predicate first: a body of known small size answers it without a header lookup.
        let compressible = DefaultPredicate::new().should_compress(&res)
            && !res.headers().contains_key(header::CONTENT_ENCODING)
            && !res.headers().contains_key(header::CONTENT_RANGE);
        match this.accept.take() {
            Some(accept) if compressible || may_refuse_all(&accept) => res = through_tower(res, accept),
            _ if compressible && !names_accept_encoding(res.headers()) => {
                res.headers_mut().append(header::VARY, HeaderValue::from_static("accept-encoding"));
            }
            _ => {}
        }
        Poll::Ready(Ok(res))
    }
}

/// The request's `Accept-Encoding`, its lines joined (a list header: the same to tower-http).
fn accepted_encodings(headers: &HeaderMap) -> Option<HeaderValue> {
    let mut lines = headers.get_all(header::ACCEPT_ENCODING).iter();
    let first = lines.next()?;
    if lines.next().is_none() {
        return Some(first.clone());
    }
    let joined: Vec<&[u8]> = headers.get_all(header::ACCEPT_ENCODING).iter().map(HeaderValue::as_bytes).collect();
    HeaderValue::from_bytes(&joined.join(&b", "[..])).ok()
}

/// tower-http answers 406 only when a q-value is zero (identity or `*` refused).
fn may_refuse_all(accept: &HeaderValue) -> bool {
    accept.as_bytes().windows(3).any(|w| w.eq_ignore_ascii_case(b"q=0"))
}

fn names_accept_encoding(headers: &HeaderMap) -> bool {
    headers.get_all(header::VARY).iter().any(|v| v.as_bytes().windows(15).any(|w| w.eq_ignore_ascii_case(b"accept-encoding")))
}

/// The answer through tower-http's compression, as the request's `Accept-Encoding` asks.
fn through_tower(res: Response, accept: HeaderValue) -> Response {
    let mut answer = Some(res);
    let ready = tower::service_fn(move |_: axum::http::Request<()>| std::future::ready(Ok::<_, Infallible>(answer.take().unwrap_or_default())));
    let mut req = axum::http::Request::new(());
    req.headers_mut().insert(header::ACCEPT_ENCODING, accept);
    match CompressionLayer::new().gzip(true).br(true).layer(ready).oneshot(req).now_or_never() {
        Some(Ok(res)) => res.map(Body::new),
        Some(Err(never)) => match never {},
        None => unreachable!("the inner answer is ready"),
    }
}

// ---- the market: body limit, idempotency store, language, security headers ----

/// The market's own layer, inside compression (see the module).
pub struct Market<S> {
    inner: S,
    /// The same router, for a request with a body: the limit of `server.body_limit_bytes` is put
    /// in its extensions for axum's extractors (a route with its own limit sets it again).
    limited: Limited<S>,
    shared: Arc<Shared>,
}

/// axum's body-limit service around `S` (its type is not named by axum).
type Limited<S> = <DefaultBodyLimit as Layer<S>>::Service;

struct Shared {
    security: SecurityHeaders,
    idempotency: IdempotencyStore,
}

impl<S: Clone> Clone for Market<S> {
    /// A copy of its own, not a shared reference: the listener copies the stack for each
    /// connection, and each request takes a reference to these values, which would otherwise be
    /// one count every core writes to.
    fn clone(&self) -> Self {
        let Shared { security, idempotency } = &*self.shared;
        Market {
            inner: self.inner.clone(),
            limited: self.limited.clone(),
            shared: Arc::new(Shared { security: security.clone(), idempotency: idempotency.clone() }),
        }
    }
}

impl<S: Clone> Market<S> {
    pub fn new(inner: S, limit: DefaultBodyLimit, security: SecurityHeaders, idempotency: IdempotencyStore) -> Self {
        Market { limited: limit.layer(inner.clone()), inner, shared: Arc::new(Shared { security, idempotency }) }
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
    Limited<S>: Service<Request, Response = Response, Error = Infallible, Future = S::Future>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = MarketFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        // Only a request with a key reaches the store (billing::idempotency).
        if req.headers().contains_key(crate::billing::idempotency::HEADER) {
            req.extensions_mut().insert(self.shared.idempotency.clone());
        }
        let lang = Lang::from_headers(req.headers());
        let kind = PathKind::of(req.uri().path());
        // hyper's body of a request without one (no length, or a zero length) is at its end.
        let fut = if req.body().is_end_stream() { self.inner.call(req) } else { self.limited.call(req) };
        MarketFuture { fut, lang, kind, shared: self.shared.clone() }
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    /// The answers of the matrix: (content type, body length, extra headers, status).
    fn answer(kind: usize) -> Response {
        let text = |n: usize| "zmarket ".repeat(n / 8);
        let (status, body, headers): (StatusCode, Body, Vec<(&str, &str)>) = match kind {
            0 => (StatusCode::OK, Body::from("ok"), vec![("content-type", "text/plain; charset=utf-8")]),
            1 => (StatusCode::OK, Body::from(text(2000)), vec![("content-type", "text/html; charset=utf-8")]),
            2 => (StatusCode::OK, Body::from(text(2000)), vec![("content-type", "image/png")]),
            3 => (StatusCode::OK, Body::from(text(2000)), vec![("content-type", "text/html"), ("content-encoding", "br")]),
            4 => (StatusCode::OK, Body::from(text(2000)), vec![("content-type", "text/event-stream")]),
            5 => (StatusCode::OK, Body::from(text(2000)), vec![("content-type", "application/json"), ("vary", "Accept-Language")]),
            6 => (StatusCode::OK, Body::from(text(2000)), vec![("content-type", "text/html"), ("vary", "Accept-Language, Accept-Encoding")]),
            7 => (StatusCode::PARTIAL_CONTENT, Body::from(text(2000)), vec![("content-type", "text/plain"), ("content-range", "bytes 0-1999/9000")]),
            8 => (StatusCode::NOT_MODIFIED, Body::empty(), vec![("etag", "\"7\"")]),
            // A body of unknown length (a stream) counts as large.
            _ => {
                let chunks = vec![Ok::<_, Infallible>(Bytes::from(text(800))), Ok(Bytes::from(text(800)))];
                (StatusCode::OK, Body::from_stream(futures::stream::iter(chunks)), vec![("content-type", "application/json")])
            }
        };
        let mut res = Response::new(body);
        *res.status_mut() = status;
        for (k, v) in headers {
            res.headers_mut().append(axum::http::HeaderName::from_static(k), HeaderValue::from_static(v));
        }
        res
    }

    async fn seen(res: Response) -> (StatusCode, Vec<(String, String)>, Bytes) {
        let mut headers: Vec<(String, String)> =
            res.headers().iter().map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("?").to_string())).collect();
        headers.sort();
        let status = res.status();
        (status, headers, axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body"))
    }

    /// `Compress` answers as tower-http's compression would, for every request and answer of
    /// the matrix (it only skips tower-http where that would send the answer unchanged).
    #[tokio::test]
    async fn compress_answers_as_tower_http_does() {
        let accepts: &[&[&str]] = &[
            &[],
            &["gzip"],
            &["br"],
            &["GZIP"],
            &["x-gzip"],
            &["gzip, deflate, br, zstd"],
            &["identity"],
            &["identity;q=0"],
            &["*;q=0"],
            &["br;q=0, gzip"],
            &["br;q=0.0"],
            &["zstd"],
            &["*"],
            &["gzip;q=0.5", "br"],
        ];
        for kind in 0..10 {
            for accept in accepts {
                let request = || {
                    let mut req = Request::new(Body::empty());
                    for a in *accept {
                        req.headers_mut().append(header::ACCEPT_ENCODING, HeaderValue::from_static(a));
                    }
                    req
                };
                let inner = tower::service_fn(move |_: Request| std::future::ready(Ok::<_, Infallible>(answer(kind))));
                let ours = Compress::new(inner).oneshot(request()).await.unwrap();
                let theirs = CompressionLayer::new().gzip(true).br(true).layer(inner).oneshot(request()).await.unwrap().map(Body::new);
                let (ours, theirs) = (seen(ours).await, seen(theirs).await);
                assert_eq!(ours, theirs, "answer {kind}, Accept-Encoding {accept:?}");
            }
        }
        // The matrix covers what it means to: a compressed answer, a 406 and an added Vary.
        let res = |accept: &'static str, kind| {
            let inner = tower::service_fn(move |_: Request| std::future::ready(Ok::<_, Infallible>(answer(kind))));
            let mut req = Request::new(Body::empty());
            req.headers_mut().insert(header::ACCEPT_ENCODING, HeaderValue::from_static(accept));
            Compress::new(inner).oneshot(req)
        };
        assert_eq!(res("br", 1).await.unwrap().headers()[header::CONTENT_ENCODING], "br");
        assert_eq!(res("*;q=0", 1).await.unwrap().status(), StatusCode::NOT_ACCEPTABLE);
        let plain = Compress::new(tower::service_fn(|_: Request| std::future::ready(Ok::<_, Infallible>(answer(1)))))
            .oneshot(Request::new(Body::empty()))
            .await
            .unwrap();
        assert_eq!(plain.headers()[header::VARY], "accept-encoding");
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
    }

    /// The per-connection copy of the market layer has values of its own, equal to the first.
    #[test]
    fn a_copy_of_the_security_headers_owns_its_values() {
        let a = SecurityHeaders::new(&[], None);
        let b = a.clone();
        let (mut ha, mut hb) = (HeaderMap::new(), HeaderMap::new());
        a.apply(PathKind::Other, &mut ha);
        b.apply(PathKind::Other, &mut hb);
        assert_eq!(ha, hb);
        let csp = |h: &HeaderMap| h[header::CONTENT_SECURITY_POLICY].as_bytes().as_ptr();
        assert_ne!(csp(&ha), csp(&hb));
    }
}
