//! Companies: members removed (never the last admin) or leaving, resources assigned to members
//! who see only theirs, and the company's devices allocated the same way.

use super::*;

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
    let (company, b, c) = (id.as_str().into(), bid.as_str().into(), cid.as_str().into());
    assert_eq!(resources::assigned_resource_ids(&app.state.db, &company, &b, ResourceType::App).await.unwrap(), [APP, OTHER_APP]);
    assert!(resources::assigned_resource_ids(&app.state.db, &company, &b, ResourceType::Device).await.unwrap().is_empty());
    assert!(resources::member_may_use(&app.state.db, &app.state.companies.resources, &company, &c, Role::Member, ResourceType::App, APP).await.unwrap());
    assert!(!resources::member_may_use(&app.state.db, &app.state.companies.resources, &company, &c, Role::Member, ResourceType::App, OTHER_APP).await.unwrap());

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
