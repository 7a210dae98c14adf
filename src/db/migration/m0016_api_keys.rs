//! Personal API keys (issue 22): one row per key, stored as the SHA-256 of the key (never the key),
//! with the context it was created in (a company id, or null for the personal context).
//!
//! A key resolved once is cached by every instance under the shared `sessions` version (m0014),
//! so what could end a key moves that version in the writer's transaction, by triggers as m0014
//! does for sessions: a key revoked, its expiry or owner changed, or the row deleted (by its
//! owner's account deletion or a company's, through the foreign keys). Setting `last_used_at` moves
//! nothing. A removed membership already moves it (m0014).

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (trigger suffix, event).
const TRIGGERS: &[(&str, &str)] = &[
    ("api_keys_upd", "UPDATE OF revoked_at, expires_at, user_id, company_id, key_hash"),
    ("api_keys_del", "DELETE"),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("api_keys")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("user_id"))
                // The context the key acts in: a company id, or null (personal).
                .col(string_null("company_id"))
                .col(string("name"))
                // The first characters of the key (`zk_ab12cd`), shown in lists.
                .col(string("prefix"))
                .col(string_uniq("key_hash"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone_null("last_used_at"))
                .col(timestamp_with_time_zone_null("expires_at"))
                .col(timestamp_with_time_zone_null("revoked_at"))
                .foreign_key(ForeignKey::create().from("api_keys", "user_id").to("users", "id").on_delete(ForeignKeyAction::Cascade))
                .foreign_key(ForeignKey::create().from("api_keys", "company_id").to("companies", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_api_keys_user").table("api_keys").col("user_id").to_owned()).await?;
        m.create_index(Index::create().name("idx_api_keys_company").table("api_keys").col("company_id").to_owned()).await?;
        let db = m.get_connection();
        let pg = m.get_database_backend() == DbBackend::Postgres;
        for (suffix, event) in TRIGGERS {
            // zm_bump_version (PostgreSQL) is m0014's: it takes the version rows in name order.
            let sql = if pg {
                format!(
                    "CREATE CONSTRAINT TRIGGER zm_v_{suffix} AFTER {event} ON api_keys DEFERRABLE INITIALLY DEFERRED \
                     FOR EACH ROW EXECUTE FUNCTION zm_bump_version('sessions')"
                )
            } else {
                format!(
                    "CREATE TRIGGER zm_v_{suffix} AFTER {event} ON api_keys FOR EACH ROW \
                     BEGIN UPDATE data_versions SET version = version + 1 WHERE name = 'sessions'; END"
                )
            };
            db.execute_unprepared(&sql).await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let db = m.get_connection();
        let pg = m.get_database_backend() == DbBackend::Postgres;
        for (suffix, _) in TRIGGERS {
            let sql = if pg { format!("DROP TRIGGER IF EXISTS zm_v_{suffix} ON api_keys") } else { format!("DROP TRIGGER IF EXISTS zm_v_{suffix}") };
            db.execute_unprepared(&sql).await?;
        }
        m.drop_table(Table::drop().table("api_keys").to_owned()).await
    }
}
