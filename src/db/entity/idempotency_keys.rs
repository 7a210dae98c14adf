//! Owner: billing.

use sea_orm::entity::prelude::*;

/// An `Idempotency-Key` seen on a coin-moving call: reserved while the first request runs
/// (`status` null), then holding its answer.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "idempotency_keys")]
pub struct Model {
    /// Whose key: the caller and their context.
    #[sea_orm(primary_key, auto_increment = false)]
    pub scope: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    /// SHA-256 of the method, path and body of the first request.
    pub fingerprint: String,
    pub status: Option<i32>,
    pub body: Option<String>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
