//! Password reset links (issue 17): one row per mailed link, stored hashed, single use, expiring.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("password_resets")
                .if_not_exists()
                .col(string("token_hash").primary_key())
                .col(string("user_id"))
                .col(timestamp_with_time_zone("expires_at"))
                .col(timestamp_with_time_zone_null("used_at"))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(ForeignKey::create().from("password_resets", "user_id").to("users", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_password_resets_user").table("password_resets").col("user_id").to_owned()).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("password_resets").to_owned()).await
    }
}
