//! Issue 17 (what a newcomer hits), the server's side that no other module covers: a pending
//! invitation rings the invited person's bell, in English and Chinese.

use serde_json::{Value, json};

use crate::common::{TestApp, json_of, token_of};

async fn get_lang(app: &TestApp, path: &str, token: &str, lang: &str) -> (u16, Value) {
    json_of(app.client.get(app.url(path)).bearer_auth(token).header("Accept-Language", lang).send().await.unwrap()).await
}

async fn unread(app: &TestApp, token: &str) -> i64 {
    let (s, b) = app.get_auth("/api/ebs/v1/notifications/stats", token).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["unread"].as_i64().unwrap()
}

#[tokio::test]
async fn a_pending_invitation_rings_the_invited_persons_bell() {
    let app = TestApp::spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let bob = app.signed_in("bob@example.com").await;
    let (s, b) = app.post_json("/api/iam/v1/sme", &json!({"name": "Acme Compute"}), Some(&token_of(&owner))).await;
    assert_eq!(s, 200, "{b}");
    let admin = app.switch(&owner, b["data"]["id"].as_str().unwrap()).await;
    assert_eq!(unread(&app, &token_of(&bob)).await, 0);

    app.invite(&token_of(&admin), "bob@example.com", "member").await;
    // An address without an account gets the mail only (there is no bell to ring).
    app.invite(&token_of(&admin), "stranger@example.com", "member").await;

    assert_eq!(unread(&app, &token_of(&bob)).await, 1);
    let (s, en) = get_lang(&app, "/api/ebs/v1/notifications", &token_of(&bob), "en").await;
    assert_eq!(s, 200, "{en}");
    assert_eq!(en["data"]["total"], 1, "{en}");
    let item = &en["data"]["items"][0];
    assert_eq!((item["kind"].as_str().unwrap(), item["title"].as_str().unwrap()), ("company_invitation", "Invitation to join Acme Compute"));
    let body = item["body"].as_str().unwrap();
    assert!(body.contains("invited you to join the company \"Acme Compute\"") && body.contains("Companies page"), "{body}");
    // The secret code of the mailed link is not in the bell.
    assert!(!body.contains("code="), "{body}");

    let (_, zh) = get_lang(&app, "/api/ebs/v1/notifications", &token_of(&bob), "zh-CN").await;
    let item = &zh["data"]["items"][0];
    assert_eq!(item["title"], "邀请您加入 Acme Compute");
    let body = item["body"].as_str().unwrap();
    assert!(body.contains("邀请您加入企业「Acme Compute」") && body.contains("接受或拒绝"), "{body}");

    // Nobody else's bell rings: not the inviting admin's, in either context.
    assert_eq!(unread(&app, &token_of(&admin)).await, 0);
    assert_eq!(unread(&app, &token_of(&owner)).await, 0);
}
