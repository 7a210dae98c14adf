//! The market catalogue: one row per app, seeded from `assets/catalogue/apps.json` (see
//! docs/market.md for the update rule), and the state of the last applied catalogue.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("apps")
                .if_not_exists()
                // the catalogue slug for seeded apps
                .col(string("id").primary_key())
                // listing order (the catalogue's order; later additions after it)
                .col(integer("position"))
                .col(string("name_en"))
                .col(string("name_zh"))
                .col(text("summary_en"))
                .col(text("summary_zh"))
                .col(text("description_en"))
                .col(text("description_zh"))
                // a path under assets/ or an absolute URL
                .col(string("icon"))
                .col(string("category"))
                .col(string("display_type"))
                .col(string("tier"))
                // own | rent
                .col(string("kind"))
                // cents of the coin per hour
                .col(big_integer("price_per_hour"))
                .col(string("publisher"))
                .col(string("version"))
                .col(boolean("top_pick"))
                .col(integer("cpu_cores"))
                .col(big_integer("memory_bytes"))
                .col(big_integer("disk_bytes"))
                .col(integer("gpu_count"))
                // false hides the app from the market without deleting it
                .col(boolean("listed").default(true))
                // seed | local
                .col(string("origin"))
                // the app version and the field values the catalogue last wrote (JSON), for the
                // three-way update of docs/market.md; null for apps that did not come from it
                .col(string_null("seed_version"))
                .col(text_null("seed_fields"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone("updated_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("market_catalogue")
                .if_not_exists()
                .col(integer("id").primary_key())
                // sha-256 of the catalogue file last applied ("" before the first start)
                .col(string("hash"))
                .col(integer("format_version"))
                .col(timestamp_with_time_zone_null("applied_at"))
                .to_owned(),
        )
        .await?;
        let insert = Query::insert()
            .into_table("market_catalogue")
            .columns(["id", "hash", "format_version"])
            .values_panic([1.into(), "".into(), 0.into()])
            .to_owned();
        m.exec_stmt(insert).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("market_catalogue").to_owned()).await?;
        m.drop_table(Table::drop().table("apps").to_owned()).await
    }
}
