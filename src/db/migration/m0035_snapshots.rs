//! Snapshots (issue 40, docs/data.md): an installation's data as one archive, kept on the box that
//! made it and, on request, in the market's store; the daily backups of an installation.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("snapshots")
                .if_not_exists()
                .col(string("id").primary_key())
                // The installation it was taken of (the row stays when the app is removed).
                .col(string("installation_id"))
                .col(string("app_id"))
                .col(string("version"))
                // How the app ran (its manifest, JSON): a restore runs it the same way.
                .col(text("manifest"))
                .col(string("device_id"))
                .col(string_null("owner_user_id"))
                .col(string_null("owner_company_id"))
                .col(string("created_by"))
                .col(string("kind"))
                .col(string("status"))
                .col(integer_null("progress"))
                .col(big_integer("size").default(0))
                .col(string_null("sha256"))
                // Why it failed (a reason's JSON, as installations keep theirs).
                .col(text_null("reason"))
                .col(boolean("on_box").default(true))
                .col(boolean("on_market").default(false))
                // A copy to the market under way (the command's id), and why the last one failed.
                .col(string_null("upload_command_id"))
                .col(text_null("upload_reason"))
                // The installation a restore from it is making (restoring while that one installs).
                .col(string_null("restoring_id"))
                .col(timestamp_with_time_zone_null("expires_at"))
                // A browser's download link (SHA-256 of its ticket) and until when it works.
                .col(string_null("download_ticket"))
                .col(timestamp_with_time_zone_null("download_ticket_expires_at"))
                .col(boolean("expiry_noticed").default(false))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone("updated_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_snapshots_installation").table("snapshots").col("installation_id").to_owned()).await?;
        m.create_index(Index::create().name("idx_snapshots_owner_user").table("snapshots").col("owner_user_id").to_owned()).await?;
        m.create_index(Index::create().name("idx_snapshots_owner_company").table("snapshots").col("owner_company_id").to_owned()).await?;
        m.create_index(Index::create().name("idx_snapshots_device").table("snapshots").col("device_id").to_owned()).await?;
        m.create_table(
            Table::create()
                .table("snapshot_schedules")
                .if_not_exists()
                .col(string("installation_id").primary_key())
                .col(boolean("enabled"))
                .col(integer("keep"))
                .col(timestamp_with_time_zone("updated_at"))
                .to_owned(),
        )
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in ["snapshot_schedules", "snapshots"] {
            m.drop_table(Table::drop().table(t).if_exists().to_owned()).await?;
        }
        Ok(())
    }
}
