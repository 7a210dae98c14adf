use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("users")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string_uniq("email"))
                .col(string("name"))
                .col(string("password_hash"))
                .col(timestamp_with_time_zone_null("email_verified_at"))
                .col(blob_null("avatar"))
                .col(string_null("avatar_type"))
                .col(integer("avatar_version").default(0))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone("updated_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("email_verifications")
                .if_not_exists()
                .col(string("token_hash").primary_key())
                .col(string("user_id"))
                .col(timestamp_with_time_zone("expires_at"))
                .col(timestamp_with_time_zone_null("used_at"))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(ForeignKey::create().from("email_verifications", "user_id").to("users", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        // A sign-in session: one refresh-token family with its absolute expiry.
        m.create_table(
            Table::create()
                .table("sessions")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("user_id"))
                .col(string("sme_id"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone("expires_at"))
                .col(timestamp_with_time_zone_null("revoked_at"))
                .col(string_null("revoke_reason"))
                .foreign_key(ForeignKey::create().from("sessions", "user_id").to("users", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_sessions_user").table("sessions").col("user_id").to_owned()).await?;
        m.create_table(
            Table::create()
                .table("refresh_tokens")
                .if_not_exists()
                .col(string("token_hash").primary_key())
                .col(string("session_id"))
                .col(timestamp_with_time_zone("created_at"))
                // set when the token was exchanged for a new one
                .col(timestamp_with_time_zone_null("used_at"))
                .foreign_key(ForeignKey::create().from("refresh_tokens", "session_id").to("sessions", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_refresh_session").table("refresh_tokens").col("session_id").to_owned()).await?;
        m.create_table(
            Table::create()
                .table("companies")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("name"))
                .col(string("network_id"))
                .col(string("owner_id"))
                .col(timestamp_with_time_zone("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("company_members")
                .if_not_exists()
                .col(string("company_id"))
                .col(string("user_id"))
                // admin | member
                .col(string("role"))
                .col(timestamp_with_time_zone("joined_at"))
                .primary_key(Index::create().col("company_id").col("user_id"))
                .foreign_key(ForeignKey::create().from("company_members", "company_id").to("companies", "id").on_delete(ForeignKeyAction::Cascade))
                .foreign_key(ForeignKey::create().from("company_members", "user_id").to("users", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_members_user").table("company_members").col("user_id").to_owned()).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in ["company_members", "companies", "refresh_tokens", "sessions", "email_verifications", "users"] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
