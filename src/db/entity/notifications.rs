//! Owner: notifications.

use sea_orm::entity::prelude::*;

use crate::ids::{NotificationId, UserId};

use crate::db::enums::{NotificationKind};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "notifications")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: NotificationId,
    pub user_id: UserId,
    /// device_online | device_offline | zcloud_ready | zcloud_failed …
    pub kind: NotificationKind,
    /// English text.
    pub title: String,
    pub body: String,
    /// JSON object of the values the text was made from (with `title_zh`, `body_zh`).
    pub params: String,
    pub read: bool,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
