use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The direction of an entry for its account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize, ToSchema)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    #[sea_orm(string_value = "income")]
    Income,
    #[sea_orm(string_value = "expense")]
    Expense,
}

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
