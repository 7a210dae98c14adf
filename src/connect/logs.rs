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
use crate::connect::model::LogLines;
use crate::connect::web::reason_name;
use crate::error::{AppError, Msg};
use crate::lang::Lang;
use crate::protocol::frames::{CloseReason, LogLine, Target};

/// Largest tail answered as JSON.
const MAX_TAIL_BYTES: usize = 8 * 1024 * 1024;
/// Longest line kept (a longer one is cut).
const MAX_LINE: usize = 64 * 1024;

/// A stream that could not open, as the API answers it.
pub fn refused(reason: CloseReason) -> AppError {
    match reason {
        CloseReason::TooMany => AppError::Refused(Msg::TooManyStreams),
        CloseReason::ChannelLost => AppError::Refused(Msg::DeviceOffline),
        CloseReason::NotFound => AppError::Refused(Msg::StreamEnded("not_found")),
        CloseReason::PortNotAllowed => AppError::invalid("port", Msg::PortNotAllowed),
        other => AppError::Refused(Msg::StreamEnded(reason_name(other))),
    }
}

async fn open(cx: &ConnectCtx, door: &Door, tail: u32, follow: bool) -> Result<AgentStream, AppError> {
    if !door.has_container() {
        return Err(AppError::Refused(Msg::AppNotRunning));
    }
    let link = door.link(cx)?;
    link.open(Target::Logs { installation: door.row.id.clone(), tail, follow }).await.map_err(refused)
}

/// The last `tail` lines.
pub async fn tail(cx: &ConnectCtx, door: &Door, tail: u32) -> Result<LogLines, AppError> {
    let mut s = open(cx, door, tail, false).await?;
    let mut buf = BytesMut::new();
    let mut lines = Vec::new();
    loop {
        match s.recv().await {
            Ok(b) => {
                if buf.len() + b.len() > MAX_TAIL_BYTES {
                    break;
                }
                buf.extend_from_slice(&b);
                lines.extend(take_lines(&mut buf));
            }
            Err(CloseReason::Done) => break,
            Err(reason) => return Err(refused(reason)),
        }
    }
    Ok(LogLines { lines })
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
pub async fn follow(cx: &ConnectCtx, door: &Door, tail: u32, lang: Lang) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>> + use<>>, AppError> {
    let s = open(cx, door, tail, true).await?;
    struct St {
        s: AgentStream,
        buf: BytesMut,
        queue: std::collections::VecDeque<Event>,
        ended: bool,
    }
    let st = St { s, buf: BytesMut::new(), queue: Default::default(), ended: false };
    let events = futures::stream::unfold(st, move |mut st| async move {
        loop {
            if let Some(e) = st.queue.pop_front() {
                return Some((Ok(e), st));
            }
            if st.ended {
                return None;
            }
            match st.s.recv().await {
                Ok(b) => {
                    st.buf.extend_from_slice(&b);
                    for l in take_lines(&mut st.buf) {
                        if let Ok(data) = serde_json::to_string(&l) {
                            st.queue.push_back(Event::default().event("line").data(data));
                        }
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
        assert_eq!(got[0].stream, crate::protocol::frames::LogStream::Stderr);
        assert!(buf.is_empty());
    }
}
