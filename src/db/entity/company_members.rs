//! Owner: companies.

use sea_orm::entity::prelude::*;

use crate::ids::{CompanyId, UserId};

use crate::db::enums::{Role};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "company_members")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub company_id: CompanyId,
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: UserId,
    /// admin | member
    pub role: Role,
    pub joined_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
