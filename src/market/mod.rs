//! The public market: catalogue, search, download links (and nearby, with the devices).

pub mod routes;
