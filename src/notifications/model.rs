//! Notification request and response types.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::db::enums::NotificationKind;
use crate::error::{AppError, Msg};

/// Notifications newer than this count as `recent` in the stats.
pub const RECENT_HOURS: i64 = 24;

/// The counters the console polls (docs/product.md §3 "Notification stats").
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Stats {
    pub total: u64,
    pub read: u64,
    pub unread: u64,
    /// Notifications of the last [`RECENT_HOURS`] hours.
    pub recent: u64,
    /// A friend request waits for the person's answer (src/social).
    pub pending_friend_requests_exists: bool,
    /// Unread invitation/application news of the companies work.
    pub member_records_unread: u64,
}

impl Stats {
    /// The tag of this answer: every counter, so it changes exactly when the answer does.
    pub fn etag(&self) -> axum::http::HeaderValue {
        let tag = format!(
            "\"s{}.{}.{}.{}.{}\"",
            self.total, self.unread, self.recent, self.pending_friend_requests_exists as u8, self.member_records_unread
        );
        axum::http::HeaderValue::from_str(&tag).expect("digits and dots are a valid header value")
    }
}

/// One notification, its texts in the request's language.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Notification {
    pub id: String,
    /// device_online, device_offline, zcloud_ready, zcloud_failed …
    pub kind: NotificationKind,
    pub title: String,
    pub body: String,
    pub read: bool,
    pub created_at: DateTime<Utc>,
    /// The page the notification is about (issue 26), a same-site path such as
    /// `/devices/details?id=…`, `/app/details?id=…`, `/demands-and-offers`, `/wallet`,
    /// `/company-email`; null when it is about no page.
    pub path: Option<String>,
}

/// The page a notification of `kind` made from `params` is about: the path its writer named
/// (`params.path`), else the page of its subject.
pub fn path_of(kind: NotificationKind, params: &serde_json::Value) -> Option<String> {
    use NotificationKind as K;
    if let Some(p) = params["path"].as_str().filter(|p| p.starts_with('/') && !p.starts_with("//")) {
        return Some(p.to_string());
    }
    let by_id = |page: &str, key: &str| params[key].as_str().filter(|id| !id.is_empty()).map(|id| format!("{page}?id={}", urlencoding(id)));
    match kind {
        K::DeviceOnline | K::DeviceOffline | K::ZcloudReady | K::ZcloudFailed | K::ZcloudEnding => by_id("/devices/details", "device_id"),
        // The machine is gone.
        K::ZcloudEnded => Some("/devices".to_string()),
        K::AppInstalled | K::AppFailed | K::RentalStarted | K::RentalEnded | K::RentalSuspended | K::RentalEnding | K::RentalDeviceOffline | K::RentalDeviceBack => {
            by_id("/app/details", "installation_id")
        }
        K::DeviceRented => by_id("/devices/details", "device_id"),
        K::OrderTaken | K::OrderAccepted | K::OrderConfirmed | K::OrderFinished | K::OrderFailed => Some("/demands-and-offers".to_string()),
        K::Runway24h | K::Runway1h => Some("/wallet".to_string()),
        K::SnapshotExpiring => Some("/app".to_string()),
        K::CompanyInvitation => Some("/company-email".to_string()),
    }
}

fn urlencoding(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// `?filter=unread` lists only unread notifications; without it, all of them.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListFilter {
    pub filter: Option<String>,
}

impl ListFilter {
    /// True for `unread`, false when absent; anything else is refused.
    pub fn unread_only(&self) -> Result<bool, AppError> {
        match self.filter.as_deref().map(str::trim) {
            None | Some("") | Some("all") => Ok(false),
            Some("unread") => Ok(true),
            Some(_) => Err(AppError::invalid("filter", Msg::InvalidField("filter"))),
        }
    }
}

/// The `data` of a `notification` event on the person's live stream (src/events): list it with
/// `GET /notifications` in the reader's language.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct NotificationEvent {
    pub id: String,
    pub kind: NotificationKind,
}
