//! The meter by the second (issue 39, item 2): rentals, Z-CLOUD rentals and orders count the
//! seconds charged instead of whole minutes; an order is charged the seconds its app was seen
//! running, as its installation's meter counts them, from where that count stood when the
//! demander confirmed (`seen_base`); and each metered reference's fee meter carries the fraction
//! of a cent its captures have not charged yet (`carry`, in 1/3600 of a cent: what
//! `price × seconds` left over), so nothing is lost between captures.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (table, minutes column, seconds column, price column, reference type)
const METERED: [(&str, &str, &str, &str, &str); 3] = [
    ("installations", "rent_minutes", "rent_seconds", "rent_price_per_hour", "rental"),
    ("zcloud_rentals", "minutes", "seconds", "price_per_hour", "zcloud"),
    ("orders", "billed_minutes", "billed_seconds", "price_per_hour", "order"),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(Table::alter().table("ledger_fee_meters").add_column(big_integer("carry").default(0)).to_owned()).await?;
        m.alter_table(Table::alter().table("orders").add_column(big_integer("seen_base").default(0)).to_owned()).await?;
        let db = m.get_connection();
        for (table, minutes, seconds, price, ref_type) in METERED {
            m.alter_table(Table::alter().table(table).rename_column(minutes, seconds).to_owned()).await?;
            db.execute_unprepared(&format!("UPDATE {table} SET {seconds} = {seconds} * 60")).await?;
            // The fraction of a cent the minutes charged so far left over, as the carry.
            db.execute_unprepared(&format!(
                "UPDATE ledger_fee_meters SET carry = COALESCE((SELECT (t.{price} * t.{seconds}) % 3600 FROM {table} t \
                 WHERE t.id = ledger_fee_meters.ref_id), 0) WHERE ref_type = '{ref_type}'"
            ))
            .await?;
        }
        // An order being charged now: its installation's count of seconds seen running starts
        // with the meter job's next run (an order's installation counted none before), and
        // carries on from the seconds charged so far.
        db.execute_unprepared("UPDATE orders SET seen_base = -billed_seconds WHERE status = 'order_confirmed'").await?;
        db.execute_unprepared("UPDATE installations SET metered_until = NULL WHERE kind = 'rent' AND rent_price_per_hour IS NULL").await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let db = m.get_connection();
        for (table, minutes, seconds, _, _) in METERED {
            db.execute_unprepared(&format!("UPDATE {table} SET {seconds} = {seconds} / 60")).await?;
            m.alter_table(Table::alter().table(table).rename_column(seconds, minutes).to_owned()).await?;
        }
        m.alter_table(Table::alter().table("orders").drop_column("seen_base").to_owned()).await?;
        m.alter_table(Table::alter().table("ledger_fee_meters").drop_column("carry").to_owned()).await?;
        Ok(())
    }
}
