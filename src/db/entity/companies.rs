//! Owner: companies.

use sea_orm::entity::prelude::*;

use crate::ids::{CompanyId, UserId};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "companies")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: CompanyId,
    pub name: String,
    pub network_id: String,
    pub owner_id: UserId,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
