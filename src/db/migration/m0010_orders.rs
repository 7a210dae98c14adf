//! Demands and orders: one row per demand (an order while `order_pending`), with its terms, the
//! wallet hold, the provider's device while taken, the meter, and its history.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("orders")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("name"))
                .col(string("app_id"))
                .col(big_integer("gpu_count"))
                // normalized comma-separated list ("A100, 4090"), "" = any
                .col(string("gpu_models"))
                .col(big_integer_null("distance_km"))
                // where the demander measures the distance from (null: no limit given)
                .col(double_null("lat"))
                .col(double_null("lng"))
                .col(big_integer("hours"))
                .col(big_integer("price_per_hour"))
                // orders::machine
                .col(string("status"))
                // a reason code (orders::model::Reason), shown in the reader's language
                .col(string_null("status_reason"))
                .col(string("demander_id"))
                .col(string_null("provider_id"))
                .col(string_null("device_id"))
                // the device while the order holds it, null otherwise: one order per device
                .col(string_null("reserved_device_id").unique_key())
                .col(string_null("installation_id"))
                // the installation was removed (or its removal started) once the order ended
                .col(boolean("installation_released").default(false))
                .col(string("hold_id"))
                .col(integer("fee_percent"))
                // minutes charged since confirmation, their coins
                .col(big_integer("billed_minutes").default(0))
                .col(big_integer("billed").default(0))
                .col(timestamp_with_time_zone("expires_at"))
                .col(timestamp_with_time_zone_null("confirmed_at"))
                .col(timestamp_with_time_zone_null("ends_at"))
                .col(timestamp_with_time_zone("state_since"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone("updated_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_orders_status").table("orders").col("status").col("created_at").to_owned()).await?;
        m.create_index(Index::create().name("idx_orders_demander").table("orders").col("demander_id").to_owned()).await?;
        m.create_index(Index::create().name("idx_orders_provider").table("orders").col("provider_id").to_owned()).await?;
        m.create_table(
            Table::create()
                .table("order_events")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("order_id"))
                .col(string("status"))
                .col(string_null("reason"))
                // who moved it (null: the server, e.g. a time-out)
                .col(string_null("actor_id"))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(ForeignKey::create().from("order_events", "order_id").to("orders", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_order_events_order").table("order_events").col("order_id").col("created_at").to_owned())
            .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in ["order_events", "orders"] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
