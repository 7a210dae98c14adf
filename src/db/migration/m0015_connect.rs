//! Issue 22 (connect): which instance holds each device's agent channel, the one-time tokens that
//! open an installation's web interface on its own origin, and (PostgreSQL) a NOTIFY when a
//! command is queued, so the instance holding the device's channel sends it at once.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The PostgreSQL channel a queued command is announced on (payload: the device id).
pub const COMMANDS_CHANNEL: &str = "zmarket_commands";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("devices").add_column(string_null("channel_instance")).to_owned()).await?;
        m.create_table(
            Table::create()
                .table("connect_tokens")
                .if_not_exists()
                .col(string("token_hash").primary_key())
                .col(string("installation_id"))
                .col(string("user_id"))
                .col(string("session_id"))
                .col(string("sme_id"))
                .col(timestamp_with_time_zone("expires_at"))
                .col(timestamp_with_time_zone_null("used_at"))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(ForeignKey::create().from("connect_tokens", "user_id").to("users", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_connect_tokens_expires").table("connect_tokens").col("expires_at").to_owned()).await?;
        if m.get_database_backend() == DbBackend::Postgres {
            let db = m.get_connection();
            db.execute_unprepared(&format!(
                "CREATE FUNCTION zm_command_queued() RETURNS trigger LANGUAGE plpgsql AS $$ \
                 BEGIN PERFORM pg_notify('{COMMANDS_CHANNEL}', NEW.device_id); RETURN NULL; END $$"
            ))
            .await?;
            db.execute_unprepared(
                "CREATE TRIGGER zm_command_queued AFTER INSERT ON device_commands FOR EACH ROW EXECUTE FUNCTION zm_command_queued()",
            )
            .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        if m.get_database_backend() == DbBackend::Postgres {
            let db = m.get_connection();
            db.execute_unprepared("DROP TRIGGER IF EXISTS zm_command_queued ON device_commands").await?;
            db.execute_unprepared("DROP FUNCTION IF EXISTS zm_command_queued()").await?;
        }
        m.drop_table(Table::drop().table("connect_tokens").to_owned()).await?;
        m.alter_table(Table::alter().table("devices").drop_column("channel_instance").to_owned()).await
    }
}
