//! Slow request bodies (issue 29, finding 7): a body must keep a minimum rate.

/// The error a [`MinRate`] body ends with.
#[derive(Debug)]
pub struct BodyTooSlow;

impl std::fmt::Display for BodyTooSlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body arrived too slowly")
    }
}

impl std::error::Error for BodyTooSlow {}

/// True when `e` (a body rejection) came from a [`MinRate`] body.
pub(super) fn too_slow(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut at = Some(e);
    while let Some(err) = at {
        if err.is::<BodyTooSlow>() {
            return true;
        }
        at = err.source();
    }
    false
}

/// A request body that must arrive at `rate` bytes a second at least, averaged from its first
/// read, once it has taken `grace`: a client sending a byte every two seconds cannot hold a
/// connection (and a handler) for as long as its body lasts. Time runs only while someone reads
/// the body; a slower body ends with [`BodyTooSlow`] (408), and its connection is closed.
pub struct MinRate<B> {
    inner: B,
    rate: u64,
    grace: std::time::Duration,
    started: Option<tokio::time::Instant>,
    bytes: u64,
    due: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl<B> MinRate<B> {
    pub fn new(inner: B, rate: u64, grace: std::time::Duration) -> Self {
        MinRate { inner, rate: rate.max(1), grace, started: None, bytes: 0, due: None }
    }
}

impl<B> hyper::body::Body for MinRate<B>
where
    B: hyper::body::Body<Data = axum::body::Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = axum::body::Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        use std::future::Future;
        use std::task::Poll;
        let this = &mut *self;
        let started = *this.started.get_or_insert_with(tokio::time::Instant::now);
        match std::pin::Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.bytes += data.len() as u64;
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                // When the bytes read so far stop being enough.
                let due = started + this.grace + std::time::Duration::from_secs_f64(this.bytes as f64 / this.rate as f64);
                let sleep = this.due.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
                if sleep.deadline() != due {
                    sleep.as_mut().reset(due);
                }
                if sleep.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Some(Err(Box::new(BodyTooSlow))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

