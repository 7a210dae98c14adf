//! The social layer (docs/social.md): friend requests by email, friendships with an alias, tags,
//! blocks, direct messages with one conversation row per side, and the per-person event log the
//! live stream replays from.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

fn to_users(table: &'static str, col: &'static str) -> ForeignKeyCreateStatement {
    ForeignKey::create().from(table, col).to("users", "id").on_delete(ForeignKeyAction::Cascade).to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // A request goes to an email address, whether or not an account has it (no enumeration);
        // the account with that email (emails never change) sees it as incoming.
        m.create_table(
            Table::create()
                .table("friend_requests")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("from_user_id"))
                .col(string("from_email"))
                .col(string("to_email"))
                // the two emails, sorted: one pending request per pair, whichever way it goes
                .col(string("pair_key"))
                // pending | accepted | declined | cancelled
                .col(string_len("status", 32))
                .col(timestamp_with_time_zone("created_at"))
                .col(timestamp_with_time_zone_null("decided_at"))
                .foreign_key(&mut to_users("friend_requests", "from_user_id"))
                .to_owned(),
        )
        .await?;
        let db = m.get_connection();
        // Partial unique index (same syntax on SQLite and PostgreSQL): the database itself refuses
        // a second pending request between two people, in either direction.
        db.execute_unprepared("CREATE UNIQUE INDEX idx_friend_requests_pending_pair ON friend_requests (pair_key) WHERE status = 'pending'")
            .await?;
        m.create_index(Index::create().name("idx_friend_requests_to").table("friend_requests").col("to_email").col("status").to_owned()).await?;
        m.create_index(
            Index::create().name("idx_friend_requests_from").table("friend_requests").col("from_user_id").col("created_at").to_owned(),
        )
        .await?;

        // One row per side: each side keeps its own alias and tags.
        m.create_table(
            Table::create()
                .table("friendships")
                .if_not_exists()
                .col(string("user_id"))
                .col(string("friend_id"))
                .col(string_null("alias"))
                .col(timestamp_with_time_zone("since"))
                .primary_key(Index::create().col("user_id").col("friend_id"))
                .foreign_key(&mut to_users("friendships", "user_id"))
                .foreign_key(&mut to_users("friendships", "friend_id"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_friendships_friend").table("friendships").col("friend_id").to_owned()).await?;

        m.create_table(
            Table::create()
                .table("friend_tags")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("user_id"))
                .col(string("name"))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(&mut to_users("friend_tags", "user_id"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_friend_tags_name").table("friend_tags").col("user_id").col("name").unique().to_owned())
            .await?;

        m.create_table(
            Table::create()
                .table("friend_tag_links")
                .if_not_exists()
                .col(string("user_id"))
                .col(string("friend_id"))
                .col(string("tag_id"))
                .primary_key(Index::create().col("user_id").col("friend_id").col("tag_id"))
                .foreign_key(
                    ForeignKey::create()
                        .from("friend_tag_links", ("user_id", "friend_id"))
                        .to("friendships", ("user_id", "friend_id"))
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .foreign_key(ForeignKey::create().from("friend_tag_links", "tag_id").to("friend_tags", "id").on_delete(ForeignKeyAction::Cascade))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_friend_tag_links_tag").table("friend_tag_links").col("tag_id").to_owned()).await?;

        m.create_table(
            Table::create()
                .table("blocks")
                .if_not_exists()
                .col(string("user_id"))
                .col(string("blocked_id"))
                .col(timestamp_with_time_zone("created_at"))
                .primary_key(Index::create().col("user_id").col("blocked_id"))
                .foreign_key(&mut to_users("blocks", "user_id"))
                .foreign_key(&mut to_users("blocks", "blocked_id"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_blocks_blocked").table("blocks").col("blocked_id").to_owned()).await?;

        m.create_table(
            Table::create()
                .table("messages")
                .if_not_exists()
                // UUID v7: its order is the order of the history
                .col(string("id").primary_key())
                .col(string("sender_id"))
                .col(string("recipient_id"))
                // the two user ids, sorted: one conversation's history on one index
                .col(string("pair_key"))
                .col(text("body"))
                .col(boolean("read").default(false))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(&mut to_users("messages", "sender_id"))
                .foreign_key(&mut to_users("messages", "recipient_id"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_messages_pair").table("messages").col("pair_key").col("id").to_owned()).await?;
        m.create_index(
            Index::create().name("idx_messages_unread").table("messages").col("recipient_id").col("read").col("sender_id").to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_messages_sender_time").table("messages").col("sender_id").col("created_at").to_owned())
            .await?;

        // One row per side of a conversation, moved by every message: the list is one indexed read.
        m.create_table(
            Table::create()
                .table("conversations")
                .if_not_exists()
                .col(string("user_id"))
                .col(string("peer_id"))
                .col(string("last_message_id"))
                .col(timestamp_with_time_zone("last_at"))
                .primary_key(Index::create().col("user_id").col("peer_id"))
                .foreign_key(&mut to_users("conversations", "user_id"))
                .foreign_key(&mut to_users("conversations", "peer_id"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_conversations_recent").table("conversations").col("user_id").col("last_at").to_owned())
            .await?;

        // The per-person sequence the event ids come from; its row is also that person's lock
        // for social writes on PostgreSQL.
        m.create_table(
            Table::create()
                .table("event_sequences")
                .if_not_exists()
                .col(string("user_id").primary_key())
                .col(big_integer("last_seq").default(0))
                .foreign_key(&mut to_users("event_sequences", "user_id"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("events")
                .if_not_exists()
                // global order of writing: what an SQLite instance polls for
                .col(big_pk_auto("id"))
                .col(string("user_id"))
                .col(big_integer("seq"))
                // message | friend_request | friend | read | notification
                .col(string_len("kind", 32))
                .col(text("payload"))
                .col(timestamp_with_time_zone("created_at"))
                .foreign_key(&mut to_users("events", "user_id"))
                .to_owned(),
        )
        .await?;
        m.create_index(Index::create().name("idx_events_user_seq").table("events").col("user_id").col("seq").unique().to_owned()).await?;
        m.create_index(Index::create().name("idx_events_created").table("events").col("created_at").to_owned()).await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in [
            "events",
            "event_sequences",
            "conversations",
            "messages",
            "blocks",
            "friend_tag_links",
            "friend_tags",
            "friendships",
            "friend_requests",
        ] {
            m.drop_table(Table::drop().table(t).if_exists().to_owned()).await?;
        }
        Ok(())
    }
}
