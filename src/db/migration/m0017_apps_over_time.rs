//! Apps over time (issue 23): the version an installation runs (the catalogue's at install or at
//! its last update) and the version of each history line; whether a box's Docker can hand GPUs
//! to containers (null: its agent did not say).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("installations").add_column(string("version").default("")).to_owned()).await?;
        m.alter_table(Table::alter().table("installation_events").add_column(string_null("version")).to_owned()).await?;
        m.alter_table(Table::alter().table("devices").add_column(boolean_null("gpu_runtime")).to_owned()).await?;
        // What was installed before versions were kept: the catalogue's version now.
        m.get_connection()
            .execute_unprepared("UPDATE installations SET version = COALESCE((SELECT apps.version FROM apps WHERE apps.id = installations.app_id), '')")
            .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("devices").drop_column("gpu_runtime").to_owned()).await?;
        m.alter_table(Table::alter().table("installation_events").drop_column("version").to_owned()).await?;
        m.alter_table(Table::alter().table("installations").drop_column("version").to_owned()).await
    }
}
