//! Publishing apps from the operator's console (issue 25 item 3): an app's install manifest may
//! live in the database (`apps.manifest`, JSON of `protocol::apps::Manifest`; it wins over the
//! built-in and `[apps] manifests` ones, docs/apps.md), and an uploaded icon is kept in
//! `app_icons` (served by the market at `/api/ebs/v1/market/icons/{id}`), so every instance on
//! one database serves the same catalogue without a shared data directory.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("apps").add_column(text_null("manifest")).to_owned()).await?;
        m.create_table(
            Table::create()
                .table("app_icons")
                .if_not_exists()
                .col(string("app_id").primary_key())
                // image/png, image/jpeg or image/webp (by content).
                .col(string("content_type"))
                .col(blob("data"))
                // The first 16 hex digits of the SHA-256 of `data`: the URL's `?v=`.
                .col(string("version"))
                .col(timestamp_with_time_zone("updated_at"))
                .to_owned(),
        )
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("app_icons").to_owned()).await?;
        m.alter_table(Table::alter().table("apps").drop_column("manifest").to_owned()).await?;
        Ok(())
    }
}
