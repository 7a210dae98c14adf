//! Hardening (issue 16): a pending sign-up keeps its password with its own verification link (a
//! repeated sign-up never replaces an account's password); data versions shared by every
//! instance on one database (the server-render cache and the market index follow them); the
//! per-client limits every instance shares (`rate_limits`).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // SQLite alters one column per statement.
        m.alter_table(Table::alter().table("email_verifications").add_column(string_null("password_hash")).to_owned()).await?;
        m.alter_table(Table::alter().table("email_verifications").add_column(string_null("name")).to_owned()).await?;
        m.create_table(
            Table::create()
                .table("data_versions")
                .if_not_exists()
                .col(string("name").primary_key())
                .col(big_integer("version").default(1))
                .to_owned(),
        )
        .await?;
        // Per-client limits shared by the instances (crate::ratelimit): a key's theoretical
        // arrival time in milliseconds since the epoch.
        m.create_table(
            Table::create()
                .table("rate_limits")
                .if_not_exists()
                .col(string("key").primary_key())
                .col(big_integer("tat"))
                .to_owned(),
        )
        .await?;
        m.get_connection().execute_unprepared("INSERT INTO data_versions (name, version) VALUES ('public', 1), ('market', 1)").await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("rate_limits").to_owned()).await?;
        m.drop_table(Table::drop().table("data_versions").to_owned()).await?;
        m.alter_table(Table::alter().table("email_verifications").drop_column("name").to_owned()).await?;
        m.alter_table(Table::alter().table("email_verifications").drop_column("password_hash").to_owned()).await
    }
}
