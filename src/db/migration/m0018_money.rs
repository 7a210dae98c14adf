//! Money that adds up (issue 24): the fee meter of every rental and order (the total captured and
//! the fee credited so far, so each capture's fee is the difference of two floors and nothing
//! leaks by rounding), and top-up codes (stored as the SHA-256 of the code, one use, an expiry).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("ledger_fee_meters")
                .if_not_exists()
                // `<ref_type>:<ref_id>`, e.g. `rental:<id>`.
                .col(string("id").primary_key())
                .col(string("ref_type"))
                .col(string("ref_id"))
                .col(integer("fee_percent"))
                .col(big_integer("captured").default(0))
                .col(big_integer("fee").default(0))
                .col(timestamp_with_time_zone("updated_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("topup_codes")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string_uniq("code_hash"))
                .col(big_integer("amount"))
                .col(timestamp_with_time_zone_null("expires_at"))
                .col(timestamp_with_time_zone("created_at"))
                // The wallet (`user:<id>` or `company:<id>`) it went to, once redeemed.
                .col(string_null("redeemed_by"))
                .col(timestamp_with_time_zone_null("redeemed_at"))
                .to_owned(),
        )
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("topup_codes").to_owned()).await?;
        m.drop_table(Table::drop().table("ledger_fee_meters").to_owned()).await
    }
}
