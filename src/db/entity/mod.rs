//! Entities: plain table shapes, no behaviour (the rules live in each domain's service).

pub mod app_images;

pub mod apps;
pub mod bills;
pub mod blocks;
pub mod companies;
pub mod company_history;
pub mod company_members;
pub mod conversations;
pub mod device_commands;
pub mod devices;
pub mod email_verifications;
pub mod event_sequences;
pub mod events;
pub mod friend_requests;
pub mod friend_tag_links;
pub mod friend_tags;
pub mod friendships;
pub mod idempotency_keys;
pub mod installation_events;
pub mod installations;
pub mod ledger_accounts;
pub mod ledger_entries;
pub mod ledger_holds;
pub mod ledger_transfers;
pub mod mail_outbox;
pub mod market_catalogue;
pub mod member_records;
pub mod messages;
pub mod notification_counters;
pub mod notifications;
pub mod refresh_tokens;
pub mod resource_assignments;
pub mod sessions;
pub mod users;
