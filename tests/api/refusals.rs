//! One table for every refusal: a stream to a box that cannot open answers the table's status and
//! stable name wherever it is asked for, the API (a rental's logs) and the app's origin (a page for
//! the browser) alike, in both languages. Before, the origin's pages chose their own statuses (429
//! and 502 where the API said 409) and the proxy's and the instances' failures were plain English
//! text.

use std::sync::{Arc, Mutex};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::common::*;
use crate::connect::Ws;
use crate::connect::played::{attached, entered, on_app};

/// Plays the box: every stream the market opens is refused with the reason set in `reason`, or,
/// for "silent", opened and closed with no byte (an app that takes the connection and answers
/// nothing).
async fn refusing_box(mut ch: Ws, reason: Arc<Mutex<&'static str>>) {
    while let Some(Ok(m)) = ch.next().await {
        let Message::Text(t) = m else { continue };
        let f: Value = serde_json::from_str(&t).unwrap();
        if f["t"] != "open" {
            continue;
        }
        let stream = f["stream"].clone();
        let why = *reason.lock().unwrap();
        let frames = if why == "silent" {
            vec![json!({"t": "opened", "stream": stream}), json!({"t": "close", "stream": stream, "reason": "done"})]
        } else {
            vec![json!({"t": "close", "stream": stream, "reason": why})]
        };
        for frame in frames {
            if ch.send(Message::Text(frame.to_string().into())).await.is_err() {
                return;
            }
        }
    }
}

/// The logs of the rental in `lang`: (status, envelope).
async fn logs(app: &TestApp, token: &str, id: &str, lang: &str) -> (u16, Value) {
    let res = app.client.get(app.url(&format!("/api/rmp/v1/apps/{id}/logs?tail=5"))).bearer_auth(token).header("accept-language", lang).send().await.unwrap();
    (res.status().as_u16(), res.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_cannot_open_answers_the_tables_status_on_the_api_and_on_the_app_origin() {
    let app = TestApp::spawn().await;
    let (alice, _bob, _device, secret, id) = crate::boxes::rented_running(&app, 2).await;
    let reason = Arc::new(Mutex::new("refused"));
    tokio::spawn(refusing_box(attached(&app, &secret).await, reason.clone()));
    let (host, set) = entered(&app, &alice, &id).await;
    let cookie = set.split(';').next().unwrap().to_string();

    // (what the box says, the status and the name the market answers with)
    let cases = [
        ("refused", 502, "stream_ended"),
        ("docker_unavailable", 502, "stream_ended"),
        ("failed", 502, "stream_ended"),
        ("not_running", 409, "stream_ended"),
        ("not_found", 404, "stream_not_found"),
        ("too_many", 409, "too_many_streams"),
        ("channel_lost", 409, "device_offline"),
        ("port_not_allowed", 400, "port_not_allowed"),
    ];
    for (why, status, name) in cases {
        *reason.lock().unwrap() = why;
        let (s, en) = logs(&app, &alice, &id, "en").await;
        assert_eq!((s, en["error"].as_str()), (status, Some(name)), "{why}: {en}");
        let (s, zh) = logs(&app, &alice, &id, "zh-CN").await;
        assert_eq!((s, zh["error"].as_str()), (status, Some(name)), "{why}: {zh}");
        assert_ne!(en["msg"], zh["msg"], "{why}");
        // The origin's page: the same status, the same text, in the browser's language.
        for (lang, envelope) in [("en", &en), ("zh-CN", &zh)] {
            let (s, h, page) = on_app(&app, reqwest::Method::GET, &host, "/", &[("cookie", cookie.clone()), ("accept-language", lang.to_string())]).await;
            assert_eq!(s, status, "{why} {lang}: {page}");
            assert!(header(&h, "content-type").starts_with("text/html"), "{why}");
            assert!(page.contains(envelope["msg"].as_str().unwrap()), "{why} {lang}: {page}");
        }
    }

    // An app that takes the connection and answers nothing: the table's 502, a page in the
    // browser's language (before: the text "The app did not answer." in English).
    *reason.lock().unwrap() = "silent";
    for (lang, text) in [("en", "The app did not answer"), ("zh-CN", "应用没有响应")] {
        let (s, h, page) = on_app(&app, reqwest::Method::GET, &host, "/", &[("cookie", cookie.clone()), ("accept-language", lang.to_string())]).await;
        assert_eq!(s, 502, "{page}");
        assert!(header(&h, "content-type").starts_with("text/html"));
        assert!(page.contains(text), "{lang}: {page}");
    }
    // The API's door to the same app: the envelope, with the name.
    let res = app.client.get(app.url(&format!("/api/rmp/v1/apps/{id}/api/"))).bearer_auth(&alice).header("accept-language", "zh-CN").send().await.unwrap();
    assert_eq!(res.status(), 502);
    let body: Value = res.json().await.unwrap();
    assert_eq!((body["error"].as_str(), body["msg"].as_str()), (Some("app_no_answer"), Some("应用没有响应")), "{body}");
}

/// A POST to a page and a missing bundle file: the table's 405 and 404 in the asker's language,
/// never a page (before: plain English text).
#[tokio::test]
async fn a_page_posted_to_and_a_missing_file_answer_the_tables_envelope() {
    let app = TestApp::spawn().await;
    for (method, path, status, name) in [(reqwest::Method::POST, "/market", 405, "method_not_allowed"), (reqwest::Method::GET, "/static/main-nope.js", 404, "not_found")] {
        let res = app.client.request(method, app.url(path)).header("accept-language", "zh-CN").send().await.unwrap();
        assert_eq!(res.status().as_u16(), status, "{path}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["error"], name, "{path}");
        assert!(body["msg"].as_str().unwrap().chars().any(|c| c > '\u{2e80}'), "{path}: {body}");
    }
}
