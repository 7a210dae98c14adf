//! Owner: iam.

use sea_orm::entity::prelude::*;

use crate::ids::UserId;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "two_factor")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: UserId,
    /// The TOTP secret, base32 (RFC 4648, no padding).
    pub secret: String,
    pub created_at: DateTimeUtc,
    /// None: the enrolment waits for its first code (2FA is off).
    pub enabled_at: Option<DateTimeUtc>,
    /// The last TOTP step accepted (-1 before any): a code is good once.
    pub last_step: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
