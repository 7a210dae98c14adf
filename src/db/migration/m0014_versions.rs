//! Issue 18: two more shared versions beside `public`, moved by the database itself (triggers) in
//! the transaction of every write they cover, so no write site can forget them:
//! - `sessions`: a session revoked, expired early or deleted, an account deleted, a membership
//!   changed or removed (what resolving a token reads); instances cache resolved tokens under it.
//! - `stats`: anything the notification stats poll counts (notifications and their counters,
//!   company member records, memberships, friend requests and blocks, a changed email); instances cache
//!   each person's stats under it.
//!
//! PostgreSQL: the bump is a deferred constraint trigger, so it runs at commit, after every other
//! statement of the transaction: the version row is always the last lock a writer takes (no
//! deadlock with the row locks of check-then-write) and is held only while committing. Every bump
//! locks both rows in name order, so two writers that move both versions in different orders
//! wait for each other instead of deadlocking.
//! SQLite has one writer: plain AFTER triggers.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (trigger suffix, table, event, version).
const TRIGGERS: &[(&str, &str, &str, &str)] = &[
    ("sessions_upd", "sessions", "UPDATE OF revoked_at, expires_at, user_id", "sessions"),
    ("sessions_del", "sessions", "DELETE", "sessions"),
    ("users_del", "users", "DELETE", "sessions"),
    ("members_upd_s", "company_members", "UPDATE", "sessions"),
    ("members_del_s", "company_members", "DELETE", "sessions"),
    ("notifications_ins", "notifications", "INSERT", "stats"),
    ("notifications_upd", "notifications", "UPDATE", "stats"),
    ("notifications_del", "notifications", "DELETE", "stats"),
    ("counters_ins", "notification_counters", "INSERT", "stats"),
    ("counters_upd", "notification_counters", "UPDATE", "stats"),
    ("counters_del", "notification_counters", "DELETE", "stats"),
    ("records_ins", "member_records", "INSERT", "stats"),
    ("records_upd", "member_records", "UPDATE", "stats"),
    ("records_del", "member_records", "DELETE", "stats"),
    ("members_ins", "company_members", "INSERT", "stats"),
    ("members_upd", "company_members", "UPDATE", "stats"),
    ("members_del", "company_members", "DELETE", "stats"),
    ("friend_requests_ins", "friend_requests", "INSERT", "stats"),
    ("friend_requests_upd", "friend_requests", "UPDATE", "stats"),
    ("friend_requests_del", "friend_requests", "DELETE", "stats"),
    ("users_email", "users", "UPDATE OF email", "stats"),
    ("blocks_ins", "blocks", "INSERT", "stats"),
    ("blocks_del", "blocks", "DELETE", "stats"),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let db = m.get_connection();
        db.execute_unprepared("INSERT INTO data_versions (name, version) VALUES ('sessions', 1), ('stats', 1)").await?;
        let pg = m.get_database_backend() == DbBackend::Postgres;
        if pg {
            db.execute_unprepared(
                "CREATE FUNCTION zm_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$ \
                 BEGIN \
                   PERFORM 1 FROM data_versions WHERE name IN ('sessions', 'stats') ORDER BY name FOR UPDATE; \
                   UPDATE data_versions SET version = version + 1 WHERE name = TG_ARGV[0]; RETURN NULL; \
                 END $$",
            )
            .await?;
        }
        for (suffix, table, event, version) in TRIGGERS {
            let sql = if pg {
                format!(
                    "CREATE CONSTRAINT TRIGGER zm_v_{suffix} AFTER {event} ON {table} DEFERRABLE INITIALLY DEFERRED \
                     FOR EACH ROW EXECUTE FUNCTION zm_bump_version('{version}')"
                )
            } else {
                format!(
                    "CREATE TRIGGER zm_v_{suffix} AFTER {event} ON {table} FOR EACH ROW \
                     BEGIN UPDATE data_versions SET version = version + 1 WHERE name = '{version}'; END"
                )
            };
            db.execute_unprepared(&sql).await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let db = m.get_connection();
        let pg = m.get_database_backend() == DbBackend::Postgres;
        for (suffix, table, _, _) in TRIGGERS {
            let sql = if pg { format!("DROP TRIGGER IF EXISTS zm_v_{suffix} ON {table}") } else { format!("DROP TRIGGER IF EXISTS zm_v_{suffix}") };
            db.execute_unprepared(&sql).await?;
        }
        if pg {
            db.execute_unprepared("DROP FUNCTION IF EXISTS zm_bump_version()").await?;
        }
        db.execute_unprepared("DELETE FROM data_versions WHERE name IN ('sessions', 'stats')").await?;
        Ok(())
    }
}
