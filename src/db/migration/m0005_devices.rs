//! Devices (agent-registered boxes, server groups and Z-CLOUD machines), the commands sent to
//! their agents, and the notifications table (status changes are its first writer).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("devices")
                .if_not_exists()
                // the human-typed id printed by the agent (XXXX-XXXX-XXXX), see docs/devices.md
                .col(string("id").primary_key())
                .col(string("name"))
                // Z-BOX | P-BOX | Z-CLOUD | server group
                .col(string("device_type"))
                // online | offline | creating | failed
                .col(string("status"))
                .col(text_null("status_reason"))
                // SHA-256 of the agent's secret; null for Z-CLOUD machines (no agent of their own)
                .col(string_null("secret_hash").unique_key())
                // SHA-256 of the pairing code; null once bound
                .col(string_null("pairing_hash"))
                // exactly one of these is set once bound
                .col(string_null("owner_user_id"))
                .col(string_null("owner_company_id"))
                .col(string_null("bound_by"))
                .col(timestamp_with_time_zone_null("bound_at"))
                // manual | autopilot | dedicated
                .col(string("sharing_mode"))
                .col(boolean("rentable"))
                // coin cents per hour
                .col(big_integer("price_per_hour"))
                .col(big_integer("cpu_cores"))
                .col(big_integer("memory_bytes"))
                .col(big_integer("disk_bytes"))
                // JSON list of {name, passthrough, vram}
                .col(text("gpus"))
                .col(double_null("cpu_percent"))
                .col(big_integer_null("memory_used_bytes"))
                .col(big_integer_null("disk_used_bytes"))
                .col(double_null("lat"))
                .col(double_null("lng"))
                // Z-CLOUD: the server-group device it runs on, and what it holds there
                .col(string_null("host_id"))
                .col(big_integer("gpu_count").default(0))
                .col(string("gpu_model").default(""))
                .col(boolean("passthrough").default(false))
                .col(timestamp_with_time_zone_null("last_seen_at"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone("updated_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_devices_owner_user").table("devices").col("owner_user_id").to_owned()).await?;
        m.create_index(Index::create().name("idx_devices_owner_company").table("devices").col("owner_company_id").to_owned())
            .await?;
        m.create_index(Index::create().name("idx_devices_status_seen").table("devices").col("status").col("last_seen_at").to_owned())
            .await?;
        m.create_index(Index::create().name("idx_devices_host").table("devices").col("host_id").to_owned()).await?;
        m.create_table(
            Table::create()
                .table("device_commands")
                .if_not_exists()
                .col(string("id").primary_key())
                // the device whose agent carries the command out
                .col(string("device_id"))
                // what the command is about (e.g. the Z-CLOUD machine), when not the device itself
                .col(string_null("subject_id"))
                .col(string("kind"))
                .col(text("payload"))
                // pending | done | failed
                .col(string("status"))
                .col(text_null("error"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone_null("acked_at"))
                .foreign_key(
                    ForeignKey::create().from("device_commands", "device_id").to("devices", "id").on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create().name("idx_device_commands_pending").table("device_commands").col("device_id").col("status").to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("notifications")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("user_id"))
                // e.g. device_online, device_offline, zcloud_ready, zcloud_failed
                .col(string("kind"))
                // English text; `params` lets a reader render it in another language from `kind`
                .col(string("title"))
                .col(text("body"))
                .col(text("params"))
                .col(boolean("read").default(false))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(ForeignKey::create().from("notifications", "user_id").to("users", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create().name("idx_notifications_user").table("notifications").col("user_id").col("created_at").to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in ["notifications", "device_commands", "devices"] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
