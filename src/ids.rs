//! Typed ids of the records people name in URLs and bodies, so one kind of id can never be passed
//! where another is expected (Vaultwarden's habit): a handler extracts `ApiPath<OrderId>`, a
//! service takes `&OrderId`, and handing it a device's id does not compile. They are the UUID v7
//! strings made by `db::new_id`, except two: the device id people type (`devices::model::DeviceId`,
//! three groups of four characters) and an app's id, chosen by its publisher (`nginx`).
//!
//! Parsing trims and accepts any other string of 1 to 64 characters: an id that names nothing
//! answers 404, as before. An id read from a body is required with [`required`], the one place
//! that rule is written. An id reads as a `&str` (`Deref`), and compares with and binds as one in
//! a query (`Column::Id.eq(&id)`), so the database side needs no conversions.

use serde::{Deserialize, Deserializer, Serialize};

use crate::error::{AppError, Msg};

/// The longest id a path or a body may name.
pub const MAX_ID_CHARS: usize = 64;

/// An id's text as the edge accepts it: trimmed, 1 to [`MAX_ID_CHARS`] characters.
pub fn trimmed(raw: &str) -> Option<&str> {
    let t = raw.trim();
    (!t.is_empty() && t.chars().count() <= MAX_ID_CHARS).then_some(t)
}

/// A required id from an optional body field: trimmed and not empty, else 400 naming `field`
/// with `msg`.
pub fn required<T: From<String>>(raw: Option<String>, field: &'static str, msg: Msg) -> Result<T, AppError> {
    raw.as_deref().and_then(trimmed).map(|s| T::from(s.to_string())).ok_or(AppError::invalid(field, msg))
}

/// The conversions every string id shares with `DeviceId`: reads as `&str`, compares with
/// strings, binds in a query, prints itself.
#[macro_export]
macro_rules! string_id_impls {
    ($name:ident) => {
        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
            pub fn into_string(self) -> String {
                self.0
            }
        }
        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }
        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }
        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }
        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }
        impl From<&$name> for String {
            fn from(id: &$name) -> String {
                id.0.clone()
            }
        }
        impl From<$name> for sea_orm::Value {
            fn from(id: $name) -> sea_orm::Value {
                id.0.into()
            }
        }
        impl From<&$name> for sea_orm::Value {
            fn from(id: &$name) -> sea_orm::Value {
                id.0.clone().into()
            }
        }
    };
}

macro_rules! ids {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, utoipa::ToSchema)]
        #[serde(transparent)]
        pub struct $name(String);

        $crate::string_id_impls!($name);

        /// An id made by the server (`db::new_id`) or read from the database.
        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.to_string())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                match trimmed(&s) {
                    Some(t) => Ok($name(t.to_string())),
                    None => Err(serde::de::Error::custom(concat!("not a valid ", stringify!($name)))),
                }
            }
        }
    )*};
}

ids! {
    /// A person.
    UserId,
    /// A company (an `smeId` other than "user").
    CompanyId,
    /// An invitation or application of a company.
    RecordId,
    /// A notification.
    NotificationId,
    /// A friend request.
    FriendRequestId,
    /// An app installed (or rented) on a device: `/api/rmp/v1/apps/{id}`.
    InstallationId,
    /// A catalogue app, named by its publisher (`nginx`, `jupyter`).
    AppId,
    /// An order of the compute exchange: a demand while nobody has taken it (`/demands/{id}`),
    /// then the order (`/orders/{id}`), the same record.
    OrderId,
    /// An API key (`/api/iam/v1/api-keys/{id}`).
    ApiKeyId,
    /// A snapshot of an installation's data (`/api/rmp/v1/snapshots/{id}`).
    SnapshotId,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_trimmed_and_bounded_where_they_enter() {
        let ok: OrderId = serde_json::from_str("\" 0193-ab \"").unwrap();
        assert_eq!(ok, "0193-ab");
        assert!(serde_json::from_str::<OrderId>("\"  \"").is_err());
        assert!(serde_json::from_str::<OrderId>(&format!("\"{}\"", "x".repeat(65))).is_err());
        assert!(serde_json::from_str::<OrderId>(&format!("\"{}\"", "é".repeat(64))).is_ok());
        let missing: Result<UserId, _> = required(None, "user_id", Msg::InvalidField("user_id"));
        assert!(missing.is_err());
        let blank: Result<UserId, _> = required(Some(" \t".into()), "user_id", Msg::InvalidField("user_id"));
        assert!(blank.is_err());
        let id: UserId = required(Some(" u1 ".into()), "user_id", Msg::InvalidField("user_id")).unwrap();
        assert_eq!(id.as_str(), "u1");
    }
}
