//! HTTP/1.1 through a byte pipe: a request sent to an app over a stream of the agent channel,
//! its answer streamed back; a WebSocket upgrade passes through both ways.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Request, Response, StatusCode, Uri, header};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

use std::sync::Arc;

use hyper::client::conn::http1::SendRequest;

use crate::connect::hub::Link;
use crate::connect::kept::StreamEnd;
use crate::connect::rights::Watched;
use zmarket_protocol::frames::{CloseReason, Target};
use crate::sockets::Kind;
use crate::ids::InstallationId;
use axum::response::IntoResponse;

/// Headers of one hop that a proxy does not pass on (RFC 9110 §7.6.1).
const HOP: &[HeaderName] = &[
    header::CONNECTION,
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

fn strip_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect();
    for n in HOP.iter().chain(named.iter()) {
        headers.remove(n);
    }
    headers.remove("keep-alive");
}

/// The API door (`/api/rmp/v1/apps/{id}/api/…`) is on the market's own origin (issue 43, item
/// 5): every credential the market reads leaves the request before it goes to the box (the
/// `Authorization` header, a `zmarket.bearer.*` WebSocket subprotocol, and every cookie: all
/// cookies of the market's origin are the market's).
pub fn strip_market_credentials(headers: &mut HeaderMap) {
    headers.remove(header::AUTHORIZATION);
    headers.remove(header::COOKIE);
    let kept: Vec<String> = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty() && !p.starts_with("zmarket.bearer."))
        .map(str::to_string)
        .collect();
    headers.remove(header::SEC_WEBSOCKET_PROTOCOL);
    if !kept.is_empty()
        && let Ok(v) = HeaderValue::from_str(&kept.join(", "))
    {
        headers.insert(header::SEC_WEBSOCKET_PROTOCOL, v);
    }
}

/// An app's answer through the API door, made harmless on the market's origin: it sets no
/// cookie there, and a browser neither renders it as a page of the market (`sandbox`: no
/// script, no same-origin access) nor shows it inline (`attachment`).
pub fn on_market_origin(res: &mut Response<Body>) {
    let h = res.headers_mut();
    h.remove(header::SET_COOKIE);
    h.remove(HeaderName::from_static("set-cookie2"));
    if res.status() == StatusCode::SWITCHING_PROTOCOLS {
        return;
    }
    let h = res.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox"));
    h.insert(header::CONTENT_DISPOSITION, HeaderValue::from_static("attachment"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
}

pub fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.get(header::UPGRADE).is_some()
        && headers.get_all(header::CONNECTION).iter().filter_map(|v| v.to_str().ok()).any(|v| v.to_ascii_lowercase().contains("upgrade"))
}

/// How a request goes on to an app: the market's cookie to remove from it (it never reaches
/// the app), the host and scheme it was asked with (`X-Forwarded-*`), the WebSocket place an
/// upgrade takes (its kind and owner, src/sockets.rs), and the right an upgraded socket lasts
/// while.
pub struct Hop<'a> {
    pub strip_cookie: Option<&'a str>,
    pub forwarded_host: &'a str,
    pub proto: &'a str,
    pub socket: (Kind, Option<&'a str>),
    pub watched: Option<Watched>,
}

/// Sends `req` over `io` and answers with what came back. An upgrade takes the hop's WebSocket
/// place first: 429 when none is left; once upgraded it lasts until either side ends or the
/// hop's watch says its right is gone.
pub async fn forward<I>(io: I, mut req: Request<Body>, hop: Hop<'_>) -> Response<Body>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let upgrade = is_upgrade(req.headers());
    let place = if upgrade {
        match crate::http::socket_place(req.extensions(), req.headers(), hop.socket.0, hop.socket.1) {
            Ok(p) => Some(p),
            Err(e) => return e.into_response(),
        }
    } else {
        None
    };
    let client_side = upgrade.then(|| hyper::upgrade::on(&mut req));
    prepare(&mut req, upgrade, &hop);
    let Some(mut sender) = handshake(io).await else { return bad_gateway() };
    let mut res = match sender.send_request(req).await {
        Ok(r) => r,
        Err(e) => return did_not_answer(e),
    };
    if res.status() == StatusCode::SWITCHING_PROTOCOLS
        && let Some(client_side) = client_side
    {
        let app_side = hyper::upgrade::on(&mut res);
        tokio::spawn(async move {
            let _place = place;
            if let (Ok(c), Ok(a)) = (client_side.await, app_side.await) {
                let (mut c, mut a) = (TokioIo::new(c), TokioIo::new(a));
                let piped = tokio::io::copy_bidirectional(&mut c, &mut a);
                match hop.watched {
                    // Both ends are dropped, so both connections close.
                    Some(w) => tokio::select! {
                        _ = piped => {}
                        _ = w.lost() => tracing::info!("an app WebSocket closed: its right is gone"),
                    },
                    None => {
                        let _ = piped.await;
                    }
                }
            }
        });
        return res.map(|_| Body::empty());
    }
    answer(res)
}

/// The request as the app receives it: its path only, hop-by-hop headers and the hop's
/// `strip_cookie` removed, `X-Forwarded-*` set (an upgrade keeps its `Connection` and `Upgrade`).
fn prepare(req: &mut Request<Body>, upgrade: bool, hop: &Hop<'_>) {
    let upgrade_kind = req.headers().get(header::UPGRADE).cloned();
    let path = req.uri().path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
    *req.uri_mut() = path.parse::<Uri>().unwrap_or_else(|_| Uri::from_static("/"));
    let client_addr = crate::http::ClientIp::of(req.extensions(), req.headers()).0.to_string();
    let headers = req.headers_mut();
    strip_hop(headers);
    if upgrade && let Some(kind) = upgrade_kind {
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, kind);
    }
    if let Some(name) = hop.strip_cookie {
        let kept: Vec<String> = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .map(str::trim)
            .filter(|c| !c.is_empty() && !c.starts_with(&format!("{name}=")))
            .map(str::to_string)
            .collect();
        headers.remove(header::COOKIE);
        if !kept.is_empty()
            && let Ok(v) = HeaderValue::from_str(&kept.join("; "))
        {
            headers.insert(header::COOKIE, v);
        }
    }
    if let Ok(v) = HeaderValue::from_str(&client_addr) {
        headers.insert("x-forwarded-for", v);
    }
    if let Ok(v) = HeaderValue::from_str(hop.forwarded_host) {
        headers.insert("x-forwarded-host", v);
    }
    if let Ok(v) = HeaderValue::from_str(hop.proto) {
        headers.insert("x-forwarded-proto", v);
    }
}

fn answer(res: Response<hyper::body::Incoming>) -> Response<Body> {
    let (mut parts, body) = res.into_parts();
    strip_hop(&mut parts.headers);
    Response::from_parts(parts, Body::new(body))
}

/// Sends `req` to the app's `port` on the box of `link`, over a kept-alive connection when one
/// waits, else over a new stream (kept for the next request once this one's answer was read).
/// A WebSocket upgrade takes a stream of its own ([`forward`]). `Err` when no stream could be
/// opened: the agent's reason.
pub async fn forward_kept(link: &Arc<Link>, installation: &InstallationId, port: u16, mut req: Request<Body>, hop: Hop<'_>) -> Result<Response<Body>, CloseReason> {
    let target = Target::App { installation: installation.to_string(), port };
    if is_upgrade(req.headers()) {
        let stream = link.open(target).await?;
        return Ok(forward(stream.into_io(), req, hop).await);
    }
    prepare(&mut req, false, &hop);
    let key = (installation.to_string(), port);
    // A kept connection the app closed meanwhile gives the request back unsent: it goes on
    // the next one, or a new stream. One the app closed as the request went (the race of every
    // kept-alive connection) fails it: a request without a body goes again on a new stream.
    let mut req = req;
    while let Some((mut sender, end)) = link.kept.take(&key) {
        let again = again(&req);
        match sender.try_send_request(req).await {
            Ok(res) => return Ok(kept_answer(link, key, sender, end, res)),
            Err(mut e) => match (e.take_message(), again) {
                (Some(back), _) => req = back,
                (None, Some(again)) => {
                    req = again;
                    break;
                }
                (None, None) => return Ok(did_not_answer(e.into_error())),
            },
        }
    }
    let io = link.open(target).await?.into_io();
    let end = io.end();
    let Some(mut sender) = handshake(io).await else { return Ok(bad_gateway()) };
    match sender.send_request(req).await {
        Ok(res) => Ok(kept_answer(link, key, sender, end, res)),
        Err(e) => Ok(did_not_answer(e)),
    }
}

/// An HTTP/1.1 client connection over `io`, driven by a task of its own (upgrades allowed).
async fn handshake<I>(io: I) -> Option<SendRequest<Body>>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await.ok()?;
    tokio::spawn(async move {
        let _ = conn.with_upgrades().await;
    });
    Some(sender)
}

/// The answer when the app took the request and gave none back.
fn did_not_answer(e: hyper::Error) -> Response<Body> {
    tracing::debug!(error = %e, "the app did not answer");
    bad_gateway()
}

/// The app's answer; its connection waits for the next request once the answer was read (an
/// app that closes it, or an answer never read to its end, keeps nothing).
fn kept_answer(link: &Arc<Link>, key: (String, u16), mut sender: SendRequest<Body>, end: StreamEnd, res: Response<hyper::body::Incoming>) -> Response<Body> {
    let link = link.clone();
    tokio::spawn(async move {
        if sender.ready().await.is_ok() {
            link.kept.put(key, sender, end);
        }
    });
    answer(res)
}

/// A copy of a request without a body, to send again.
fn again(req: &Request<Body>) -> Option<Request<Body>> {
    use axum::body::HttpBody as _;
    if req.body().size_hint().exact() != Some(0) {
        return None;
    }
    let mut copy = Request::new(Body::empty());
    *copy.method_mut() = req.method().clone();
    *copy.uri_mut() = req.uri().clone();
    *copy.version_mut() = req.version();
    *copy.headers_mut() = req.headers().clone();
    Some(copy)
}

fn bad_gateway() -> Response<Body> {
    crate::error::AppError::Refused(crate::error::Msg::AppNoAnswer).into_response()
}

#[cfg(test)]
mod tests {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    use super::Hop;
    use crate::sockets::{Kind, SocketCaps};

    /// A WebSocket through the proxy: the upgrade passes both ways and frames flow.
    #[tokio::test]
    async fn websockets_pass_through() {
        // The "app": a WebSocket echo server.
        let app = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let app_addr = app.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((s, _)) = app.accept().await {
                tokio::spawn(async move {
                    let mut ws = tokio_tungstenite::accept_async(s).await.unwrap();
                    while let Some(Ok(m)) = ws.next().await {
                        if let Message::Text(t) = m {
                            ws.send(Message::Text(format!("echo:{t}").into())).await.unwrap();
                        }
                    }
                });
            }
        });
        // The market's side: every request carried to the app over a fresh connection.
        let front = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let front_addr = front.local_addr().unwrap();
        let router = axum::Router::new().fallback(move |req: axum::extract::Request| async move {
            let io = tokio::net::TcpStream::connect(app_addr).await.unwrap();
            super::forward(io, req, Hop { strip_cookie: Some("zm_app"), forwarded_host: "x", proto: "http", socket: (Kind::App, None), watched: None }).await
        });
        tokio::spawn(async move { axum::serve(front, router).await.unwrap() });
        let (mut ws, res) = tokio_tungstenite::connect_async(format!("ws://{front_addr}/socket")).await.expect("the upgrade passes");
        assert_eq!(res.status(), 101);
        ws.send(Message::Text("hi".into())).await.unwrap();
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), ws.next()).await.unwrap().unwrap().unwrap();
        assert_eq!(got, Message::Text("echo:hi".into()));
    }

    /// The app is told the client's address (`X-Forwarded-For`, replacing any the client sent),
    /// worked out from the connection the request came on; the market's cookie never reaches it.
    #[tokio::test]
    async fn the_app_is_told_the_client_and_not_the_market_cookie() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let app = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let app_addr = app.local_addr().unwrap();
        let seen = tokio::spawn(async move {
            let (mut s, _) = app.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = s.read(&mut buf).await.unwrap();
                head.extend_from_slice(&buf[..n]);
            }
            s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").await.unwrap();
            String::from_utf8(head).unwrap().to_ascii_lowercase()
        });
        let permit = std::sync::Arc::new(tokio::sync::Semaphore::new(1)).try_acquire_owned().unwrap();
        let conn = crate::http::Conn::new(
            [10, 1, 2, 3].into(),
            Default::default(),
            permit,
            std::sync::Arc::new(tokio::sync::Semaphore::new(1)),
            Box::new(()),
            SocketCaps::new(8, 8, 8),
        );
        let mut req = axum::http::Request::get("/x")
            .header("x-forwarded-for", "6.6.6.6")
            .header("cookie", "zm_app=secret; theirs=1")
            .body(axum::body::Body::empty())
            .unwrap();
        req.extensions_mut().insert(conn);
        let io = tokio::net::TcpStream::connect(app_addr).await.unwrap();
        let res = super::forward(io, req, Hop { strip_cookie: Some("zm_app"), forwarded_host: "app.example", proto: "http", socket: (Kind::App, None), watched: None }).await;
        assert_eq!(res.status(), 200);
        let head = seen.await.unwrap();
        assert!(head.contains("x-forwarded-for: 10.1.2.3\r\n"), "{head}");
        assert!(!head.contains("6.6.6.6"), "{head}");
        assert!(head.contains("theirs=1") && !head.contains("zm_app"), "{head}");
    }
}
