//! The operator's console (issue 25): who runs the market (`users.operator`, set by
//! `zmarket operator grant`), suspended accounts (`users.suspended_at` and the reason shown at
//! sign-in), and the audit of every operator write (`ops_audit`, newest first by `at`).
//!
//! Suspending or unsuspending someone, and granting or revoking the operator flag, moves the shared
//! `sessions` version (as m0014's triggers do), so no instance answers a suspended person's token
//! from its cache of resolved sessions.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("users").add_column(boolean("operator").default(false)).to_owned()).await?;
        m.alter_table(Table::alter().table("users").add_column(timestamp_with_time_zone_null("suspended_at")).to_owned()).await?;
        m.alter_table(Table::alter().table("users").add_column(string_null("suspended_reason")).to_owned()).await?;
        m.create_table(
            Table::create()
                .table("ops_audit")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(timestamp_with_time_zone("at"))
                // The operator's user id (kept as written: the account may be deleted later).
                .col(string("operator_id"))
                .col(string("operator_email"))
                .col(string("action"))
                .col(string("target"))
                // JSON: `{before, after, …}`.
                .col(text("detail"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("ops_audit_at").table("ops_audit").col("at").to_owned()).await?;
        m.create_index(Index::create().name("ops_audit_action_at").table("ops_audit").col("action").col("at").to_owned()).await?;
        let db = m.get_connection();
        let sql = if m.get_database_backend() == DbBackend::Postgres {
            "CREATE CONSTRAINT TRIGGER zm_v_users_suspended AFTER UPDATE OF suspended_at, operator ON users DEFERRABLE INITIALLY DEFERRED \
             FOR EACH ROW EXECUTE FUNCTION zm_bump_version('sessions')"
        } else {
            "CREATE TRIGGER zm_v_users_suspended AFTER UPDATE OF suspended_at, operator ON users FOR EACH ROW \
             BEGIN UPDATE data_versions SET version = version + 1 WHERE name = 'sessions'; END"
        };
        db.execute_unprepared(sql).await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let db = m.get_connection();
        let sql = if m.get_database_backend() == DbBackend::Postgres { "DROP TRIGGER IF EXISTS zm_v_users_suspended ON users" } else { "DROP TRIGGER IF EXISTS zm_v_users_suspended" };
        db.execute_unprepared(sql).await?;
        m.drop_table(Table::drop().table("ops_audit").to_owned()).await?;
        for c in ["suspended_reason", "suspended_at", "operator"] {
            m.alter_table(Table::alter().table("users").drop_column(c).to_owned()).await?;
        }
        Ok(())
    }
}
