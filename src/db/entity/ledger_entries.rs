//! Owner: billing.

use sea_orm::entity::prelude::*;

use crate::db::enums::EntryKind;

/// One leg of a transfer on one account: `amount` is signed (credit > 0, debit < 0). `seq` orders
/// an account's entries in the order their balance changed (it is taken while the account's row
/// is locked); `balance_after`/`held_after` are the account's figures right after this entry.
/// The transfer's memo and reference are copied so a list needs no join.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_entries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub transfer_id: String,
    pub account_id: String,
    pub kind: EntryKind,
    pub amount: i64,
    pub balance_after: i64,
    pub held_after: i64,
    pub ref_type: String,
    pub ref_id: Option<String>,
    pub memo: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
