//! Entities: plain table shapes, no behaviour (the rules live in each domain's service).

pub mod app_images;
pub mod apps;
pub mod companies;
pub mod company_history;
pub mod company_members;
pub mod device_commands;
pub mod devices;
pub mod email_verifications;
pub mod installation_events;
pub mod installations;
pub mod mail_outbox;
pub mod market_catalogue;
pub mod member_records;
pub mod notification_counters;
pub mod notifications;
pub mod refresh_tokens;
pub mod resource_assignments;
pub mod sessions;
pub mod users;
