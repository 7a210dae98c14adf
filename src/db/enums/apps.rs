//! The installations' states (src/apps/): what an installation is, what was asked of it, and whose
//! it is.

use sea_orm::entity::prelude::*;
use sea_orm::Iterable;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::lang::{Lang, Words};

/// An installation's status: every label of docs/product.md §4. Transitions: `apps::lifecycle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum AppStatus {
    #[sea_orm(string_value = "preparing")]
    Preparing,
    #[sea_orm(string_value = "downloading")]
    Downloading,
    #[sea_orm(string_value = "installing")]
    Installing,
    #[sea_orm(string_value = "installed")]
    Installed,
    #[sea_orm(string_value = "starting")]
    Starting,
    #[sea_orm(string_value = "running")]
    Running,
    #[sea_orm(string_value = "stopping")]
    Stopping,
    #[sea_orm(string_value = "stopped")]
    Stopped,
    #[sea_orm(string_value = "restarting")]
    Restarting,
    #[sea_orm(string_value = "suspending")]
    Suspending,
    #[sea_orm(string_value = "suspended")]
    Suspended,
    #[sea_orm(string_value = "resuming")]
    Resuming,
    #[sea_orm(string_value = "snapshotting")]
    Snapshotting,
    #[sea_orm(string_value = "uninstalling")]
    Uninstalling,
    #[sea_orm(string_value = "deleting")]
    Deleting,
    #[sea_orm(string_value = "shutting_down")]
    ShuttingDown,
    /// A new version starting beside the old one (which keeps running until the switch).
    #[sea_orm(string_value = "updating")]
    Updating,
    #[sea_orm(string_value = "failed")]
    Failed,
    #[sea_orm(string_value = "install_failed")]
    InstallFailed,
    #[sea_orm(string_value = "uninstall_failed")]
    UninstallFailed,
    #[sea_orm(string_value = "rent_failed")]
    RentFailed,
    #[sea_orm(string_value = "not_install")]
    NotInstall,
}

impl AppStatus {
    pub fn parse(raw: &str) -> Option<AppStatus> {
        AppStatus::iter().find(|s| s.to_value() == raw)
    }
    /// The status's label in a language, as a sentence names it (docs/product.md §4). The UI
    /// keeps its own badge labels (`app_status_*` of ui/src/i18n/apps.*.ts, capitalized in
    /// English): it renders them without a round trip.
    pub fn label(self, lang: Lang) -> &'static str {
        self.words().get(lang)
    }
    /// Its label in both languages: the protocol's (`zmarket_protocol::apps::AppStatus::words`),
    /// which the reasons' texts read too.
    pub fn words(self) -> Words {
        let (en, zh) = zmarket_protocol::apps::AppStatus::from(self).words();
        Words::new(en, zh)
    }
}

/// Whether an installation is the device owner's own (`own`) or rented on another owner's device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum InstallKind {
    #[sea_orm(string_value = "own")]
    Own,
    #[sea_orm(string_value = "rent")]
    Rent,
}

/// What the person wants the installation to be once the pending command is done (`desired`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum Desired {
    #[sea_orm(string_value = "running")]
    Running,
    #[sea_orm(string_value = "stopped")]
    Stopped,
    #[sea_orm(string_value = "suspended")]
    Suspended,
    #[sea_orm(string_value = "removed")]
    Removed,
}

/// Where a snapshot stands (docs/data.md): being made on the box, ready, or failed (its reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum SnapshotStatus {
    #[sea_orm(string_value = "creating")]
    Creating,
    #[sea_orm(string_value = "ready")]
    Ready,
    #[sea_orm(string_value = "failed")]
    Failed,
}

/// Why a snapshot was taken: by hand, by the installation's daily backup, or kept when a rental
/// ended (removed after `[apps] keep_ended_days`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum SnapshotKind {
    #[sea_orm(string_value = "manual")]
    Manual,
    #[sea_orm(string_value = "backup")]
    Backup,
    #[sea_orm(string_value = "ended")]
    Ended,
}
