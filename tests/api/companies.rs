//! Companies: creation, rename, deletion, invitations, applications, members, resource
//! allocation, history, and isolation between companies.

use serde_json::{Value, json};

use crate::common::{TestApp, seed_company, token_of, user_id_of};

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
    let not_admin = "Only company administrators can do this, please contact the administrator";
    for token in [token_of(&member), token_of(&a)] {
        let (s, body) = app.post_json(&format!("{SME}/update"), &json!({"name": "Taken Over"}), Some(&token)).await;
        assert_eq!((s, body["msg"].as_str().unwrap()), (403, not_admin));
        let (s, _) = app.delete_json(SME, &json!({}), &token).await;
        assert_eq!(s, 403);
        let (s, _) = app.post_json(&format!("{SME}/invite"), &json!({"email": "x@example.com"}), Some(&token)).await;
        assert_eq!(s, 403);
        let (s, _) = app.post_json(&format!("{SME}/remove-member"), &json!({"user_id": aid}), Some(&token)).await;
        assert_eq!(s, 403);
        let (s, _) = app.get_auth(&format!("{SME}/history"), &token).await;
        assert_eq!(s, 403);
        // docs/product.md §6's permission messages for allocation.
        let (s, body) = app.post_json(ASSIGN, &json!({"user_id": bid, "resource_type": "device", "resource_id": "D1"}), Some(&token)).await;
        assert_eq!((s, body["msg"].as_str().unwrap()), (403, "No permission to manage devices, please contact the administrator"));
        let (s, body) = app.post_json(UNASSIGN, &json!({"user_id": bid, "resource_type": "app", "resource_id": APP}), Some(&token)).await;
        assert_eq!((s, body["msg"].as_str().unwrap()), (403, "No permission to install or rent Z-APP, please contact the administrator"));
        let (_, body) = post_zh(&app, ASSIGN, &json!({"user_id": bid, "resource_type": "app", "resource_id": APP}), &token).await;
        assert_eq!(body["msg"], "无权安装或租用 Z-APP，请联系管理员");
        let (_, body) = post_zh(&app, ASSIGN, &json!({"user_id": bid, "resource_type": "device", "resource_id": "D1"}), &token).await;
        assert_eq!(body["msg"], "无权管理设备，请联系管理员");
    }
    let (_, body) = post_zh(&app, &format!("{SME}/update"), &json!({"name": "Taken Over"}), &token_of(&member)).await;
    assert_eq!(body["msg"], "只有企业管理员可以执行此操作，请联系管理员");
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
async fn an_invitation_link_joins_the_invited_account_only() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("owner@example.com").await;
    let b = app.signed_in("bob@example.com").await;
    let eve = app.signed_in("eve@example.com").await;
    let id = create(&app, &a, "Acme Compute").await;
    let admin = app.switch(&a, &id).await;
    let t = token_of(&admin);

    for (bad, msg) in [(json!({}), "Email Required"), (json!({"email": "nope"}), "Email Format Invalid")] {
        let (s, body) = app.post_json(&format!("{SME}/invite"), &bad, Some(&t)).await;
        assert_eq!((s, body["msg"].as_str().unwrap(), body["data"]["field"].as_str().unwrap()), (400, msg, "email"));
    }
    let (s, body) = app.post_json(&format!("{SME}/invite"), &json!({"email": "bob@example.com", "role": "boss"}), Some(&t)).await;
    assert_eq!((s, body["data"]["field"].as_str().unwrap()), (400, "role"));
    // Inviting oneself (already a member).
    let (s, body) = app.post_json(&format!("{SME}/invite"), &json!({"email": "owner@example.com"}), Some(&t)).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (409, "Already a member of this company"));

    let before = app.mails().await.len();
    let (s, body) = app.post_json(&format!("{SME}/invite"), &json!({"email": " Bob@Example.com "}), Some(&t)).await;
    assert_eq!(s, 200, "{body}");
    let rec = &body["data"];
    assert_eq!(rec["kind"], "invite");
    assert_eq!(rec["status"], "invited");
    assert_eq!(rec["email"], "bob@example.com");
    assert_eq!(rec["sme_id"], id.as_str());
    assert!(rec["expires_at"].is_string());
    let mails = app.wait_for_mails(before + 1).await;
    let mail = mails.last().unwrap();
    assert!(mail.contains("To: bob@example.com"), "{mail}");
    assert!(mail.contains("Acme Compute"), "{mail}");
    let link = crate::common::link_in(mail);
    assert!(link.starts_with(&format!("{}/iam/v1/sme/join?code=", app.public_url())), "{link}");
    let code = link.split("code=").nth(1).unwrap();

    // The invited person sees it as theirs.
    let bob_records = records(&app, &token_of(&b)).await;
    assert_eq!(bob_records, vec![(rec["id"].as_str().unwrap().to_string(), "invite".into(), "invited".into())]);

    let join = |c: &str| format!("{SME}/join?code={c}");
    let answer = |c: &str| json!({"code": c, "accept": true});
    let (s, _) = app.get_json(&join(code)).await;
    assert_eq!(s, 401);
    let (s, body) = app.get_auth(&format!("{SME}/join"), &token_of(&b)).await;
    assert_eq!((s, body["data"]["field"].as_str().unwrap()), (400, "code"));
    let (s, body) = app.post_json(&format!("{SME}/join"), &json!({"accept": true}), Some(&token_of(&b))).await;
    assert_eq!((s, body["data"]["field"].as_str().unwrap()), (400, "code"));
    let (s, body) = app.get_auth(&join("no-such-code"), &token_of(&b)).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (404, "Invitation not found"));
    // Another account cannot use the link.
    let (s, body) = app.get_auth(&join(code), &token_of(&eve)).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (403, "This invitation was sent to another email address"));
    let (s, body) = app.post_json(&format!("{SME}/join"), &answer(code), Some(&token_of(&eve))).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (403, "This invitation was sent to another email address"));
    let (s, _) = app.post_json("/api/iam/v1/switch", &json!({"smeId": id}), Some(&token_of(&eve))).await;
    assert_eq!(s, 403);

    // Opening the link joins nothing: it shows the invitation.
    let (s, body) = app.get_auth(&join(code), &token_of(&b)).await;
    assert_eq!((s, body["data"]["status"].as_str(), body["data"]["company"].as_str()), (200, Some("invited"), Some("Acme Compute")), "{body}");
    let (s, body) = app.post_json(&format!("{SME}/join"), &answer(code), Some(&token_of(&b))).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["data"], json!({"sme_id": id, "status": "accepted"}));
    // Answering it again is harmless.
    let (s, body) = app.post_json(&format!("{SME}/join"), &answer(code), Some(&token_of(&b))).await;
    assert_eq!((s, body["data"]["status"].as_str().unwrap()), (200, "accepted"));
    let member = app.switch(&b, &id).await;
    assert_eq!(member["userType"], "member");
    assert_eq!(member["organizationList"][1]["name"], "Acme Compute");
    let (_, body) = app.get_auth(&format!("{SME}/members"), &t).await;
    assert_eq!(body["data"]["total"], 2);
    assert_eq!(body["data"]["items"][1]["email"], "bob@example.com");
    assert_eq!(body["data"]["items"][1]["role"], "member");
    let admin_view = records(&app, &t).await;
    assert_eq!(admin_view[0].2, "accepted");
    assert_eq!(actions(&app, &format!("{SME}/history"), &t).await, ["invitation_accepted", "member_invited", "company_created"]);
    // The accepted invitation cannot be answered again.
    let (s, body) = app.post_json(&format!("{SME}/member/records/{}/decline", admin_view[0].0), &json!({}), Some(&token_of(&b))).await;
    assert_eq!((s, body["msg"].as_str().unwrap(), body["data"]["status"].as_str().unwrap()), (409, "This request has already been handled", "accepted"));
    // Inviting a member again is refused.
    let (s, _) = app.post_json(&format!("{SME}/invite"), &json!({"email": "bob@example.com"}), Some(&t)).await;
    assert_eq!(s, 409);
}

#[tokio::test]
async fn an_invitation_expires_after_its_ttl() {
    let app = TestApp::spawn_with(|c| c.auth.invitation_ttl_secs = 0).await;
    let a = app.signed_in("owner@example.com").await;
    let b = app.signed_in("late@example.com").await;
    let id = create(&app, &a, "Acme Compute").await;
    let admin = app.switch(&a, &id).await;
    let code = app.invite(&token_of(&admin), "late@example.com", "member").await;
    let (s, body) = app.post_json(&format!("{SME}/join"), &json!({"code": code, "accept": true}), Some(&token_of(&b))).await;
    assert_eq!(s, 409, "{body}");
    assert_eq!(body["data"]["status"], "expired");
    assert_eq!(body["msg"], "The invitation has expired");
    let mine = records(&app, &token_of(&b)).await;
    assert_eq!(mine[0].2, "expired");
    let (s, body) = app.post_json(&format!("{SME}/member/records/{}/accept", mine[0].0), &json!({}), Some(&token_of(&b))).await;
    assert_eq!((s, body["data"]["status"].as_str().unwrap()), (409, "expired"));
    assert_eq!(records(&app, &token_of(&admin)).await[0].2, "expired");
    let (s, _) = app.post_json("/api/iam/v1/switch", &json!({"smeId": id}), Some(&token_of(&b))).await;
    assert_eq!(s, 403);
    // The expiry job finds nothing left to expire.
    assert_eq!(zmarket::companies::membership::expire_invitations(&app.state.db).await.unwrap(), 0);
}

#[tokio::test]
async fn expiry_job_marks_old_invitations() {
    let app = TestApp::spawn_with(|c| c.auth.invitation_ttl_secs = 0).await;
    let a = app.signed_in("owner@example.com").await;
    let id = create(&app, &a, "Acme Compute").await;
    let admin = app.switch(&a, &id).await;
    app.invite(&token_of(&admin), "x1@example.com", "member").await;
    app.invite(&token_of(&admin), "x2@example.com", "member").await;
    assert_eq!(zmarket::companies::membership::expire_invitations(&app.state.db).await.unwrap(), 2);
    let statuses: Vec<String> = records(&app, &token_of(&admin)).await.into_iter().map(|r| r.2).collect();
    assert_eq!(statuses, ["expired", "expired"]);
}

#[tokio::test]
async fn a_new_invitation_replaces_the_old_link() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("owner@example.com").await;
    let b = app.signed_in("bob@example.com").await;
    let id = create(&app, &a, "Acme Compute").await;
    let admin = app.switch(&a, &id).await;
    let old = app.invite(&token_of(&admin), "bob@example.com", "member").await;
    let new = app.invite(&token_of(&admin), "bob@example.com", "member").await;
    let (s, body) = app.post_json(&format!("{SME}/join"), &json!({"code": old, "accept": true}), Some(&token_of(&b))).await;
    assert_eq!((s, body["data"]["status"].as_str().unwrap()), (409, "expired"));
    let (s, _) = app.post_json(&format!("{SME}/join"), &json!({"code": new, "accept": true}), Some(&token_of(&b))).await;
    assert_eq!(s, 200);
    let statuses: Vec<String> = records(&app, &token_of(&admin)).await.into_iter().map(|r| r.2).collect();
    assert_eq!(statuses, ["accepted", "expired"]);
}

#[tokio::test]
async fn an_invitation_can_be_accepted_or_declined_from_the_records() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("owner@example.com").await;
    let b = app.signed_in("bob@example.com").await;
    let c = app.signed_in("carol@example.com").await;
    let id = create(&app, &a, "Acme Compute").await;
    let admin = app.switch(&a, &id).await;
    let bob_code = app.invite(&token_of(&admin), "bob@example.com", "member").await;
    app.invite(&token_of(&admin), "carol@example.com", "admin").await;

    let bob_rec = records(&app, &token_of(&b)).await.remove(0).0;
    let carol_rec = records(&app, &token_of(&c)).await.remove(0).0;
    // The admin cannot answer for the invited person; strangers do not see it.
    let (s, body) = app.post_json(&format!("{SME}/member/records/{bob_rec}/accept"), &json!({}), Some(&token_of(&admin))).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (403, "This invitation was sent to another email address"));
    let (s, body) = app.post_json(&format!("{SME}/member/records/{bob_rec}/accept"), &json!({}), Some(&token_of(&c))).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (404, "Invitation or application not found"));
    let (s, _) = app.post_json(&format!("{SME}/member/records/nope/accept"), &json!({}), Some(&token_of(&c))).await;
    assert_eq!(s, 404);

    let (s, body) = app.post_json(&format!("{SME}/member/records/{bob_rec}/decline"), &json!({}), Some(&token_of(&b))).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["data"]["status"], "declined");
    assert_eq!(body["data"]["actionable"], false);
    let (s, body) = app.post_json(&format!("{SME}/join"), &json!({"code": bob_code, "accept": true}), Some(&token_of(&b))).await;
    assert_eq!((s, body["data"]["status"].as_str().unwrap()), (409, "declined"));
    let (s, _) = app.post_json(&format!("{SME}/member/records/{bob_rec}/accept"), &json!({}), Some(&token_of(&b))).await;
    assert_eq!(s, 409);

    let (s, body) = app.post_json(&format!("{SME}/member/records/{carol_rec}/accept"), &json!({}), Some(&token_of(&c))).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["data"]["status"], "accepted");
    assert_eq!(body["data"]["sme_name"], "Acme Compute");
    // Carol was invited as an admin.
    assert_eq!(app.switch(&c, &id).await["userType"], "admin");
    let (s, _) = app.post_json("/api/iam/v1/switch", &json!({"smeId": id}), Some(&token_of(&b))).await;
    assert_eq!(s, 403);
    let statuses: Vec<String> = records(&app, &token_of(&admin)).await.into_iter().map(|r| r.2).collect();
    assert_eq!(statuses, ["accepted", "declined"]);
    let acts = actions(&app, &format!("{SME}/history"), &token_of(&admin)).await;
    assert_eq!(acts[..2], ["invitation_accepted", "invitation_declined"]);
}

#[tokio::test]
async fn applications_wait_for_an_admin() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("owner@example.com").await;
    let m = app.signed_in("member@example.com").await;
    let p = app.signed_in("applicant@example.com").await;
    let q = app.signed_in("second@example.com").await;
    let id = seed_company(&app, "Acme Compute", &a, &[(&m, "member")]).await;
    let admin = app.switch(&a, &id).await;
    let member = app.switch(&m, &id).await;

    let (s, body) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": ""}), Some(&token_of(&p))).await;
    assert_eq!((s, body["msg"].as_str().unwrap(), body["data"]["field"].as_str().unwrap()), (400, "Company id required", "sme_id"));
    let (_, body) = post_zh(&app, &format!("{SME}/apply"), &json!({}), &token_of(&p)).await;
    assert_eq!(body["msg"], "请输入企业 ID");
    let (s, body) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": "no-such-company"}), Some(&token_of(&p))).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (404, "Company not found"));
    let (s, body) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": id}), Some(&token_of(&m))).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (409, "Already a member of this company"));

    let (s, body) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": id}), Some(&token_of(&p))).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["data"]["status"], "applied");
    assert_eq!(body["data"]["kind"], "apply");
    assert_eq!(body["data"]["email"], "applicant@example.com");
    let rec = body["data"]["id"].as_str().unwrap().to_string();
    let (s, body) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": id}), Some(&token_of(&p))).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (409, "An application is already waiting"));
    let (s, _) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": id}), Some(&token_of(&q))).await;
    assert_eq!(s, 200);

    // Applicant: applied. Admin: waiting. Member in the company: their own (none).
    assert_eq!(records(&app, &token_of(&p)).await, vec![(rec.clone(), "apply".into(), "applied".into())]);
    let admin_view = records(&app, &token_of(&admin)).await;
    assert_eq!(admin_view.iter().filter(|r| r.1 == "apply").map(|r| r.2.as_str()).collect::<Vec<_>>(), ["waiting", "waiting"]);
    let (_, body) = app.get_auth(&format!("{SME}/member/records"), &token_of(&admin)).await;
    let waiting = body["data"]["items"].as_array().unwrap().iter().find(|r| r["id"] == rec.as_str()).unwrap().clone();
    assert_eq!(waiting["actionable"], true);
    assert_eq!(waiting["name"], "applicant");
    assert!(records(&app, &token_of(&member)).await.iter().all(|r| r.1 == "invite"));
    // An admin asks for their own records with scope=mine.
    let (_, body) = app.get_auth(&format!("{SME}/member/records?scope=mine"), &token_of(&admin)).await;
    assert_eq!(body["data"]["total"], 0);

    // Only an admin of the company answers.
    let accept = format!("{SME}/member/records/{rec}/accept");
    for (token, status) in [(token_of(&member), 403), (token_of(&p), 403), (token_of(&a), 404)] {
        let (s, body) = app.post_json(&accept, &json!({}), Some(&token)).await;
        assert_eq!(s, status, "{body}");
    }
    let (s, body) = app.post_json(&accept, &json!({}), Some(&token_of(&admin))).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["data"]["status"], "accepted");
    assert_eq!(app.switch(&p, &id).await["userType"], "member");
    assert_eq!(records(&app, &token_of(&p)).await[0].2, "accepted");
    let (s, body) = app.post_json(&accept, &json!({}), Some(&token_of(&admin))).await;
    assert_eq!((s, body["data"]["status"].as_str().unwrap()), (409, "accepted"));

    let second = admin_view.iter().find(|r| r.1 == "apply" && r.0 != rec).unwrap().0.clone();
    let (s, body) = app.post_json(&format!("{SME}/member/records/{second}/decline"), &json!({}), Some(&token_of(&admin))).await;
    assert_eq!((s, body["data"]["status"].as_str().unwrap()), (200, "declined"));
    assert_eq!(records(&app, &token_of(&q)).await[0].2, "declined");
    let (s, _) = app.post_json("/api/iam/v1/switch", &json!({"smeId": id}), Some(&token_of(&q))).await;
    assert_eq!(s, 403);
    let (s, _) = app.post_json(&format!("{SME}/member/records/{second}/accept"), &json!({}), Some(&token_of(&admin))).await;
    assert_eq!(s, 409);
    // After a decline one may apply again.
    let (s, _) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": id}), Some(&token_of(&q))).await;
    assert_eq!(s, 200);
    let acts = actions(&app, &format!("{SME}/history"), &token_of(&admin)).await;
    assert_eq!(acts[..4], ["member_applied", "application_declined", "application_accepted", "member_applied"]);
}

#[tokio::test]
async fn members_are_removed_but_never_the_last_admin() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("owner@example.com").await;
    let b = app.signed_in("bob@example.com").await;
    let c = app.signed_in("carol@example.com").await;
    let id = seed_company(&app, "Acme Compute", &a, &[(&b, "member"), (&c, "admin")]).await;
    let owner = app.switch(&a, &id).await;
    let carol = app.switch(&c, &id).await;
    let member = app.switch(&b, &id).await;
    let (aid, bid, cid) = (user_id_of(&app, &a).await, user_id_of(&app, &b).await, user_id_of(&app, &c).await);

    let (s, body) = app.post_json(&format!("{SME}/remove-member"), &json!({}), Some(&token_of(&owner))).await;
    assert_eq!((s, body["data"]["field"].as_str().unwrap()), (400, "user_id"));
    let stranger = app.signed_in("stranger@example.com").await;
    let (s, body) =
        app.post_json(&format!("{SME}/remove-member"), &json!({"user_id": user_id_of(&app, &stranger).await}), Some(&token_of(&owner))).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (404, "Member not found"));

    // An assignment goes with the membership.
    let (s, _) = app.post_json(ASSIGN, &json!({"user_id": bid, "resource_type": "app", "resource_id": APP}), Some(&token_of(&owner))).await;
    assert_eq!(s, 200);
    let (s, _) = app.post_json(&format!("{SME}/remove-member"), &json!({"user_id": bid}), Some(&token_of(&owner))).await;
    assert_eq!(s, 200);
    let (_, body) = app.get_auth(RESOURCES, &token_of(&owner)).await;
    assert_eq!(body["data"]["total"], 0);
    // The removed member's company session ends; their personal one goes on.
    let (s, _) = app.get_auth("/api/iam/v1/account/profile", &token_of(&member)).await;
    assert_eq!(s, 401);
    let (_, body) = app.get_auth(SME, &token_of(&b)).await;
    assert_eq!(body["data"].as_array().unwrap().len(), 1);

    // Carol (admin) removes the owner: ownership passes to her.
    let (s, _) = app.post_json(&format!("{SME}/remove-member"), &json!({"user_id": aid}), Some(&token_of(&carol))).await;
    assert_eq!(s, 200);
    let (_, body) = app.get_auth(&format!("{SME}/members"), &token_of(&carol)).await;
    assert_eq!(body["data"]["total"], 1);
    assert_eq!(body["data"]["items"][0]["owner"], true);
    let (_, body) = app.get_auth(SME, &token_of(&carol)).await;
    assert_eq!(body["data"][1]["owner"], cid.as_str());
    // She is the last admin now.
    let (s, body) = app.post_json(&format!("{SME}/remove-member"), &json!({"user_id": cid}), Some(&token_of(&carol))).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (409, "The last administrator cannot be removed"));
    let (_, body) = post_zh(&app, &format!("{SME}/remove-member"), &json!({"user_id": cid}), &token_of(&carol)).await;
    assert_eq!(body["msg"], "不能移除最后一位管理员");
    let acts = actions(&app, &format!("{SME}/history"), &token_of(&carol)).await;
    assert_eq!(acts[..3], ["member_removed", "member_removed", "resource_assigned"]);
}

#[tokio::test]
async fn members_leave_and_then_may_delete_their_account() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("owner@example.com").await;
    let b = app.signed_in("bob@example.com").await;
    let id = seed_company(&app, "Acme Compute", &a, &[(&b, "member")]).await;
    let (_, body) = app.post_json("/api/iam/v1/account/check", &json!({}), Some(&token_of(&b))).await;
    assert_eq!(body["data"]["reasons"], json!(["companies_joined"]));

    let (s, body) = app.post_json(&format!("{SME}/leave"), &json!({}), Some(&token_of(&b))).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (400, "Company id required"));
    let (s, _) = app.post_json(&format!("{SME}/leave"), &json!({"sme_id": "nope"}), Some(&token_of(&b))).await;
    assert_eq!(s, 403);
    let (s, body) = app.post_json(&format!("{SME}/leave"), &json!({"sme_id": id}), Some(&token_of(&a))).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (409, "The last administrator cannot be removed"));
    let (s, _) = app.post_json(&format!("{SME}/leave"), &json!({"sme_id": id}), Some(&token_of(&b))).await;
    assert_eq!(s, 200);
    let (_, body) = app.post_json("/api/iam/v1/account/check", &json!({}), Some(&token_of(&b))).await;
    assert_eq!(body["data"], json!({"deletable": true, "reasons": []}));
    let admin = app.switch(&a, &id).await;
    assert_eq!(actions(&app, &format!("{SME}/history"), &token_of(&admin)).await[0], "member_left");
    // Bob's own history keeps the company he left.
    let (_, body) = app.get_auth(&format!("{SME}/history/mine"), &token_of(&b)).await;
    let mine = body["data"]["items"].as_array().unwrap();
    assert_eq!(mine[0]["action"], "member_left");
    assert_eq!(mine[0]["sme_name"], "Acme Compute");
    let (s, _) = app.delete_json("/api/iam/v1/account", &json!({"password": crate::common::PASSWORD}), &token_of(&b)).await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn resources_are_assigned_to_members_who_see_only_theirs() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("owner@example.com").await;
    let b = app.signed_in("bob@example.com").await;
    let c = app.signed_in("carol@example.com").await;
    let id = seed_company(&app, "Acme Compute", &a, &[(&b, "member"), (&c, "member")]).await;
    let admin = app.switch(&a, &id).await;
    let bob = app.switch(&b, &id).await;
    let t = token_of(&admin);
    let (bid, cid) = (user_id_of(&app, &b).await, user_id_of(&app, &c).await);

    for (body, field) in [
        (json!({"user_id": bid, "resource_type": "gpu", "resource_id": APP}), "resource_type"),
        (json!({"user_id": bid, "resource_id": APP}), "resource_type"),
        (json!({"user_id": "", "resource_type": "app", "resource_id": APP}), "user_id"),
        (json!({"user_id": bid, "resource_type": "app", "resource_id": " "}), "resource_id"),
    ] {
        let (s, res) = app.post_json(ASSIGN, &body, Some(&t)).await;
        assert_eq!((s, res["data"]["field"].as_str().unwrap()), (400, field), "{body}");
    }
    let (s, body) = app.post_json(ASSIGN, &json!({"user_id": bid, "resource_type": "app", "resource_id": "not-in-catalogue"}), Some(&t)).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (404, "Resource not found"));
    // A device id that is not the company's.
    let (s, _) = app.post_json(ASSIGN, &json!({"user_id": bid, "resource_type": "device", "resource_id": "ZB-0001"}), Some(&t)).await;
    assert_eq!(s, 404);
    let outsider = app.signed_in("outsider@example.com").await;
    let (s, body) =
        app.post_json(ASSIGN, &json!({"user_id": user_id_of(&app, &outsider).await, "resource_type": "app", "resource_id": APP}), Some(&t)).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (404, "Member not found"));

    for (user, res) in [(&bid, APP), (&bid, OTHER_APP), (&cid, APP)] {
        let (s, body) = app.post_json(ASSIGN, &json!({"user_id": user, "resource_type": "app", "resource_id": res}), Some(&t)).await;
        assert_eq!(s, 200, "{body}");
    }
    // Assigning again changes nothing.
    let (s, _) = app.post_json(ASSIGN, &json!({"user_id": bid, "resource_type": "app", "resource_id": APP}), Some(&t)).await;
    assert_eq!(s, 200);
    let (_, body) = app.get_auth(RESOURCES, &t).await;
    assert_eq!(body["data"]["total"], 3);
    let (_, body) = app.get_auth(&format!("{RESOURCES}?user_id={cid}"), &t).await;
    assert_eq!(body["data"]["total"], 1);
    assert_eq!(body["data"]["items"][0]["user_email"], "carol@example.com");
    assert_eq!(body["data"]["items"][0]["resource_name"], "Ollama");
    // An app's name in the reader's language.
    let (s, _) = app.post_json(ASSIGN, &json!({"user_id": cid, "resource_type": "app", "resource_id": "pytorch"}), Some(&t)).await;
    assert_eq!(s, 200);
    let zh = app.client.get(app.url(&format!("{RESOURCES}?user_id={cid}"))).bearer_auth(&t).header("Accept-Language", "zh-CN").send().await.unwrap();
    let body: Value = zh.json().await.unwrap();
    let names: Vec<&str> = body["data"]["items"].as_array().unwrap().iter().map(|a| a["resource_name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Ollama", "PyTorch GPU 工作环境"]);
    let (s, _) = app.post_json(UNASSIGN, &json!({"user_id": cid, "resource_type": "app", "resource_id": "pytorch"}), Some(&t)).await;
    assert_eq!(s, 200);
    // A member sees only what is theirs, whatever they ask for.
    let (s, body) = app.get_auth(&format!("{RESOURCES}?user_id={cid}"), &token_of(&bob)).await;
    assert_eq!(s, 200);
    let ids: Vec<&str> = body["data"]["items"].as_array().unwrap().iter().map(|i| i["resource_id"].as_str().unwrap()).collect();
    assert_eq!(ids, [APP, OTHER_APP]);
    assert!(body["data"]["items"].as_array().unwrap().iter().all(|i| i["user_id"] == bid.as_str()));
    use zmarket::companies::model::{ResourceType, Role};
    use zmarket::companies::resources;
    assert_eq!(resources::assigned_resource_ids(&app.state.db, &id, &bid, ResourceType::App).await.unwrap(), [APP, OTHER_APP]);
    assert!(resources::assigned_resource_ids(&app.state.db, &id, &bid, ResourceType::Device).await.unwrap().is_empty());
    assert!(resources::member_may_use(&app.state.db, &app.state.companies.resources, &id, &cid, Role::Member, ResourceType::App, APP).await.unwrap());
    assert!(!resources::member_may_use(&app.state.db, &app.state.companies.resources, &id, &cid, Role::Member, ResourceType::App, OTHER_APP).await.unwrap());

    let (s, _) = app.post_json(UNASSIGN, &json!({"user_id": bid, "resource_type": "app", "resource_id": APP}), Some(&t)).await;
    assert_eq!(s, 200);
    let (s, body) = app.post_json(UNASSIGN, &json!({"user_id": bid, "resource_type": "app", "resource_id": APP}), Some(&t)).await;
    assert_eq!((s, body["msg"].as_str().unwrap()), (404, "This resource is not assigned to this member"));
    let (_, body) = app.get_auth(RESOURCES, &token_of(&bob)).await;
    assert_eq!(body["data"]["total"], 1);
    let (_, body) = app.get_auth(&format!("{SME}/history"), &t).await;
    let h = &body["data"]["items"][0];
    assert_eq!((h["action"].as_str().unwrap(), h["subject_type"].as_str().unwrap(), h["subject_id"].as_str().unwrap()), ("resource_unassigned", "app", APP));
    assert_eq!(h["detail"], "bob@example.com");
    assert_eq!(h["actor_name"], "owner");
    let acts = actions(&app, &format!("{SME}/history"), &t).await;
    // Three, and PyTorch for the names in Chinese above.
    assert_eq!(acts.iter().filter(|a| *a == "resource_assigned").count(), 4);
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

#[tokio::test]
async fn member_records_unread_counts_news_until_listed() {
    use zmarket::companies::membership::member_records_unread;
    let app = TestApp::spawn().await;
    let a = app.signed_in("owner@example.com").await;
    let b = app.signed_in("bob@example.com").await;
    let p = app.signed_in("applicant@example.com").await;
    let id = create(&app, &a, "Acme Compute").await;
    let admin = app.switch(&a, &id).await;
    let (aid, bid, pid) = (user_id_of(&app, &a).await, user_id_of(&app, &b).await, user_id_of(&app, &p).await);
    let db = &app.state.db;
    let unread = |uid: &str, s: &Value| unread_auth(uid, s);

    app.invite(&token_of(&admin), "bob@example.com", "member").await;
    assert_eq!(member_records_unread(db, &unread(&bid, &b)).await.unwrap(), 1);
    assert_eq!(member_records_unread(db, &unread(&aid, &admin)).await.unwrap(), 0);
    records(&app, &token_of(&b)).await;
    assert_eq!(member_records_unread(db, &unread(&bid, &b)).await.unwrap(), 0);

    // An application is news for the admins: in the company context, and in their personal one.
    app.post_json(&format!("{SME}/apply"), &json!({"sme_id": id}), Some(&token_of(&p))).await;
    assert_eq!(member_records_unread(db, &unread(&pid, &p)).await.unwrap(), 0);
    assert_eq!(member_records_unread(db, &unread(&aid, &admin)).await.unwrap(), 1);
    assert_eq!(member_records_unread(db, &unread(&aid, &a)).await.unwrap(), 1);
    let rec = records(&app, &token_of(&admin)).await.into_iter().find(|r| r.1 == "apply").unwrap().0;
    assert_eq!(member_records_unread(db, &unread(&aid, &admin)).await.unwrap(), 0);
    // The decision is news for the applicant.
    app.post_json(&format!("{SME}/member/records/{rec}/decline"), &json!({}), Some(&token_of(&admin))).await;
    assert_eq!(member_records_unread(db, &unread(&pid, &p)).await.unwrap(), 1);
    records(&app, &token_of(&p)).await;
    assert_eq!(member_records_unread(db, &unread(&pid, &p)).await.unwrap(), 0);
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

/// Registers a device as its agent would and binds it with `token`; returns the device id.
async fn linked_device(app: &TestApp, token: &str) -> String {
    let spec = json!({"cpu_cores": 4, "memory_bytes": 1u64 << 34, "disk_bytes": 1u64 << 39, "gpus": []});
    let (s, b) = app.post_json("/api/agent/v1/register", &json!({"type": "Z-BOX", "name": "box", "spec": spec}), None).await;
    assert_eq!(s, 200, "{b}");
    let (id, code) = (b["data"]["device_id"].as_str().unwrap().to_string(), b["data"]["pairing_code"].as_str().unwrap().to_string());
    let (s, b) = app.post_json("/api/ebs/v2/devices/link", &json!({"device_id": id, "pairing_code": code}), Some(token)).await;
    assert_eq!(s, 200, "{b}");
    id
}

#[tokio::test]
async fn company_devices_are_allocated_and_members_see_only_theirs() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("owner@example.com").await;
    let b = app.signed_in("bob@example.com").await;
    let c = app.signed_in("carol@example.com").await;
    let x = app.signed_in("x-admin@example.com").await;
    let id = seed_company(&app, "Acme Compute", &a, &[(&b, "member"), (&c, "member")]).await;
    let other = seed_company(&app, "Other Co", &x, &[]).await;
    let admin = app.switch(&a, &id).await;
    let other_admin = app.switch(&x, &other).await;
    let (bid, cid) = (user_id_of(&app, &b).await, user_id_of(&app, &c).await);
    let t = token_of(&admin);

    let d1 = linked_device(&app, &t).await;
    let d2 = linked_device(&app, &t).await;
    let personal = linked_device(&app, &token_of(&a)).await;
    let foreign = linked_device(&app, &token_of(&other_admin)).await;

    // Only the company's own devices can be allocated.
    for dev in [&personal, &foreign, &"NOPE-NOPE-NOPE".to_string()] {
        let (s, body) = app.post_json(ASSIGN, &json!({"user_id": bid, "resource_type": "device", "resource_id": dev}), Some(&t)).await;
        assert_eq!((s, body["msg"].as_str().unwrap()), (404, "Resource not found"), "{dev}");
    }
    // Nor from another company, even to that company's own admin.
    let (s, _) = app.post_json(ASSIGN, &json!({"user_id": user_id_of(&app, &x).await, "resource_type": "device", "resource_id": d1}), Some(&token_of(&other_admin))).await;
    assert_eq!(s, 404);
    for (user, dev) in [(&bid, &d1), (&cid, &d2)] {
        let (s, body) = app.post_json(ASSIGN, &json!({"user_id": user, "resource_type": "device", "resource_id": dev}), Some(&t)).await;
        assert_eq!(s, 200, "{body}");
    }

    // Each member sees only the device assigned to them (the devices domain reads the assignments).
    let bob = app.switch(&b, &id).await;
    let (_, body) = app.get_auth("/api/ebs/v2/devices", &token_of(&bob)).await;
    let ids: Vec<&str> = body["data"]["items"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [d1.as_str()]);
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{d2}"), &token_of(&bob)).await;
    assert_eq!(s, 404);
    let (_, body) = app.get_auth(RESOURCES, &token_of(&bob)).await;
    assert_eq!(body["data"]["total"], 1);
    assert_eq!(body["data"]["items"][0]["resource_type"], "device");
    // Named, not only identified (issue 26).
    assert_eq!(body["data"]["items"][0]["resource_name"], "box");
    let (s, _) = app.post_json(UNASSIGN, &json!({"user_id": bid, "resource_type": "device", "resource_id": d1}), Some(&t)).await;
    assert_eq!(s, 200);
    let (_, body) = app.get_auth("/api/ebs/v2/devices", &token_of(&bob)).await;
    assert_eq!(body["data"]["total"], 0);
    // Unlinking a device ends its allocations.
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{d2}"), &json!({}), &t).await;
    assert_eq!(s, 200);
    let (_, body) = app.get_auth(RESOURCES, &t).await;
    assert_eq!(body["data"]["total"], 0);
}

#[tokio::test]
async fn a_company_with_linked_devices_cannot_be_deleted() {
    let app = TestApp::spawn().await;
    let a = app.signed_in("owner@example.com").await;
    let id = create(&app, &a, "Acme Compute").await;
    let admin = app.switch(&a, &id).await;
    let t = token_of(&admin);
    let dev = linked_device(&app, &t).await;
    // A personal device does not count.
    linked_device(&app, &token_of(&a)).await;
    let (s, body) = app.delete_json(SME, &json!({}), &t).await;
    assert_eq!(s, 409, "{body}");
    assert_eq!(body["msg"], "The company cannot be deleted: unlink all devices and release AI compute resources first");
    assert_eq!(body["data"]["reasons"], json!(["devices_linked"]));
    let (_, body) = crate::common::json_of(
        app.client.delete(app.url(SME)).bearer_auth(&t).header("Accept-Language", "zh").json(&json!({})).send().await.unwrap(),
    )
    .await;
    assert_eq!(body["msg"], "企业暂不能删除：请先解绑所有设备并释放 AI 算力资源");
    let (_, body) = app.get_auth(SME, &t).await;
    assert_eq!(body["data"].as_array().unwrap().len(), 2);
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{dev}"), &json!({}), &t).await;
    assert_eq!(s, 200);
    let (s, body) = app.delete_json(SME, &json!({}), &t).await;
    assert_eq!(s, 200, "{body}");
}
