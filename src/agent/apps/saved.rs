//! What the app runner keeps across restarts, in `<state dir>/apps.json`: the installations it
//! runs (their manifest, what the last command left them as, their limits and GPUs) and the
//! acknowledgements of the commands it finished.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};
use zmarket_protocol::apps::{Limits, Manifest};
use zmarket_protocol::heartbeat::Ack;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct Saved {
    pub(super) installations: BTreeMap<String, Known>,
    pub(super) done: VecDeque<Ack>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Known {
    pub(super) app_id: String,
    pub(super) manifest: Manifest,
    /// Running, stopped or suspended: what the last command left it as (the state file keeps the
    /// server's words: "running", "stopped", "suspended").
    pub(super) desired: Desired,
    #[serde(default)]
    pub(super) limits: Limits,
    /// The GPUs the market assigned it (their keys): a container made again (a restart of the
    /// agent, a port given up, an update) gets the same ones. A state file from before GPUs were
    /// assigned has none.
    #[serde(default)]
    pub(super) gpus: Vec<String>,
}

/// What the last command left an installation as, kept in the state file in the market's words
/// (its `desired`: "running", "stopped", "suspended", "removed").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Desired {
    Running,
    Stopped,
    Suspended,
    Removed,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state file written before `desired` was an enum reads the same, and is written back in
    /// the same words.
    #[test]
    fn the_state_file_keeps_its_words() {
        let old = r#"{"app_id":"grafana","manifest":{"image":"grafana/grafana:11.5.0"},"desired":"suspended"}"#;
        let k: Known = serde_json::from_str(old).unwrap();
        assert_eq!(k.desired, Desired::Suspended);
        assert_eq!(serde_json::to_value(&k).unwrap()["desired"], "suspended");
        assert!(serde_json::from_str::<Known>(&old.replace("suspended", "paused")).is_err());
    }

    /// The GPU keys an installation was given survive a restart; a state file written before
    /// GPUs were assigned still loads, with none.
    #[test]
    fn the_state_file_keeps_the_gpus() {
        let old = r#"{"installations":{"I1":{"app_id":"vllm","manifest":{"image":"vllm/vllm-openai:v0.6.0","gpu":true},"desired":"running","limits":{"cpu_cores":4,"memory_bytes":0,"gpu_count":1}}},"done":[]}"#;
        let saved: Saved = serde_json::from_str(old).unwrap();
        let k = &saved.installations["I1"];
        assert!(k.gpus.is_empty());
        assert_eq!(k.limits.gpu_count, 1);
        let mut saved = saved;
        let uuid = "GPU-5a1b2c3d-0000-1111-2222-333344445555".to_string();
        saved.installations.get_mut("I1").unwrap().gpus = vec![uuid.clone()];
        let again: Saved = serde_json::from_str(&serde_json::to_string(&saved).unwrap()).unwrap();
        assert_eq!(again.installations["I1"].gpus, vec![uuid]);
    }
}
