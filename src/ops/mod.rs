//! The operator's console (`/api/ops/v1`, issue 25): who runs the market (`zmarket operator
//! grant`/`revoke`), the people (search, suspend, grant coins) and the audit of every operator
//! write. Only operators (`iam::auth::Operator`) reach these routes.

pub mod apps;
pub mod audit;
pub mod cli;
pub mod model;
pub mod operators;
pub mod people;
pub mod routes;

use sea_orm::DatabaseConnection;

/// What the console's rules use.
#[derive(Clone)]
pub struct OpsCtx {
    pub db: DatabaseConnection,
}
