//! API keys with scopes and an expiry (issue 43, item 4). `scopes` holds the names of what a key
//! may do, joined by commas (`read,apps`; `iam::scopes`). The keys made before keep what they
//! could do then except the operator's console (`read,apps,wallet`), and a key that never
//! expired now expires 90 days after this migration (writing `expires_at` moves the `sessions`
//! version, m0016, so no instance answers from what it resolved before).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The scopes of the keys made before scopes existed.
const EARLIER_KEYS: &str = "read,apps,wallet";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("api_keys").add_column(string("scopes").default(EARLIER_KEYS)).to_owned()).await?;
        let expiry = chrono::Utc::now() + chrono::Duration::days(90);
        let update = Query::update()
            .table("api_keys")
            .value("expires_at", Expr::val(expiry))
            .and_where(Expr::col("expires_at").is_null())
            .to_owned();
        let db = m.get_connection();
        db.execute(&update).await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("api_keys").drop_column("scopes").to_owned()).await
    }
}
