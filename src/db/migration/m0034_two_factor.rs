//! Two-factor sign-in (issue 43, item 12): a person's TOTP secret (`two_factor`, one row per
//! person; `enabled_at` null while the enrolment waits for its first code), their recovery codes
//! (SHA-256 of each, good once), the sign-in challenges between the password and the code (SHA-256
//! of the challenge, good once for a few minutes), and the browsers that skip the second step for
//! 30 days (SHA-256 of the cookie's token). Every row goes with its person (foreign key, cascade).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

fn owned_by_user(table: &'static str) -> ForeignKeyCreateStatement {
    ForeignKey::create().from(table, "user_id").to("users", "id").on_delete(ForeignKeyAction::Cascade).to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("two_factor")
                .if_not_exists()
                .col(string("user_id").primary_key())
                // The shared secret, base32 (RFC 4648, no padding), as the authenticator app holds it.
                .col(string("secret"))
                .col(timestamp_with_time_zone("created_at"))
                // Null: enrolment started, not confirmed with a code yet (2FA is off).
                .col(timestamp_with_time_zone_null("enabled_at"))
                // The last TOTP step accepted (a code is good once); -1 before any.
                .col(big_integer("last_step").default(-1))
                .foreign_key(&mut owned_by_user("two_factor"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("two_factor_recovery_codes")
                .if_not_exists()
                .col(string("code_hash").primary_key())
                .col(string("user_id"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone_null("used_at"))
                .foreign_key(&mut owned_by_user("two_factor_recovery_codes"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_2fa_recovery_user").table("two_factor_recovery_codes").col("user_id").to_owned()).await?;
        m.create_table(
            Table::create()
                .table("two_factor_challenges")
                .if_not_exists()
                .col(string("token_hash").primary_key())
                .col(string("user_id"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone("expires_at"))
                .col(timestamp_with_time_zone_null("used_at"))
                .foreign_key(&mut owned_by_user("two_factor_challenges"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_2fa_challenges_user").table("two_factor_challenges").col("user_id").to_owned()).await?;
        m.create_table(
            Table::create()
                .table("remembered_browsers")
                .if_not_exists()
                .col(string("token_hash").primary_key())
                .col(string("user_id"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone("expires_at"))
                .foreign_key(&mut owned_by_user("remembered_browsers"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_remembered_browsers_user").table("remembered_browsers").col("user_id").to_owned()).await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in ["remembered_browsers", "two_factor_challenges", "two_factor_recovery_codes", "two_factor"] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
