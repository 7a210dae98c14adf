//! zmarket: a self-hosted marketplace and console for shared computing, in one binary.

pub mod app;
pub mod config;
pub mod db;
pub mod devices;
pub mod error;
pub mod http;
pub mod iam;
pub mod jobs;
pub mod mail;
pub mod market;
pub mod notifications;
pub mod secrets;
pub mod server;
pub mod social;
pub mod ssr;
pub mod telemetry;
