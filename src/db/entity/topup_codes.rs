//! Owner: billing.

use sea_orm::entity::prelude::*;

use crate::ids::UserId;

/// A top-up code the operator hands out: redeemed once, into one wallet, before it expires.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "topup_codes")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// SHA-256 of the code (the code itself is only printed).
    #[sea_orm(unique)]
    pub code_hash: String,
    pub amount: i64,
    pub expires_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub redeemed_by: Option<UserId>,
    pub redeemed_at: Option<DateTimeUtc>,
    /// The code's last four characters (m0022), to find a printed code.
    pub hint: Option<String>,
    /// The codes issued together share it.
    pub batch: Option<String>,
    /// The operator's user id (None: the command line, or before m0022).
    pub created_by: Option<UserId>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
