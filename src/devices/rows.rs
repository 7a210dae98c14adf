//! A new device row, written once: a box registering itself (`agent_api::register`) and a Z-CLOUD
//! machine created on a host (`zcloud::create`) start from the same columns and set what differs.

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr, EntityTrait, Set};

use crate::db::entity::devices;
use crate::db::enums::{DeviceStatus, DeviceType, SharingMode};
use crate::ids::DeviceId;

/// A device id no device has yet (a new random one until it is free; ids are 12 characters of a
/// 31-letter alphabet, so the first is almost always free).
pub async fn free_id(conn: &impl ConnectionTrait) -> Result<DeviceId, DbErr> {
    loop {
        let id = DeviceId::new_random();
        if devices::Entity::find_by_id(id.clone()).one(conn).await?.is_none() {
            return Ok(id);
        }
    }
}

/// Every column of a new device at its starting value: unbound, shared by hand, not offered, no
/// figures reported yet, created and updated at `t`.
pub fn new_device(id: DeviceId, name: String, device_type: DeviceType, status: DeviceStatus, t: DateTime<Utc>) -> devices::ActiveModel {
    devices::ActiveModel {
        id: Set(id),
        name: Set(name),
        device_type: Set(device_type),
        status: Set(status),
        status_reason: Set(None),
        secret_hash: Set(None),
        pairing_hash: Set(None),
        owner_user_id: Set(None),
        owner_company_id: Set(None),
        bound_by: Set(None),
        bound_at: Set(None),
        sharing_mode: Set(SharingMode::Manual),
        rentable: Set(false),
        price_per_hour: Set(0),
        cpu_cores: Set(0),
        memory_bytes: Set(0),
        disk_bytes: Set(0),
        gpus: Set("[]".into()),
        gpu_runtime: Set(None),
        cpu_percent: Set(None),
        memory_used_bytes: Set(None),
        disk_used_bytes: Set(None),
        lat: Set(None),
        lng: Set(None),
        host_id: Set(None),
        gpu_count: Set(0),
        gpu_model: Set(String::new()),
        passthrough: Set(false),
        last_seen_at: Set(None),
        channel_instance: Set(None),
        created_at: Set(t),
        updated_at: Set(t),
        verification: Set(None),
        gpu_use: Set(None),
        presence: Set(None),
        presence_hour: Set(None),
    }
}
