//! The stored states and kinds that travel to and from the agent, mapped to the protocol's own
//! (zmarket_protocol): one to one, variant by variant, so a value added on one side and not the
//! other does not compile; the tests below check that both sides spell each value alike.

use super::{AppStatus, CommandKind, SharingMode, SnapshotStatus};
use zmarket_protocol::apps::AppStatus as WireAppStatus;
use zmarket_protocol::heartbeat::{CommandKind as WireCommandKind, SharingMode as WireSharingMode};
use zmarket_protocol::snapshots::SnapshotStatus as WireSnapshotStatus;

macro_rules! one_to_one {
    ($stored:ident, $wire:ident, [$($v:ident),* $(,)?]) => {
        impl From<$wire> for $stored {
            fn from(w: $wire) -> $stored {
                match w {
                    $($wire::$v => $stored::$v,)*
                }
            }
        }
        impl From<$stored> for $wire {
            fn from(s: $stored) -> $wire {
                match s {
                    $($stored::$v => $wire::$v,)*
                }
            }
        }
    };
}

one_to_one!(AppStatus, WireAppStatus, [
    Preparing, Downloading, Installing, Installed, Starting, Running, Stopping, Stopped, Restarting, Suspending, Suspended,
    Resuming, Snapshotting, Uninstalling, Deleting, ShuttingDown, Updating, Failed, InstallFailed, UninstallFailed,
    RentFailed, NotInstall,
]);
one_to_one!(SnapshotStatus, WireSnapshotStatus, [Creating, Ready, Failed]);
one_to_one!(SharingMode, WireSharingMode, [Manual, Autopilot, Dedicated]);
one_to_one!(CommandKind, WireCommandKind, [
    ZcloudCreate, ZcloudDelete, AppInstall, AppStart, AppStop, AppRestart, AppSuspend, AppResume, AppSnapshot, AppUninstall,
    AppUpdate, GpuVerify, SnapshotUpload, SnapshotDelete,
]);

#[cfg(test)]
mod tests {
    use sea_orm::{ActiveEnum, Iterable};
    use serde::Serialize;

    use super::*;

    /// Each stored value and the wire value it maps to are written alike, and map back.
    fn spelled_alike<S, W>(wire: &[W])
    where
        S: ActiveEnum<Value = String> + Iterable + Serialize + Copy + PartialEq + std::fmt::Debug + From<W>,
        W: Serialize + Copy + PartialEq + std::fmt::Debug + From<S>,
    {
        for s in S::iter() {
            let w = W::from(s);
            assert_eq!(serde_json::to_value(w).unwrap(), serde_json::Value::String(s.to_value()), "{s:?}");
            assert_eq!(S::from(w), s);
        }
        assert_eq!(S::iter().count(), wire.len());
    }

    #[test]
    fn the_stored_values_are_the_wire_values() {
        spelled_alike::<AppStatus, WireAppStatus>(&WireAppStatus::ALL);
        spelled_alike::<SnapshotStatus, WireSnapshotStatus>(&WireSnapshotStatus::ALL);
        spelled_alike::<SharingMode, WireSharingMode>(&WireSharingMode::ALL);
        spelled_alike::<CommandKind, WireCommandKind>(&WireCommandKind::ALL);
    }

    /// The types an agent may register as are stored ones, never Z-CLOUD (made by the market).
    #[test]
    fn an_agent_registers_as_a_stored_type() {
        for t in zmarket_protocol::heartbeat::AGENT_TYPES {
            let stored = super::super::DeviceType::parse(t).unwrap();
            assert_eq!(stored.as_str(), t);
            assert_ne!(stored, super::super::DeviceType::ZCloud);
        }
    }

    /// The labels of the installations' states are the protocol's (one table, read by the
    /// reasons' texts too).
    #[test]
    fn a_status_is_labelled_as_the_protocol_labels_it() {
        assert_eq!(AppStatus::ShuttingDown.label(crate::lang::Lang::En), "shutting down");
        assert_eq!(AppStatus::ShuttingDown.label(crate::lang::Lang::Zh), "关闭中");
    }
}
