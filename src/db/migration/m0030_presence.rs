//! Offers a renter can choose from (issue 39, docs/market.md §Offers): each box keeps the hours of
//! the last 30 days it was heard from, a ring of 720 bits (one per hour) with the last hour it
//! marked, so its uptime is read with the box's own row.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // 90 bytes: bit (hour % 720) set when a beat arrived in that hour.
        m.alter_table(Table::alter().table("devices").add_column(binary_null("presence")).to_owned()).await?;
        // Hours since the Unix epoch of the last hour marked in `presence`.
        m.alter_table(Table::alter().table("devices").add_column(big_integer_null("presence_hour")).to_owned()).await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("devices").drop_column("presence_hour").to_owned()).await?;
        m.alter_table(Table::alter().table("devices").drop_column("presence").to_owned()).await?;
        Ok(())
    }
}
