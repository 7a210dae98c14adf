//! One integration-test binary: the real server over real HTTP against a fresh database.

mod backup;
mod billing;
// Shared with tests/clock/: some helpers serve only one of the two binaries.
#[allow(dead_code)]
mod boxes;
mod common;
mod companies;
pub(crate) mod connect;
pub(crate) mod devices;
mod documents;
mod foundation;
mod gpus;
mod install;
mod limits;
pub(crate) mod iam;
pub(crate) mod instances;
mod market;
mod notifications;
mod observability;
pub(crate) mod ops;
mod ops_console;
mod races;
mod scenario;
mod refusals;
mod orders;
mod perf;
mod quiet;
mod api_keys;
pub(crate) mod apps;
mod recovery;
mod snapshots;
mod social;
mod two_factor;
