//! Demands that ask for GPUs as they are (issue 38, docs/orders.md): the lowest CUDA version a
//! device's driver must run and the VRAM each of its GPUs must have.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // "12.4"; null = any.
        m.alter_table(Table::alter().table("orders").add_column(string_null("min_cuda")).to_owned()).await?;
        // Bytes per GPU; 0 = any.
        m.alter_table(Table::alter().table("orders").add_column(big_integer("min_vram").default(0)).to_owned()).await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("orders").drop_column("min_vram").to_owned()).await?;
        m.alter_table(Table::alter().table("orders").drop_column("min_cuda").to_owned()).await?;
        Ok(())
    }
}
