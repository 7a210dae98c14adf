//! Social request and response types (docs/api.md "Friends, tags, messages") and the validated values
//! built from the requests at the edge.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use crate::ids::{self, UserId};
use crate::db::enums::RequestStatus;
use crate::error::{AppError, Msg};
use crate::http::{Checked, Page};
use crate::iam::model::Email;

/// A message body: 1-2,000 characters (docs/api.md).
pub const MESSAGE_MAX_CHARS: usize = 2000;
/// Tags one person may have.
pub const MAX_TAGS: u64 = 100;
/// A tag name: 1-30 characters.
pub const TAG_MAX_CHARS: usize = 30;

/// `Some(value)` whenever the field is present, `Some(Value::Null)` for an explicit null: lets
/// an update tell "leave as is" (absent) from "clear" (null).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

// ---- requests and their validated forms ----

#[derive(Debug, Deserialize, ToSchema)]
pub struct FriendRequestBody {
    pub email: Option<String>,
}

/// A checked friend request: the address it goes to.
#[derive(Debug, Clone)]
pub struct NewFriendRequest {
    pub to: Email,
}

impl Checked for NewFriendRequest {
    type Body = FriendRequestBody;
    fn check(b: FriendRequestBody) -> Result<NewFriendRequest, AppError> {
        Ok(NewFriendRequest { to: Email::parse(b.email.as_deref())? })
    }
}

/// A friend's alias: 3-50 characters (docs/product.md §5), trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alias(String);

impl Alias {
    pub fn parse(raw: &str) -> Result<Alias, AppError> {
        let t = raw.trim();
        let n = t.chars().count();
        if !(3..=50).contains(&n) || t.chars().any(char::is_control) {
            return Err(AppError::invalid("alias", Msg::AliasFormatInvalid));
        }
        Ok(Alias(t.to_string()))
    }
    pub fn into_string(self) -> String {
        self.0
    }
}

/// A tag name: 1-30 characters, trimmed, no control characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TagName(String);

impl TagName {
    pub fn parse(field: &'static str, raw: Option<&str>) -> Result<TagName, AppError> {
        let t = raw.map(str::trim).unwrap_or("");
        let n = t.chars().count();
        if !(1..=TAG_MAX_CHARS).contains(&n) || t.chars().any(char::is_control) {
            return Err(AppError::invalid(field, Msg::TagNameInvalid));
        }
        Ok(TagName(t.to_string()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct TagBody {
    pub name: Option<String>,
}

impl Checked for TagName {
    type Body = TagBody;
    fn check(b: TagBody) -> Result<TagName, AppError> {
        TagName::parse("name", b.name.as_deref())
    }
}

/// `PUT /friends/{user_id}`: each field absent leaves it as it is; `alias: null` clears it.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FriendUpdateBody {
    /// 3-50 characters, or null to clear.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub alias: Option<Value>,
    /// Tag names; missing ones are created. `[]` takes the friend out of every tag.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<String>>)]
    pub tags: Option<Value>,
}

/// A validated friend update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FriendUpdate {
    /// `Some(None)`: clear the alias.
    pub alias: Option<Option<Alias>>,
    pub tags: Option<Vec<TagName>>,
}

impl Checked for FriendUpdate {
    type Body = FriendUpdateBody;
    fn check(b: FriendUpdateBody) -> Result<FriendUpdate, AppError> {
        let alias = match b.alias {
            None => None,
            Some(Value::Null) => Some(None),
            Some(Value::String(s)) => Some(Some(Alias::parse(&s)?)),
            Some(_) => return Err(AppError::invalid("alias", Msg::AliasFormatInvalid)),
        };
        let tags = match b.tags {
            None => None,
            Some(Value::Array(items)) => {
                let mut tags: Vec<TagName> = Vec::new();
                for item in &items {
                    let name = TagName::parse("tags", item.as_str().or(Some("")))?;
                    if !tags.contains(&name) {
                        tags.push(name);
                    }
                }
                if tags.len() as u64 > MAX_TAGS {
                    return Err(AppError::invalid("tags", Msg::TooManyTags));
                }
                Some(tags)
            }
            Some(_) => return Err(AppError::invalid("tags", Msg::InvalidField("tags"))),
        };
        Ok(FriendUpdate { alias, tags })
    }
}

/// A message body: 1-2,000 characters, not only blanks. Kept as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageBody(String);

impl MessageBody {
    pub fn parse(raw: Option<&str>) -> Result<MessageBody, AppError> {
        let raw = raw.unwrap_or("");
        if raw.trim().is_empty() {
            return Err(AppError::invalid("body", Msg::MessageRequired));
        }
        if raw.chars().count() > MESSAGE_MAX_CHARS {
            return Err(AppError::invalid("body", Msg::MessageTooLong));
        }
        Ok(MessageBody(raw.to_string()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct MessageBodyRequest {
    pub to_user_id: Option<String>,
    /// 1-2,000 characters.
    pub body: Option<String>,
}

/// A validated message to send.
#[derive(Debug, Clone)]
pub struct NewMessage {
    pub to: UserId,
    pub body: MessageBody,
}

impl Checked for NewMessage {
    type Body = MessageBodyRequest;
    fn check(r: MessageBodyRequest) -> Result<NewMessage, AppError> {
        let to = ids::required(r.to_user_id, "to_user_id", Msg::RecipientRequired)?;
        Ok(NewMessage { to, body: MessageBody::parse(r.body.as_deref())? })
    }
}

/// `?tag=` of the friends list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FriendsQuery {
    /// Only the friends under this tag.
    pub tag: Option<String>,
}

/// `?before=&limit=` of a conversation's history.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// A message id: only older messages. Absent: the newest.
    pub before: Option<String>,
    /// 1-100, default 50.
    pub limit: Option<i64>,
}

/// A validated history page.
#[derive(Debug, Clone)]
pub struct HistoryPage {
    pub before: Option<String>,
    pub limit: u64,
}

impl TryFrom<HistoryQuery> for HistoryPage {
    type Error = AppError;
    fn try_from(q: HistoryQuery) -> Result<HistoryPage, AppError> {
        let (_, limit) = Page { offset: None, limit: q.limit }.checked(50)?;
        Ok(HistoryPage { before: q.before.filter(|b| !b.is_empty()), limit })
    }
}

// ---- responses ----

/// Someone as another person sees them.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Person {
    pub user_id: String,
    pub name: String,
    pub email: String,
    pub avatar_url: String,
}

/// The address a request was sent to (who has it is not told: no account enumeration).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Addressee {
    pub email: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Incoming,
    Outgoing,
}

/// A friend request, as its sender or its recipient sees it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct FriendRequest {
    pub id: String,
    pub from: Person,
    pub to: Addressee,
    pub status: RequestStatus,
    /// Relative to the reader.
    pub direction: Direction,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Friend {
    pub user_id: String,
    pub name: String,
    pub email: String,
    pub avatar_url: String,
    pub alias: Option<String>,
    pub tags: Vec<String>,
    pub since: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Tag {
    pub name: String,
    /// Friends under it.
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BlockedPerson {
    pub user_id: String,
    pub name: String,
    pub email: String,
    pub avatar_url: String,
    pub since: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Message {
    pub id: String,
    /// The sender's user id.
    pub from: String,
    /// The recipient's user id.
    pub to: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
    /// Read by the recipient.
    pub read: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Peer {
    pub user_id: String,
    pub name: String,
    /// The reader's alias for them, when they are a friend with one.
    pub alias: Option<String>,
    pub avatar_url: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Conversation {
    pub peer: Peer,
    pub last_message: Option<Message>,
    /// Messages from the peer the reader has not read.
    pub unread: u64,
}

/// The counts behind the menu badges.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SocialStats {
    pub unread_messages: u64,
    pub pending_friend_requests: u64,
}

// ---- event payloads (the `data` of each SSE event) ----

/// `friend` event: a friendship began, ended, or (for the owner's other tabs) changed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct FriendChange {
    pub user_id: String,
    pub change: FriendChangeKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FriendChangeKind {
    Added,
    Removed,
    Updated,
}

/// `read` event: `reader_id` read the messages `peer_id` sent them.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ReadReceipt {
    pub reader_id: String,
    pub peer_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn update(v: Value) -> Result<FriendUpdate, AppError> {
        FriendUpdate::check(serde_json::from_value::<FriendUpdateBody>(v).unwrap())
    }

    #[test]
    fn alias_is_3_to_50_characters() {
        assert!(matches!(Alias::parse("ab"), Err(AppError::Invalid { field: "alias", msg: Msg::AliasFormatInvalid })));
        assert!(Alias::parse(&"界".repeat(50)).is_ok());
        assert!(Alias::parse(&"界".repeat(51)).is_err());
        assert_eq!(Alias::parse("  Bo  ").unwrap_err().status(), axum::http::StatusCode::BAD_REQUEST);
        assert_eq!(Alias::parse(" Bobby ").unwrap().into_string(), "Bobby");
    }

    #[test]
    fn friend_update_tells_absent_from_null() {
        assert_eq!(update(json!({})).unwrap(), FriendUpdate { alias: None, tags: None });
        assert_eq!(update(json!({"alias": null})).unwrap().alias, Some(None));
        assert_eq!(update(json!({"tags": ["a", " a ", "b"]})).unwrap().tags.unwrap().len(), 2);
        assert!(update(json!({"alias": 5})).is_err());
        assert!(update(json!({"tags": "a"})).is_err());
        assert!(matches!(update(json!({"tags": [""]})), Err(AppError::Invalid { field: "tags", .. })));
        assert!(matches!(update(json!({"tags": [1]})), Err(AppError::Invalid { field: "tags", .. })));
    }

    #[test]
    fn message_body_bounds() {
        assert!(matches!(MessageBody::parse(Some("  ")), Err(AppError::Invalid { msg: Msg::MessageRequired, .. })));
        assert!(MessageBody::parse(Some(&"好".repeat(MESSAGE_MAX_CHARS))).is_ok());
        assert!(matches!(
            MessageBody::parse(Some(&"a".repeat(MESSAGE_MAX_CHARS + 1))),
            Err(AppError::Invalid { msg: Msg::MessageTooLong, .. })
        ));
    }
}

/// One event of `/api/cim/v1/events` as a client parses it (the OpenAPI document describes each
/// event of the stream, not the stream as one string).
#[derive(Debug, Serialize, ToSchema)]
pub struct SseEvent {
    /// The event's sequence number (what `Last-Event-ID` echoes).
    pub id: Option<String>,
    /// `ready`, `resync`, or the kind of what happened (docs/social.md).
    pub event: Option<String>,
    /// The event's JSON, as text.
    pub data: String,
    /// How long a client waits before reconnecting, in milliseconds.
    pub retry: Option<u64>,
}
