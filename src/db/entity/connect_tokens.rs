//! Owner: connect.

use sea_orm::entity::prelude::*;

use crate::ids::{InstallationId, UserId};

/// One-time tokens that open an installation's web interface on its own origin (issue 22).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "connect_tokens")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub token_hash: String,
    pub installation_id: InstallationId,
    pub user_id: UserId,
    /// The session that asked: the app's cookie lives only as long as it.
    pub session_id: String,
    /// The context it was asked in (`user` or a company id).
    pub sme_id: String,
    pub expires_at: DateTimeUtc,
    pub used_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
