//! Friends, tags, messages (`/api/cim/v1`): every call and refusal in both languages, and that a
//! person only ever reaches their own friends and conversations. The live stream and the races
//! are in `social/`.

mod events;
mod races;

use serde_json::{Value, json};

use crate::common::*;
use crate::scenario::{bare, each_says, get, says, with};

pub(crate) const CIM: &str = "/api/cim/v1";

/// A call with an optional body and language; (status, envelope).
pub(crate) async fn call(app: &TestApp, method: &str, path: &str, body: Option<Value>, token: &str, zh: bool) -> (u16, Value) {
    let url = app.url(&format!("{CIM}{path}"));
    let mut req = app.client.request(method.parse().unwrap(), url).bearer_auth(token);
    if zh {
        req = req.header("Accept-Language", "zh-CN");
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    json_of(req.send().await.expect("request")).await
}

/// The same call in English and in Chinese: both refused with `status`, with these messages.
pub(crate) async fn refused(app: &TestApp, method: &str, path: &str, body: Option<Value>, token: &str, status: u16, en: &str, zh: &str) -> Value {
    let (s, b) = call(app, method, path, body.clone(), token, false).await;
    assert_eq!((s, b["msg"].as_str().unwrap_or("")), (status, en), "{method} {path}: {b}");
    let (s, z) = call(app, method, path, body, token, true).await;
    assert_eq!((s, z["msg"].as_str().unwrap_or("")), (status, zh), "{method} {path} (zh): {z}");
    b
}

pub(crate) struct Who {
    pub token: String,
    pub id: String,
    pub email: String,
}

pub(crate) async fn person(app: &TestApp, email: &str) -> Who {
    let s = app.signed_in(email).await;
    Who { id: user_id_of(app, &s).await, token: token_of(&s), email: email.to_string() }
}

/// `a` asks `b` and `b` accepts, through the API.
pub(crate) async fn befriend(app: &TestApp, a: &Who, b: &Who) {
    let (s, r) = call(app, "POST", "/friends/requests", Some(json!({"email": b.email})), &a.token, false).await;
    assert_eq!(s, 200, "{r}");
    let id = r["data"]["id"].as_str().unwrap();
    let (s, r) = call(app, "POST", &format!("/friends/requests/{id}/accept"), None, &b.token, false).await;
    assert_eq!(s, 200, "{r}");
}

pub(crate) async fn send(app: &TestApp, from: &Who, to: &Who, body: &str) -> Value {
    let (s, r) = call(app, "POST", "/messages", Some(json!({"to_user_id": to.id, "body": body})), &from.token, false).await;
    assert_eq!(s, 200, "{r}");
    r["data"].clone()
}

async fn stats(app: &TestApp, who: &Who) -> (bool, Value) {
    let (_, n) = app.get_auth("/api/ebs/v1/notifications/stats", &who.token).await;
    let (_, c) = call(app, "GET", "/stats", None, &who.token, false).await;
    (n["data"]["pending_friend_requests_exists"].as_bool().unwrap(), c["data"].clone())
}

#[tokio::test]
async fn request_accept_and_become_friends() {
    let app = TestApp::spawn().await;
    let (a, b) = (person(&app, "ann@example.com").await, person(&app, "ben@example.com").await);
    assert_eq!(stats(&app, &b).await, (false, json!({"unread_messages": 0, "pending_friend_requests": 0})));

    let (s, r) = call(&app, "POST", "/friends/requests", Some(json!({"email": " Ben@Example.com "})), &a.token, false).await;
    assert_eq!(s, 200, "{r}");
    let req = &r["data"];
    assert_eq!(req["status"], "pending");
    assert_eq!(req["direction"], "outgoing");
    assert_eq!(req["from"]["user_id"], a.id.as_str());
    assert_eq!(req["from"]["email"], "ann@example.com");
    assert_eq!(req["to"], json!({"email": "ben@example.com"}), "the addressee is the address, nothing more");
    assert!(req["created_at"].is_string());
    let id = req["id"].as_str().unwrap().to_string();

    // Both see it, each from their side; Ben's stats say something waits.
    let (_, l) = call(&app, "GET", "/friends/requests", None, &b.token, false).await;
    assert_eq!(l["data"]["total"], 1);
    assert_eq!(l["data"]["items"][0]["direction"], "incoming");
    assert_eq!(l["data"]["items"][0]["id"], id.as_str());
    let (_, l) = call(&app, "GET", "/friends/requests", None, &a.token, false).await;
    assert_eq!(l["data"]["items"][0]["direction"], "outgoing");
    assert_eq!(stats(&app, &b).await, (true, json!({"unread_messages": 0, "pending_friend_requests": 1})));
    assert!(!stats(&app, &a).await.0, "Ann waits for nobody");

    // Only Ben answers it.
    refused(&app, "POST", &format!("/friends/requests/{id}/accept"), None, &a.token, 404, "Friend request not found", "好友请求不存在").await;
    let (s, r) = call(&app, "POST", &format!("/friends/requests/{id}/accept"), None, &b.token, false).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!((r["data"]["status"].as_str(), r["data"]["direction"].as_str()), (Some("accepted"), Some("incoming")));
    for p in [&a, &b] {
        let other = if p.id == a.id { &b } else { &a };
        let (_, f) = call(&app, "GET", "/friends", None, &p.token, false).await;
        assert_eq!(f["data"]["total"], 1, "{f}");
        let friend = &f["data"]["items"][0];
        assert_eq!(friend["user_id"], other.id.as_str());
        assert_eq!(friend["email"], other.email.as_str());
        assert_eq!((friend["alias"].clone(), friend["tags"].clone()), (Value::Null, json!([])));
        for key in ["name", "avatar_url", "since"] {
            assert!(friend[key].is_string(), "{key}: {friend}");
        }
    }
    assert!(!stats(&app, &b).await.0);
    let (_, l) = call(&app, "GET", "/friends/requests", None, &b.token, false).await;
    assert_eq!(l["data"]["total"], 0, "only pending requests are listed");

    // Answered once only, and no new request between friends.
    for action in ["accept", "decline"] {
        let path = format!("/friends/requests/{id}/{action}");
        refused(&app, "POST", &path, None, &b.token, 409, "This friend request has already been handled", "该好友请求已处理").await;
    }
    let body = Some(json!({"email": a.email}));
    refused(&app, "POST", "/friends/requests", body, &b.token, 409, "You are already friends", "你们已经是好友").await;
}

#[tokio::test]
async fn request_refusals_decline_and_cancel() {
    let app = TestApp::spawn().await;
    let (a, b, c) = (person(&app, "ann@example.com").await, person(&app, "ben@example.com").await, person(&app, "cy@example.com").await);
    let path = "/friends/requests";
    refused(&app, "POST", path, Some(json!({})), &a.token, 400, "Email Required", "请输入邮箱").await;
    let r = refused(&app, "POST", path, Some(json!({"email": "nope"})), &a.token, 400, "Email Format Invalid", "邮箱格式不正确").await;
    assert_eq!(r["data"]["field"], "email");
    let me = Some(json!({"email": "ANN@example.com"}));
    refused(&app, "POST", path, me, &a.token, 400, "You cannot send a friend request to yourself", "不能向自己发送好友请求").await;

    // An address nobody has answers like one somebody has.
    let (s1, known) = call(&app, "POST", path, Some(json!({"email": b.email})), &a.token, false).await;
    let (s2, unknown) = call(&app, "POST", path, Some(json!({"email": "ghost@example.com"})), &a.token, false).await;
    assert_eq!((s1, s2), (200, 200));
    let shape = |v: &Value| {
        let mut keys: Vec<String> = v["data"].as_object().unwrap().keys().cloned().collect();
        keys.sort();
        (keys, v["data"]["status"].clone(), v["data"]["to"].as_object().unwrap().len())
    };
    assert_eq!(shape(&known), shape(&unknown));

    // No duplicates, either way.
    let again = Some(json!({"email": b.email}));
    refused(&app, "POST", path, again, &a.token, 409, "A friend request to this person is already waiting", "已向对方发送过好友请求，正在等待对方处理").await;
    let back = Some(json!({"email": a.email}));
    refused(&app, "POST", path, back, &b.token, 409, "This person has already sent you a friend request: accept it instead", "对方已向您发送好友请求，请直接接受").await;

    // Only the addressee answers, only the sender cancels; a stranger finds nothing.
    let id = known["data"]["id"].as_str().unwrap().to_string();
    let not_found = ((404, "friend_request_not_found", None), ["Friend request not found", "好友请求不存在"]);
    let (accept, decline, cancel) = (bare("POST", format!("{CIM}{path}/{id}/accept")), bare("POST", format!("{CIM}{path}/{id}/decline")), bare("DELETE", format!("{CIM}{path}/{id}")));
    each_says(&app, Some(&c.token), &[(&accept, not_found.0, not_found.1), (&decline, not_found.0, not_found.1), (&cancel, not_found.0, not_found.1)]).await;
    says(&app, &cancel, Some(&b.token), not_found.0, not_found.1).await;
    says(&app, &bare("POST", format!("{CIM}{path}/nope/accept")), Some(&b.token), not_found.0, not_found.1).await;

    let (s, r) = call(&app, "POST", &format!("{path}/{id}/decline"), None, &b.token, false).await;
    assert_eq!((s, r["data"]["status"].as_str()), (200, Some("declined")), "{r}");
    refused(&app, "POST", &format!("{path}/{id}/accept"), None, &b.token, 409, "This friend request has already been handled", "该好友请求已处理").await;
    let (_, f) = call(&app, "GET", "/friends", None, &b.token, false).await;
    assert_eq!(f["data"]["total"], 0);

    // After a decline, asking again is allowed; the sender can take it back.
    let (s, r) = call(&app, "POST", path, Some(json!({"email": b.email})), &a.token, false).await;
    assert_eq!(s, 200, "{r}");
    let id = r["data"]["id"].as_str().unwrap();
    let (s, r) = call(&app, "DELETE", &format!("{path}/{id}"), None, &a.token, false).await;
    assert_eq!((s, r["data"]["status"].as_str()), (200, Some("cancelled")), "{r}");
    let (_, l) = call(&app, "GET", path, None, &b.token, false).await;
    assert_eq!(l["data"]["total"], 0);
    let (_, l) = call(&app, "GET", path, None, &a.token, false).await;
    assert_eq!(l["data"]["total"], 1, "the request to ghost@ still waits");

    // Signed out: 401.
    let (s, _) = app.get_json(&format!("{CIM}/friends")).await;
    assert_eq!(s, 401);
}

#[tokio::test]
async fn a_request_to_an_address_reaches_the_account_made_later() {
    let app = TestApp::spawn().await;
    let a = person(&app, "ann@example.com").await;
    let (s, _) = call(&app, "POST", "/friends/requests", Some(json!({"email": "late@example.com"})), &a.token, false).await;
    assert_eq!(s, 200);
    let late = person(&app, "late@example.com").await;
    let (_, l) = call(&app, "GET", "/friends/requests", None, &late.token, false).await;
    assert_eq!(l["data"]["total"], 1);
    let id = l["data"]["items"][0]["id"].as_str().unwrap();
    let (s, _) = call(&app, "POST", &format!("/friends/requests/{id}/accept"), None, &late.token, false).await;
    assert_eq!(s, 200);
    let (_, f) = call(&app, "GET", "/friends", None, &a.token, false).await;
    assert_eq!(f["data"]["items"][0]["user_id"], late.id.as_str());
}

#[tokio::test]
async fn alias_tags_and_isolation() {
    let app = TestApp::spawn().await;
    let (a, b, c) = (person(&app, "ann@example.com").await, person(&app, "ben@example.com").await, person(&app, "cy@example.com").await);
    befriend(&app, &a, &b).await;
    befriend(&app, &a, &c).await;
    let ben = format!("/friends/{}", b.id);

    for alias in [json!("ab"), json!(" ab "), json!("x".repeat(51)), json!(""), json!(7)] {
        let r = refused(&app, "PUT", &ben, Some(json!({"alias": alias})), &a.token, 400, "Alias Format Invalid", "备注名格式不正确（3-50 个字符）").await;
        assert_eq!(r["data"]["field"], "alias");
    }
    let (s, r) = call(&app, "PUT", &ben, Some(json!({"alias": " Benny ", "tags": ["work", "gym", "work"]})), &a.token, false).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!((r["data"]["alias"].as_str(), r["data"]["tags"].clone()), (Some("Benny"), json!(["gym", "work"])));
    let (s, r) = call(&app, "PUT", &format!("/friends/{}", c.id), Some(json!({"tags": ["work"]})), &a.token, false).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["data"]["alias"], Value::Null);

    // Tags with their counts; the list filtered by tag.
    let (_, t) = call(&app, "GET", "/tags", None, &a.token, false).await;
    assert_eq!(t["data"], json!({"items": [{"name": "gym", "count": 1}, {"name": "work", "count": 2}], "total": 2}));
    let (_, f) = call(&app, "GET", "/friends?tag=gym", None, &a.token, false).await;
    assert_eq!((f["data"]["total"].as_u64(), f["data"]["items"][0]["user_id"].as_str()), (Some(1), Some(b.id.as_str())));
    let (_, f) = call(&app, "GET", "/friends?tag=work", None, &a.token, false).await;
    assert_eq!(f["data"]["total"], 2);
    let (_, f) = call(&app, "GET", "/friends?tag=nothing", None, &a.token, false).await;
    assert_eq!(f["data"]["total"], 0);
    let (_, f) = call(&app, "GET", "/friends", None, &b.token, false).await;
    assert_eq!(f["data"]["items"][0]["alias"], Value::Null, "Ben's side keeps its own alias");

    // Make, rename, delete; names are unique and 1-30 characters.
    let (s, r) = call(&app, "POST", "/tags", Some(json!({"name": " family "})), &a.token, false).await;
    assert_eq!((s, r["data"].clone()), (200, json!({"name": "family", "count": 0})));
    refused(&app, "POST", "/tags", Some(json!({"name": "family"})), &a.token, 409, "A tag with this name already exists", "已存在同名标签").await;
    for bad in [json!({}), json!({"name": "  "}), json!({"name": "t".repeat(31)})] {
        let r = refused(&app, "POST", "/tags", Some(bad), &a.token, 400, "Tag name must be 1-30 characters", "标签名须为 1-30 个字符").await;
        assert_eq!(r["data"]["field"], "name");
    }
    let r = refused(&app, "PUT", &ben, Some(json!({"tags": ["ok", ""]})), &a.token, 400, "Tag name must be 1-30 characters", "标签名须为 1-30 个字符").await;
    assert_eq!(r["data"]["field"], "tags");
    let (s, r) = call(&app, "PUT", "/tags/work", Some(json!({"name": "office"})), &a.token, false).await;
    assert_eq!((s, r["data"].clone()), (200, json!({"name": "office", "count": 2})));
    refused(&app, "PUT", "/tags/office", Some(json!({"name": "gym"})), &a.token, 409, "A tag with this name already exists", "已存在同名标签").await;
    refused(&app, "PUT", "/tags/work", Some(json!({"name": "x"})), &a.token, 404, "Tag not found", "标签不存在").await;
    let (s, _) = call(&app, "DELETE", "/tags/office", None, &a.token, false).await;
    assert_eq!(s, 200);
    refused(&app, "DELETE", "/tags/office", None, &a.token, 404, "Tag not found", "标签不存在").await;
    let (_, r) = call(&app, "GET", &ben, None, &a.token, false).await;
    assert_eq!(r["data"]["tags"], json!(["gym"]), "a deleted tag leaves its friends");
    let (_, t) = call(&app, "GET", "/tags", None, &b.token, false).await;
    assert_eq!(t["data"]["total"], 0, "tags are per person");

    // null clears the alias; [] empties the tags.
    let (_, r) = call(&app, "PUT", &ben, Some(json!({"alias": null, "tags": []})), &a.token, false).await;
    assert_eq!((r["data"]["alias"].clone(), r["data"]["tags"].clone()), (Value::Null, json!([])));

    // Someone else's friend, by id: not found, whatever the call.
    let cy_to_ben = format!("/friends/{}", b.id);
    let cy_to_ben = format!("{CIM}{cy_to_ben}");
    let (friend, rename, end) = (get(&cy_to_ben), with("PUT", &cy_to_ben, json!({"alias": "Benny"})), bare("DELETE", &cy_to_ben));
    let not_found = ((404, "friend_not_found", None), ["Friend not found", "好友不存在"]);
    each_says(&app, Some(&c.token), &[(&friend, not_found.0, not_found.1), (&rename, not_found.0, not_found.1), (&end, not_found.0, not_found.1)]).await;
    let (_, f) = call(&app, "GET", "/friends", None, &b.token, false).await;
    assert_eq!(f["data"]["total"], 1, "nothing changed for Ben");

    // Ending a friendship ends it for both; again is not found.
    let (s, _) = call(&app, "DELETE", &ben, None, &a.token, false).await;
    assert_eq!(s, 200);
    let (_, f) = call(&app, "GET", "/friends", None, &b.token, false).await;
    assert_eq!(f["data"]["total"], 0);
    refused(&app, "DELETE", &ben, None, &a.token, 404, "Friend not found", "好友不存在").await;
}

#[tokio::test]
async fn messages_conversations_and_history() {
    let app = TestApp::spawn().await;
    let (a, b, c) = (person(&app, "ann@example.com").await, person(&app, "ben@example.com").await, person(&app, "cy@example.com").await);
    let to_b = |body: Value| Some(json!({"to_user_id": b.id, "body": body}));

    // Strangers (and unknown ids, and oneself) are refused; bodies are 1-2,000 characters.
    let only = ("You can only send messages to your friends", "只能给好友发送消息");
    refused(&app, "POST", "/messages", to_b(json!("hi")), &a.token, 403, only.0, only.1).await;
    for to in ["nobody", a.id.as_str()] {
        refused(&app, "POST", "/messages", Some(json!({"to_user_id": to, "body": "hi"})), &a.token, 403, only.0, only.1).await;
    }
    befriend(&app, &a, &b).await;
    let r = refused(&app, "POST", "/messages", Some(json!({"body": "hi"})), &a.token, 400, "Choose who to send the message to", "请选择消息接收人").await;
    assert_eq!(r["data"]["field"], "to_user_id");
    refused(&app, "POST", "/messages", to_b(json!(" \n ")), &a.token, 400, "Please enter a message", "请输入消息内容").await;
    let r = refused(&app, "POST", "/messages", to_b(json!("好".repeat(2001))), &a.token, 400, "A message can be at most 2000 characters", "消息最多 2000 个字符").await;
    assert_eq!(r["data"]["field"], "body");
    let long = send(&app, &a, &b, &"好".repeat(2000)).await;
    assert_eq!(long["body"].as_str().unwrap().chars().count(), 2000);

    let m = send(&app, &a, &b, "hello Ben").await;
    assert_eq!((m["from"].as_str(), m["to"].as_str(), m["read"].as_bool()), (Some(a.id.as_str()), Some(b.id.as_str()), Some(false)));
    for i in 0..3 {
        send(&app, &b, &a, &format!("reply {i}")).await;
    }
    send(&app, &a, &b, "last one").await;

    // Conversations: the peer, the last message, the unread count; the badge counts.
    let (_, l) = call(&app, "GET", "/conversations", None, &b.token, false).await;
    assert_eq!(l["data"]["total"], 1);
    let conv = &l["data"]["items"][0];
    assert_eq!((conv["peer"]["user_id"].as_str(), conv["unread"].as_u64()), (Some(a.id.as_str()), Some(3)));
    assert_eq!(conv["last_message"]["body"], "last one");
    assert_eq!(conv["peer"]["alias"], Value::Null);
    let (_, s) = call(&app, "GET", "/stats", None, &b.token, false).await;
    assert_eq!(s["data"]["unread_messages"], 3);
    let (_, l) = call(&app, "GET", "/conversations", None, &a.token, false).await;
    assert_eq!(l["data"]["items"][0]["unread"], 3, "Ben's three replies");
    call(&app, "PUT", &format!("/friends/{}", a.id), Some(json!({"alias": "Annie"})), &b.token, false).await;
    let (_, l) = call(&app, "GET", "/conversations", None, &b.token, false).await;
    assert_eq!(l["data"]["items"][0]["peer"]["alias"], "Annie");

    // History, newest first, paged backwards.
    let hist = format!("/conversations/{}/messages", a.id);
    let (_, h) = call(&app, "GET", &format!("{hist}?limit=2"), None, &b.token, false).await;
    assert_eq!(h["data"]["total"], 6);
    let bodies = |h: &Value| h["data"]["items"].as_array().unwrap().iter().map(|m| m["body"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(bodies(&h), ["last one", "reply 2"]);
    let before = h["data"]["items"][1]["id"].as_str().unwrap();
    let (_, h) = call(&app, "GET", &format!("{hist}?limit=3&before={before}"), None, &b.token, false).await;
    assert_eq!(bodies(&h), ["reply 1", "reply 0", "hello Ben"]);
    let (s, _) = call(&app, "GET", &format!("{hist}?limit=101"), None, &b.token, false).await;
    assert_eq!(s, 400);

    // Reading clears the count for the reader only; the sender sees their messages read.
    let (s, _) = call(&app, "PUT", &format!("/conversations/{}/read", a.id), None, &b.token, false).await;
    assert_eq!(s, 200);
    let (_, l) = call(&app, "GET", "/conversations", None, &b.token, false).await;
    assert_eq!(l["data"]["items"][0]["unread"], 0);
    let (_, s) = call(&app, "GET", "/stats", None, &b.token, false).await;
    assert_eq!(s["data"]["unread_messages"], 0);
    let (_, l) = call(&app, "GET", "/conversations", None, &a.token, false).await;
    assert_eq!(l["data"]["items"][0]["unread"], 3);
    let (_, h) = call(&app, "GET", &format!("/conversations/{}/messages?limit=1", b.id), None, &a.token, false).await;
    assert_eq!(h["data"]["items"][0]["read"], true);

    // Someone else's conversation, by id: not found.
    let no = ("Conversation not found", "会话不存在");
    refused(&app, "GET", &format!("/conversations/{}/messages", a.id), None, &c.token, 404, no.0, no.1).await;
    refused(&app, "PUT", &format!("/conversations/{}/read", b.id), None, &c.token, 404, no.0, no.1).await;
    let (_, l) = call(&app, "GET", "/conversations", None, &c.token, false).await;
    assert_eq!(l["data"]["total"], 0);

    // Former friends keep their history but cannot write.
    call(&app, "DELETE", &format!("/friends/{}", b.id), None, &a.token, false).await;
    refused(&app, "POST", "/messages", to_b(json!("still there?")), &a.token, 403, only.0, only.1).await;
    let (s, h) = call(&app, "GET", &hist, None, &b.token, false).await;
    assert_eq!((s, h["data"]["total"].as_u64()), (200, Some(6)));
}

#[tokio::test]
async fn blocking_is_silent() {
    let app = TestApp::spawn().await;
    let (a, b) = (person(&app, "ann@example.com").await, person(&app, "ben@example.com").await);
    befriend(&app, &a, &b).await;
    refused(&app, "PUT", &format!("/blocks/{}", b.id), None, &b.token, 400, "You cannot block yourself", "不能屏蔽自己").await;
    refused(&app, "PUT", "/blocks/nobody", None, &b.token, 404, "User not found", "用户不存在").await;
    let (s, r) = call(&app, "PUT", &format!("/blocks/{}", a.id), None, &b.token, false).await;
    assert_eq!(s, 200, "{r}");
    let (_, l) = call(&app, "GET", "/blocks", None, &b.token, false).await;
    assert_eq!((l["data"]["total"].as_u64(), l["data"]["items"][0]["user_id"].as_str()), (Some(1), Some(a.id.as_str())));

    // The friendship ended; Ann is answered as anyone would be, and Ben hears nothing.
    let (_, f) = call(&app, "GET", "/friends", None, &a.token, false).await;
    assert_eq!(f["data"]["total"], 0);
    let only = ("You can only send messages to your friends", "只能给好友发送消息");
    refused(&app, "POST", "/messages", Some(json!({"to_user_id": b.id, "body": "hey"})), &a.token, 403, only.0, only.1).await;
    let (s, r) = call(&app, "POST", "/friends/requests", Some(json!({"email": b.email})), &a.token, false).await;
    assert_eq!((s, r["data"]["status"].as_str()), (200, Some("pending")), "{r}");
    let (_, l) = call(&app, "GET", "/friends/requests", None, &b.token, false).await;
    assert_eq!(l["data"]["total"], 0);
    assert!(!stats(&app, &b).await.0);
    let (_, l) = call(&app, "GET", "/friends/requests", None, &a.token, false).await;
    assert_eq!(l["data"]["total"], 1, "pending, as far as Ann knows");
    let back = Some(json!({"email": a.email}));
    refused(&app, "POST", "/friends/requests", back, &b.token, 409, "You blocked this person: unblock them first", "您已屏蔽此人，请先取消屏蔽").await;

    // Unblocked, the request shows up.
    let (s, _) = call(&app, "DELETE", &format!("/blocks/{}", a.id), None, &b.token, false).await;
    assert_eq!(s, 200);
    let (_, l) = call(&app, "GET", "/friends/requests", None, &b.token, false).await;
    assert_eq!(l["data"]["total"], 1);
    assert!(stats(&app, &b).await.0);
}

#[tokio::test]
async fn per_minute_limits() {
    let app = TestApp::spawn_with(|c| {
        c.social.friend_requests_per_minute = 2;
        c.social.messages_per_minute = 3;
    })
    .await;
    let (a, b) = (person(&app, "ann@example.com").await, person(&app, "ben@example.com").await);
    befriend(&app, &a, &b).await;
    for i in 0..2 {
        let (s, _) = call(&app, "POST", "/friends/requests", Some(json!({"email": format!("x{i}@example.com")})), &b.token, false).await;
        assert_eq!(s, 200);
    }
    let r = refused(&app, "POST", "/friends/requests", Some(json!({"email": "x9@example.com"})), &b.token, 429, "Too many attempts, please try again later", "尝试次数过多，请稍后再试").await;
    assert!((1..=60).contains(&r["data"]["retry_after"].as_u64().unwrap()), "{r}");
    for i in 0..3 {
        send(&app, &a, &b, &format!("m{i}")).await;
    }
    let body = Some(json!({"to_user_id": b.id, "body": "one more"}));
    refused(&app, "POST", "/messages", body, &a.token, 429, "Too many attempts, please try again later", "尝试次数过多，请稍后再试").await;
    send(&app, &b, &a, "Ben is not limited by Ann").await;
}
