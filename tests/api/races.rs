//! The race suite: every check-then-write with 50 concurrent callers, asserting the invariant
//! the rule promises (at least one admin, one application, one membership, one bind, capacity
//! never taken twice, one notification per change) and that nobody gets a 500. Runs on SQLite
//! and, with TEST_DATABASE_URL, on PostgreSQL (where `write_txn` alone takes no lock).

use std::collections::BTreeMap;

use futures::StreamExt;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{Value, json};
use zmarket::db::entity::{company_history, company_members, devices, member_records, notifications};
use zmarket::db::enums::{NotificationKind, Role};

use crate::common::*;
use crate::devices::{bound_device, heartbeat, register, spec};

const CALLERS: usize = 50;
const SME: &str = "/api/iam/v1/sme";

/// A POST whose future owns its arguments (so fifty of them can be made in one `map`).
async fn post(app: &TestApp, path: String, body: Value, token: &str) -> (u16, Value) {
    app.post_json(&path, &body, Some(token)).await
}

/// Statuses of concurrent answers, counted.
fn tally(answers: &[(u16, Value)]) -> BTreeMap<u16, usize> {
    let mut t = BTreeMap::new();
    for (s, _) in answers {
        *t.entry(*s).or_insert(0) += 1;
    }
    t
}

fn no_500(what: &str, answers: &[(u16, Value)]) {
    let bad: Vec<&Value> = answers.iter().filter(|(s, _)| *s >= 500).map(|(_, b)| b).collect();
    assert!(bad.is_empty(), "{what}: {} answers were 5xx ({:?}); first: {}", bad.len(), tally(answers), bad[0]);
}

/// `n` signed-in people (`<prefix>N@example.com`), a few at a time.
/// A server whose sign-in limit per IP lets the fifty people of a race sign in from 127.0.0.1.
async fn spawn() -> TestApp {
    TestApp::spawn_with(roomy).await
}

fn roomy(c: &mut zmarket::config::Config) {
    c.auth.login_ip_burst = 1000;
}

async fn people(app: &TestApp, prefix: &str, n: usize) -> Vec<Value> {
    futures::stream::iter(0..n)
        .map(|i| async move { app.signed_in(&format!("{prefix}{i}@example.com")).await })
        .buffered(4)
        .collect()
        .await
}

/// A company owned by `owner` whose other `admins` joined as admins through invitations.
async fn company_of_admins(app: &TestApp, owner: &Value, admins: &[Value]) -> String {
    let (s, b) = app.post_json(SME, &json!({"name": "Race Co"}), Some(&token_of(owner))).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let admin = token_of(&app.switch(owner, &id).await);
    futures::stream::iter(admins)
        .map(|m| {
            let admin = admin.clone();
            async move {
                let email = m["userInfo"]["email"].as_str().unwrap();
                let code = app.invite(&admin, email, "admin").await;
                let (s, b) = app.post_json(&format!("{SME}/join"), &json!({"code": code, "accept": true}), Some(&token_of(m))).await;
                assert_eq!(s, 200, "{b}");
            }
        })
        .buffer_unordered(4)
        .collect::<Vec<_>>()
        .await;
    id
}

async fn admins_of(app: &TestApp, company: &str) -> u64 {
    company_members::Entity::find()
        .filter(company_members::Column::CompanyId.eq(company))
        .filter(company_members::Column::Role.eq(Role::Admin))
        .count(&app.state.db)
        .await
        .unwrap()
}

async fn history_count(app: &TestApp, company: &str, action: &str) -> u64 {
    company_history::Entity::find()
        .filter(company_history::Column::CompanyId.eq(company))
        .filter(company_history::Column::Action.eq(action))
        .count(&app.state.db)
        .await
        .unwrap()
}

#[tokio::test]
async fn fifty_admins_leaving_at_once_leave_one_admin() {
    let app = spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let others = people(&app, "admin", CALLERS - 1).await;
    let company = company_of_admins(&app, &owner, &others).await;
    assert_eq!(admins_of(&app, &company).await, CALLERS as u64);

    let tokens: Vec<String> = std::iter::once(&owner).chain(others.iter()).map(token_of).collect();
    let answers = futures::future::join_all(
        tokens.iter().map(|t| post(&app, format!("{SME}/leave"), json!({"sme_id": company}), t)),
    )
    .await;
    no_500("leave", &answers);
    let left = admins_of(&app, &company).await;
    assert_eq!(left, 1, "admins left: {left}; answers {:?}", tally(&answers));
    assert_eq!(tally(&answers), BTreeMap::from([(200, CALLERS - 1), (409, 1)]));
    let refused = answers.iter().find(|(s, _)| *s == 409).unwrap();
    assert_eq!(refused.1["msg"], "The last administrator cannot be removed");
    assert_eq!(history_count(&app, &company, "member_left").await, CALLERS as u64 - 1);
}

#[tokio::test]
async fn admins_removing_each_other_at_once_keep_an_admin() {
    let app = spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let other = app.signed_in("second@example.com").await;
    let company = company_of_admins(&app, &owner, std::slice::from_ref(&other)).await;
    let (a, b) = (token_of(&app.switch(&owner, &company).await), token_of(&app.switch(&other, &company).await));
    let (ua, ub) = (user_id_of(&app, &owner).await, user_id_of(&app, &other).await);
    // Each admin removes the other (and leaves), 50 calls in all.
    let calls = (0..CALLERS).map(|i| {
        let (token, target) = match i % 4 {
            0 => (&a, &ub),
            1 => (&b, &ua),
            2 => (&a, &ua),
            _ => (&b, &ub),
        };
        post(&app, format!("{SME}/remove-member"), json!({"user_id": target}), token)
    });
    let answers = futures::future::join_all(calls).await;
    no_500("remove-member", &answers);
    assert!(admins_of(&app, &company).await >= 1, "no admin left: {:?}", tally(&answers));
}

#[tokio::test]
async fn one_person_applying_fifty_times_at_once_makes_one_application() {
    let app = spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let (_, b) = app.post_json(SME, &json!({"name": "Race Co"}), Some(&token_of(&owner))).await;
    let company = b["data"]["id"].as_str().unwrap().to_string();
    let applicant = token_of(&app.signed_in("applicant@example.com").await);

    let answers =
        futures::future::join_all((0..CALLERS).map(|_| post(&app, format!("{SME}/apply"), json!({"sme_id": company}), &applicant)))
            .await;
    no_500("apply", &answers);
    let records = member_records::Entity::find().filter(member_records::Column::CompanyId.eq(company.clone())).count(&app.state.db).await.unwrap();
    assert_eq!(records, 1, "applications: {records}; answers {:?}", tally(&answers));
    assert_eq!(tally(&answers), BTreeMap::from([(200, 1), (409, CALLERS - 1)]));
    assert_eq!(history_count(&app, &company, "member_applied").await, 1);
}

#[tokio::test]
async fn two_admins_accepting_one_application_fifty_times_make_one_membership() {
    let app = spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let other = app.signed_in("second@example.com").await;
    let company = company_of_admins(&app, &owner, std::slice::from_ref(&other)).await;
    let applicant = app.signed_in("applicant@example.com").await;
    let (s, b) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": company}), Some(&token_of(&applicant))).await;
    assert_eq!(s, 200, "{b}");
    let record = b["data"]["id"].as_str().unwrap().to_string();
    let admins = [token_of(&app.switch(&owner, &company).await), token_of(&app.switch(&other, &company).await)];

    let answers = futures::future::join_all((0..CALLERS).map(|i| {
        let verb = if i % 5 == 4 { "decline" } else { "accept" };
        post(&app, format!("{SME}/member/records/{record}/{verb}"), json!({}), &admins[i % 2])
    }))
    .await;
    no_500("accept", &answers);
    assert_eq!(tally(&answers), BTreeMap::from([(200, 1), (409, CALLERS - 1)]), "{:?}", answers.iter().find(|(s, _)| *s != 409));
    let uid = user_id_of(&app, &applicant).await;
    let members = company_members::Entity::find()
        .filter(company_members::Column::CompanyId.eq(company.clone()))
        .filter(company_members::Column::UserId.eq(uid))
        .count(&app.state.db)
        .await
        .unwrap();
    let decided = history_count(&app, &company, "application_accepted").await + history_count(&app, &company, "application_declined").await;
    assert_eq!(decided, 1, "decisions recorded: {decided}");
    assert!(members <= 1);
    assert_eq!(members, history_count(&app, &company, "application_accepted").await);
}

#[tokio::test]
async fn fifty_joins_with_one_code_make_one_membership_and_one_history_row() {
    let app = spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let (_, b) = app.post_json(SME, &json!({"name": "Race Co"}), Some(&token_of(&owner))).await;
    let company = b["data"]["id"].as_str().unwrap().to_string();
    let admin = token_of(&app.switch(&owner, &company).await);
    let joiner = app.signed_in("joiner@example.com").await;
    let code = app.invite(&admin, "joiner@example.com", "member").await;

    let t = token_of(&joiner);
    let answers = futures::future::join_all((0..CALLERS).map(|_| post(&app, format!("{SME}/join"), json!({"code": code, "accept": true}), &t))).await;
    no_500("join", &answers);
    assert_eq!(tally(&answers), BTreeMap::from([(200, CALLERS)]));
    assert_eq!(history_count(&app, &company, "invitation_accepted").await, 1);
    let members = company_members::Entity::find().filter(company_members::Column::CompanyId.eq(company.clone())).count(&app.state.db).await.unwrap();
    assert_eq!(members, 2);
}

#[tokio::test]
async fn a_join_and_an_accepted_application_at_once_make_one_membership() {
    let app = spawn().await;
    let owner = app.signed_in("owner@example.com").await;
    let (_, b) = app.post_json(SME, &json!({"name": "Race Co"}), Some(&token_of(&owner))).await;
    let company = b["data"]["id"].as_str().unwrap().to_string();
    let admin = token_of(&app.switch(&owner, &company).await);
    let person = app.signed_in("person@example.com").await;
    let t = token_of(&person);
    let (s, b) = app.post_json(&format!("{SME}/apply"), &json!({"sme_id": company}), Some(&t)).await;
    assert_eq!(s, 200, "{b}");
    let record = b["data"]["id"].as_str().unwrap().to_string();
    let code = app.invite(&admin, "person@example.com", "member").await;

    let joins = (0..CALLERS / 2).map(|_| post(&app, format!("{SME}/join"), json!({"code": code, "accept": true}), &t));
    let accepts = (0..CALLERS / 2).map(|_| post(&app, format!("{SME}/member/records/{record}/accept"), json!({}), &admin));
    let (a, b) = futures::join!(futures::future::join_all(joins), futures::future::join_all(accepts));
    let answers: Vec<(u16, Value)> = a.into_iter().chain(b).collect();
    no_500("join and accept", &answers);
    let members = company_members::Entity::find().filter(company_members::Column::CompanyId.eq(company.clone())).count(&app.state.db).await.unwrap();
    assert_eq!(members, 2);
}

#[tokio::test]
async fn fifty_binds_of_one_device_bind_it_once() {
    let app = spawn().await;
    let owners: Vec<String> = people(&app, "binder", 5).await.iter().map(token_of).collect();
    let (id, _, code) = register(&app, "Z-BOX", spec(4)).await;
    let body = json!({"device_id": id, "pairing_code": code});
    let answers =
        futures::future::join_all((0..CALLERS).map(|i| app.post_json("/api/ebs/v2/devices/link", &body, Some(&owners[i % owners.len()])))).await;
    no_500("link", &answers);
    assert_eq!(tally(&answers), BTreeMap::from([(200, 1), (409, CALLERS - 1)]));
}

const GIB: i64 = 1024 * 1024 * 1024;

fn machine(cores: i64) -> Value {
    json!({"name": "vm", "cpu_cores": cores, "memory_bytes": GIB, "disk_bytes": GIB, "gpu_count": 0, "passthrough": false})
}

#[tokio::test]
async fn fifty_zcloud_creates_never_take_a_hosts_capacity_twice() {
    let app = spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (host, _) = bound_device(&app, &alice, "server group", spec(16)).await;
    let answers = futures::future::join_all((0..CALLERS).map(|_| post(&app, "/api/ebs/v2/zcloud".into(), machine(4), &alice))).await;
    no_500("zcloud create", &answers);
    let machines = devices::Entity::find().filter(devices::Column::HostId.eq(host.clone())).all(&app.state.db).await.unwrap();
    let held: i64 = machines.iter().map(|m| m.cpu_cores).sum();
    assert!(held <= 16, "{} machines hold {held} of 16 cores; answers {:?}", machines.len(), tally(&answers));
    assert_eq!(tally(&answers), BTreeMap::from([(200, 4), (409, CALLERS - 4)]));
}

#[tokio::test]
async fn unlinking_a_host_while_machines_are_made_leaves_no_orphan() {
    let app = spawn().await;
    let alice = token_of(&app.signed_in("alice@example.com").await);
    let (host, secret) = bound_device(&app, &alice, "server group", spec(64)).await;
    let creates = (0..CALLERS - 10).map(|_| post(&app, "/api/ebs/v2/zcloud".into(), machine(1), &alice));
    let unlinks = (0..5).map(|_| async { app.delete_json(&format!("/api/ebs/v2/devices/{host}"), &json!({}), &alice).await });
    let beats = (0..5).map(|_| async { heartbeat(&app, &secret, json!({})).await });
    let (c, u, h) = futures::join!(futures::future::join_all(creates), futures::future::join_all(unlinks), futures::future::join_all(beats));
    let answers: Vec<(u16, Value)> = c.into_iter().chain(u).chain(h.into_iter().filter(|(s, _)| *s != 401)).collect();
    no_500("create, unlink and heartbeat", &answers);
    let host_left = devices::Entity::find_by_id(host.clone()).one(&app.state.db).await.unwrap().is_some();
    let machines = devices::Entity::find().filter(devices::Column::HostId.eq(host.clone())).count(&app.state.db).await.unwrap();
    assert!(host_left || machines == 0, "the host was unlinked but {machines} machines point at it");
}

#[tokio::test]
async fn fifty_heartbeats_of_a_device_coming_back_tell_its_owner_once() {
    let app = TestApp::spawn_with(|c| {
        roomy(c);
        c.devices.offline_after_secs = 2;
        c.devices.heartbeat_secs = 1;
    })
    .await;
    let s = app.signed_in("alice@example.com").await;
    let (id, secret) = bound_device(&app, &token_of(&s), "Z-BOX", spec(4)).await;
    let user = user_id_of(&app, &s).await;
    // Silent long enough to be marked offline.
    let mut offline = false;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let d = devices::Entity::find_by_id(id.clone()).one(&app.state.db).await.unwrap().unwrap();
        if d.status == zmarket::db::enums::DeviceStatus::Offline {
            offline = true;
            break;
        }
    }
    assert!(offline, "the device was never marked offline");
    let online_before = notifications::Entity::find()
        .filter(notifications::Column::UserId.eq(user.clone()))
        .filter(notifications::Column::Kind.eq(NotificationKind::DeviceOnline))
        .count(&app.state.db)
        .await
        .unwrap();
    let answers = futures::future::join_all((0..CALLERS).map(|_| async { heartbeat(&app, &secret, json!({})).await })).await;
    no_500("heartbeat", &answers);
    let online_after = notifications::Entity::find()
        .filter(notifications::Column::UserId.eq(user.clone()))
        .filter(notifications::Column::Kind.eq(NotificationKind::DeviceOnline))
        .count(&app.state.db)
        .await
        .unwrap();
    assert_eq!(online_after - online_before, 1, "device_online notifications for one return");
    // The counter the stats poll reads agrees with the rows.
    let (_, b) = app.get_auth("/api/ebs/v1/notifications/stats", &token_of(&s)).await;
    let rows = notifications::Entity::find().filter(notifications::Column::UserId.eq(user)).count(&app.state.db).await.unwrap();
    assert_eq!(b["data"]["total"], rows);
}

#[tokio::test]
async fn fifty_marks_of_one_notification_count_it_read_once() {
    let app = spawn().await;
    let s = app.signed_in("alice@example.com").await;
    let t = token_of(&s);
    let user = user_id_of(&app, &s).await;
    for kind in [NotificationKind::DeviceOffline, NotificationKind::DeviceOnline] {
        zmarket::notifications::service::notify(&app.state.db, &user.as_str().into(), kind, "t", "b", &json!({})).await.unwrap();
    }
    let (_, b) = app.get_auth("/api/ebs/v1/notifications", &t).await;
    let id = b["data"]["items"][0]["id"].as_str().unwrap().to_string();
    let answers =
        futures::future::join_all((0..CALLERS).map(|_| async { json_of(app.client.put(app.url(&format!("/api/ebs/v1/notifications/{id}/read"))).bearer_auth(&t).send().await.unwrap()).await }))
            .await;
    no_500("mark read", &answers);
    assert_eq!(tally(&answers), BTreeMap::from([(200, CALLERS)]));
    let (_, b) = app.get_auth("/api/ebs/v1/notifications/stats", &t).await;
    assert_eq!((b["data"]["total"].as_u64(), b["data"]["unread"].as_u64()), (Some(2), Some(1)), "{b}");
}

/// Finding 2's check-then-write: one address signed up fifty times at once is one account (and
/// fifty addresses at once are fifty), with no 500 ("database is locked").
#[tokio::test]
async fn fifty_sign_ups_at_once_make_one_account_per_address() {
    use zmarket::db::entity::users;
    let app = TestApp::spawn_with(|c| {
        roomy(c);
        c.auth.register_email_burst = 1000;
    })
    .await;
    let body = |e: &str| json!({"email": e, "password": PASSWORD, "confirm_password": PASSWORD, "agree": true});
    let one = body("one@example.com");
    let same = futures::future::join_all((0..CALLERS).map(|_| app.post_json("/api/iam/v1/register", &one, None))).await;
    no_500("sign-up of one address", &same);
    assert!(same.iter().all(|(s, _)| *s == 200 || *s == 409 || *s == 429), "{:?}", tally(&same));
    let n = users::Entity::find().filter(users::Column::Email.eq("one@example.com")).count(&app.state.db).await.unwrap();
    assert_eq!(n, 1);
    let many = futures::future::join_all((0..CALLERS).map(|i| {
        let b = body(&format!("many{i}@example.com"));
        let app = &app;
        async move { app.post_json("/api/iam/v1/register", &b, None).await }
    }))
    .await;
    no_500("sign-ups of fifty addresses", &many);
}
