//! Friends, tags, messages and the event stream (`/api/cim/v1`): parse, call, answer. Every write
//! nudges this instance's event watcher so its streams hear of it at once.

use std::time::Duration;

use axum::extract::{FromRef, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiResult, AppError, Envelope, Null, ok};
use crate::events;
use crate::http::{ApiPath, ApiQuery, List, Page, Valid};
use crate::iam::auth::{Auth, Sessions};
use crate::ids::{FriendRequestId, UserId};
use crate::social::model::*;
use crate::social::requests::Decision;
use crate::social::{SocialCtx, blocks, friends, messages, requests, stream, tags};

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    SocialCtx: FromRef<S>,
    Sessions: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(send_request, list_requests))
        .routes(routes!(accept_request))
        .routes(routes!(decline_request))
        .routes(routes!(cancel))
        .routes(routes!(list_friends))
        .routes(routes!(get_friend, update_friend, remove_friend))
        .routes(routes!(list_tags, create_tag))
        .routes(routes!(rename_tag, delete_tag))
        .routes(routes!(list_blocks))
        .routes(routes!(block, unblock))
        .routes(routes!(list_conversations))
        .routes(routes!(conversation_history))
        .routes(routes!(mark_conversation_read))
        .routes(routes!(send_message))
        .routes(routes!(social_stats))
        .routes(routes!(events_stream))
}

/// Runs a write, then wakes this instance's event watcher.
async fn nudged<T>(cx: &SocialCtx, write: impl Future<Output = Result<T, AppError>>) -> Result<T, AppError> {
    let out = write.await;
    cx.hub.nudge();
    out
}

/// Send a friend request to an email address. The answer is the same whether or not an account
/// has that address; the person sees it once they have one.
#[utoipa::path(post, path = "/api/cim/v1/friends/requests", tag = "friends", request_body = FriendRequestBody,
    responses((status = 200, body = Envelope<FriendRequest>), (status = 400), (status = 409), (status = 429)))]
async fn send_request(State(cx): State<SocialCtx>, auth: Auth, Valid(req): Valid<NewFriendRequest>) -> ApiResult<FriendRequest> {
    ok(nudged(&cx, requests::send(&cx.db, &cx.settings, &auth, &req)).await?)
}

/// The caller's pending requests, incoming and outgoing (`direction`), newest first.
#[utoipa::path(get, path = "/api/cim/v1/friends/requests", tag = "friends", params(Page),
    responses((status = 200, body = Envelope<List<FriendRequest>>)))]
async fn list_requests(State(cx): State<SocialCtx>, auth: Auth, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<FriendRequest>> {
    let (offset, limit) = page.checked(100)?;
    ok(requests::list(&cx.db, &auth, offset, limit).await?)
}

/// Accept an incoming request: both become friends.
#[utoipa::path(post, path = "/api/cim/v1/friends/requests/{id}/accept", tag = "friends", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<FriendRequest>), (status = 404), (status = 409)))]
async fn accept_request(State(cx): State<SocialCtx>, auth: Auth, ApiPath(id): ApiPath<FriendRequestId>) -> ApiResult<FriendRequest> {
    ok(nudged(&cx, requests::decide(&cx.db, &auth, id.as_str(), Decision::Accept)).await?)
}

/// Decline an incoming request.
#[utoipa::path(post, path = "/api/cim/v1/friends/requests/{id}/decline", tag = "friends", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<FriendRequest>), (status = 404), (status = 409)))]
async fn decline_request(State(cx): State<SocialCtx>, auth: Auth, ApiPath(id): ApiPath<FriendRequestId>) -> ApiResult<FriendRequest> {
    ok(nudged(&cx, requests::decide(&cx.db, &auth, id.as_str(), Decision::Decline)).await?)
}

/// Take back a request the caller sent.
#[utoipa::path(delete, path = "/api/cim/v1/friends/requests/{id}", tag = "friends", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<FriendRequest>), (status = 404), (status = 409)))]
async fn cancel(State(cx): State<SocialCtx>, auth: Auth, ApiPath(id): ApiPath<FriendRequestId>) -> ApiResult<FriendRequest> {
    ok(nudged(&cx, requests::decide(&cx.db, &auth, id.as_str(), Decision::Cancel)).await?)
}

/// The caller's friends, newest first; `?tag=` for those under a tag.
#[utoipa::path(get, path = "/api/cim/v1/friends", tag = "friends", params(FriendsQuery, Page),
    responses((status = 200, body = Envelope<List<Friend>>)))]
async fn list_friends(
    State(cx): State<SocialCtx>,
    auth: Auth,
    ApiQuery(q): ApiQuery<FriendsQuery>,
    ApiQuery(page): ApiQuery<Page>,
) -> ApiResult<List<Friend>> {
    let (offset, limit) = page.checked(100)?;
    ok(friends::list(&cx.db, &auth, q.tag.as_deref(), offset, limit).await?)
}

/// One of the caller's friends (anyone else: 404).
#[utoipa::path(get, path = "/api/cim/v1/friends/{user_id}", tag = "friends", params(("user_id" = String, Path)),
    responses((status = 200, body = Envelope<Friend>), (status = 404)))]
async fn get_friend(State(cx): State<SocialCtx>, auth: Auth, ApiPath(user_id): ApiPath<UserId>) -> ApiResult<Friend> {
    ok(friends::get(&cx.db, &auth, &user_id).await?)
}

/// Set the alias (3-50 characters, null clears) and/or the tags of a friend.
#[utoipa::path(put, path = "/api/cim/v1/friends/{user_id}", tag = "friends", params(("user_id" = String, Path)),
    request_body = FriendUpdateBody, responses((status = 200, body = Envelope<Friend>), (status = 400), (status = 404)))]
async fn update_friend(
    State(cx): State<SocialCtx>,
    auth: Auth,
    ApiPath(user_id): ApiPath<UserId>,
    Valid(change): Valid<FriendUpdate>,
) -> ApiResult<Friend> {
    ok(nudged(&cx, friends::update(&cx.db, &auth, &user_id, change)).await?)
}

/// End a friendship (for both).
#[utoipa::path(delete, path = "/api/cim/v1/friends/{user_id}", tag = "friends", params(("user_id" = String, Path)),
    responses((status = 200, body = Envelope<Null>), (status = 404)))]
async fn remove_friend(State(cx): State<SocialCtx>, auth: Auth, ApiPath(user_id): ApiPath<UserId>) -> ApiResult<Null> {
    nudged(&cx, friends::remove(&cx.db, &auth, &user_id)).await?;
    ok(Null)
}

/// The caller's tags with the number of friends under each.
#[utoipa::path(get, path = "/api/cim/v1/tags", tag = "friends", responses((status = 200, body = Envelope<List<Tag>>)))]
async fn list_tags(State(cx): State<SocialCtx>, auth: Auth) -> ApiResult<List<Tag>> {
    ok(tags::list(&cx.db, &auth).await?)
}

/// Make a tag (1-30 characters, at most 100 tags).
#[utoipa::path(post, path = "/api/cim/v1/tags", tag = "friends", request_body = TagBody,
    responses((status = 200, body = Envelope<Tag>), (status = 400), (status = 409)))]
async fn create_tag(State(cx): State<SocialCtx>, auth: Auth, Valid(name): Valid<TagName>) -> ApiResult<Tag> {
    ok(tags::create(&cx.db, &auth, &name).await?)
}

/// Rename a tag.
#[utoipa::path(put, path = "/api/cim/v1/tags/{name}", tag = "friends", params(("name" = String, Path)), request_body = TagBody,
    responses((status = 200, body = Envelope<Tag>), (status = 400), (status = 404), (status = 409)))]
async fn rename_tag(State(cx): State<SocialCtx>, auth: Auth, ApiPath(name): ApiPath<String>, Valid(to): Valid<TagName>) -> ApiResult<Tag> {
    ok(tags::rename(&cx.db, &auth, &name, &to).await?)
}

/// Delete a tag (the friends under it stay friends).
#[utoipa::path(delete, path = "/api/cim/v1/tags/{name}", tag = "friends", params(("name" = String, Path)),
    responses((status = 200, body = Envelope<Null>), (status = 404)))]
async fn delete_tag(State(cx): State<SocialCtx>, auth: Auth, ApiPath(name): ApiPath<String>) -> ApiResult<Null> {
    tags::delete(&cx.db, &auth, &name).await?;
    ok(Null)
}

/// The people the caller blocked.
#[utoipa::path(get, path = "/api/cim/v1/blocks", tag = "friends", responses((status = 200, body = Envelope<List<BlockedPerson>>)))]
async fn list_blocks(State(cx): State<SocialCtx>, auth: Auth) -> ApiResult<List<BlockedPerson>> {
    ok(blocks::list(&cx.db, &auth).await?)
}

/// Block a person: their requests and messages no longer reach the caller (they are not told);
/// a friendship between the two ends.
#[utoipa::path(put, path = "/api/cim/v1/blocks/{user_id}", tag = "friends", params(("user_id" = String, Path)),
    responses((status = 200, body = Envelope<Null>), (status = 400), (status = 404)))]
async fn block(State(cx): State<SocialCtx>, auth: Auth, ApiPath(user_id): ApiPath<UserId>) -> ApiResult<Null> {
    nudged(&cx, blocks::block(&cx.db, &auth, &user_id)).await?;
    ok(Null)
}

/// Unblock a person.
#[utoipa::path(delete, path = "/api/cim/v1/blocks/{user_id}", tag = "friends", params(("user_id" = String, Path)),
    responses((status = 200, body = Envelope<Null>), (status = 404)))]
async fn unblock(State(cx): State<SocialCtx>, auth: Auth, ApiPath(user_id): ApiPath<UserId>) -> ApiResult<Null> {
    blocks::unblock(&cx.db, &auth, &user_id).await?;
    ok(Null)
}

/// The caller's conversations, most recent first, each with its last message and unread count.
#[utoipa::path(get, path = "/api/cim/v1/conversations", tag = "messages", params(Page),
    responses((status = 200, body = Envelope<List<Conversation>>)))]
async fn list_conversations(State(cx): State<SocialCtx>, auth: Auth, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<Conversation>> {
    let (offset, limit) = page.checked(50)?;
    ok(messages::conversations(&cx.db, &auth, offset, limit).await?)
}

/// The messages with a person, newest first; `?before=<message id>` pages backwards.
#[utoipa::path(get, path = "/api/cim/v1/conversations/{user_id}/messages", tag = "messages",
    params(("user_id" = String, Path), HistoryQuery),
    responses((status = 200, body = Envelope<List<Message>>), (status = 404)))]
async fn conversation_history(
    State(cx): State<SocialCtx>,
    auth: Auth,
    ApiPath(user_id): ApiPath<UserId>,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> ApiResult<List<Message>> {
    let page = HistoryPage::try_from(q)?;
    ok(messages::history(&cx.db, &auth, &user_id, &page).await?)
}

/// Mark what a person sent the caller read.
#[utoipa::path(put, path = "/api/cim/v1/conversations/{user_id}/read", tag = "messages", params(("user_id" = String, Path)),
    responses((status = 200, body = Envelope<Null>), (status = 404)))]
async fn mark_conversation_read(State(cx): State<SocialCtx>, auth: Auth, ApiPath(user_id): ApiPath<UserId>) -> ApiResult<Null> {
    nudged(&cx, messages::mark_read(&cx.db, &auth, &user_id)).await?;
    ok(Null)
}

/// Send a message to a friend (1-2,000 characters; anyone else: 403).
#[utoipa::path(post, path = "/api/cim/v1/messages", tag = "messages", request_body = MessageBodyRequest,
    responses((status = 200, body = Envelope<Message>), (status = 400), (status = 403), (status = 429)))]
async fn send_message(State(cx): State<SocialCtx>, auth: Auth, Valid(m): Valid<NewMessage>) -> ApiResult<Message> {
    ok(nudged(&cx, messages::send(&cx.db, &cx.settings, &auth, m)).await?)
}

/// Unread messages and waiting friend requests: the menu badges.
#[utoipa::path(get, path = "/api/cim/v1/stats", tag = "messages", responses((status = 200, body = Envelope<SocialStats>)))]
async fn social_stats(State(cx): State<SocialCtx>, auth: Auth) -> ApiResult<SocialStats> {
    ok(messages::stats(&cx.db, &auth).await?)
}

/// The caller's live events (Server-Sent Events): `message`, `friend_request`, `friend`, `read`,
/// `notification`, each with an id from the caller's own sequence; send `Last-Event-ID` to get
/// what was missed. Opens with `ready` (or `resync`: reload, the missed events are gone); a
/// keep-alive comment every `social.keep_alive_secs`. See docs/social.md.
#[utoipa::path(get, path = "/api/cim/v1/events", tag = "messages",
    params(("Last-Event-ID" = Option<String>, Header, description = "the id of the last event received")),
    responses((status = 200, content_type = "text/event-stream", body = SseEvent), (status = 401), (status = 429)))]
async fn events_stream(State(cx): State<SocialCtx>, auth: Auth, place: crate::http::EventStreamPlace, headers: HeaderMap) -> Result<Response, AppError> {
    let cfg = &cx.settings;
    let sub = cx.hub.subscribe(auth.user_id.as_str()).ok_or(AppError::TooManyRequests { retry_after_secs: 5 })?;
    let cursor = events::cursor(&cx.db, &auth.user_id).await?;
    let last_event_id = stream::parse_last_event_id(headers.get("last-event-id").and_then(|v| v.to_str().ok()));
    let sse = stream::sse(
        cx.db.clone(),
        sub,
        auth.user_id.clone(),
        cursor,
        last_event_id,
        Duration::from_secs(cfg.keep_alive_secs),
        Duration::from_secs(cfg.stream_max_secs),
    );
    // Tell buffering proxies (nginx) to pass events through at once.
    // The stream counts among event streams, not request connections (issue 29, finding 7).
    Ok(place.hold(([("x-accel-buffering", HeaderValue::from_static("no"))], sse).into_response()))
}
