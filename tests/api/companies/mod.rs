//! Companies: creation, rename, deletion, who may do what, history, and isolation between
//! companies; invitations and applications (`invitations.rs`); members, their resources and
//! the company's devices (`members.rs`).

use serde_json::{Value, json};

use crate::common::{TestApp, seed_company, token_of, user_id_of};
use crate::scenario::{ask, each_refused, each_says, get, with};

mod invitations;
mod members;

const SME: &str = "/api/iam/v1/sme";
const ASSIGN: &str = "/api/ebs/v1/sme/resources/assign";
const UNASSIGN: &str = "/api/ebs/v1/sme/resources/unassign";
const RESOURCES: &str = "/api/ebs/v1/sme/resources";

/// A catalogue app id (the seed catalogue's slug; see docs/companies.md, "Seams").
const APP: &str = "ollama";
const OTHER_APP: &str = "jellyfin";

async fn post_zh(app: &TestApp, path: &str, body: &Value, token: &str) -> (u16, Value) {
    crate::common::json_of(
        app.client.post(app.url(path)).bearer_auth(token).header("Accept-Language", "zh-CN").json(body).send().await.unwrap(),
    )
    .await
}

async fn create(app: &TestApp, session: &Value, name: &str) -> String {
    let (status, body) = app.post_json(SME, &json!({"name": name}), Some(&token_of(session))).await;
    assert_eq!(status, 200, "{body}");
    body["data"]["id"].as_str().unwrap().to_string()
}

/// The ids of the records the caller lists, with their statuses.
async fn records(app: &TestApp, token: &str) -> Vec<(String, String, String)> {
    let (status, body) = app.get_auth(&format!("{SME}/member/records"), token).await;
    assert_eq!(status, 200, "{body}");
    body["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().into(), r["kind"].as_str().unwrap().into(), r["status"].as_str().unwrap().into()))
        .collect()
}

async fn actions(app: &TestApp, path: &str, token: &str) -> Vec<String> {
    let (status, body) = app.get_auth(path, token).await;
    assert_eq!(status, 200, "{body}");
    body["data"]["items"].as_array().unwrap().iter().map(|h| h["action"].as_str().unwrap().to_string()).collect()
}

fn unread_auth(user_id: &str, session: &Value) -> zmarket::iam::auth::Auth {
    use zmarket::db::enums::Role;
    let role = match session["userType"].as_str().unwrap() {
        "admin" => Some(Role::Admin),
        "member" => Some(Role::Member),
        _ => None,
    };
    zmarket::iam::auth::Auth {
        user_id: user_id.into(),
        session_id: String::new(),
        context: zmarket::iam::auth::Context::of(session["smeId"].as_str().unwrap(), role),
        api_key: None,
    }
}

#[tokio::test]
async fn creating_a_company_makes_the_caller_its_admin() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("a@example.com").await;
    let t = token_of(&a);
    for bad in [json!({}), json!({"name": "  "}), json!({"name": "ab"}), json!({"name": "x".repeat(51)})] {
        let (status, body) = app.post_json(SME, &bad, Some(&t)).await;
        assert_eq!((status, body["msg"].as_str().unwrap()), (400, "Company name must be 3-50 characters"), "{bad}");
        assert_eq!(body["data"]["field"], "name");
    }
    let (_, body) = post_zh(&app, SME, &json!({"name": "ab"}), &t).await;
    assert_eq!(body["msg"], "企业名称须为 3-50 个字符");
    let (status, _) = app.post_json(SME, &json!({"name": "Acme"}), None).await;
    assert_eq!(status, 401);

    let (status, body) = app.post_json(SME, &json!({"name": "  算力有限公司  "}), Some(&t)).await;
    assert_eq!(status, 200, "{body}");
    let c = &body["data"];
    assert_eq!(c["name"], "算力有限公司");
    assert_eq!(c["owner"], user_id_of(&app, &a).await.as_str());
    assert_eq!(c["network_id"].as_str().unwrap().len(), 16);
    let id = c["id"].as_str().unwrap();

    let (status, body) = app.get_auth(SME, &t).await;
    assert_eq!(status, 200);
    let list = body["data"].as_array().unwrap();
    assert_eq!(list[0]["id"], "user");
    assert_eq!(list[1]["id"], id);
    assert_eq!(list.len(), 2);

    let admin = app.switch(&a, id).await;
    assert_eq!(admin["userType"], "admin");
    let (_, body) = app.get_auth(&format!("{SME}/members"), &token_of(&admin)).await;
    assert_eq!(body["data"]["total"], 1);
    assert_eq!(body["data"]["items"][0]["role"], "admin");
    assert_eq!(body["data"]["items"][0]["owner"], true);
    assert_eq!(body["data"]["items"][0]["email"], "a@example.com");
    assert_eq!(actions(&app, &format!("{SME}/history"), &token_of(&admin)).await, ["company_created"]);
}

#[tokio::test]
async fn admin_only_calls_refuse_members_and_the_personal_context() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("boss@example.com").await;
    let b = app.signed_in("staff@example.com").await;
    let id = seed_company(&app, "Acme Compute", &a, &[(&b, "member")]).await;
    let member = app.switch(&b, &id).await;
    assert_eq!(member["userType"], "member");
    let bid = user_id_of(&app, &b).await;
    let aid = user_id_of(&app, &a).await;
    let (update, invite) = (with("POST", format!("{SME}/update"), json!({"name": "Taken Over"})), with("POST", format!("{SME}/invite"), json!({"email": "x@example.com"})));
    let (assign_device, unassign_app) = (
        with("POST", ASSIGN, json!({"user_id": bid, "resource_type": "device", "resource_id": "D1"})),
        with("POST", UNASSIGN, json!({"user_id": bid, "resource_type": "app", "resource_id": APP})),
    );
    let (delete, remove, history) = (with("DELETE", SME, json!({})), with("POST", format!("{SME}/remove-member"), json!({"user_id": aid})), get(format!("{SME}/history")));
    let rows = [
        (&update, 403, "not_admin"),
        (&delete, 403, "not_admin"),
        (&invite, 403, "not_admin"),
        (&remove, 403, "not_admin"),
        (&history, 403, "not_admin"),
        // docs/product.md §6's permission messages for allocation.
        (&assign_device, 403, "no_permission_manage_devices"),
        (&unassign_app, 403, "no_permission_apps"),
    ];
    for lang in ["en", "zh"] {
        each_refused(&app, &[&member, &a], &rows, lang).await;
    }
    // docs/product.md §6, word for word.
    let words = [
        (&update, (403, "not_admin", None), ["Only company administrators can do this, please contact the administrator", "只有企业管理员可以执行此操作，请联系管理员"]),
        (&assign_device, (403, "no_permission_manage_devices", None), ["No permission to manage devices, please contact the administrator", "无权管理设备，请联系管理员"]),
        (&unassign_app, (403, "no_permission_apps", None), ["No permission to install or rent Z-APP, please contact the administrator", "无权安装或租用 Z-APP，请联系管理员"]),
    ];
    each_says(&app, Some(&token_of(&member)), &words).await;
    // The personal context is not a company.
    let (s, body) = app.get_auth(&format!("{SME}/members"), &token_of(&a)).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (403, "Switch to a company first"));
    let (s, _) = app.get_auth(RESOURCES, &token_of(&a)).await;
    assert_eq!(s, 403);
    // Nothing changed.
    let admin = app.switch(&a, &id).await;
    let (_, body) = app.get_auth(SME, &token_of(&admin)).await;
    assert_eq!(body["data"][1]["name"], "Acme Compute");
    let (_, body) = app.get_auth(&format!("{SME}/members"), &token_of(&member)).await;
    assert_eq!(body["data"]["total"], 2);
}

#[tokio::test]
async fn rename_validates_and_is_recorded() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("a@example.com").await;
    let id = create(&app, &a, "Old Name").await;
    let admin = app.switch(&a, &id).await;
    let t = token_of(&admin);
    let (s, body) = app.post_json(&format!("{SME}/update"), &json!({"name": "no"}), Some(&t)).await;
    assert_eq!((s, body["data"]["field"].as_str().unwrap()), (400, "name"));
    let (s, body) = app.post_json(&format!("{SME}/update"), &json!({"name": "New Name"}), Some(&t)).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["data"]["name"], "New Name");
    assert_eq!(body["data"]["id"], id.as_str());
    let (_, body) = app.get_auth(SME, &t).await;
    assert_eq!(body["data"][1]["name"], "New Name");
    let (_, body) = app.get_auth(&format!("{SME}/history"), &t).await;
    let h = &body["data"]["items"][0];
    assert_eq!(h["action"], "company_renamed");
    assert_eq!(h["detail"], "Old Name");
    assert_eq!(h["sme_name"], "New Name");
    assert_eq!(h["actor_name"], "a@example.com");
}

#[tokio::test]
async fn deleting_a_company() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("owner@example.com").await;
    let b = app.signed_in("bob@example.com").await;
    let p = app.signed_in("applicant@example.com").await;
    let id = seed_company(&app, "Acme Compute", &a, &[(&b, "member")]).await;
    let (s, _) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": id}), Some(&token_of(&p))).await;
    assert_eq!(s, 200);
    let admin = app.switch(&a, &id).await;
    let (s, _) = app.post_json(ASSIGN, &json!({"user_id": user_id_of(&app, &b).await, "resource_type": "app", "resource_id": APP}), Some(&token_of(&admin))).await;
    assert_eq!(s, 200);
    let member = app.switch(&b, &id).await;
    let (s, _) = app.delete_json(SME, &json!({}), &token_of(&member)).await;
    assert_eq!(s, 403);

    let (s, body) = app.delete_json(SME, &json!({}), &token_of(&admin)).await;
    assert_eq!(s, 200, "{body}");
    let (_, body) = app.get_auth(SME, &token_of(&a)).await;
    assert_eq!(body["data"].as_array().unwrap().len(), 1);
    let (_, body) = app.post_json("/api/iam/v1/account/check", &json!({}), Some(&token_of(&b))).await;
    assert_eq!(body["data"]["deletable"], true);
    assert!(records(&app, &token_of(&p)).await.is_empty());
    let (s, _) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": id}), Some(&token_of(&p))).await;
    assert_eq!(s, 404);
    // The admin's company token ends; a refresh brings them back to the personal context.
    let (s, _) = app.get_auth(SME, &token_of(&admin)).await;
    assert_eq!(s, 401);
    let (s, body) = app.get_auth("/api/iam/v1/refresh", admin["refresh_token"].as_str().unwrap()).await;
    assert_eq!(s, 200, "{body}");
    let (s, _) = app.get_auth(SME, body["data"]["access_token"].as_str().unwrap()).await;
    assert_eq!(s, 200);
    // The history outlives the company for those who were in it.
    let (_, body) = app.get_auth(&format!("{SME}/history/mine"), &token_of(&a)).await;
    assert_eq!(body["data"]["items"][0]["action"], "company_deleted");
    assert_eq!(body["data"]["items"][0]["sme_name"], "Acme Compute");
}

#[tokio::test]
async fn my_history_covers_my_companies_only() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("a@example.com").await;
    let b = app.signed_in("b@example.com").await;
    let x = app.signed_in("x@example.com").await;
    seed_company(&app, "Company A", &a, &[(&b, "member")]).await;
    seed_company(&app, "Company X", &x, &[]).await;
    let (s, body) = app.get_auth(&format!("{SME}/history/mine?limit=101"), &token_of(&b)).await;
    assert_eq!((s, body["data"]["field"].as_str().unwrap()), (400, "limit"));
    let (s, body) = app.get_auth(&format!("{SME}/history/mine"), &token_of(&b)).await;
    assert_eq!(s, 200);
    let items = body["data"]["items"].as_array().unwrap();
    assert!(items.iter().all(|h| h["sme_name"] == "Company A"), "{body}");
    let acts: Vec<&str> = items.iter().map(|h| h["action"].as_str().unwrap()).collect();
    assert_eq!(acts, ["invitation_accepted", "member_invited", "company_created"]);
    let (_, body) = app.get_auth(&format!("{SME}/history/mine?limit=1&offset=1"), &token_of(&b)).await;
    assert_eq!(body["data"]["total"], 3);
    assert_eq!(body["data"]["items"][0]["action"], "member_invited");
}

/// Every company-scoped call made from company B leaves company A alone.
#[tokio::test]
async fn company_scoped_calls_never_reach_another_company() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("a-admin@example.com").await;
    let am = app.signed_in("a-member@example.com").await;
    let b = app.signed_in("b-admin@example.com").await;
    let bm = app.signed_in("b-member@example.com").await;
    let applicant = app.signed_in("applicant@example.com").await;
    let ca = seed_company(&app, "Company A", &a, &[(&am, "member")]).await;
    let cb = seed_company(&app, "Company B", &b, &[(&bm, "member")]).await;
    let a_admin = app.switch(&a, &ca).await;
    let b_admin = app.switch(&b, &cb).await;
    let tb = token_of(&b_admin);
    let am_id = user_id_of(&app, &am).await;
    let aid = user_id_of(&app, &a).await;

    // A has an assignment, an application waiting and an invitation out.
    let (s, _) = app.post_json(ASSIGN, &json!({"user_id": am_id, "resource_type": "app", "resource_id": APP}), Some(&token_of(&a_admin))).await;
    assert_eq!(s, 200);
    let (_, body) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": ca}), Some(&token_of(&applicant))).await;
    let application = body["data"]["id"].as_str().unwrap().to_string();
    app.invite(&token_of(&a_admin), "invitee@example.com", "member").await;
    let a_records_before = records(&app, &token_of(&a_admin)).await;

    // B's admin: rename, members, records, history, resources act on B only.
    let (s, body) = app.post_json(&format!("{SME}/update"), &json!({"name": "Renamed B"}), Some(&tb)).await;
    assert_eq!((s, body["data"]["id"].as_str().unwrap()), (200, cb.as_str()));
    let (_, body) = app.get_auth(&format!("{SME}/members"), &tb).await;
    let emails: Vec<&str> = body["data"]["items"].as_array().unwrap().iter().map(|m| m["email"].as_str().unwrap()).collect();
    assert_eq!(emails, ["b-admin@example.com", "b-member@example.com"]);
    let b_records = records(&app, &tb).await;
    assert!(b_records.iter().all(|r| !a_records_before.iter().any(|x| x.0 == r.0)));
    let (_, body) = app.get_auth(&format!("{SME}/history"), &tb).await;
    assert!(body["data"]["items"].as_array().unwrap().iter().all(|h| h["sme_id"] == cb.as_str()));
    let (_, body) = app.get_auth(&format!("{RESOURCES}?user_id={am_id}"), &tb).await;
    assert_eq!(body["data"]["total"], 0);

    // B's admin cannot touch A's members, records or assignments.
    for (path, user) in [("/remove-member", &am_id), ("/remove-member", &aid)] {
        let (s, body) = app.post_json(&format!("{SME}{path}"), &json!({"user_id": user}), Some(&tb)).await;
        assert_eq!((s, body["msg"].as_str().unwrap()), (404, "Member not found"));
    }
    for action in ["accept", "decline"] {
        let (s, _) = app.post_json(&format!("{SME}/member/records/{application}/{action}"), &json!({}), Some(&tb)).await;
        assert_eq!(s, 404);
    }
    for path in [ASSIGN, UNASSIGN] {
        let (s, body) = app.post_json(path, &json!({"user_id": am_id, "resource_type": "app", "resource_id": APP}), Some(&tb)).await;
        assert_eq!((s, body["msg"].as_str().unwrap()), (404, "Member not found"));
    }
    // Inviting A's member into B is B's own business: a B invitation, nothing in A.
    let code = app.invite(&tb, "a-member@example.com", "member").await;
    let (s, body) = app.post_json(&format!("{SME}/join"), &json!({"code": code, "accept": true}), Some(&token_of(&am))).await;
    assert_eq!((s, body["data"]["sme_id"].as_str().unwrap()), (200, cb.as_str()));
    // A's admin cannot answer B's invitation for A's member either.
    let b_invite = records(&app, &tb).await.into_iter().find(|r| r.1 == "invite").unwrap().0;
    let (s, _) = app.post_json(&format!("{SME}/member/records/{b_invite}/decline"), &json!({}), Some(&token_of(&a_admin))).await;
    assert_eq!(s, 404);

    // B's admin deletes B: A stays whole.
    let (s, _) = app.delete_json(SME, &json!({}), &tb).await;
    assert_eq!(s, 200);
    let (_, body) = app.get_auth(SME, &token_of(&a_admin)).await;
    assert_eq!(body["data"][1]["name"], "Company A");
    let (_, body) = app.get_auth(&format!("{SME}/members"), &token_of(&a_admin)).await;
    assert_eq!(body["data"]["total"], 2);
    assert_eq!(records(&app, &token_of(&a_admin)).await.len(), a_records_before.len());
    let (_, body) = app.get_auth(RESOURCES, &token_of(&a_admin)).await;
    assert_eq!(body["data"]["total"], 1);
    let acts = actions(&app, &format!("{SME}/history"), &token_of(&a_admin)).await;
    assert!(!acts.contains(&"company_renamed".to_string()) && !acts.contains(&"company_deleted".to_string()), "{acts:?}");
    // A's admin still answers A's application.
    let (s, _) = app.post_json(&format!("{SME}/member/records/{application}/accept"), &json!({}), Some(&token_of(&a_admin))).await;
    assert_eq!(s, 200);
}
