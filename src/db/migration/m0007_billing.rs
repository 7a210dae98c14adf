//! The wallet: a double-entry ledger (accounts, transfers, entries), holds, bills, and the
//! answers kept for `Idempotency-Key` retries. See docs/wallet.md. No foreign key points at users
//! or companies: the ledger is kept when they are deleted (a correction is a new transfer).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("ledger_accounts")
                .if_not_exists()
                // user:<id> | company:<id> | system:issuance | system:market_fee
                .col(string("id").primary_key())
                // user | company | issuance | market_fee
                .col(string_len("kind", 32))
                .col(string_null("owner_id"))
                .col(big_integer("balance").default(0))
                .col(big_integer("held").default(0))
                .col(big_integer("income_total").default(0))
                .col(big_integer("expense_total").default(0))
                .col(big_integer("runway_notice").default(0))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone("updated_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("ledger_holds")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("key").unique_key())
                .col(string("fingerprint"))
                .col(string("account_id"))
                .col(big_integer("amount"))
                .col(big_integer("captured").default(0))
                .col(big_integer("released").default(0))
                // pending | captured | released | expired
                .col(string_len("status", 32))
                .col(big_integer("burn_per_hour").default(0))
                .col(string("ref_type"))
                .col(string_null("ref_id"))
                .col(text("memo"))
                .col(timestamp_with_time_zone("expires_at"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone_null("resolved_at"))
                .foreign_key(ForeignKey::create().from("ledger_holds", "account_id").to("ledger_accounts", "id"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_ledger_holds_account").table("ledger_holds").col("account_id").col("status").to_owned())
            .await?;
        m.create_index(Index::create().name("idx_ledger_holds_due").table("ledger_holds").col("status").col("expires_at").to_owned())
            .await?;
        m.create_index(Index::create().name("idx_ledger_holds_ref").table("ledger_holds").col("ref_type").col("ref_id").to_owned())
            .await?;
        m.create_table(
            Table::create()
                .table("ledger_transfers")
                .if_not_exists()
                .col(string("id").primary_key())
                // the idempotency key: a retried call, a re-run job or a racing instance posts once
                .col(string("key").unique_key())
                .col(string("fingerprint"))
                // grant | signup_bonus | capture | payment
                .col(string_len("kind", 32))
                .col(big_integer("amount"))
                .col(string_null("hold_id"))
                .col(string_null("bill_id"))
                .col(string("ref_type"))
                .col(string_null("ref_id"))
                .col(text("memo"))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(ForeignKey::create().from("ledger_transfers", "hold_id").to("ledger_holds", "id"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_ledger_transfers_hold").table("ledger_transfers").col("hold_id").to_owned()).await?;
        m.create_index(Index::create().name("idx_ledger_transfers_bill").table("ledger_transfers").col("bill_id").to_owned()).await?;
        m.create_table(
            Table::create()
                .table("ledger_entries")
                .if_not_exists()
                .col(big_pk_auto("seq"))
                .col(string("id").unique_key())
                .col(string("transfer_id"))
                .col(string("account_id"))
                // income | expense
                .col(string_len("kind", 32))
                .col(big_integer("amount"))
                .col(big_integer("balance_after"))
                .col(big_integer("held_after"))
                .col(string("ref_type"))
                .col(string_null("ref_id"))
                .col(text("memo"))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(ForeignKey::create().from("ledger_entries", "transfer_id").to("ledger_transfers", "id"))
                .foreign_key(ForeignKey::create().from("ledger_entries", "account_id").to("ledger_accounts", "id"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_ledger_entries_account").table("ledger_entries").col("account_id").col("seq").to_owned())
            .await?;
        m.create_index(
            Index::create().name("idx_ledger_entries_account_kind").table("ledger_entries").col("account_id").col("kind").col("seq").to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_ledger_entries_transfer").table("ledger_entries").col("transfer_id").to_owned()).await?;
        m.create_table(
            Table::create()
                .table("bills")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("account_id"))
                // unbilled | billed
                .col(string_len("status", 32))
                .col(string("ref_type"))
                .col(string("ref_id"))
                .col(timestamp_with_time_zone("period_start"))
                .col(timestamp_with_time_zone("period_end"))
                .col(big_integer("amount").default(0))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone_null("billed_at"))
                .foreign_key(ForeignKey::create().from("bills", "account_id").to("ledger_accounts", "id"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_bills_account").table("bills").col("account_id").col("status").col("period_start").to_owned())
            .await?;
        m.create_index(Index::create().name("idx_bills_open").table("bills").col("status").col("period_end").to_owned()).await?;
        m.create_index(Index::create().name("idx_bills_ref").table("bills").col("ref_type").col("ref_id").to_owned()).await?;
        m.create_table(
            Table::create()
                .table("idempotency_keys")
                .if_not_exists()
                .col(string("scope"))
                .col(string("key"))
                .col(string("fingerprint"))
                .col(integer_null("status"))
                .col(text_null("body"))
                .col(timestamp_with_time_zone("created_at"))
                .primary_key(Index::create().col("scope").col("key"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_idempotency_keys_created").table("idempotency_keys").col("created_at").to_owned())
            .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in ["idempotency_keys", "bills", "ledger_entries", "ledger_transfers", "ledger_holds", "ledger_accounts"] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
