//! Notifications: stats, list (all and unread, newest first, in both languages), marking read,
//! refusals, and that a person only ever sees their own.

use serde_json::{Value, json};

use crate::common::*;
use crate::devices::{bound_device, heartbeat, spec};

async fn zh_get(app: &TestApp, path: &str, token: &str) -> (u16, Value) {
    json_of(app.client.get(app.url(path)).bearer_auth(token).header("Accept-Language", "zh-CN").send().await.unwrap()).await
}

/// A server that marks a device offline after 2 s of silence.
async fn quick_offline_app() -> TestApp {
    TestApp::spawn_with(|c| {
        c.devices.offline_after_secs = 2;
        c.devices.heartbeat_secs = 1;
    })
    .await
}

/// A bound device that goes offline (short interval) and comes back: two notifications.
async fn offline_and_back(app: &TestApp, token: &str) -> String {
    let (id, secret) = bound_device(app, token, "Z-BOX", spec(4)).await;
    for _ in 0..100 {
        let (_, b) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), token).await;
        if b["data"]["status"] == "offline" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let (s, _) = heartbeat(app, &secret, json!({})).await;
    assert_eq!(s, 200);
    id
}

#[tokio::test]
async fn stats_list_and_read() {
    let app = quick_offline_app().await;
    let alice = app.signed_in("alice@example.com").await;
    let t = token_of(&alice);

    let (s, b) = app.get_auth("/api/ebs/v1/notifications/stats", &t).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        b["data"],
        json!({"total": 0, "read": 0, "unread": 0, "recent": 0, "pending_friend_requests_exists": false, "member_records_unread": 0})
    );

    let id = offline_and_back(&app, &t).await;
    let (_, b) = app.get_auth("/api/ebs/v1/notifications/stats", &t).await;
    assert_eq!(b["data"]["total"], 2, "{b}");
    assert_eq!(b["data"]["unread"], 2);
    assert_eq!(b["data"]["read"], 0);
    assert_eq!(b["data"]["recent"], 2);

    // Newest first, texts in the request language.
    let (s, b) = app.get_auth("/api/ebs/v1/notifications", &t).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["total"], 2);
    let items = b["data"]["items"].as_array().unwrap();
    assert_eq!(items[0]["kind"], "device_online");
    assert_eq!(items[0]["title"], "Device online");
    assert!(items[0]["body"].as_str().unwrap().contains(&id));
    assert_eq!(items[1]["kind"], "device_offline");
    assert_eq!(items[0]["read"], false);
    // Each one links to the page it is about (issue 26): the device's details.
    for item in items {
        assert_eq!(item["path"], format!("/devices/details?id={id}"), "{item}");
    }
    let (_, zh) = zh_get(&app, "/api/ebs/v1/notifications", &t).await;
    assert_eq!(zh["data"]["items"][0]["title"], "设备上线");
    assert!(zh["data"]["items"][1]["body"].as_str().unwrap().contains("已离线"));

    // The preview: unread, limit 3.
    let (_, b) = app.get_auth("/api/ebs/v1/notifications?filter=unread&limit=3", &t).await;
    assert_eq!(b["data"]["total"], 2);
    let (_, b) = app.get_auth("/api/ebs/v1/notifications?offset=1&limit=1", &t).await;
    assert_eq!(b["data"]["items"].as_array().unwrap().len(), 1);
    assert_eq!(b["data"]["items"][0]["kind"], "device_offline");

    // Marking one read, twice is fine.
    let first = items[0]["id"].as_str().unwrap().to_string();
    for _ in 0..2 {
        let (s, b) = app.put_json(&format!("/api/ebs/v1/notifications/{first}/read"), &json!({}), &t).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["data"], Value::Null);
    }
    let (_, b) = app.get_auth("/api/ebs/v1/notifications/stats", &t).await;
    assert_eq!((b["data"]["read"].as_u64(), b["data"]["unread"].as_u64()), (Some(1), Some(1)));
    let (_, b) = app.get_auth("/api/ebs/v1/notifications?filter=unread", &t).await;
    assert_eq!(b["data"]["total"], 1);
    assert_eq!(b["data"]["items"][0]["kind"], "device_offline");
    let (_, b) = app.get_auth("/api/ebs/v1/notifications", &t).await;
    assert_eq!(b["data"]["items"][0]["read"], true);
}

#[tokio::test]
async fn refusals_and_isolation() {
    let app = quick_offline_app().await;
    let alice = app.signed_in("alice@example.com").await;
    let bob = app.signed_in("bob@example.com").await;
    let (ta, tb) = (token_of(&alice), token_of(&bob));
    offline_and_back(&app, &ta).await;
    let (_, b) = app.get_auth("/api/ebs/v1/notifications", &ta).await;
    let alices = b["data"]["items"][0]["id"].as_str().unwrap().to_string();

    // Bob sees none of Alice's and cannot mark them.
    let (_, b) = app.get_auth("/api/ebs/v1/notifications", &tb).await;
    assert_eq!(b["data"]["total"], 0);
    let (_, b) = app.get_auth("/api/ebs/v1/notifications/stats", &tb).await;
    assert_eq!(b["data"]["total"], 0);
    let (s, b) = app.put_json(&format!("/api/ebs/v1/notifications/{alices}/read"), &json!({}), &tb).await;
    assert_eq!(s, 404, "{b}");
    assert_eq!(b["msg"], "Notification not found");
    let (_, b) = app.get_auth("/api/ebs/v1/notifications?filter=unread", &ta).await;
    assert_eq!(b["data"]["total"], 2, "nothing changed for Alice");
    let (s, b) = json_of(
        app.client
            .put(app.url("/api/ebs/v1/notifications/nope/read"))
            .bearer_auth(&ta)
            .header("Accept-Language", "zh-CN")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 404);
    assert_eq!(b["msg"], "通知不存在");

    // Bad filters and pages, in both languages.
    let (s, b) = app.get_auth("/api/ebs/v1/notifications?filter=old", &ta).await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(b["msg"], "Invalid value for filter");
    let (s, b) = zh_get(&app, "/api/ebs/v1/notifications?filter=old", &ta).await;
    assert_eq!(s, 400);
    assert_eq!(b["msg"], "参数 filter 无效");
    let (s, _) = app.get_auth("/api/ebs/v1/notifications?limit=0", &ta).await;
    assert_eq!(s, 400);
    let (s, _) = app.get_auth("/api/ebs/v1/notifications?limit=101", &ta).await;
    assert_eq!(s, 400);

    // Signed out: 401.
    for path in ["/api/ebs/v1/notifications/stats", "/api/ebs/v1/notifications"] {
        let (s, _) = app.get_json(path).await;
        assert_eq!(s, 401, "{path}");
    }
}

#[tokio::test]
async fn member_records_unread_counts_company_news() {
    let app = TestApp::spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let carol = app.signed_in("carol@example.com").await;
    let (s, b) = app.post_json("/api/iam/v1/sme", &json!({"name": "Acme Labs"}), Some(&token_of(&owner))).await;
    assert_eq!(s, 200, "{b}");
    let company = b["data"]["id"].as_str().unwrap().to_string();
    let admin = app.switch(&owner, &company).await;
    app.invite(&token_of(&admin), "carol@example.com", "member").await;

    // Carol has an unread invitation; reading her records clears it.
    let tc = token_of(&carol);
    let (_, b) = app.get_auth("/api/ebs/v1/notifications/stats", &tc).await;
    assert_eq!(b["data"]["member_records_unread"], 1, "{b}");
    let (s, _) = app.get_auth("/api/iam/v1/sme/member/records", &tc).await;
    assert_eq!(s, 200);
    let (_, b) = app.get_auth("/api/ebs/v1/notifications/stats", &tc).await;
    assert_eq!(b["data"]["member_records_unread"], 0);
    // The invitation in her bell links to where she answers it (issue 26).
    let (_, b) = app.get_auth("/api/ebs/v1/notifications", &tc).await;
    let items = b["data"]["items"].as_array().unwrap();
    let invitation = items.iter().find(|n| n["kind"] == "company_invitation").expect("an invitation notification");
    assert_eq!(invitation["path"], "/company-email");
}

#[tokio::test]
async fn counters_survive_racing_reads_and_are_rebuilt_when_off() {
    use sea_orm::ConnectionTrait;
    let app = quick_offline_app().await;
    let alice = app.signed_in("alice@example.com").await;
    let t = token_of(&alice);
    offline_and_back(&app, &t).await;
    let (_, b) = app.get_auth("/api/ebs/v1/notifications", &t).await;
    let first = b["data"]["items"][0]["id"].as_str().unwrap().to_string();

    // Ten tabs mark the same notification read at once: it counts once.
    let (path, body) = (format!("/api/ebs/v1/notifications/{first}/read"), json!({}));
    let marks = (0..10).map(|_| app.put_json(&path, &body, &t));
    for (s, b) in futures::future::join_all(marks).await {
        assert_eq!(s, 200, "{b}");
    }
    let (_, b) = app.get_auth("/api/ebs/v1/notifications/stats", &t).await;
    assert_eq!((b["data"]["total"].as_u64(), b["data"]["unread"].as_u64()), (Some(2), Some(1)), "{b}");

    // A counter that drifted (or went missing) is set right by the rebuild job's work.
    let db = &app.state.db;
    assert_eq!(zmarket::notifications::service::rebuild_counters(db).await.unwrap(), 0);
    db.execute_unprepared("UPDATE notification_counters SET total = 9, unread = 7").await.unwrap();
    let (_, b) = app.get_auth("/api/ebs/v1/notifications/stats", &t).await;
    assert_eq!(b["data"]["unread"], 7, "the poll reads the counter");
    assert_eq!(zmarket::notifications::service::rebuild_counters(db).await.unwrap(), 1);
    let (_, b) = app.get_auth("/api/ebs/v1/notifications/stats", &t).await;
    assert_eq!((b["data"]["total"].as_u64(), b["data"]["unread"].as_u64()), (Some(2), Some(1)), "{b}");
    db.execute_unprepared("DELETE FROM notification_counters").await.unwrap();
    assert_eq!(zmarket::notifications::service::rebuild_counters(db).await.unwrap(), 1);
    let (_, b) = app.get_auth("/api/ebs/v1/notifications/stats", &t).await;
    assert_eq!((b["data"]["total"].as_u64(), b["data"]["read"].as_u64()), (Some(2), Some(1)), "{b}");
}
