//! An app's revision (issue 44 item 1): a number every change of the app moves (an edit, an
//! icon, an image archive, the catalogue's merge), so a form opened before a change cannot save
//! over it (`PUT /api/ops/v1/apps/{id}` with an older `revision` answers 409 `stale_edit`).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("apps").add_column(big_integer("revision").default(0)).to_owned()).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("apps").drop_column("revision").to_owned()).await
    }
}
