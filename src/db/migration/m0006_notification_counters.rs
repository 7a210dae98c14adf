//! Per-person notification counters, kept current by the writes and rebuilt by a job, so the
//! console's 10-second stats poll reads one row (docs/notifications.md "Counters"). Filled from the existing rows.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("notification_counters")
                .if_not_exists()
                .col(string("user_id").primary_key())
                .col(big_integer("total").default(0))
                .col(big_integer("unread").default(0))
                .foreign_key(
                    ForeignKey::create().from("notification_counters", "user_id").to("users", "id").on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.get_connection()
            .execute_unprepared(
                "INSERT INTO notification_counters (user_id, total, unread) \
                 SELECT user_id, COUNT(*), SUM(CASE WHEN read THEN 0 ELSE 1 END) FROM notifications GROUP BY user_id",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("notification_counters").to_owned()).await
    }
}
