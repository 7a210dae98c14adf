//! Owner: companies.

use sea_orm::entity::prelude::*;

use crate::ids::{CompanyId, UserId};

/// One membership or allocation event of a company.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "company_history")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub company_id: CompanyId,
    pub company_name: String,
    pub actor_id: Option<UserId>,
    pub actor_name: String,
    pub action: String,
    pub subject_type: String,
    pub subject_id: String,
    pub subject_name: String,
    #[sea_orm(column_type = "Text")]
    pub detail: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
