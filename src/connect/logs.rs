//! An installation's log: the last lines as JSON, or those and then new ones as Server-Sent
//! Events (`event: line`, data one JSON line; `event: end`, data `{reason, code}` when the
//! stream ends: the container stopped, the channel dropped). The agent sends the lines over a
//! stream of the channel, one JSON line each.

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use bytes::BytesMut;
use futures::Stream;

use crate::connect::ConnectCtx;
use crate::connect::access::Door;
use crate::connect::hub::AgentStream;
use crate::connect::rights::Watched;
use crate::connect::model::LogLines;
use crate::connect::access::{reason_name, stream_refused};
use crate::error::{AppError, Msg};
use crate::lang::Lang;
use zmarket_protocol::frames::{CloseReason, LogLine, Target};

/// Longest line kept (a longer one is cut).
const MAX_LINE: usize = 64 * 1024;

async fn open(cx: &ConnectCtx, door: &Door, tail: u32, follow: bool) -> Result<AgentStream, AppError> {
    if !door.has_container() {
        return Err(AppError::Refused(Msg::AppNotRunning));
    }
    let link = door.link(cx)?;
    link.open(Target::Logs { installation: door.row.id.clone().into(), tail, follow }).await.map_err(stream_refused)
}

/// The last `tail` lines, whatever the box sends (issue 43, item 6: a hostile box answered
/// `?tail=10` with 223,258 lines): only the last `tail` lines are kept, and at most
/// [`MAX_ANSWER_BYTES`] of them; after [`MAX_STREAM_BYTES`] read the stream is closed and what
/// was kept is the answer.
pub async fn tail(cx: &ConnectCtx, door: &Door, tail: u32) -> Result<LogLines, AppError> {
    let mut s = open(cx, door, tail, false).await?;
    let mut buf = BytesMut::new();
    let mut kept = Kept::new(tail);
    let mut read = 0usize;
    loop {
        match s.recv().await {
            Ok(b) => {
                read += b.len();
                buf.extend_from_slice(&b);
                for l in take_lines(&mut buf) {
                    kept.push(l);
                }
                if read >= MAX_STREAM_BYTES {
                    break;
                }
            }
            Err(CloseReason::Done) => break,
            Err(reason) => return Err(stream_refused(reason)),
        }
    }
    Ok(LogLines { lines: kept.lines.into() })
}

/// Largest answer of a tail (the bytes of its lines' texts).
const MAX_ANSWER_BYTES: usize = 1024 * 1024;
/// Bytes read from a box for one tail (and dropped in a follow) before its stream is closed.
const MAX_STREAM_BYTES: usize = 8 * 1024 * 1024;

/// The last `tail` lines of those pushed, at most [`MAX_ANSWER_BYTES`] of text.
struct Kept {
    tail: usize,
    lines: std::collections::VecDeque<LogLine>,
    bytes: usize,
}

impl Kept {
    fn new(tail: u32) -> Kept {
        Kept { tail: tail as usize, lines: Default::default(), bytes: 0 }
    }
    fn push(&mut self, l: LogLine) {
        self.bytes += l.text.len() + l.ts.len();
        self.lines.push_back(l);
        while self.lines.len() > self.tail || self.bytes > MAX_ANSWER_BYTES {
            match self.lines.pop_front() {
                Some(old) => self.bytes -= old.text.len() + old.ts.len(),
                None => break,
            }
        }
    }
}

/// Complete lines at the front of `buf`, parsed (an unreadable one is skipped).
fn take_lines(buf: &mut BytesMut) -> Vec<LogLine> {
    let mut out = Vec::new();
    while let Some(i) = buf.iter().position(|&b| b == b'\n') {
        let line = buf.split_to(i + 1);
        if let Ok(mut l) = serde_json::from_slice::<LogLine>(&line[..i]) {
            if l.text.len() > MAX_LINE {
                let mut cut = MAX_LINE;
                while !l.text.is_char_boundary(cut) {
                    cut -= 1;
                }
                l.text.truncate(cut);
            }
            out.push(l);
        }
    }
    if buf.len() > MAX_LINE * 2 {
        buf.clear();
    }
    out
}

/// The last `tail` lines, then new ones as they come, as Server-Sent Events.
pub async fn follow(cx: &ConnectCtx, door: &Door, tail: u32, lang: Lang, watched: Watched) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>> + use<>>, AppError> {
    let s = open(cx, door, tail, true).await?;
    struct St {
        s: AgentStream,
        buf: BytesMut,
        queue: std::collections::VecDeque<Event>,
        ended: bool,
        past: Past,
        watched: Watched,
    }
    let st = St { s, buf: BytesMut::new(), queue: Default::default(), ended: false, past: Past::new(tail), watched };
    let events = futures::stream::unfold(st, move |mut st| async move {
        loop {
            if let Some(e) = st.queue.pop_front() {
                return Some((Ok(e), st));
            }
            if st.ended {
                return None;
            }
            // The caller lost the right to the log (src/connect/rights.rs): the stream ends.
            let got = tokio::select! {
                g = st.s.recv() => Some(g),
                _ = st.watched.lost() => None,
            };
            let Some(got) = got else {
                st.ended = true;
                let data = serde_json::json!({"code": "access_ended", "reason": Msg::AccessEnded.text(lang)});
                st.queue.push_back(Event::default().event("end").data(data.to_string()));
                continue;
            };
            match got {
                Ok(b) => {
                    st.buf.extend_from_slice(&b);
                    for l in take_lines(&mut st.buf) {
                        if !st.past.passes(&l) {
                            continue;
                        }
                        if let Ok(data) = serde_json::to_string(&l) {
                            st.queue.push_back(Event::default().event("line").data(data));
                        }
                    }
                    if st.past.dropped >= MAX_STREAM_BYTES {
                        // A box that keeps sending the past: the stream ends.
                        st.ended = true;
                        let data = serde_json::json!({"code": "too_many", "reason": Msg::StreamEnded("too_many").text(lang)});
                        st.queue.push_back(Event::default().event("end").data(data.to_string()));
                    }
                }
                Err(reason) => {
                    st.ended = true;
                    let name = reason_name(reason);
                    let data = serde_json::json!({"code": name, "reason": Msg::StreamEnded(name).text(lang)});
                    st.queue.push_back(Event::default().event("end").data(data.to_string()));
                }
            }
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// A follow's past (issue 43, item 6): the first `tail` lines (at most [`MAX_ANSWER_BYTES`])
/// pass; after them, a line stamped no later than the newest of those is more of the past than
/// was asked for and is dropped (the box's own clock is compared with itself, never with the
/// market's). New lines are paced by the reader (the stream's flow control, src/connect/hub.rs).
struct Past {
    left: usize,
    bytes: usize,
    newest: Option<chrono::DateTime<chrono::FixedOffset>>,
    dropped: usize,
}

impl Past {
    fn new(tail: u32) -> Past {
        Past { left: tail as usize, bytes: 0, newest: None, dropped: 0 }
    }
    fn passes(&mut self, l: &LogLine) -> bool {
        let ts = chrono::DateTime::parse_from_rfc3339(&l.ts).ok();
        if self.left > 0 && self.bytes + l.text.len() <= MAX_ANSWER_BYTES {
            self.left -= 1;
            self.bytes += l.text.len();
            self.newest = self.newest.max(ts);
            return true;
        }
        // Past the tail: only what is newer than the tail's newest line.
        self.left = 0;
        if let (Some(ts), Some(newest)) = (ts, self.newest)
            && ts > newest
        {
            return true;
        }
        if ts.is_none() && self.newest.is_none() {
            return true;
        }
        self.dropped += l.text.len();
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_taken_whole() {
        let mut buf = BytesMut::from(&b"{\"ts\":\"t\",\"stream\":\"stdout\",\"text\":\"a\"}\n{\"ts\":\"t\",\"stream\":\"std"[..]);
        let got = take_lines(&mut buf);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].text, "a");
        buf.extend_from_slice(b"err\",\"text\":\"b\"}\nnot json\n");
        let got = take_lines(&mut buf);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].stream, zmarket_protocol::frames::LogStream::Stderr);
        assert!(buf.is_empty());
    }
}
