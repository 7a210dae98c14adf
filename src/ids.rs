//! Typed ids of the records people name in URLs and bodies, so one kind of id can never be passed
//! where another is expected. They are UUID v7 strings made by `db::new_id` (the device id, typed
//! by people, is `devices::model::DeviceId`). Parsing accepts any string of at most 64 characters:
//! an id that names nothing answers 404, as before.

use serde::{Deserialize, Deserializer, Serialize};

macro_rules! ids {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, utoipa::ToSchema)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                if s.is_empty() || s.chars().count() > 64 {
                    return Err(serde::de::Error::custom(concat!("not a valid ", stringify!($name))));
                }
                Ok($name(s))
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
}
