use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("mail_outbox")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("to_addr"))
                .col(string("subject"))
                .col(text("body_text"))
                .col(string_null("link"))
                // pending | sending | sent | failed
                .col(string("status"))
                .col(integer("attempts").default(0))
                .col(text_null("last_error"))
                .col(timestamp_with_time_zone("next_attempt_at"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone_null("sent_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_mail_outbox_due")
                .table("mail_outbox")
                .col("status")
                .col("next_attempt_at")
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("mail_outbox").to_owned()).await
    }
}
