//! A person's notifications (`/api/ebs/v1/notifications`): the stats the console polls every
//! 10 s, the list (all or unread) and marking one read. Other domains write them (devices: status
//! changes and Z-CLOUD results) with English text in the row and the Chinese text in `params`.
//! See docs/notifications.md.

pub mod model;
pub mod routes;
pub mod service;
