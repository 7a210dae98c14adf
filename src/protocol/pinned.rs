//! Version 1 pinned (wire-v1.txt: every frame as the release before the protocol was versioned
//! wrote it): each frame reads into this crate's types and writes back the same, so an agent of
//! that release and a market of this one read each other.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::apps::{Reason, ReasonCode};
use crate::frames::{FromAgent, LogLine, ToAgent};
use crate::heartbeat::{CommandKind, HeartbeatRequest, HeartbeatResponse, RegisterRequest, RegisterResponse};
use crate::reasons::reason_text;
use crate::snapshots::{Description, UploadOffset};

const WIRE_V1: &str = include_str!("wire-v1.txt");

/// The frames of one kind (`agent.heartbeat`, …), as written.
fn frames(kind: &str) -> Vec<&'static str> {
    let found: Vec<&str> = WIRE_V1
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .filter(|(k, _)| *k == kind)
        .map(|(_, json)| json)
        .collect();
    assert!(!found.is_empty(), "no {kind} frame in wire-v1.txt");
    found
}

/// Reads each frame of `kind` as a `T` and writes it back: the same text, byte for byte.
fn same_text<T: Serialize + DeserializeOwned + std::fmt::Debug>(kind: &str) -> Vec<T> {
    frames(kind)
        .into_iter()
        .map(|text| {
            let v: T = serde_json::from_str(text).unwrap_or_else(|e| panic!("{kind}: {e}: {text}"));
            assert_eq!(serde_json::to_string(&v).unwrap(), text, "{kind} writes back otherwise");
            v
        })
        .collect()
}

#[test]
fn what_an_agent_of_version_1_sends_reads_and_writes_back_the_same() {
    // The registration was written by `json!` (its keys in order of name): the same JSON value.
    for text in frames("agent.register") {
        let r: RegisterRequest = serde_json::from_str(text).unwrap();
        assert!(r.device_type.is_some() && r.spec.is_some(), "{r:?}");
        let back = serde_json::to_value(&r).unwrap();
        assert_eq!(back, serde_json::from_str::<serde_json::Value>(text).unwrap());
    }
    let beats = same_text::<HeartbeatRequest>("agent.heartbeat");
    assert!(beats.iter().any(|b| !b.installations.is_empty() && !b.acks.is_empty() && b.verification.is_some() && !b.snapshots.is_empty()));
    for b in &beats {
        b.spec.as_ref().unwrap().check().unwrap();
        b.metrics.as_ref().unwrap().check().unwrap();
    }
    let channel = same_text::<FromAgent>("agent.channel");
    assert!(channel.iter().any(|f| matches!(f, FromAgent::Beat(_))));
    same_text::<LogLine>("agent.log_line");
}

#[test]
fn what_a_market_of_version_1_answers_reads_and_writes_back_the_same() {
    same_text::<RegisterResponse>("market.register");
    same_text::<UploadOffset>("market.upload_offset");
    let answers = same_text::<HeartbeatResponse>("market.heartbeat");
    // Every kind of command, each read into what it asks.
    let kinds: Vec<CommandKind> = answers[0].commands.iter().map(|c| c.body().unwrap().kind()).collect();
    assert_eq!(kinds, CommandKind::ALL);
    for c in &answers[0].commands {
        assert_eq!(c.kind, c.body().unwrap().kind().as_str());
    }
    let channel = same_text::<ToAgent>("market.channel");
    assert_eq!(channel[0], ToAgent::Commands(answers[0].clone()));
    same_text::<Description>("archive.description");
}

#[test]
fn reasons_are_worded_as_version_1_worded_them() {
    let rolled = Reason {
        code: ReasonCode::RolledBack,
        version: Some("11.5.0".into()),
        cause: Some(Box::new(Reason { code: ReasonCode::HealthFailed, secs: Some(120), ..Default::default() })),
        ..Default::default()
    };
    let words: Vec<String> = frames("english.reason").into_iter().map(|t| serde_json::from_str(t).unwrap()).collect();
    assert_eq!(words, [Reason::exited(ReasonCode::Exited, 137).to_string(), rolled.to_string()]);
    assert_eq!(reason_text(&rolled, true), "更新到 11.5.0 失败，已恢复为之前的版本：应用在 120 秒内未通过健康检查");
}
