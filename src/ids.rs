//! Typed ids of the records people name in URLs and bodies, so one kind of id can never be passed
//! where another is expected (Vaultwarden's habit): a handler extracts `ApiPath<OrderId>`, a
//! service takes `&OrderId`, and handing it a device's id does not compile. They are the UUID v7
//! strings made by `db::new_id` (`XId::new()`), except two: the device id people type
//! ([`DeviceId`], three groups of four characters) and an app's id, chosen by its publisher
//! (`nginx`).
//!
//! Parsing trims and accepts any other string of 1 to 64 characters: an id that names nothing
//! answers 404, as before. An id read from a body is required with [`required`], the one place
//! that rule is written. The entities hold these types: sea-orm reads them (as stored, never
//! parsed again) and binds them (`Column::Id.eq(&id)`). An id does not read as a `&str` (no
//! `Deref`): `as_str()` is written where text is wanted (a registry keyed by text, the agent's
//! wire), so one kind of id cannot slip into another's place through a `&str` parameter.

use rand::Rng;
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
        impl From<&$name> for $name {
            fn from(id: &$name) -> $name {
                id.clone()
            }
        }
        impl From<&String> for $name {
            fn from(s: &String) -> $name {
                $name::from(s.as_str())
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
        // Read from a row as stored: no trimming or parsing (what was written is what it is).
        impl sea_orm::TryGetable for $name {
            fn try_get_by<I: sea_orm::ColIdx>(res: &sea_orm::QueryResult, idx: I) -> Result<Self, sea_orm::TryGetError> {
                <String as sea_orm::TryGetable>::try_get_by(res, idx).map($name)
            }
        }
        impl sea_orm::sea_query::ValueType for $name {
            fn try_from(v: sea_orm::Value) -> Result<Self, sea_orm::sea_query::ValueTypeErr> {
                <String as sea_orm::sea_query::ValueType>::try_from(v).map($name)
            }
            fn type_name() -> String {
                stringify!($name).to_owned()
            }
            fn array_type() -> sea_orm::sea_query::ArrayType {
                <String as sea_orm::sea_query::ValueType>::array_type()
            }
            fn column_type() -> sea_orm::sea_query::ColumnType {
                <String as sea_orm::sea_query::ValueType>::column_type()
            }
        }
        impl sea_orm::sea_query::Nullable for $name {
            fn null() -> sea_orm::Value {
                <String as sea_orm::sea_query::Nullable>::null()
            }
        }
        impl sea_orm::IntoActiveValue<$name> for $name {
            fn into_active_value(self) -> sea_orm::ActiveValue<$name> {
                sea_orm::ActiveValue::Set(self)
            }
        }
        // A primary key of text is never made from a number (sea-orm asks every key type).
        impl sea_orm::TryFromU64 for $name {
            fn try_from_u64(_: u64) -> Result<Self, sea_orm::DbErr> {
                Err(sea_orm::DbErr::ConvertFromU64(stringify!($name)))
            }
        }
    };
}

/// Letters and digits a person cannot confuse (no 0/O, 1/I/L).
pub const ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";

pub fn random_chars(n: usize) -> String {
    let mut rng = rand::rng();
    (0..n).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect()
}

/// A device id as printed by the agent: three groups of four characters of [`ALPHABET`]
/// separated by dashes, e.g. `7KQ2-M9XD-4HTR`. Typed ids are trimmed and upper-cased, and their
/// groups may be separated by spaces as well (`7KQ2 M9XD 4HTR`, `7KQ2 - M9XD - 4HTR`), as a
/// pairing code's may (issue 26).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct DeviceId(String);

impl DeviceId {
    pub fn new_random() -> DeviceId {
        DeviceId(format!("{}-{}-{}", random_chars(4), random_chars(4), random_chars(4)))
    }
    pub fn parse(raw: Option<&str>) -> Result<DeviceId, AppError> {
        let err = || AppError::invalid("device_id", Msg::InvalidDeviceId);
        let raw = raw.unwrap_or("").to_ascii_uppercase();
        let groups: Vec<&str> = raw.split(|c: char| c == '-' || c.is_whitespace()).filter(|g| !g.is_empty()).collect();
        // One dash at most between two groups: `7KQ2--M9XD-4HTR` is not a spacing of an id.
        let dashes = raw.chars().filter(|c| *c == '-').count();
        let ok = groups.len() == 3 && dashes <= 2 && groups.iter().all(|g| g.len() == 4 && g.bytes().all(|b| ALPHABET.contains(&b)));
        if ok { Ok(DeviceId(groups.join("-"))) } else { Err(err()) }
    }
}

crate::string_id_impls!(DeviceId);

impl DeviceId {
    /// A device id as a path (`/devices/{id}`) or a page's query names it: normalized as typed
    /// ids are; one that is not a device id's shape is kept as written (trimmed), names no device
    /// and answers 404, as an unknown one does. A body's device id is checked with
    /// [`DeviceId::parse`] (400). `None` for an empty or over-long one.
    pub fn named(raw: &str) -> Option<DeviceId> {
        trimmed(raw).map(|t| DeviceId::from(t.to_string()))
    }
}

impl<'de> Deserialize<'de> for DeviceId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        DeviceId::named(&String::deserialize(d)?).ok_or_else(|| serde::de::Error::custom("not a valid DeviceId"))
    }
}

/// A device id read from the database (already in its normal form) or required from a body
/// (`ids::required`): normalized when it has a device id's shape, else kept (it names nothing).
impl From<String> for DeviceId {
    fn from(s: String) -> Self {
        DeviceId::parse(Some(&s)).unwrap_or(DeviceId(s))
    }
}

impl From<&str> for DeviceId {
    fn from(s: &str) -> Self {
        DeviceId::from(s.to_string())
    }
}


macro_rules! ids {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, utoipa::ToSchema)]
        #[serde(transparent)]
        pub struct $name(String);

        $crate::string_id_impls!($name);

        impl $name {
            /// A new id (a UUID v7, as `db::new_id` makes).
            pub fn new() -> Self {
                $name(uuid::Uuid::now_v7().to_string())
            }
        }

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
    /// A hold of the wallet's ledger (a rental's, an order's, a Z-CLOUD machine's money held).
    HoldId,
    /// A command queued for a device (`device_commands`), the one an installation waits on.
    CommandId,
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
