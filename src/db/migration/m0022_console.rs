//! The operator's console, round two (issue 25): the market's settings kept in the database
//! (`market_settings`, one row per setting the operator changed; config.toml gives the defaults
//! of the rest) and top-up codes the operator can list (`topup_codes.hint`, the code's last four
//! characters, so a printed code can be found; `batch`, the codes issued together; `created_by`).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("market_settings")
                .if_not_exists()
                .col(string("name").primary_key())
                // JSON of the value.
                .col(text("value"))
                .col(timestamp_with_time_zone("updated_at"))
                .to_owned(),
        )
        .await?;
        for c in ["hint", "batch", "created_by"] {
            m.alter_table(Table::alter().table("topup_codes").add_column(string_null(c)).to_owned()).await?;
        }
        m.create_index(Index::create().name("topup_codes_created").table("topup_codes").col("created_at").to_owned()).await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(Index::drop().name("topup_codes_created").table("topup_codes").to_owned()).await?;
        for c in ["created_by", "batch", "hint"] {
            m.alter_table(Table::alter().table("topup_codes").drop_column(c).to_owned()).await?;
        }
        m.drop_table(Table::drop().table("market_settings").to_owned()).await?;
        Ok(())
    }
}
