//! Apps on devices: installations (desired and actual state, what they hold on their device, the
//! rental terms), their state history, and the image archives the market server holds for
//! agents (`zmarket images add`).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("installations")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("app_id"))
                .col(string("device_id"))
                // the context the installation belongs to: a person, or a company
                .col(string_null("owner_user_id"))
                .col(string_null("owner_company_id"))
                .col(string("created_by"))
                // own | rent
                .col(string("kind"))
                // a label of docs/product.md §4 (apps::lifecycle)
                .col(string("status"))
                // running | stopped | suspended | removed: what the person asked for
                .col(string("desired"))
                .col(integer_null("progress"))
                .col(text_null("status_reason"))
                .col(text_null("open_url"))
                // the command the agent has not acknowledged yet
                .col(string_null("command_id"))
                .col(timestamp_with_time_zone("state_since"))
                // "<device>/<app>" while installed, null once removed: one installation of an app per device
                .col(string_null("active_key").unique_key())
                // what it holds on its device (the app's requirements when installed)
                .col(big_integer("cpu_cores"))
                .col(big_integer("memory_bytes"))
                .col(big_integer("disk_bytes"))
                .col(big_integer("gpu_count"))
                // rentals: the terms, the wallet hold, what was billed and up to when
                .col(big_integer_null("rent_price_per_hour"))
                .col(big_integer_null("rent_hours"))
                .col(timestamp_with_time_zone_null("rent_started_at"))
                .col(timestamp_with_time_zone_null("rent_ends_at"))
                .col(string_null("hold_id"))
                // the provider's wallet ("user:<id>" / "company:<id>") and the market's fee, fixed when rented
                .col(string_null("rent_provider"))
                .col(integer_null("rent_fee_percent"))
                // minutes charged so far, their coins, and up to when the running time is charged
                .col(big_integer("rent_minutes").default(0))
                .col(big_integer("billed").default(0))
                .col(timestamp_with_time_zone_null("metered_until"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone("updated_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_installations_user").table("installations").col("owner_user_id").to_owned()).await?;
        m.create_index(Index::create().name("idx_installations_company").table("installations").col("owner_company_id").to_owned())
            .await?;
        m.create_index(Index::create().name("idx_installations_device").table("installations").col("device_id").to_owned()).await?;
        m.create_index(
            Index::create().name("idx_installations_status").table("installations").col("status").col("state_since").to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("installation_events")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("installation_id"))
                .col(string("status"))
                .col(text_null("reason"))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(
                    ForeignKey::create()
                        .from("installation_events", "installation_id")
                        .to("installations", "id")
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_installation_events_inst")
                .table("installation_events")
                .col("installation_id")
                .col("created_at")
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("app_images")
                .if_not_exists()
                // sha256 of the archive, hex
                .col(string("sha256").primary_key())
                // JSON list of the image references in the archive ("repo:tag")
                .col(text("tags"))
                .col(big_integer("size_bytes"))
                // file name inside <data_dir>/images
                .col(string("file"))
                .col(timestamp_with_time_zone("created_at"))
                .to_owned(),
        )
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in ["app_images", "installation_events", "installations"] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
