//! Owner: companies.

use sea_orm::entity::prelude::*;

use crate::ids::{CompanyId, RecordId, UserId};

use crate::db::enums::{RecordKind, RecordStatus, Role};

/// An invitation (kind `invite`) or an application (kind `apply`) to a company.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "member_records")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: RecordId,
    pub kind: RecordKind,
    pub company_id: CompanyId,
    pub email: String,
    pub user_id: Option<UserId>,
    pub role: Role,
    pub status: RecordStatus,
    pub code_hash: Option<String>,
    pub expires_at: Option<DateTimeUtc>,
    pub created_by: UserId,
    pub created_at: DateTimeUtc,
    pub decided_at: Option<DateTimeUtc>,
    pub decided_by: Option<UserId>,
    pub read_by_admin: bool,
    pub read_by_user: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
