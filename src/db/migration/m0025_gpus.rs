//! GPUs as they are (issue 38, docs/gpus.md): which GPU (by its key: the UUID) each installation
//! or Z-CLOUD machine holds (`gpu_holds`, one holder per GPU by its primary key), the boxes'
//! recent figures (`device_samples`: the last hour at beat resolution, a day at one point a
//! minute, pruned by a job), a box's last verification and latest GPU figures, and an app's
//! lowest CUDA version.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("gpu_holds")
                .if_not_exists()
                .col(string("device_id"))
                // The GPU's UUID (an older agent's GPUs: their index).
                .col(string("gpu_key"))
                // installation | machine
                .col(string("holder_kind"))
                .col(string("holder_id"))
                .col(timestamp_with_time_zone("created_at"))
                .primary_key(Index::create().col("device_id").col("gpu_key"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_gpu_holds_holder").table("gpu_holds").col("holder_id").to_owned()).await?;
        m.create_table(
            Table::create()
                .table("device_samples")
                .if_not_exists()
                .col(string("device_id"))
                // 0: every beat (kept an hour); 1: the first beat of each minute (kept a day).
                .col(small_integer("tier"))
                .col(timestamp_with_time_zone("at"))
                .col(double_null("cpu_percent"))
                .col(big_integer_null("memory_used"))
                // JSON list of protocol::gpus::GpuUse.
                .col(text("gpus"))
                .primary_key(Index::create().col("device_id").col("tier").col("at"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_device_samples_at").table("device_samples").col("at").to_owned()).await?;
        // JSON {at, gpus: [GpuCheck]} of the last verification.
        m.alter_table(Table::alter().table("devices").add_column(text_null("verification")).to_owned()).await?;
        // JSON list of GpuUse, the latest beat's.
        m.alter_table(Table::alter().table("devices").add_column(text_null("gpu_use")).to_owned()).await?;
        m.alter_table(Table::alter().table("apps").add_column(string_null("cuda")).to_owned()).await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("apps").drop_column("cuda").to_owned()).await?;
        m.alter_table(Table::alter().table("devices").drop_column("gpu_use").to_owned()).await?;
        m.alter_table(Table::alter().table("devices").drop_column("verification").to_owned()).await?;
        m.drop_table(Table::drop().table("device_samples").to_owned()).await?;
        m.drop_table(Table::drop().table("gpu_holds").to_owned()).await?;
        Ok(())
    }
}
