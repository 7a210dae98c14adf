//! Migrations, applied in order at start-up (`zmarket serve`) or by `zmarket migrate`.
//! A released migration is never edited: changes come as new migrations.

use sea_orm_migration::prelude::*;

mod m0001_foundation;
mod m0002_identity;
mod m0003_companies;
mod m0004_market;
mod m0005_devices;
mod m0006_notification_counters;
mod m0007_billing;
mod m0008_social;
mod m0009_apps;
mod m0010_orders;
mod m0011_hardening;
mod m0012_password_resets;
mod m0013_perf;
mod m0014_versions;
pub mod m0015_connect;
mod m0016_api_keys;
mod m0017_apps_over_time;
mod m0018_money;
mod m0020_zcloud_rentals;
mod m0021_operators;
mod m0022_console;
mod m0023_published_apps;
mod m0024_profiles;
mod m0025_gpus;
mod m0026_demand_gpus;
mod m0027_meter_seconds;
mod m0029_rental_extend;
mod m0030_presence;
mod m0032_app_revision;
mod m0033_api_key_scopes;
mod m0034_two_factor;
mod m0035_snapshots;

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m0001_foundation::Migration),
            Box::new(m0002_identity::Migration),
            Box::new(m0003_companies::Migration),
            Box::new(m0004_market::Migration),
            Box::new(m0005_devices::Migration),
            Box::new(m0006_notification_counters::Migration),
            Box::new(m0007_billing::Migration),
            Box::new(m0008_social::Migration),
            Box::new(m0009_apps::Migration),
            Box::new(m0010_orders::Migration),
            Box::new(m0011_hardening::Migration),
            Box::new(m0012_password_resets::Migration),
            Box::new(m0013_perf::Migration),
            Box::new(m0014_versions::Migration),
            Box::new(m0015_connect::Migration),
            Box::new(m0016_api_keys::Migration),
            Box::new(m0017_apps_over_time::Migration),
            Box::new(m0018_money::Migration),
            Box::new(m0020_zcloud_rentals::Migration),
            Box::new(m0021_operators::Migration),
            Box::new(m0022_console::Migration),
            Box::new(m0023_published_apps::Migration),
            Box::new(m0024_profiles::Migration),
            Box::new(m0025_gpus::Migration),
            Box::new(m0026_demand_gpus::Migration),
            Box::new(m0027_meter_seconds::Migration),
            Box::new(m0029_rental_extend::Migration),
            Box::new(m0030_presence::Migration),
            Box::new(m0032_app_revision::Migration),
            Box::new(m0033_api_key_scopes::Migration),
            Box::new(m0034_two_factor::Migration),
            Box::new(m0035_snapshots::Migration),
        ]
    }
}
