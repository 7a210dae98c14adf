//! Owner: iam.

use sea_orm::entity::prelude::*;

use crate::ids::{ApiKeyId, CompanyId, UserId};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "api_keys")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: ApiKeyId,
    pub user_id: UserId,
    /// The company the key acts in; None: the personal context.
    pub company_id: Option<CompanyId>,
    pub name: String,
    /// The key's first characters (`zk_ab12cd`), shown in lists.
    pub prefix: String,
    /// SHA-256 of the key (`iam::tokens::hash_token`).
    pub key_hash: String,
    pub created_at: DateTimeUtc,
    pub last_used_at: Option<DateTimeUtc>,
    pub expires_at: Option<DateTimeUtc>,
    pub revoked_at: Option<DateTimeUtc>,
    /// What the key may do: scope names joined by commas (`iam::scopes`, m0033).
    pub scopes: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
