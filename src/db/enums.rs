//! The domain's states, kinds and roles as they are stored: each an enum whose string values are
//! the ones on the wire (docs/api.md) and in the database. Entities use them as column types; the
//! domains re-export the ones they own. (Entities may not import a domain, so they live here.)

use sea_orm::entity::prelude::*;
use sea_orm::Iterable;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::lang::Words;

mod apps;
mod market;
mod wire;

pub use apps::{AppStatus, Desired, InstallKind, SnapshotKind, SnapshotStatus};
pub use market::{AppKind, Category, DisplayType, Tier};

/// The value of a string enum that `raw` names, whatever its case and surrounding spaces (how
/// people type a choice in a form or a query string).
pub fn parse_any_case<E: ActiveEnum<Value = String> + Iterable>(raw: &str) -> Option<E> {
    let raw = raw.trim();
    E::iter().find(|v| v.to_value().eq_ignore_ascii_case(raw))
}

/// Every value of a string enum, in declaration order (the choices a refusal lists).
pub fn values<E: ActiveEnum<Value = String> + Iterable>() -> Vec<String> {
    E::iter().map(|v| v.to_value()).collect()
}

/// What a device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
pub enum DeviceType {
    #[sea_orm(string_value = "Z-BOX")]
    #[serde(rename = "Z-BOX")]
    ZBox,
    #[sea_orm(string_value = "P-BOX")]
    #[serde(rename = "P-BOX")]
    PBox,
    #[sea_orm(string_value = "Z-CLOUD")]
    #[serde(rename = "Z-CLOUD")]
    ZCloud,
    #[sea_orm(string_value = "server group")]
    #[serde(rename = "server group")]
    ServerGroup,
}

impl DeviceType {
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceType::ZBox => "Z-BOX",
            DeviceType::PBox => "P-BOX",
            DeviceType::ZCloud => "Z-CLOUD",
            DeviceType::ServerGroup => "server group",
        }
    }
    /// Case-insensitive, as people and agents type it.
    pub fn parse(raw: &str) -> Option<DeviceType> {
        DeviceType::iter().find(|t| t.as_str().eq_ignore_ascii_case(raw.trim()))
    }
}

/// A device's status as stored. `unknown` (and anything not online, creating or failed) is shown
/// as offline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum DeviceStatus {
    #[sea_orm(string_value = "online")]
    Online,
    #[sea_orm(string_value = "offline")]
    Offline,
    #[sea_orm(string_value = "creating")]
    Creating,
    #[sea_orm(string_value = "failed")]
    Failed,
    #[sea_orm(string_value = "unknown")]
    Unknown,
}

impl DeviceStatus {
    /// What people see: unknown is shown as offline (docs/product.md §4).
    pub fn shown(self) -> DeviceStatus {
        match self {
            DeviceStatus::Unknown => DeviceStatus::Offline,
            s => s,
        }
    }
    /// A filter value of the device list (`unknown` is not one: it is listed as offline).
    pub fn parse_filter(raw: &str) -> Option<DeviceStatus> {
        DeviceStatus::iter().filter(|s| *s != DeviceStatus::Unknown).find(|s| s.to_value() == raw)
    }
}

/// How an owner shares a device: manual, autopilot (rented whenever idle, for max profit) or
/// dedicated (self-used, never rented).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum SharingMode {
    #[sea_orm(string_value = "manual")]
    Manual,
    #[sea_orm(string_value = "autopilot")]
    Autopilot,
    #[sea_orm(string_value = "dedicated")]
    Dedicated,
}

impl SharingMode {
    pub fn parse(raw: &str) -> Option<SharingMode> {
        SharingMode::iter().find(|m| m.to_value() == raw)
    }
}

/// What a command asks a device's agent to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum CommandKind {
    #[sea_orm(string_value = "zcloud_create")]
    ZcloudCreate,
    #[sea_orm(string_value = "zcloud_delete")]
    ZcloudDelete,
    #[sea_orm(string_value = "app_install")]
    AppInstall,
    #[sea_orm(string_value = "app_start")]
    AppStart,
    #[sea_orm(string_value = "app_stop")]
    AppStop,
    #[sea_orm(string_value = "app_restart")]
    AppRestart,
    #[sea_orm(string_value = "app_suspend")]
    AppSuspend,
    #[sea_orm(string_value = "app_resume")]
    AppResume,
    #[sea_orm(string_value = "app_snapshot")]
    AppSnapshot,
    #[sea_orm(string_value = "app_uninstall")]
    AppUninstall,
    #[sea_orm(string_value = "app_update")]
    AppUpdate,
    /// Measure the box's GPUs (docs/gpus.md).
    #[sea_orm(string_value = "gpu_verify")]
    GpuVerify,
    /// Copy a snapshot's archive to the market (docs/data.md).
    #[sea_orm(string_value = "snapshot_upload")]
    SnapshotUpload,
    /// Remove a snapshot's archive from the box.
    #[sea_orm(string_value = "snapshot_delete")]
    SnapshotDelete,
}

/// Where a command is in its send-until-acknowledged cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum CommandStatus {
    #[sea_orm(string_value = "pending")]
    Pending,
    #[sea_orm(string_value = "done")]
    Done,
    #[sea_orm(string_value = "failed")]
    Failed,
}

/// A person's role in a company; also the `userType` of a session in a company context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum Role {
    #[sea_orm(string_value = "admin")]
    Admin,
    #[sea_orm(string_value = "member")]
    Member,
}

impl Role {
    pub fn parse(raw: &str) -> Option<Role> {
        Role::iter().find(|r| r.to_value() == raw)
    }
}

/// An invitation (sent by an admin) or an application (sent by a person).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    #[sea_orm(string_value = "invite")]
    Invite,
    #[sea_orm(string_value = "apply")]
    Apply,
}

/// Where an invitation or application stands, as stored (`waiting` is how admins see an
/// application that is `applied`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum RecordStatus {
    #[sea_orm(string_value = "invited")]
    Invited,
    #[sea_orm(string_value = "applied")]
    Applied,
    #[sea_orm(string_value = "waiting")]
    Waiting,
    #[sea_orm(string_value = "accepted")]
    Accepted,
    #[sea_orm(string_value = "declined")]
    Declined,
    #[sea_orm(string_value = "expired")]
    Expired,
}

/// What a company allocates to a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum ResourceType {
    #[sea_orm(string_value = "device")]
    Device,
    #[sea_orm(string_value = "app")]
    App,
}

/// What a notification is about; its texts are made from it (and its params) in one place per
/// domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum NotificationKind {
    #[sea_orm(string_value = "device_online")]
    DeviceOnline,
    #[sea_orm(string_value = "device_offline")]
    DeviceOffline,
    #[sea_orm(string_value = "zcloud_ready")]
    ZcloudReady,
    #[sea_orm(string_value = "zcloud_failed")]
    ZcloudFailed,
    /// The host's owner ended a Z-CLOUD machine rented on their host (or withdrew the host): it
    /// stops after the notice period.
    #[sea_orm(string_value = "zcloud_ending")]
    ZcloudEnding,
    /// A rented Z-CLOUD machine was stopped and its rental settled.
    #[sea_orm(string_value = "zcloud_ended")]
    ZcloudEnded,
    #[sea_orm(string_value = "app_installed")]
    AppInstalled,
    #[sea_orm(string_value = "app_failed")]
    AppFailed,
    #[sea_orm(string_value = "rental_started")]
    RentalStarted,
    #[sea_orm(string_value = "rental_ended")]
    RentalEnded,
    #[sea_orm(string_value = "rental_suspended")]
    RentalSuspended,
    /// A rental ends in ten minutes (once per end; the notice links to its Extend).
    #[sea_orm(string_value = "rental_ending")]
    RentalEnding,
    /// The box of a running rental went offline (to the renter).
    #[sea_orm(string_value = "rental_device_offline")]
    RentalDeviceOffline,
    /// The box of a running rental is back online (to the renter).
    #[sea_orm(string_value = "rental_device_back")]
    RentalDeviceBack,
    /// One of the owner's boxes was rented (to the owner).
    #[sea_orm(string_value = "device_rented")]
    DeviceRented,
    #[sea_orm(string_value = "company_invitation")]
    CompanyInvitation,
    /// A wallet's runway fell to a day or less.
    #[sea_orm(string_value = "runway_24h")]
    #[serde(rename = "runway_24h")]
    Runway24h,
    /// A wallet's runway fell to an hour or less.
    #[sea_orm(string_value = "runway_1h")]
    #[serde(rename = "runway_1h")]
    Runway1h,
    /// An order moved (taken, accepted, confirmed, finished, failed): both sides are told.
    #[sea_orm(string_value = "order_taken")]
    OrderTaken,
    #[sea_orm(string_value = "order_accepted")]
    OrderAccepted,
    #[sea_orm(string_value = "order_confirmed")]
    OrderConfirmed,
    #[sea_orm(string_value = "order_finished")]
    OrderFinished,
    #[sea_orm(string_value = "order_failed")]
    OrderFailed,
    /// The data kept of an ended rental (a snapshot) is removed tomorrow.
    #[sea_orm(string_value = "snapshot_expiring")]
    SnapshotExpiring,
}

/// Where a queued mail stands (src/mail.rs): `pending` until a worker claims it (`sending`), then
/// `sent`, or back to `pending` for another attempt, or `failed` after the last one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
pub enum MailStatus {
    #[sea_orm(string_value = "pending")]
    Pending,
    #[sea_orm(string_value = "sending")]
    Sending,
    #[sea_orm(string_value = "sent")]
    Sent,
    #[sea_orm(string_value = "failed")]
    Failed,
}

// ---- the wallet (src/billing/) ----

/// Whose account it is. Only `issuance` (where the operator's coins come from) may go below zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum AccountKind {
    #[sea_orm(string_value = "user")]
    User,
    #[sea_orm(string_value = "company")]
    Company,
    #[sea_orm(string_value = "issuance")]
    Issuance,
    #[sea_orm(string_value = "market_fee")]
    MarketFee,
}

/// What a transfer was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum TransferKind {
    /// Coins issued by the operator (`zmarket coins grant`).
    #[sea_orm(string_value = "grant")]
    Grant,
    /// Coins issued once to a newly verified account.
    #[sea_orm(string_value = "signup_bonus")]
    SignupBonus,
    /// A posting against a hold.
    #[sea_orm(string_value = "capture")]
    Capture,
    /// A spend from the available balance, without a hold.
    #[sea_orm(string_value = "payment")]
    Payment,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum BillStatus {
    /// Its period is still open: usage is still being added.
    #[sea_orm(string_value = "unbilled")]
    Unbilled,
    /// Its period closed.
    #[sea_orm(string_value = "billed")]
    Billed,
}

/// A hold is `pending` until it resolves, exactly once, into one of the other states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum HoldStatus {
    #[sea_orm(string_value = "pending")]
    Pending,
    /// Captured to the last cent.
    #[sea_orm(string_value = "captured")]
    Captured,
    /// Released by its owner domain; `released` says how much went back to available.
    #[sea_orm(string_value = "released")]
    Released,
    /// Released by the expiry job after `expires_at`.
    #[sea_orm(string_value = "expired")]
    Expired,
}

/// The direction of an entry for its account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    #[sea_orm(string_value = "income")]
    Income,
    #[sea_orm(string_value = "expense")]
    Expense,
}

/// Where a friend request stands (transitions: `social::requests::next_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum RequestStatus {
    #[sea_orm(string_value = "pending")]
    Pending,
    #[sea_orm(string_value = "accepted")]
    Accepted,
    #[sea_orm(string_value = "declined")]
    Declined,
    #[sea_orm(string_value = "cancelled")]
    Cancelled,
}

/// What an event of a person's live stream is about; its SSE `event:` name (src/events).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    #[sea_orm(string_value = "message")]
    Message,
    #[sea_orm(string_value = "friend_request")]
    FriendRequest,
    #[sea_orm(string_value = "friend")]
    Friend,
    #[sea_orm(string_value = "read")]
    Read,
    #[sea_orm(string_value = "notification")]
    Notification,
}

// ---- demands and orders (src/orders/) ----

/// An order's status (docs/product.md §4); a demand is an order still `order_pending`. Transitions:
/// `orders::machine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum OrderStatus {
    #[sea_orm(string_value = "order_pending")]
    OrderPending,
    #[sea_orm(string_value = "order_processing")]
    OrderProcessing,
    #[sea_orm(string_value = "order_accepted")]
    OrderAccepted,
    #[sea_orm(string_value = "order_confirmed")]
    OrderConfirmed,
    #[sea_orm(string_value = "order_failed")]
    OrderFailed,
    #[sea_orm(string_value = "order_finished")]
    OrderFinished,
}

impl OrderStatus {
    pub fn parse(raw: &str) -> Option<OrderStatus> {
        OrderStatus::iter().find(|s| s.to_value() == raw)
    }
    /// The status's label in both languages (the refusals that name it).
    pub fn words(self) -> Words {
        use OrderStatus as S;
        match self {
            S::OrderPending => Words::new("pending", "待接单"),
            S::OrderProcessing => Words::new("processing", "处理中"),
            S::OrderAccepted => Words::new("accepted", "已就绪"),
            S::OrderConfirmed => Words::new("confirmed", "进行中"),
            S::OrderFailed => Words::new("failed", "已失败"),
            S::OrderFinished => Words::new("finished", "已完成"),
        }
    }
    /// The order holds a device (taken and not over).
    pub fn holds_device(self) -> bool {
        matches!(self, OrderStatus::OrderProcessing | OrderStatus::OrderAccepted | OrderStatus::OrderConfirmed)
    }
    pub fn is_over(self) -> bool {
        matches!(self, OrderStatus::OrderFailed | OrderStatus::OrderFinished)
    }
}

/// A Z-CLOUD rental (a machine on another owner's host): `running` while paid, `ending` after the
/// host's owner ended it or withdrew the host (the machine stops at `stop_at`), `ended` once the
/// machine is gone and the rental settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(16))")]
#[serde(rename_all = "snake_case")]
pub enum ZcloudRentalStatus {
    #[sea_orm(string_value = "running")]
    Running,
    #[sea_orm(string_value = "ending")]
    Ending,
    #[sea_orm(string_value = "ended")]
    Ended,
}

/// Why a Z-CLOUD rental ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(16))")]
#[serde(rename_all = "snake_case")]
pub enum ZcloudEndReason {
    /// The host's owner ended it.
    #[sea_orm(string_value = "host_owner")]
    HostOwner,
    /// The host was withdrawn from rent.
    #[sea_orm(string_value = "withdrawn")]
    Withdrawn,
    /// The host was unlinked (or its owner's account deleted): ended at once.
    #[sea_orm(string_value = "host_gone")]
    HostGone,
    /// Its paid time is up or the hold cannot pay.
    #[sea_orm(string_value = "paid_up")]
    PaidUp,
    /// The renter deleted the machine.
    #[sea_orm(string_value = "renter")]
    Renter,
    /// The host could not make the machine.
    #[sea_orm(string_value = "failed")]
    Failed,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each value is written twice (the column's `string_value`, the wire's serde name): they
    /// must agree, or the API would answer what the database does not hold.
    fn same_on_the_wire<E: ActiveEnum<Value = String> + Iterable + Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>() {
        for v in E::iter() {
            let wire = serde_json::to_value(&v).unwrap();
            assert_eq!(wire, serde_json::Value::String(v.to_value()), "{v:?}");
            assert_eq!(serde_json::from_value::<E>(wire).unwrap(), v);
        }
    }

    #[test]
    fn every_stored_value_is_the_wire_value() {
        same_on_the_wire::<DeviceType>();
        same_on_the_wire::<DeviceStatus>();
        same_on_the_wire::<SharingMode>();
        same_on_the_wire::<CommandKind>();
        same_on_the_wire::<CommandStatus>();
        same_on_the_wire::<Role>();
        same_on_the_wire::<RecordKind>();
        same_on_the_wire::<RecordStatus>();
        same_on_the_wire::<ResourceType>();
        same_on_the_wire::<NotificationKind>();
        same_on_the_wire::<AccountKind>();
        same_on_the_wire::<TransferKind>();
        same_on_the_wire::<BillStatus>();
        same_on_the_wire::<HoldStatus>();
        same_on_the_wire::<EntryKind>();
        same_on_the_wire::<RequestStatus>();
        same_on_the_wire::<EventKind>();
        same_on_the_wire::<OrderStatus>();
        same_on_the_wire::<ZcloudRentalStatus>();
        same_on_the_wire::<ZcloudEndReason>();
        same_on_the_wire::<AppStatus>();
        same_on_the_wire::<InstallKind>();
        same_on_the_wire::<Desired>();
        same_on_the_wire::<Category>();
        same_on_the_wire::<Tier>();
        same_on_the_wire::<AppKind>();
        same_on_the_wire::<DisplayType>();
    }

    #[test]
    fn choices_are_read_in_any_case_and_listed_in_order() {
        assert_eq!(parse_any_case::<Category>(" z-cloud "), Some(Category::ZCloud));
        assert_eq!(parse_any_case::<Category>("ai"), Some(Category::Ai));
        assert_eq!(parse_any_case::<Tier>("HIGH"), Some(Tier::High));
        assert_eq!(parse_any_case::<AppKind>("lease"), None);
        assert_eq!(parse_any_case::<Category>("top_picks"), None);
        assert_eq!(values::<Category>(), ["AI", "Metaverse", "Game", "Work", "Home", "Others", "Z-CLOUD"]);
        assert_eq!(values::<Tier>(), ["high", "standard", "basic"]);
        assert_eq!(values::<AppKind>(), ["own", "rent"]);
        assert_eq!(parse_any_case::<DisplayType>("lite app"), Some(DisplayType::LiteApp));
        assert_eq!(parse_any_case::<DisplayType>(" z-server "), Some(DisplayType::ZServer));
        assert_eq!(parse_any_case::<DisplayType>("Lite"), None);
        assert_eq!(values::<DisplayType>(), ["Desktop", "Lite App", "NAS", "AI compute", "Server", "Remote desktop", "AI server", "Z-SERVER"]);
        assert!(DisplayType::AiServer.is_ai() && !DisplayType::Server.is_ai());
    }
}
