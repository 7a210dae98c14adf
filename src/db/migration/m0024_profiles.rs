//! The `profiles` data version (src/versions.rs): moved by every change to what a person's profile
//! shows (name, email, avatar) and by an account's deletion, in the writer's transaction like
//! m0014's versions, so each instance may answer `GET /account/profile` from memory until it moves
//! (issue 28 item 3: the profile read was the one poll still reading the database per request).

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (trigger suffix, event on `users`).
const TRIGGERS: &[(&str, &str)] = &[("users_profile_upd", "UPDATE OF name, email, avatar, avatar_version"), ("users_profile_del", "DELETE")];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let db = m.get_connection();
        db.execute_unprepared("INSERT INTO data_versions (name, version) VALUES ('profiles', 1)").await?;
        let pg = m.get_database_backend() == DbBackend::Postgres;
        for (suffix, event) in TRIGGERS {
            // On PostgreSQL m0014's function locks the shared rows in one order first, as for the
            // other versions.
            let sql = if pg {
                format!(
                    "CREATE CONSTRAINT TRIGGER zm_v_{suffix} AFTER {event} ON users DEFERRABLE INITIALLY DEFERRED \
                     FOR EACH ROW EXECUTE FUNCTION zm_bump_version('profiles')"
                )
            } else {
                format!("CREATE TRIGGER zm_v_{suffix} AFTER {event} ON users FOR EACH ROW BEGIN UPDATE data_versions SET version = version + 1 WHERE name = 'profiles'; END")
            };
            db.execute_unprepared(&sql).await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let db = m.get_connection();
        let pg = m.get_database_backend() == DbBackend::Postgres;
        for (suffix, _) in TRIGGERS {
            let sql = if pg { format!("DROP TRIGGER IF EXISTS zm_v_{suffix} ON users") } else { format!("DROP TRIGGER IF EXISTS zm_v_{suffix}") };
            db.execute_unprepared(&sql).await?;
        }
        db.execute_unprepared("DELETE FROM data_versions WHERE name = 'profiles'").await?;
        Ok(())
    }
}
