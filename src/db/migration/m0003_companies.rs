//! Companies: invitations and applications (member records), resource assignments, history.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // An invitation (kind invite, by email, with a link code) or an application (kind apply,
        // by a signed-in user, by company id).
        m.create_table(
            Table::create()
                .table("member_records")
                .if_not_exists()
                .col(string("id").primary_key())
                // invite | apply
                .col(string("kind"))
                .col(string("company_id"))
                .col(string("email"))
                // the applicant; for an invitation, the account that answered it
                .col(string_null("user_id"))
                // admin | member: the role the membership gets when accepted
                .col(string("role"))
                // invited | applied | accepted | declined | expired
                .col(string("status"))
                .col(string_null("code_hash"))
                .col(timestamp_with_time_zone_null("expires_at"))
                .col(string("created_by"))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone_null("decided_at"))
                .col(string_null("decided_by"))
                // unread flags for member_records_unread: the company's admins, the person
                .col(boolean("read_by_admin").default(false))
                .col(boolean("read_by_user").default(false))
                .foreign_key(ForeignKey::create().from("member_records", "company_id").to("companies", "id").on_delete(ForeignKeyAction::Cascade))
                .foreign_key(ForeignKey::create().from("member_records", "user_id").to("users", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_member_records_company").table("member_records").col("company_id").to_owned()).await?;
        m.create_index(Index::create().name("idx_member_records_email").table("member_records").col("email").to_owned()).await?;
        m.create_index(Index::create().name("idx_member_records_user").table("member_records").col("user_id").to_owned()).await?;
        m.create_index(Index::create().name("idx_member_records_code").table("member_records").col("code_hash").unique().to_owned()).await?;

        // A company device or app given to one member. Other domains read this table to show a
        // member only what is assigned to them.
        m.create_table(
            Table::create()
                .table("resource_assignments")
                .if_not_exists()
                .col(string("company_id"))
                .col(string("user_id"))
                // device | app
                .col(string("resource_type"))
                .col(string("resource_id"))
                .col(timestamp_with_time_zone("assigned_at"))
                .col(string("assigned_by"))
                .primary_key(Index::create().col("company_id").col("resource_type").col("resource_id").col("user_id"))
                .foreign_key(ForeignKey::create().from("resource_assignments", "company_id").to("companies", "id").on_delete(ForeignKeyAction::Cascade))
                .foreign_key(ForeignKey::create().from("resource_assignments", "user_id").to("users", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create().name("idx_assignments_user").table("resource_assignments").col("user_id").col("company_id").to_owned(),
        )
        .await?;

        // Who did what, when. No foreign keys: the history outlives deleted companies and
        // accounts, so names are kept as they were at the time.
        m.create_table(
            Table::create()
                .table("company_history")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("company_id"))
                .col(string("company_name"))
                .col(string_null("actor_id"))
                .col(string("actor_name"))
                .col(string("action"))
                // user | device | app | company
                .col(string("subject_type"))
                .col(string("subject_id"))
                .col(string("subject_name"))
                .col(text("detail"))
                .col(timestamp_with_time_zone("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_history_company").table("company_history").col("company_id").col("created_at").to_owned()).await?;
        m.create_index(Index::create().name("idx_history_actor").table("company_history").col("actor_id").to_owned()).await?;
        m.create_index(Index::create().name("idx_history_subject").table("company_history").col("subject_id").to_owned()).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in ["company_history", "resource_assignments", "member_records"] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
