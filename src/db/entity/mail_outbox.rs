//! Owner: mail.

use sea_orm::entity::prelude::*;

use crate::db::enums::MailStatus;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "mail_outbox")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub to_addr: String,
    pub subject: String,
    pub body_text: String,
    pub link: Option<String>,
    pub status: MailStatus,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub next_attempt_at: DateTimeUtc,
    pub created_at: DateTimeUtc,
    pub sent_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
