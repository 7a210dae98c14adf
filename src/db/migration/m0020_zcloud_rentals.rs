//! Z-CLOUD machines on another owner's server (issue 29, finding 2) are rentals: one row per such
//! machine with its price (the host's offer scaled by the share taken), the hold on the renter's
//! wallet, the meter, and the end the host's owner may give it (notice, then stop). The row stays
//! after the machine is gone (`ended`), so the wallet's titles can still name it.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("zcloud_rentals")
                .if_not_exists()
                // The machine's device id (one rental per machine; no foreign key: the row outlives it).
                .col(string("id").primary_key())
                .col(string("name"))
                .col(string("host_id"))
                // `user:<id>` / `company:<id>`: who pays, and who is paid (the host's owner).
                .col(string("renter"))
                .col(string("provider"))
                .col(string("created_by"))
                .col(big_integer("price_per_hour"))
                .col(big_integer("hours"))
                .col(integer("fee_percent"))
                .col(string_null("hold_id"))
                .col(string_len("status", 16))
                .col(timestamp_with_time_zone("started_at"))
                .col(timestamp_with_time_zone("ends_at"))
                .col(timestamp_with_time_zone("metered_until"))
                .col(big_integer("minutes").default(0))
                .col(big_integer("billed").default(0))
                .col(timestamp_with_time_zone_null("stop_at"))
                .col(string_len_null("end_reason", 16))
                .col(timestamp_with_time_zone_null("ended_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_zcloud_rentals_host").table("zcloud_rentals").col("host_id").col("status").to_owned()).await?;
        m.create_index(Index::create().name("idx_zcloud_rentals_status").table("zcloud_rentals").col("status").to_owned()).await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("zcloud_rentals").to_owned()).await
    }
}
