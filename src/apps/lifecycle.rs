//! The installation state machine: one function, [`next`], says where every event leads from
//! every state; anything it does not list is refused. Events are a person's actions (which send
//! the device a command), the agent's reports of what the box really does, the acknowledgement
//! of the pending command (done or failed), and the watchdog's time-out.
//!
//! The path of an install: preparing (command queued) → downloading → installing → installed →
//! running. `deleting` is the removal of what a failed installation left; `shutting_down` the
//! removal at the end of a rental; `not_install` the state once removed.

use std::time::Duration;

use crate::apps::model::{Action, AppStatus, Desired, InstallKind};
use crate::db::enums::CommandKind;

use AppStatus::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A person's action (or the rental's end, `Action::Uninstall` as `EndRental`).
    Act(Action),
    /// The rental ended: the app is removed from the provider's box.
    EndRental,
    /// The agent reports this actual state.
    Report(AppStatus),
    /// The pending command was carried out; the installation is now what was desired.
    Done(Desired),
    /// The pending command failed on the device.
    Fail,
    /// The watchdog: a transitional state outlived its time limit.
    Timeout,
    /// The agent reports the app running although the person asked for it to be stopped or
    /// suspended (a restart on the box): it is stopped or suspended again, never billed.
    Drift(Desired),
}

/// The failure state of an install, by kind.
fn install_failed(kind: InstallKind) -> AppStatus {
    match kind {
        InstallKind::Own => InstallFailed,
        InstallKind::Rent => RentFailed,
    }
}

/// Where `event` leads from `from`; `None` when the state does not allow it.
pub fn next(from: AppStatus, event: Event, kind: InstallKind) -> Option<AppStatus> {
    use Action as A;
    use Event::*;
    Some(match (from, event) {
        // a person's actions
        (Running, Act(A::Stop)) => Stopping,
        (Running, Act(A::Restart)) => Restarting,
        (Running, Act(A::Suspend)) => Suspending,
        (Running | Stopped, Act(A::Snapshot)) => Snapshotting,
        (Running | Stopped | Suspended | Installed, Act(A::Uninstall)) => Uninstalling,
        (Stopped | Installed | Failed, Act(A::Start)) => Starting,
        (Suspended, Act(A::Resume)) => Resuming,
        (InstallFailed, Act(A::Retry)) => Preparing,
        (Failed | InstallFailed | RentFailed | UninstallFailed, Act(A::Uninstall)) => Deleting,
        (Running | Stopped | Suspended | Installed | Failed, EndRental) => ShuttingDown,
        (InstallFailed | RentFailed | UninstallFailed, EndRental) => Deleting,
        (Running, Act(A::Update)) => Updating,
        // cancelled while the box is offline: an install or a removal is over here (the box
        // removes what is left when it returns); another action's outcome is unknown
        (Preparing | Downloading | Installing | Installed | Uninstalling | Deleting | ShuttingDown, Act(A::Cancel)) => NotInstall,
        (Starting | Stopping | Restarting | Suspending | Resuming | Snapshotting | Updating, Act(A::Cancel)) => Failed,
        // a report that contradicts what the person asked for: do it again
        (Stopped | Failed, Drift(Desired::Stopped)) => Stopping,
        (Suspended | Failed, Drift(Desired::Suspended)) => Suspending,
        // the agent's reports: an install's progress
        (Preparing, Report(Downloading)) => Downloading,
        (Preparing | Downloading, Report(Installing)) => Installing,
        (Preparing | Downloading | Installing, Report(Installed)) => Installed,
        // the agent's reports: what happened on the box with no command pending
        (Running, Report(Stopped)) => Stopped,
        (Running | Suspended, Report(Failed)) => Failed,
        (Stopped | Failed, Report(Running)) => Running,
        (Failed, Report(Stopped)) => Stopped,
        // the pending command carried out
        (Preparing | Downloading | Installing | Installed, Done(Desired::Running)) => Running,
        (Starting | Restarting | Resuming | Snapshotting | Updating, Done(Desired::Running)) => Running,
        (Stopping | Snapshotting, Done(Desired::Stopped)) => Stopped,
        (Suspending, Done(Desired::Suspended)) => Suspended,
        (Uninstalling | Deleting | ShuttingDown, Done(Desired::Removed)) => NotInstall,
        // the pending command failed, or took too long: the matching failed state
        (Preparing | Downloading | Installing | Installed, Fail | Timeout) => install_failed(kind),
        (Starting | Stopping | Restarting | Suspending | Resuming | Snapshotting, Fail | Timeout) => Failed,
        // a failed update rolled back: the old version runs on
        (Updating, Fail) => Running,
        (Updating, Timeout) => Failed,
        (Uninstalling | Deleting | ShuttingDown, Fail | Timeout) => UninstallFailed,
        _ => return None,
    })
}

/// Whether a rental in `s` is still under way (not ended, not ending, not failed): it may be
/// extended and is told of its end.
pub fn under_way(s: AppStatus) -> bool {
    !matches!(s, Uninstalling | Deleting | ShuttingDown | NotInstall | Failed | InstallFailed | UninstallFailed | RentFailed)
}

/// Whether the renter may extend `r` at `at` (`POST /apps/{id}/extend`): a rental under way whose
/// paid time is not up.
pub fn extendable(r: &crate::db::entity::installations::Model, at: chrono::DateTime<chrono::Utc>) -> bool {
    r.kind == InstallKind::Rent && r.active_key.is_some() && under_way(r.status) && r.rent_ends_at.is_some_and(|e| e > at)
}

/// States a command is under way in (the watchdog watches them).
pub fn is_transitional(s: AppStatus) -> bool {
    matches!(
        s,
        Preparing | Downloading | Installing | Installed | Starting | Stopping | Restarting | Suspending | Resuming | Snapshotting
            | Updating | Uninstalling | Deleting | ShuttingDown
    )
}

/// An installation still making itself: preparing, downloading, installing, installed (the
/// phases a box reports on its way; a restore holds its snapshot meanwhile).
pub fn install_phase(s: AppStatus) -> bool {
    matches!(s, Preparing | Downloading | Installing | Installed)
}

/// How long a transitional state may last before the watchdog fails it: downloading and
/// installing get `install_limit`, the others `limit`.
pub fn time_limit(s: AppStatus, install_limit: Duration, limit: Duration) -> Option<Duration> {
    match s {
        // Moving data takes the long allowance: an image, or a snapshot of the app's volumes
        // (by hand, or an ended rental's kept before its removal).
        Preparing | Downloading | Installing | Installed | Updating | Snapshotting | ShuttingDown => Some(install_limit),
        s if is_transitional(s) => Some(limit),
        _ => None,
    }
}

/// The command an accepted action sends, and what the person then wants.
pub fn command_of(action: Action, desired_now: Desired) -> (CommandKind, Desired) {
    match action {
        Action::Start => (CommandKind::AppStart, Desired::Running),
        Action::Stop => (CommandKind::AppStop, Desired::Stopped),
        Action::Restart => (CommandKind::AppRestart, Desired::Running),
        Action::Suspend => (CommandKind::AppSuspend, Desired::Suspended),
        Action::Resume => (CommandKind::AppResume, Desired::Running),
        Action::Snapshot => (CommandKind::AppSnapshot, desired_now),
        Action::Retry => (CommandKind::AppInstall, Desired::Running),
        Action::Uninstall | Action::Cancel => (CommandKind::AppUninstall, Desired::Removed),
        Action::Update => (CommandKind::AppUpdate, Desired::Running),
    }
}

/// Who asks: the owner (a person or a company administrator) or a company member using an app
/// assigned to them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Owner,
    Member,
}

/// Whether `role` may ask `action` of an installation in state `s` on a box that is `online`
/// or not: the one rule behind both the buttons offered and the server's refusal.
///
/// - Members use what is assigned to them (start, stop, restart, suspend, resume, and cancel
///   what is not a removal); removing, copying, retrying and updating are the owner's.
/// - On an offline box nothing can be carried out now: a transitional state can be cancelled
///   and a settled one removed (the box cleans up when it returns); nothing else.
pub fn allowed(s: AppStatus, action: Action, kind: InstallKind, online: bool, role: Role) -> Allowed {
    let owners_only = matches!(action, Action::Uninstall | Action::Snapshot | Action::Retry | Action::Update);
    if role == Role::Member && owners_only {
        return Allowed::NotYours;
    }
    let Some(to) = next(s, Event::Act(action), kind) else { return Allowed::NotInState };
    if role == Role::Member && to == NotInstall {
        return Allowed::NotYours;
    }
    let offline_ok = match action {
        Action::Cancel => is_transitional(s),
        Action::Uninstall => !is_transitional(s),
        _ => false,
    };
    match (online, action) {
        (true, Action::Cancel) => Allowed::NotInState,
        (true, _) => Allowed::Yes,
        (false, _) if offline_ok => Allowed::Yes,
        (false, _) => Allowed::Offline,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowed {
    Yes,
    /// The state does not allow it (409).
    NotInState,
    /// Not this person's to ask (403).
    NotYours,
    /// The box is offline (409).
    Offline,
}

/// The actions offered: those [`allowed`] says yes to.
pub fn actions(s: AppStatus, kind: InstallKind, online: bool, role: Role) -> Vec<Action> {
    Action::ALL.into_iter().filter(|a| allowed(s, *a, kind, online, role) == Allowed::Yes).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sea_orm::Iterable;

    const OWN: InstallKind = InstallKind::Own;
    const RENT: InstallKind = InstallKind::Rent;
    const RUN: Desired = Desired::Running;

    /// Every transition, one test each: (name, from, event, kind, to).
    macro_rules! transitions {
        ($($name:ident: $from:expr, $ev:expr, $kind:expr => $to:expr;)*) => {
            $(
                #[test]
                fn $name() {
                    assert_eq!(next($from, $ev, $kind), Some($to));
                }
            )*
            /// The table above, so the refusal test can check every pair it does not list.
            fn listed() -> Vec<(AppStatus, Event, InstallKind, AppStatus)> {
                vec![$(($from, $ev, $kind, $to)),*]
            }
        };
    }

    use Action as A;
    use Event::*;
    transitions! {
        running_stop: Running, Act(A::Stop), OWN => Stopping;
        running_restart: Running, Act(A::Restart), OWN => Restarting;
        running_suspend: Running, Act(A::Suspend), OWN => Suspending;
        running_snapshot: Running, Act(A::Snapshot), OWN => Snapshotting;
        stopped_snapshot: Stopped, Act(A::Snapshot), OWN => Snapshotting;
        running_uninstall: Running, Act(A::Uninstall), OWN => Uninstalling;
        stopped_uninstall: Stopped, Act(A::Uninstall), OWN => Uninstalling;
        suspended_uninstall: Suspended, Act(A::Uninstall), OWN => Uninstalling;
        installed_uninstall: Installed, Act(A::Uninstall), OWN => Uninstalling;
        stopped_start: Stopped, Act(A::Start), OWN => Starting;
        installed_start: Installed, Act(A::Start), OWN => Starting;
        failed_start: Failed, Act(A::Start), OWN => Starting;
        suspended_resume: Suspended, Act(A::Resume), OWN => Resuming;
        install_failed_retry: InstallFailed, Act(A::Retry), OWN => Preparing;
        failed_remove: Failed, Act(A::Uninstall), OWN => Deleting;
        install_failed_remove: InstallFailed, Act(A::Uninstall), OWN => Deleting;
        rent_failed_remove: RentFailed, Act(A::Uninstall), RENT => Deleting;
        uninstall_failed_remove: UninstallFailed, Act(A::Uninstall), OWN => Deleting;
        rental_end_running: Running, EndRental, RENT => ShuttingDown;
        rental_end_stopped: Stopped, EndRental, RENT => ShuttingDown;
        rental_end_suspended: Suspended, EndRental, RENT => ShuttingDown;
        rental_end_installed: Installed, EndRental, RENT => ShuttingDown;
        rental_end_failed: Failed, EndRental, RENT => ShuttingDown;
        rental_end_install_failed: InstallFailed, EndRental, RENT => Deleting;
        rental_end_rent_failed: RentFailed, EndRental, RENT => Deleting;
        rental_end_uninstall_failed: UninstallFailed, EndRental, RENT => Deleting;
        preparing_downloading: Preparing, Report(Downloading), OWN => Downloading;
        preparing_installing: Preparing, Report(Installing), OWN => Installing;
        downloading_installing: Downloading, Report(Installing), OWN => Installing;
        preparing_installed: Preparing, Report(Installed), OWN => Installed;
        downloading_installed: Downloading, Report(Installed), OWN => Installed;
        installing_installed: Installing, Report(Installed), OWN => Installed;
        running_exits: Running, Report(Stopped), OWN => Stopped;
        running_crashes: Running, Report(Failed), OWN => Failed;
        suspended_crashes: Suspended, Report(Failed), OWN => Failed;
        stopped_started_on_the_box: Stopped, Report(Running), OWN => Running;
        failed_runs_again: Failed, Report(Running), OWN => Running;
        failed_reported_stopped: Failed, Report(Stopped), OWN => Stopped;
        preparing_done: Preparing, Done(RUN), OWN => Running;
        downloading_done: Downloading, Done(RUN), OWN => Running;
        installing_done: Installing, Done(RUN), OWN => Running;
        installed_done: Installed, Done(RUN), OWN => Running;
        starting_done: Starting, Done(RUN), OWN => Running;
        restarting_done: Restarting, Done(RUN), OWN => Running;
        resuming_done: Resuming, Done(RUN), OWN => Running;
        snapshotting_done_running: Snapshotting, Done(RUN), OWN => Running;
        snapshotting_done_stopped: Snapshotting, Done(Desired::Stopped), OWN => Stopped;
        stopping_done: Stopping, Done(Desired::Stopped), OWN => Stopped;
        suspending_done: Suspending, Done(Desired::Suspended), OWN => Suspended;
        uninstalling_done: Uninstalling, Done(Desired::Removed), OWN => NotInstall;
        deleting_done: Deleting, Done(Desired::Removed), OWN => NotInstall;
        shutting_down_done: ShuttingDown, Done(Desired::Removed), RENT => NotInstall;
        preparing_fails: Preparing, Fail, OWN => InstallFailed;
        downloading_fails: Downloading, Fail, OWN => InstallFailed;
        installing_fails: Installing, Fail, OWN => InstallFailed;
        installed_fails: Installed, Fail, OWN => InstallFailed;
        rented_preparing_fails: Preparing, Fail, RENT => RentFailed;
        rented_downloading_fails: Downloading, Fail, RENT => RentFailed;
        rented_installing_fails: Installing, Fail, RENT => RentFailed;
        rented_installed_fails: Installed, Fail, RENT => RentFailed;
        preparing_times_out: Preparing, Timeout, OWN => InstallFailed;
        downloading_times_out: Downloading, Timeout, OWN => InstallFailed;
        installing_times_out: Installing, Timeout, OWN => InstallFailed;
        installed_times_out: Installed, Timeout, OWN => InstallFailed;
        rented_downloading_times_out: Downloading, Timeout, RENT => RentFailed;
        rented_preparing_times_out: Preparing, Timeout, RENT => RentFailed;
        rented_installing_times_out: Installing, Timeout, RENT => RentFailed;
        rented_installed_times_out: Installed, Timeout, RENT => RentFailed;
        starting_fails: Starting, Fail, OWN => Failed;
        stopping_fails: Stopping, Fail, OWN => Failed;
        restarting_fails: Restarting, Fail, OWN => Failed;
        suspending_fails: Suspending, Fail, OWN => Failed;
        resuming_fails: Resuming, Fail, OWN => Failed;
        snapshotting_fails: Snapshotting, Fail, OWN => Failed;
        starting_times_out: Starting, Timeout, OWN => Failed;
        stopping_times_out: Stopping, Timeout, OWN => Failed;
        restarting_times_out: Restarting, Timeout, OWN => Failed;
        suspending_times_out: Suspending, Timeout, OWN => Failed;
        resuming_times_out: Resuming, Timeout, OWN => Failed;
        snapshotting_times_out: Snapshotting, Timeout, OWN => Failed;
        uninstalling_fails: Uninstalling, Fail, OWN => UninstallFailed;
        deleting_fails: Deleting, Fail, OWN => UninstallFailed;
        shutting_down_fails: ShuttingDown, Fail, RENT => UninstallFailed;
        uninstalling_times_out: Uninstalling, Timeout, OWN => UninstallFailed;
        deleting_times_out: Deleting, Timeout, OWN => UninstallFailed;
        shutting_down_times_out: ShuttingDown, Timeout, RENT => UninstallFailed;
        running_update: Running, Act(A::Update), OWN => Updating;
        updating_done: Updating, Done(RUN), OWN => Running;
        updating_rolled_back: Updating, Fail, OWN => Running;
        updating_times_out: Updating, Timeout, OWN => Failed;
        cancel_preparing: Preparing, Act(A::Cancel), OWN => NotInstall;
        cancel_downloading: Downloading, Act(A::Cancel), OWN => NotInstall;
        cancel_installing: Installing, Act(A::Cancel), OWN => NotInstall;
        cancel_installed: Installed, Act(A::Cancel), OWN => NotInstall;
        cancel_uninstalling: Uninstalling, Act(A::Cancel), OWN => NotInstall;
        cancel_deleting: Deleting, Act(A::Cancel), OWN => NotInstall;
        cancel_shutting_down: ShuttingDown, Act(A::Cancel), RENT => NotInstall;
        cancel_starting: Starting, Act(A::Cancel), OWN => Failed;
        cancel_stopping: Stopping, Act(A::Cancel), OWN => Failed;
        cancel_restarting: Restarting, Act(A::Cancel), OWN => Failed;
        cancel_suspending: Suspending, Act(A::Cancel), OWN => Failed;
        cancel_resuming: Resuming, Act(A::Cancel), OWN => Failed;
        cancel_snapshotting: Snapshotting, Act(A::Cancel), OWN => Failed;
        cancel_updating: Updating, Act(A::Cancel), OWN => Failed;
        stopped_drift: Stopped, Drift(Desired::Stopped), OWN => Stopping;
        failed_drift_stopped: Failed, Drift(Desired::Stopped), OWN => Stopping;
        suspended_drift: Suspended, Drift(Desired::Suspended), OWN => Suspending;
        failed_drift_suspended: Failed, Drift(Desired::Suspended), OWN => Suspending;
    }

    fn events() -> Vec<Event> {
        let mut v: Vec<Event> = Action::ALL.into_iter().map(Event::Act).collect();
        v.extend([Event::EndRental, Event::Fail, Event::Timeout]);
        v.extend(AppStatus::iter().map(Event::Report));
        v.extend([Desired::Running, Desired::Stopped, Desired::Suspended, Desired::Removed].map(Event::Done));
        v.extend([Desired::Running, Desired::Stopped, Desired::Suspended, Desired::Removed].map(Event::Drift));
        v
    }

    /// Everything the table does not list is refused, and the kind matters only for install failures.
    #[test]
    fn every_other_pair_is_refused() {
        let listed = listed();
        for from in AppStatus::iter() {
            for ev in events() {
                for kind in [OWN, RENT] {
                    let exact = listed.iter().find(|(f, e, k, _)| *f == from && *e == ev && *k == kind).map(|t| t.3);
                    let any_kind = listed
                        .iter()
                        .find(|(f, e, _, to)| *f == from && *e == ev && !matches!(to, InstallFailed | RentFailed))
                        .map(|t| t.3);
                    let want = exact.or(any_kind);
                    assert_eq!(next(from, ev, kind), want, "{from:?} {ev:?} {kind:?}");
                }
            }
        }
    }

    #[test]
    fn every_label_is_reachable_or_initial() {
        let reached: Vec<AppStatus> = listed().into_iter().map(|t| t.3).collect();
        for s in AppStatus::iter() {
            assert!(reached.contains(&s) || s == Preparing, "{s:?} is never reached");
        }
    }

    #[test]
    fn watchdog_limits_cover_the_transitional_states() {
        let (i, o) = (Duration::from_secs(100), Duration::from_secs(10));
        assert_eq!(time_limit(Downloading, i, o), Some(i));
        assert_eq!(time_limit(Stopping, i, o), Some(o));
        assert_eq!(time_limit(Snapshotting, i, o), Some(i));
        assert_eq!(time_limit(ShuttingDown, i, o), Some(i));
        assert_eq!(time_limit(Running, i, o), None);
        for s in AppStatus::iter().filter(|s| is_transitional(*s)) {
            assert!(next(s, Event::Timeout, OWN).is_some(), "{s:?} has no time-out");
        }
    }

    #[test]
    fn actions_follow_the_table() {
        let on = |s| actions(s, OWN, true, Role::Owner);
        assert_eq!(on(Running), vec![A::Stop, A::Restart, A::Suspend, A::Snapshot, A::Uninstall, A::Update]);
        assert_eq!(on(Stopped), vec![A::Start, A::Snapshot, A::Uninstall]);
        assert_eq!(on(InstallFailed), vec![A::Retry, A::Uninstall]);
        assert!(on(Downloading).is_empty());
    }

    #[test]
    fn an_offline_box_offers_cancel_or_remove_only() {
        let off = |s| actions(s, RENT, false, Role::Owner);
        assert_eq!(off(Preparing), vec![A::Cancel]);
        assert_eq!(off(Starting), vec![A::Cancel]);
        assert_eq!(off(Running), vec![A::Uninstall]);
        assert_eq!(off(Stopped), vec![A::Uninstall]);
        assert_eq!(allowed(Running, A::Stop, RENT, false, Role::Owner), Allowed::Offline);
        assert_eq!(allowed(Preparing, A::Cancel, OWN, true, Role::Owner), Allowed::NotInState);
    }

    #[test]
    fn members_are_offered_only_what_they_may_do() {
        let member = |s, online| actions(s, OWN, online, Role::Member);
        assert_eq!(member(Running, true), vec![A::Stop, A::Restart, A::Suspend]);
        assert_eq!(member(Stopped, true), vec![A::Start]);
        assert_eq!(member(Failed, true), vec![A::Start]);
        assert!(member(InstallFailed, true).is_empty());
        assert_eq!(member(Starting, false), vec![A::Cancel]);
        assert!(member(Preparing, false).is_empty(), "cancelling an install removes it: the owner's");
        for a in [A::Uninstall, A::Snapshot, A::Retry, A::Update] {
            for s in AppStatus::iter() {
                assert_ne!(allowed(s, a, OWN, true, Role::Member), Allowed::Yes, "{s:?} {a:?}");
            }
        }
    }
}
