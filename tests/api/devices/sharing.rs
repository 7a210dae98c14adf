//! Devices: sharing (edits reaching the device, an offline device never offered for rent), a
//! company's devices and its members, the location and its checks, and nearby listing shared
//! devices coarsely.

use serde_json::{Value, json};

use super::{GIB, bound_device, heartbeat, link, register, spec, switch_to, zh_post};
use crate::common::*;

#[tokio::test]
async fn sharing_edits_reach_the_device() {
    let app = TestApp::spawn().await;
    let t = token_of(&app.signed_in("alice@example.com").await);
    let (id, secret) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    let path = format!("/api/ebs/v2/devices/{id}/sharing");
    let (s, b) = app.put_json(&path, &json!({"mode": "manual", "rentable": true, "price_per_hour": 250}), &t).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!((b["data"]["rentable"].as_bool(), b["data"]["price_per_hour"].as_i64()), (Some(true), Some(250)));
    let (_, b) = heartbeat(&app, &secret, json!({})).await;
    assert_eq!(b["data"]["settings"]["sharing_mode"], "manual");
    assert_eq!(b["data"]["settings"]["rentable"], true);
    assert_eq!(b["data"]["settings"]["price_per_hour"], 250);

    // Rules of the modes.
    let (s, b) = app.put_json(&path, &json!({"mode": "dedicated", "rentable": true}), &t).await;
    assert_eq!(s, 409);
    assert_eq!(b["msg"], "This operation is not allowed in the current sharing mode");
    let (s, _) = app.put_json(&path, &json!({"mode": "autopilot", "rentable": false}), &t).await;
    assert_eq!(s, 409);
    let (s, b) = app.put_json(&path, &json!({"mode": "autopilot", "rentable": true}), &t).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["price_per_hour"], 250, "the price is kept when not given");
    let (s, b) = app.put_json(&path, &json!({"mode": "dedicated", "rentable": false}), &t).await;
    assert_eq!(s, 200, "{b}");
    let (_, b) = heartbeat(&app, &secret, json!({})).await;
    assert_eq!(b["data"]["settings"]["sharing_mode"], "dedicated");
    // Bad input.
    for body in [json!({"mode": "greedy", "rentable": false}), json!({"mode": "manual"}), json!({"mode": "manual", "rentable": true, "price_per_hour": -1})] {
        let (s, _) = app.put_json(&path, &body, &t).await;
        assert_eq!(s, 400, "{body}");
    }
}

#[tokio::test]
async fn an_offline_device_cannot_be_offered_for_rent() {
    let app = TestApp::spawn_with(|c| {
        c.devices.offline_after_secs = 2;
        c.devices.heartbeat_secs = 1;
    }).await;
    let t = token_of(&app.signed_in("alice@example.com").await);
    let (id, _) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    for _ in 0..100 {
        let (_, b) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), &t).await;
        if b["data"]["status"] == "offline" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let path = format!("/api/ebs/v2/devices/{id}/sharing");
    let (s, b) = app.put_json(&path, &json!({"mode": "manual", "rentable": true, "price_per_hour": 100}), &t).await;
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["msg"], "This operation is not allowed while the device is stopped or offline");
    // Withdrawing or going self-used is allowed while offline.
    let (s, _) = app.put_json(&path, &json!({"mode": "dedicated", "rentable": false}), &t).await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn company_devices_and_members() {
    let app = TestApp::spawn().await;
    let admin = app.signed_in("admin@example.com").await;
    let member = app.signed_in("member@example.com").await;
    let company = seed_company(&app, "Acme Ltd", &admin, &[(&member, "member")]).await;
    let admin_t = switch_to(&app, &admin, &company).await;
    let member_t = switch_to(&app, &member, &company).await;

    // Bound in the company context, the company owns it.
    let (id, secret, code) = register(&app, "Z-BOX", spec(4)).await;
    let (s, b) = link(&app, &admin_t, &id, &code).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["owner_kind"], "company");
    // Not in the admin's personal list; in the company's.
    let (_, b) = app.get_auth("/api/ebs/v2/devices", &token_of(&admin)).await;
    assert_eq!(b["data"]["total"], 0);
    let (_, b) = app.get_auth("/api/ebs/v2/devices", &admin_t).await;
    assert_eq!(b["data"]["total"], 1);

    // A member sees nothing until devices are assigned, and may manage nothing.
    let (s, b) = app.get_auth("/api/ebs/v2/devices", &member_t).await;
    assert_eq!(s, 200);
    assert_eq!(b["data"]["total"], 0);
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), &member_t).await;
    assert_eq!(s, 404);
    let (id2, _, code2) = register(&app, "Z-BOX", spec(4)).await;
    let refusals = [
        link(&app, &member_t, &id2, &code2).await,
        app.put_json(&format!("/api/ebs/v2/devices/{id}/sharing"), &json!({"mode": "manual", "rentable": false}), &member_t).await,
        app.put_json(&format!("/api/ebs/v2/devices/{id}/location"), &json!({"lat": 1.0, "lng": 2.0}), &member_t).await,
        app.delete_json(&format!("/api/ebs/v2/devices/{id}"), &json!({}), &member_t).await,
        app.post_json("/api/ebs/v2/zcloud", &json!({"name": "vm", "cpu_cores": 1, "memory_bytes": GIB, "disk_bytes": GIB}), Some(&member_t)).await,
    ];
    for (s, b) in refusals {
        assert_eq!(s, 403, "{b}");
        assert_eq!(b["msg"], "No permission to manage devices, please contact the administrator");
    }
    let (s, b) = zh_post(&app, "/api/ebs/v2/devices/link", &json!({"device_id": id2, "pairing_code": code2}), &member_t).await;
    assert_eq!(s, 403);
    assert_eq!(b["msg"], "无权管理设备，请联系管理员");

    // Another company's admin sees none of it.
    let other = app.signed_in("other@example.com").await;
    let other_co = seed_company(&app, "Other Co", &other, &[]).await;
    let other_t = switch_to(&app, &other, &other_co).await;
    let (_, b) = app.get_auth("/api/ebs/v2/devices", &other_t).await;
    assert_eq!(b["data"]["total"], 0);
    let (s, _) = app.get_auth(&format!("/api/ebs/v2/devices/{id}"), &other_t).await;
    assert_eq!(s, 404);
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{id}"), &json!({}), &other_t).await;
    assert_eq!(s, 404);

    // Status notifications go to the company's administrators.
    let _ = heartbeat(&app, &secret, json!({})).await;
    let (s, _) = app.delete_json(&format!("/api/ebs/v2/devices/{id}"), &json!({}), &admin_t).await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn location_is_validated() {
    let app = TestApp::spawn().await;
    let t = token_of(&app.signed_in("alice@example.com").await);
    let (id, _) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    let path = format!("/api/ebs/v2/devices/{id}/location");
    let (s, b) = app.put_json(&path, &json!({"lat": 22.5431, "lng": 114.0579}), &t).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["location"], json!({"lat": 22.5431, "lng": 114.0579}));
    for body in [json!({"lat": 91.0, "lng": 0.0}), json!({"lat": 0.0, "lng": 181.0}), json!({"lat": 1.0})] {
        let (s, _) = app.put_json(&path, &body, &t).await;
        assert_eq!(s, 400, "{body}");
    }
    let (s, b) = app.put_json(&path, &json!({"lat": null, "lng": null}), &t).await;
    assert_eq!(s, 200);
    assert_eq!(b["data"]["location"], Value::Null);
}

#[tokio::test]
async fn nearby_lists_shared_devices_coarsely() {
    let app = TestApp::spawn().await;
    let t = token_of(&app.signed_in("alice@example.com").await);
    let share = |id: String| {
        let app = &app;
        let t = t.clone();
        async move {
            let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{id}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": 300}), &t).await;
            assert_eq!(s, 200, "{b}");
        }
    };
    let (near, _) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    let (far, _) = bound_device(&app, &t, "P-BOX", spec(4)).await;
    let (private, _) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    let (unplaced, _) = bound_device(&app, &t, "Z-BOX", spec(4)).await;
    for (id, lat, lng) in [(&near, 22.54317, 114.05791), (&far, 39.9042, 116.4074), (&private, 22.5, 114.0)] {
        let (s, _) = app.put_json(&format!("/api/ebs/v2/devices/{id}/location"), &json!({"lat": lat, "lng": lng}), &t).await;
        assert_eq!(s, 200);
    }
    share(near.clone()).await;
    share(far.clone()).await;
    share(unplaced.clone()).await;

    let (s, b) = app.get_json("/api/ebs/v2/nearby?lat=22.54&lng=114.06").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["total"], 2, "only shared, rentable, placed devices: {b}");
    let items = b["data"]["items"].as_array().unwrap();
    assert_eq!(items[0]["id"], near.as_str());
    assert_eq!(items[0]["lat"], 22.54);
    assert_eq!(items[0]["lng"], 114.06);
    assert_eq!(items[0]["distance_km"], 0);
    assert_eq!(items[0]["price_per_hour"], 300);
    assert_eq!(items[0]["type"], "Z-BOX");
    assert_eq!(items[0]["gpus"], json!([]));
    assert_eq!(items[1]["id"], far.as_str());
    let far_km = items[1]["distance_km"].as_i64().unwrap();
    assert!((1935..=1950).contains(&far_km), "{far_km}");

    // The radius filters; pages work; the defaults are the configured centre.
    let (_, b) = app.get_json("/api/ebs/v2/nearby?lat=22.54&lng=114.06&radius_km=100").await;
    assert_eq!(b["data"]["total"], 1);
    let (_, b) = app.get_json("/api/ebs/v2/nearby?lat=22.54&lng=114.06&offset=1&limit=1").await;
    assert_eq!(b["data"]["items"][0]["id"], far.as_str());
    let (_, b) = app.get_json("/api/ebs/v2/nearby").await;
    assert_eq!(b["data"]["items"][0]["id"], near.as_str());
    for bad in ["lat=91&lng=0", "lat=1", "radius_km=-1", "limit=101", "lat=abc&lng=1"] {
        let (s, _) = app.get_json(&format!("/api/ebs/v2/nearby?{bad}")).await;
        assert_eq!(s, 400, "{bad}");
    }

    // One device, with its apps (none yet).
    let (s, b) = app.get_json(&format!("/api/ebs/v2/nearby/{near}?lat=22.54&lng=114.06")).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["data"]["apps"], json!([]));
    assert_eq!(b["data"]["lat"], 22.54);
    let (s, _) = app.get_json(&format!("/api/ebs/v2/nearby/{private}")).await;
    assert_eq!(s, 404);

    // The public nearby page is rendered with the data.
    let html = app.get("/nearby").await.text().await.unwrap();
    assert!(html.contains(&near), "nearby page carries the device");
    let html = app.get(&format!("/nearby/details?id={near}")).await.text().await.unwrap();
    assert!(html.contains("\"nearbyDetails\""), "details page carries its data");

    // Withdrawn from sharing: gone from nearby and from the rendered page.
    let (s, _) = app.put_json(&format!("/api/ebs/v2/devices/{near}/sharing"), &json!({"mode": "dedicated", "rentable": false}), &t).await;
    assert_eq!(s, 200);
    let (_, b) = app.get_json("/api/ebs/v2/nearby").await;
    assert_eq!(b["data"]["total"], 1);
    let html = app.get("/nearby").await.text().await.unwrap();
    assert!(!html.contains(&near));
}
