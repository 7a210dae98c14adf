//! Issue 18: the nearby list reads a box of coordinates through an index instead of every
//! shared device.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_index(Index::create().name("idx_devices_lat_lng").table("devices").col("lat").col("lng").if_not_exists().to_owned()).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(Index::drop().name("idx_devices_lat_lng").table("devices").to_owned()).await
    }
}
