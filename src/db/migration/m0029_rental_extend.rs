//! Extending a running rental (issue 39, docs/apps.md "Extending a rental"): a pending hold may
//! grow, each growth kept once per key; a hold knows when the work it pays for is due to end (the
//! runway notice speaks only of a wallet that runs out before then); a rental remembers which end
//! its ending notice was about (sent once per end).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("ledger_hold_growths")
                .if_not_exists()
                // the idempotency key: a retried extend grows the hold once
                .col(string("key").primary_key())
                .col(string("fingerprint"))
                .col(string("hold_id"))
                .col(big_integer("amount"))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(ForeignKey::create().from("ledger_hold_growths", "hold_id").to("ledger_holds", "id"))
                .to_owned(),
        )
        .await?;
        // Null: not known (an order's hold), the runway notice counts it as before.
        m.alter_table(Table::alter().table("ledger_holds").add_column(timestamp_with_time_zone_null("ends_at")).to_owned()).await?;
        // The end (`rent_ends_at`) whose ending notice went out.
        m.alter_table(Table::alter().table("installations").add_column(timestamp_with_time_zone_null("rent_end_noticed")).to_owned()).await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("installations").drop_column("rent_end_noticed").to_owned()).await?;
        m.alter_table(Table::alter().table("ledger_holds").drop_column("ends_at").to_owned()).await?;
        m.drop_table(Table::drop().table("ledger_hold_growths").to_owned()).await?;
        Ok(())
    }
}
