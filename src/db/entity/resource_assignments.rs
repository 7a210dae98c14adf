//! Owner: companies.

use sea_orm::entity::prelude::*;

use crate::ids::{CompanyId, UserId};

use crate::db::enums::{ResourceType};

/// A company device or app assigned to one member.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "resource_assignments")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub company_id: CompanyId,
    #[sea_orm(primary_key, auto_increment = false)]
    pub resource_type: ResourceType,
    #[sea_orm(primary_key, auto_increment = false)]
    pub resource_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: UserId,
    pub assigned_at: DateTimeUtc,
    pub assigned_by: UserId,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
