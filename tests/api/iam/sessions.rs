//! Identity: sessions and their tokens: the access token's claims, refresh tokens (rotation, one
//! successor within the grace window, a reused one ends the family), signing out, answers with
//! tokens never stored, the bearer scheme in any case.

use serde_json::{Value, json};

use crate::common::{PASSWORD, TestApp, header, token_of};

#[tokio::test]
async fn the_access_token_carries_the_claims_and_bad_tokens_get_401() {
    let app = TestApp::spawn().await;
    let s = app.signed_in("claims@example.com").await;
    let token = token_of(&s);
    use base64::Engine;
    let payload = token.split('.').nth(1).unwrap();
    let claims: Value = serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    assert_eq!(claims["sme"], "user");
    assert_eq!(claims["user_type"], "user");
    assert_eq!(claims["typ"], "access");
    let (_, profile) = app.get_auth("/api/iam/v1/account/profile", &token).await;
    assert_eq!(claims["sub"], profile["data"]["id"]);

    for bad in ["", "garbage", &token[..token.len() - 2]] {
        let (status, body) = app.get_auth("/api/iam/v1/account/profile", bad).await;
        assert_eq!(status, 401, "{bad}");
        assert_eq!(body["code"], 401);
    }
    // The refresh token is not an access token.
    let (status, _) = app.get_auth("/api/iam/v1/account/profile", s["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 401);
    let (status, _) = app.get_json("/api/iam/v1/account/profile").await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn refresh_rotates_and_a_reused_token_revokes_the_family() {
    let app = TestApp::spawn_with(|c| c.auth.refresh_grace_secs = 0).await;
    let s = app.signed_in("rot@example.com").await;
    let r0 = s["refresh_token"].as_str().unwrap().to_string();

    let (status, body) = app.get_auth("/api/iam/v1/refresh", &r0).await;
    assert_eq!(status, 200, "{body}");
    let r1 = body["data"]["refresh_token"].as_str().unwrap().to_string();
    let a1 = body["data"]["access_token"].as_str().unwrap().to_string();
    assert_ne!(r0, r1);
    assert!(body["data"]["access_token_expire"].as_i64().unwrap() > chrono::Utc::now().timestamp());
    let (status, _) = app.get_auth("/api/iam/v1/account/profile", &a1).await;
    assert_eq!(status, 200);

    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    // r0 again: reuse. The whole family dies, r1 included, and the access tokens of the session.
    let (status, body) = app.get_auth("/api/iam/v1/refresh", &r0).await;
    assert_eq!(status, 401);
    assert_eq!(body["msg"], "This session was ended for your security, please sign in again");
    let (status, _) = app.get_auth("/api/iam/v1/refresh", &r1).await;
    assert_eq!(status, 401);
    let (status, _) = app.get_auth("/api/iam/v1/account/profile", &a1).await;
    assert_eq!(status, 401);
    // A new sign-in works.
    let s2 = app.login("rot@example.com", PASSWORD).await;
    let (status, _) = app.get_auth("/api/iam/v1/account/profile", &token_of(&s2)).await;
    assert_eq!(status, 200);

    let (status, _) = app.get_auth("/api/iam/v1/refresh", "not-a-token").await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn two_tabs_racing_with_one_refresh_token_both_continue() {
    let app = TestApp::spawn().await; // grace 10 s by default
    let s = app.signed_in("tabs@example.com").await;
    let r0 = s["refresh_token"].as_str().unwrap().to_string();
    let (a, b) = tokio::join!(app.get_auth("/api/iam/v1/refresh", &r0), app.get_auth("/api/iam/v1/refresh", &r0));
    assert_eq!(a.0, 200, "{}", a.1);
    assert_eq!(b.0, 200, "{}", b.1);
    let ra = a.1["data"]["refresh_token"].as_str().unwrap().to_string();
    let rb = b.1["data"]["refresh_token"].as_str().unwrap().to_string();
    // Both tabs hold the one successor (issue 16, finding 14), and go on refreshing.
    assert_eq!(ra, rb);
    let (status, _) = app.get_auth("/api/iam/v1/refresh", &ra).await;
    assert_eq!(status, 200);
    let (status, _) = app.get_auth("/api/iam/v1/refresh", &rb).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn logout_ends_the_session() {
    let app = TestApp::spawn().await;
    let s = app.signed_in("out@example.com").await;
    let token = token_of(&s);
    let (status, body) = app.post_json("/api/iam/v1/logout", &json!({}), Some(&token)).await;
    assert_eq!(status, 200);
    assert!(body["data"].is_null());
    let (status, _) = app.get_auth("/api/iam/v1/refresh", s["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 401);
    let (status, _) = app.get_auth("/api/iam/v1/account/profile", &token).await;
    assert_eq!(status, 401);
}

/// Within the grace window one refresh token always answers the same successor (issue 16,
/// finding 14).
#[tokio::test]
async fn a_refresh_token_has_one_successor_in_series_and_in_parallel() {
    let app = TestApp::spawn().await;
    let s = app.signed_in("tabs@example.com").await;
    let r0 = s["refresh_token"].as_str().unwrap().to_string();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..20 {
        let (st, b) = app.get_auth("/api/iam/v1/refresh", &r0).await;
        assert_eq!(st, 200, "{b}");
        seen.insert(b["data"]["refresh_token"].as_str().unwrap().to_string());
    }
    let answers = futures::future::join_all((0..50).map(|_| app.get_auth("/api/iam/v1/refresh", &r0))).await;
    for (st, b) in &answers {
        assert_eq!(*st, 200, "{b}");
        seen.insert(b["data"]["refresh_token"].as_str().unwrap().to_string());
    }
    assert_eq!(seen.len(), 1, "successors minted by one token: {}", seen.len());
    // The successor works, once, as any refresh token.
    let r1 = seen.into_iter().next().unwrap();
    let (st, b) = app.get_auth("/api/iam/v1/refresh", &r1).await;
    assert_eq!(st, 200, "{b}");
}

#[tokio::test]
async fn a_refresh_token_presented_after_the_window_ends_the_session() {
    let app = TestApp::spawn_with(|c| c.auth.refresh_grace_secs = 0).await;
    let s = app.signed_in("late@example.com").await;
    let r0 = s["refresh_token"].as_str().unwrap();
    assert_eq!(app.get_auth("/api/iam/v1/refresh", r0).await.0, 200);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(app.get_auth("/api/iam/v1/refresh", r0).await.0, 401);
}

/// Answers that carry tokens are never stored; the scheme is case-insensitive (issue 16,
/// finding 13).
#[tokio::test]
async fn token_answers_are_no_store_and_the_bearer_scheme_is_case_insensitive() {
    let app = TestApp::spawn().await;
    let s = app.signed_in("cache@example.com").await;
    let login = app
        .client
        .post(app.url("/api/iam/v2/login/password"))
        .json(&json!({"email": "cache@example.com", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(header(login.headers(), "cache-control"), "no-store");
    let refresh = app.client.get(app.url("/api/iam/v1/refresh")).bearer_auth(s["refresh_token"].as_str().unwrap()).send().await.unwrap();
    assert_eq!(refresh.status(), 200);
    assert_eq!(header(refresh.headers(), "cache-control"), "no-store");
    let switch = app.client.post(app.url("/api/iam/v1/switch")).bearer_auth(token_of(&s)).json(&json!({"smeId": "user"})).send().await.unwrap();
    assert_eq!(switch.status(), 200);
    assert_eq!(header(switch.headers(), "cache-control"), "no-store");
    let pc = app.get("/pc-web?token=x&redirect=/market").await;
    assert_eq!(header(pc.headers(), "cache-control"), "no-store");
    for scheme in ["BEARER", "bearer", "Bearer", "bEaReR"] {
        let res = app.client.get(app.url("/api/iam/v1/account/profile")).header("Authorization", format!("{scheme} {}", token_of(&s))).send().await.unwrap();
        assert_eq!(res.status(), 200, "{scheme}");
    }
    let res = app.client.get(app.url("/api/iam/v1/account/profile")).header("Authorization", format!("Basic {}", token_of(&s))).send().await.unwrap();
    assert_eq!(res.status(), 401);
}
