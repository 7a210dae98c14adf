//! The foundation: the API's conventions (the request id, the envelope of an unknown path in the
//! asked language, refusals' stable names, the OpenAPI document, malformed ids and bodies, an
//! overlong request line), and what the document promises of every input: NUL in any input is a
//! 400 naming the field, `status` and `type` filters are enums.

use serde_json::Value;

use super::*;
use crate::common::PASSWORD;

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

/// A request line over 64 KiB (refused by the HTTP parser before any handler) still answers the
/// envelope.
#[tokio::test]
async fn an_overlong_uri_answers_the_envelope() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn().await;
    let addr = app.base.trim_start_matches("http://").to_string();
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET /api/ebs/v1/market/search?keyword={} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70 * 1024));
    let _ = s.write_all(req.as_bytes()).await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), s.read_to_end(&mut out)).await;
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 414"), "{text}");
    assert!(text.contains("application/json"), "{text}");
    let body: Value = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["code"], 414);
    assert_eq!(body["data"], Value::Null);
    assert!(body["msg"].as_str().unwrap().contains("too long"));
}

/// What an operation answered when NUL was put in `names`: a 400 naming one of them (a body's
/// own rules may name another of its fields first: `type` of an agent registration), or a
/// refusal before any input was read (no session of the right kind). Anything else is listed.
fn nul_refused(what: &str, status: u16, body: &Value, names: &[String]) -> Option<String> {
    if matches!(status, 401 | 403) {
        return None;
    }
    let field = body["data"]["field"].as_str().unwrap_or("");
    let in_body = what.ends_with("(body)") && !field.is_empty();
    let named = in_body || names.iter().any(|n| field == n || field.starts_with(&format!("{n}.")) || field.starts_with(&format!("{n}[")));
    (status != 400 || !named).then(|| format!("{what}: {status} {body}"))
}

/// Every operation of the OpenAPI document gets NUL in each of its path parameters, then in each
/// query parameter, then in every property of its JSON body: each answers 400 naming the field
/// (before: 500 on PostgreSQL for 22 of 51 inputs, and a message of just "\u0000" was stored).
#[tokio::test]
async fn nul_in_any_input_of_any_operation_is_a_400_naming_the_field() {
    let app = TestApp::spawn().await;
    let mut token = token_of(&app.signed_in("nul@example.com").await);
    let (_, doc) = app.get_json("/api/openapi.json").await;
    let schemas = doc["components"]["schemas"].clone();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let params: Vec<&Value> = op["parameters"].as_array().map(|a| a.iter().collect()).unwrap_or_default();
            let names = |place: &str| -> Vec<String> {
                params.iter().filter(|p| p["in"] == place).map(|p| p["name"].as_str().unwrap().to_string()).collect()
            };
            let (in_path, in_query) = (names("path"), names("query"));
            let schema = &op["requestBody"]["content"]["application/json"]["schema"];
            let body_schema = match schema["$ref"].as_str() {
                Some(r) => &schemas[r.rsplit('/').next().unwrap()],
                None => schema,
            };
            let in_body: Vec<String> = body_schema["properties"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
            let fill = |nul_path: bool| {
                let mut url = path.clone();
                for n in &in_path {
                    url = url.replace(&format!("{{{n}}}"), if nul_path { "a%00b" } else { "x" });
                }
                url
            };
            let mut attempts: Vec<(String, String, Option<Value>, Vec<String>)> = Vec::new();
            if !in_path.is_empty() {
                attempts.push(("path".into(), fill(true), None, in_path.clone()));
            }
            if !in_query.is_empty() {
                let q: Vec<String> = in_query.iter().map(|n| format!("{n}=a%00b")).collect();
                attempts.push(("query".into(), format!("{}?{}", fill(false), q.join("&")), None, in_query.clone()));
            }
            if !in_body.is_empty() {
                let body: serde_json::Map<String, Value> = in_body.iter().map(|n| (n.clone(), json!("a\u{0}b"))).collect();
                attempts.push(("body".into(), fill(false), Some(Value::Object(body)), in_body.clone()));
            }
            for (place, url, body, names) in attempts {
                for _ in 0..2 {
                    let mut req = app.client.request(method.to_uppercase().parse().unwrap(), app.url(&url)).bearer_auth(&token);
                    if let Some(b) = &body {
                        req = req.json(b);
                    }
                    let (s, b) = json_of(req.send().await.unwrap()).await;
                    if s == 401 && b["code"] == 401 && app.get_auth("/api/iam/v1/account/profile", &token).await.0 == 401 {
                        // An earlier operation ended this session (sign-out): sign in again.
                        token = token_of(&app.login("nul@example.com", PASSWORD).await);
                        continue;
                    }
                    checked += 1;
                    wrong.extend(nul_refused(&format!("{} {url} ({place})", method.to_uppercase()), s, &b, &names));
                    break;
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {checked}:\n{}", wrong.len(), wrong.join("\n"));
    assert!(checked > 50, "{checked}");
    // A value of just NUL, and the answer in both languages.
    let (s, b) = app.post_json("/api/ebs/v2/devices/link", &json!({"device_id": "\u{0}", "pairing_code": "ABCD"}), Some(&token)).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("device_id")), "{b}");
    assert_eq!(b["msg"], "device_id must not contain control characters");
    let res = app.client.get(app.url("/api/ebs/v2/nearby/a%00b")).header("accept-language", "zh-CN").send().await.unwrap();
    let (s, b) = json_of(res).await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("id")), "{b}");
    assert_eq!(b["msg"], "参数 id 不能包含控制字符");
}

/// Every `status` and `type` query parameter of the document lists its values (before: plain
/// strings, so a fuzzer's schema-valid values were refused).
#[tokio::test]
async fn status_and_type_query_parameters_are_enums_in_the_document() {
    let app = TestApp::spawn().await;
    let (_, doc) = app.get_json("/api/openapi.json").await;
    let mut seen = Vec::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            for p in op["parameters"].as_array().into_iter().flatten() {
                let name = p["name"].as_str().unwrap();
                if p["in"] != "query" || !matches!(name, "status" | "type") {
                    continue;
                }
                let mut schema = p["schema"].clone();
                if let Some(r) = schema["$ref"].as_str() {
                    schema = doc["components"]["schemas"][r.rsplit('/').next().unwrap()].clone();
                }
                // An optional enum may come as oneOf [null, enum].
                let values: Vec<String> = std::iter::once(&schema)
                    .chain(schema["oneOf"].as_array().into_iter().flatten())
                    .flat_map(|s| s["enum"].as_array().cloned().unwrap_or_default())
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect();
                assert!(!values.is_empty(), "{method} {path} ?{name}: {schema}");
                assert!(!p["required"].as_bool().unwrap_or(false), "{method} {path} ?{name}");
                seen.push(format!("{method} {path} ?{name}"));
            }
        }
    }
    assert!(seen.len() >= 5, "{seen:?}");
    // The device list's filter lists what it accepts: not `unknown` (listed as offline).
    let token = token_of(&app.signed_in("enum@example.com").await);
    for v in ["online", "offline", "creating", "failed"] {
        assert_eq!(app.get_auth(&format!("/api/ebs/v2/devices?status={v}"), &token).await.0, 200, "{v}");
    }
    assert_eq!(app.get_auth("/api/ebs/v2/devices?type=Z-CLOUD", &token).await.0, 200);
    // A filter given is one of its values: empty is refused like unknown (Schemathesis).
    for path in ["/api/rmp/v1/apps?status=", "/api/rmp/v1/orders?status=", "/api/billing/v1/bills?status=", "/api/billing/v1/bills.csv?status="] {
        let (s, b) = app.get_auth(path, &token).await;
        assert_eq!((s, b["data"]["field"].as_str()), (400, Some("status")), "{path}: {b}");
    }
}
