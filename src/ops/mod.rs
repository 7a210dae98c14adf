//! The operator's console (`/api/ops/v1`, issue 25): who runs the market (`zmarket operator
//! grant`/`revoke`), the people (search, suspend, grant coins), the market's figures, settings and
//! top-up codes (console.rs), and the audit of every operator write. Only operators
//! (`iam::auth::Operator`) reach these routes. `backup`: the database's copies (`zmarket
//! backup`/`restore`, the `[backup]` job, the last backup for the overview).

pub mod apps;
pub mod audit;
pub mod backup;
pub mod cli;
pub mod console;
pub mod model;
pub mod operators;
pub mod people;
pub mod routes;

use sea_orm::DatabaseConnection;

/// What the console's rules use.
#[derive(Clone)]
pub struct OpsCtx {
    pub db: DatabaseConnection,
    /// The market's settings the console changes (and this instance applies at once).
    pub market_settings: crate::settings::LiveSettings,
    /// Where the backups are (the overview shows the last one).
    pub data_dir: std::path::PathBuf,
}
