//! How either end of the agent channel writes its queued frames to the socket (feature `sink`):
//! the frames of many streams leave in few writes. The one async piece of the crate; it knows
//! only `futures`' `Sink` and `Stream`, no runtime.

use futures::{FutureExt, Sink, SinkExt, Stream, StreamExt};

/// How many queued messages one write takes at most before it flushes.
pub const WRITE_BATCH: usize = 64;

/// Writes what `queue` yields to `sink` until either ends: each write takes the message that
/// woke it and what else is queued already (at most [`WRITE_BATCH`]), then flushes once. Gives
/// the sink back (to close it) unless it failed.
pub async fn write_batched<S, Q, M>(mut sink: S, mut queue: Q) -> Option<S>
where
    S: Sink<M> + Unpin,
    Q: Stream<Item = M> + Unpin,
{
    while let Some(first) = queue.next().await {
        sink.feed(first).await.ok()?;
        for _ in 1..WRITE_BATCH {
            match queue.next().now_or_never() {
                Some(Some(m)) => sink.feed(m).await.ok()?,
                _ => break,
            }
        }
        sink.flush().await.ok()?;
    }
    Some(sink)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that records each flush's batch.
    #[derive(Default)]
    struct Batches {
        fed: Vec<u32>,
        flushed: Vec<Vec<u32>>,
    }

    impl Sink<u32> for Batches {
        type Error = ();
        fn poll_ready(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), ()>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn start_send(mut self: std::pin::Pin<&mut Self>, m: u32) -> Result<(), ()> {
            if m == 999 {
                return Err(());
            }
            self.fed.push(m);
            Ok(())
        }
        fn poll_flush(mut self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), ()>> {
            let batch = std::mem::take(&mut self.fed);
            if !batch.is_empty() {
                self.flushed.push(batch);
            }
            std::task::Poll::Ready(Ok(()))
        }
        fn poll_close(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), ()>> {
            self.poll_flush(cx)
        }
    }

    #[test]
    fn queued_messages_leave_in_batches_of_at_most_the_limit() {
        let queue = futures::stream::iter(0..150u32);
        let sink = futures::executor::block_on(write_batched(Batches::default(), queue)).expect("the sink did not fail");
        let sizes: Vec<usize> = sink.flushed.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![64, 64, 22]);
        assert_eq!(sink.flushed.concat(), (0..150).collect::<Vec<_>>());
    }

    #[test]
    fn a_failed_write_ends_the_writer() {
        let queue = futures::stream::iter([1, 999, 2]);
        assert!(futures::executor::block_on(write_batched(Batches::default(), queue)).is_none());
    }

    #[test]
    fn a_message_not_yet_queued_waits_for_the_next_write() {
        // A stream that is pending once between 2 and 3: the first write flushes [1, 2].
        let mut pending_once = true;
        let mut items = vec![3u32, 2, 1];
        let queue = futures::stream::poll_fn(move |cx| {
            if items.len() == 1 && pending_once {
                pending_once = false;
                cx.waker().wake_by_ref();
                return std::task::Poll::Pending;
            }
            std::task::Poll::Ready(items.pop())
        });
        let sink = futures::executor::block_on(write_batched(Batches::default(), queue)).unwrap();
        assert_eq!(sink.flushed, vec![vec![1, 2], vec![3]]);
    }
}
