//! zmarket: a self-hosted marketplace and console for shared computing, in one binary.

pub mod agent;
pub mod app;
pub mod apps;
pub mod companies;
pub mod config;
pub mod db;
pub mod devices;
pub mod error;
pub mod http;
pub mod ids;
pub mod iam;
pub mod jobs;
pub mod lang;
pub mod mail;
pub mod market;
pub mod notifications;
pub mod public;
pub mod schedule;
pub mod secrets;
pub mod server;
pub mod state;
pub mod ssr;
pub mod telemetry;
