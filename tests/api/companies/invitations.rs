//! Companies: invitations (a link for one account that asks before it joins, its expiry, a new one
//! replacing it, accepted or declined from the records, the invited person's bell), applications
//! waiting for an admin, and the records' unread counts.

use super::*;

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

/// Opening the link shows the invitation and changes nothing; Accept joins, Decline
/// declines.
#[tokio::test]
async fn an_invitation_link_asks_before_it_joins() {
    let app = TestApp::spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let (s, b) = app.put_json("/api/iam/v1/account/profile/info", &json!({"name": "Olivia"}), &token_of(&owner)).await;
    assert_eq!(s, 200, "{b}");
    let bob = token_of(&app.signed_in("bob@example.com").await);
    let carol = token_of(&app.signed_in("carol@example.com").await);
    let company = create(&app, &owner, "Acme Compute").await;
    let admin = token_of(&app.switch(&owner, &company).await);
    let bob_code = app.invite(&admin, "bob@example.com", "admin").await;
    let carol_code = app.invite(&admin, "carol@example.com", "member").await;

    // Opened (twice): what it is, nothing joined.
    for _ in 0..2 {
        let (s, b) = app.get_auth(&format!("/api/iam/v1/sme/join?code={bob_code}"), &bob).await;
        assert_eq!(s, 200, "{b}");
        let d = &b["data"];
        assert_eq!((d["company"].as_str(), d["invited_by"].as_str(), d["role"].as_str(), d["status"].as_str()), (Some("Acme Compute"), Some("Olivia"), Some("admin"), Some("invited")), "{b}");
        assert_eq!(d["sme_id"], company.as_str());
    }
    let (s, _) = app.post_json("/api/iam/v1/switch", &json!({"smeId": company}), Some(&bob)).await;
    assert_eq!(s, 403, "opening the link joined the company");
    let (_, records) = app.get_auth("/api/iam/v1/sme/member/records", &admin).await;
    assert!(records["data"]["items"].as_array().unwrap().iter().all(|r| r["status"] == "invited"), "{records}");

    // Bad answers: named, in both languages; nothing changes.
    let (s, b) = ask(&app, &with("POST", "/api/iam/v1/sme/join", json!({"code": bob_code})), Some(&bob), "en").await;
    assert_eq!((s, b["data"]["field"].as_str()), (400, Some("accept")), "{b}");
    let (s, b) = ask(&app, &with("POST", "/api/iam/v1/sme/join", json!({"code": bob_code, "accept": true})), Some(&carol), "zh-CN").await;
    assert_eq!((s, b["error"].as_str()), (403, Some("invitation_not_for_you")), "{b}");
    assert!(b["msg"].as_str().unwrap().chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "{b}");
    let (s, b) = ask(&app, &get("/api/iam/v1/sme/join?code=nope"), Some(&bob), "zh-CN").await;
    assert_eq!((s, b["msg"].as_str()), (404, Some("邀请不存在")));

    // Carol declines: not a member, the invitation is declined and cannot be accepted after.
    let (s, b) = app.post_json("/api/iam/v1/sme/join", &json!({"code": carol_code, "accept": false}), Some(&carol)).await;
    assert_eq!((s, b["data"]["status"].as_str()), (200, Some("declined")), "{b}");
    let (s, _) = app.post_json("/api/iam/v1/switch", &json!({"smeId": company}), Some(&carol)).await;
    assert_eq!(s, 403);
    let (_, b) = app.get_auth(&format!("/api/iam/v1/sme/join?code={carol_code}"), &carol).await;
    assert_eq!(b["data"]["status"], "declined");
    let (s, b) = app.post_json("/api/iam/v1/sme/join", &json!({"code": carol_code, "accept": true}), Some(&carol)).await;
    assert_eq!((s, b["data"]["status"].as_str()), (409, Some("declined")), "{b}");

    // Bob accepts: an admin of the company; the link then says so.
    let (s, b) = app.post_json("/api/iam/v1/sme/join", &json!({"code": bob_code, "accept": true}), Some(&bob)).await;
    assert_eq!((s, b["data"]["status"].as_str(), b["data"]["sme_id"].as_str()), (200, Some("accepted"), Some(company.as_str())), "{b}");
    let (s, b) = app.post_json("/api/iam/v1/switch", &json!({"smeId": company}), Some(&bob)).await;
    assert_eq!((s, b["data"]["userType"].as_str()), (200, Some("admin")), "{b}");
    let (_, b) = app.get_auth(&format!("/api/iam/v1/sme/join?code={bob_code}"), &bob).await;
    assert_eq!(b["data"]["status"], "accepted");
}

/// The unread count on the bell of `token`.
async fn unread(app: &TestApp, token: &str) -> i64 {
    let (s, b) = app.get_auth("/api/ebs/v1/notifications/stats", token).await;
    assert_eq!(s, 200, "{b}");
    b["data"]["unread"].as_i64().unwrap()
}

/// A pending invitation rings the invited person's bell, in English and Chinese; an address
/// without an account gets the mail only.
#[tokio::test]
async fn a_pending_invitation_rings_the_invited_persons_bell() {
    let app = TestApp::spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let bob = app.signed_in("bob@example.com").await;
    let company = create(&app, &owner, "Acme Compute").await;
    let admin = app.switch(&owner, &company).await;
    assert_eq!(unread(&app, &token_of(&bob)).await, 0);

    app.invite(&token_of(&admin), "bob@example.com", "member").await;
    // An address without an account gets the mail only (there is no bell to ring).
    app.invite(&token_of(&admin), "stranger@example.com", "member").await;

    assert_eq!(unread(&app, &token_of(&bob)).await, 1);
    let (s, en) = ask(&app, &get("/api/ebs/v1/notifications"), Some(&token_of(&bob)), "en").await;
    assert_eq!(s, 200, "{en}");
    assert_eq!(en["data"]["total"], 1, "{en}");
    let item = &en["data"]["items"][0];
    assert_eq!((item["kind"].as_str().unwrap(), item["title"].as_str().unwrap()), ("company_invitation", "Invitation to join Acme Compute"));
    let body = item["body"].as_str().unwrap();
    assert!(body.contains("invited you to join the company \"Acme Compute\"") && body.contains("Companies page"), "{body}");
    // The secret code of the mailed link is not in the bell.
    assert!(!body.contains("code="), "{body}");

    let (_, zh) = ask(&app, &get("/api/ebs/v1/notifications"), Some(&token_of(&bob)), "zh-CN").await;
    let item = &zh["data"]["items"][0];
    assert_eq!(item["title"], "邀请您加入 Acme Compute");
    let body = item["body"].as_str().unwrap();
    assert!(body.contains("邀请您加入企业「Acme Compute」") && body.contains("接受或拒绝"), "{body}");

    // Nobody else's bell rings: not the inviting admin's, in either context.
    assert_eq!(unread(&app, &token_of(&admin)).await, 0);
    assert_eq!(unread(&app, &token_of(&owner)).await, 0);
}
