//! The protocol's version. The agent sends it in the [`HEADER`] of its registration, its
//! heartbeats and the opening of its channel; the market reads it with [`spoken`]
//! (`devices::agent_api::protocol_of`).
//!
//! The rule: version 1 is the protocol of the release before the version was sent, so an agent
//! that sends none speaks version 1 (wire-v1.txt pins its frames). A market reads every version
//! from 1 to its own [`PROTOCOL_VERSION`]: a change of the wire keeps the older agents' frames
//! readable (a new field has a default, a new command kind is a failed command for an agent that
//! does not know it), and raises the version only when an older market could not read the newer
//! agent. An agent of a version the market does not know, newer or malformed, is refused with
//! `agent_protocol_unsupported`, which names both versions in the reader's language.

/// The version of the protocol this build speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The HTTP header that carries the agent's version (the market reads header names in any case).
pub const HEADER: &str = "zmarket-protocol";

/// The version an agent speaks, from its [`HEADER`]'s value (`None`: it sent none).
pub fn spoken(header: Option<&str>) -> Result<u32, Unsupported> {
    let Some(raw) = header else { return Ok(1) };
    match raw.trim().parse::<u32>() {
        Ok(v) if (1..=PROTOCOL_VERSION).contains(&v) => Ok(v),
        _ => Err(Unsupported { sent: raw.chars().filter(|c| c.is_ascii_graphic()).take(16).collect() }),
    }
}

/// An agent's version the market does not know: what it sent (printable, at most 16 characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub sent: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_that_sends_no_version_speaks_version_1() {
        assert_eq!(spoken(None), Ok(1));
        assert_eq!(spoken(Some("1")), Ok(1));
        assert_eq!(spoken(Some(&PROTOCOL_VERSION.to_string())), Ok(PROTOCOL_VERSION));
    }

    #[test]
    fn a_version_this_side_does_not_know_is_refused() {
        let newer = (PROTOCOL_VERSION + 1).to_string();
        assert_eq!(spoken(Some(&newer)), Err(Unsupported { sent: newer.clone() }));
        assert_eq!(spoken(Some("0")).unwrap_err().sent, "0");
        assert_eq!(spoken(Some("two\n\u{7}")).unwrap_err().sent, "two");
        assert_eq!(spoken(Some(&"9".repeat(40))).unwrap_err().sent.len(), 16);
    }
}
