//! The foundation: the API's conventions (the request id, the envelope of an unknown path in the
//! asked language, refusals' stable names, the OpenAPI document, malformed ids and bodies).

use super::*;

#[tokio::test]
async fn the_request_id_is_kept_when_given() {
    let app = TestApp::spawn().await;
    let res = app.client.get(app.url("/healthz")).header("x-request-id", "abc-123").send().await.unwrap();
    assert_eq!(header(res.headers(), "x-request-id"), "abc-123");
}

#[tokio::test]
async fn unknown_api_paths_answer_the_json_envelope_in_the_asked_language() {
    let app = TestApp::spawn().await;
    let (status, body) = app.get_json("/api/ebs/v1/nope").await;
    assert_eq!(status, 404);
    assert_eq!(body["code"], 404);
    assert_eq!(body["msg"], "No such API endpoint");
    assert_eq!(body["error"], "api_not_found");
    assert!(body["data"].is_null());

    let res = app.client.get(app.url("/api/nope")).header("accept-language", "zh-CN,zh;q=0.9").send().await.unwrap();
    assert!(header(res.headers(), "content-type").starts_with("application/json"));
    let (status, body) = json_of(res).await;
    assert_eq!(status, 404);
    assert_eq!(body["msg"], "接口不存在");
    assert_eq!(body["error"], "api_not_found", "the name is the same in every language");

    // A known path with the wrong method is the envelope too, never HTML.
    let (status, body) = app.post_json("/api/ebs/v1/download/links", &json!({}), None).await;
    assert_eq!(status, 405);
    assert_eq!(body["code"], 405);
    assert_eq!(body["error"], "method_not_allowed");
}

/// Each message answers with its own status and stable name wherever it is raised (the one table
/// of src/error/msg.rs): a field refused, a rule refused with data that explains it, the same
/// message in Chinese.
#[tokio::test]
async fn refusals_carry_their_stable_name() {
    let app = TestApp::spawn().await;
    let (status, body) = app.post_json("/api/iam/v1/register", &json!({"email": "not-an-email", "password": crate::common::PASSWORD, "confirm_password": crate::common::PASSWORD, "agree": true}), None).await;
    assert_eq!((status, body["code"].as_u64(), body["error"].as_str()), (400, Some(400), Some("email_format_invalid")), "{body}");
    assert_eq!(body["data"]["field"], "email");

    let a = app.signed_in("names@example.com").await;
    let (status, body) = app.post_json("/api/billing/v1/wallet/redeem", &json!({"code": "ZM-2222-3333-4444-5555"}), Some(&token_of(&a))).await;
    assert_eq!((status, body["code"].as_u64(), body["error"].as_str()), (404, Some(404), Some("top_up_code_not_found")), "{body}");
    let (status, body) = app.post_json("/api/billing/v1/wallet/redeem", &json!({"code": ""}), Some(&token_of(&a))).await;
    assert_eq!((status, body["error"].as_str(), body["data"]["field"].as_str()), (400, Some("top_up_code_invalid"), Some("code")), "{body}");

    let res = app.client.get(app.url("/api/iam/v1/account/profile")).header("accept-language", "zh").send().await.unwrap();
    let (status, body) = json_of(res).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("unauthorized")), "{body}");
    assert_eq!(body["msg"], "请先登录");
}

#[tokio::test]
async fn download_links_come_from_config() {
    let app = TestApp::spawn_with(|c| {
        c.downloads.windows = "https://dl.example/zmarket.exe".into();
        c.downloads.android = "https://dl.example/zmarket.apk".into();
    })
    .await;
    let (status, body) = app.get_json("/api/ebs/v1/download/links").await;
    assert_eq!(status, 200);
    assert_eq!(body["code"], 200);
    assert_eq!(
        body["data"],
        json!({"windows": "https://dl.example/zmarket.exe", "mac": "", "android": "https://dl.example/zmarket.apk", "ios": ""})
    );
}

#[tokio::test]
async fn openapi_document_lists_the_endpoints() {
    let app = TestApp::spawn().await;
    let res = app.get("/api/openapi.json").await;
    assert_eq!(res.status(), 200);
    let doc: serde_json::Value = res.json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    assert!(doc["paths"]["/api/ebs/v1/download/links"]["get"].is_object());
    // Generated clients name an operation by its id: no two operations share one.
    let mut ids = std::collections::HashMap::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let id = op["operationId"].as_str().unwrap_or_else(|| panic!("{method} {path} has no operationId"));
            if let Some(other) = ids.insert(id.to_string(), format!("{method} {path}")) {
                panic!("operationId {id} is used by {other} and by {method} {path}");
            }
            // A path parameter is a `{name}` of the path; everything else is in the query
            // (Schemathesis found query fields documented as required path parameters).
            for p in op["parameters"].as_array().into_iter().flatten() {
                let name = p["name"].as_str().unwrap();
                if p["in"] == "path" {
                    assert!(path.contains(&format!("{{{name}}}")), "{method} {path}: `{name}` is documented in the path");
                }
            }
        }
    }
}

#[tokio::test]
async fn malformed_path_ids_and_multipart_bodies_answer_the_envelope() {
    let app = TestApp::spawn().await;
    let token = token_of(&app.signed_in("ids@example.com").await);
    // An id that is not valid UTF-8, on routes of three domains.
    for path in ["/api/ebs/v2/devices/%FF%FE", "/api/ebs/v1/notifications/%FF/read", "/api/iam/v1/sme/member/records/%C3%28/accept"] {
        let method = if path.ends_with("/read") { reqwest::Method::PUT } else if path.ends_with("/accept") { reqwest::Method::POST } else { reqwest::Method::GET };
        for (lang, msg) in [("en", "Invalid value for id"), ("zh-CN", "参数 id 无效")] {
            let res = app.client.request(method.clone(), app.url(path)).bearer_auth(&token).header("accept-language", lang).send().await.unwrap();
            assert_eq!(header(res.headers(), "content-type"), "application/json", "{path}");
            let (status, body) = json_of(res).await;
            assert_eq!(status, 400, "{path}: {body}");
            assert_eq!(body["code"], 400);
            assert_eq!(body["data"]["field"], "id");
            assert_eq!(body["msg"], msg);
        }
    }
    // A multipart upload without a boundary.
    let res = app
        .client
        .put(app.url("/api/iam/v1/account/profile/avatar"))
        .bearer_auth(&token)
        .header("content-type", "multipart/form-data")
        .body("not really multipart")
        .send()
        .await
        .unwrap();
    assert_eq!(header(res.headers(), "content-type"), "application/json");
    let (status, body) = json_of(res).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["data"]["field"], "file");
}
