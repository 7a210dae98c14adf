//! One integration-test binary: the real server over real HTTP against a fresh database.

mod common;
mod companies;
mod foundation;
mod iam;
