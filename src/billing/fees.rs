//! Exact market fees. Each rental and order has a fee meter (`ledger_fee_meters`): the total
//! captured for it and the fee credited for it so far. A capture adds its amount to the meter and
//! takes as its fee the difference `floor(total after × p / 100) - floor(total before × p / 100)`,
//! so after every capture the market holds exactly `floor(total captured × p / 100)` of that
//! rental or order: many 3-cent minutes earn the market its share instead of rounding to zero.
//! The meter row is changed by one conditional `UPDATE … RETURNING` (its row lock orders two
//! captures of one rental on PostgreSQL; SQLite's writers queue), inside the capture's
//! transaction, so a refused or replayed capture leaves it as it was.

use sea_orm::sea_query::{Expr, ExprTrait, Query};
use sea_orm::{ConnectionTrait, EntityTrait, FromQueryResult, Set};

use crate::billing::accounts::{AccountRef, Reference, Split};
use crate::db::entity::ledger_fee_meters as meters;
use crate::db::now;
use crate::error::AppError;

/// The fee of `captured` at `percent` (rounded down): what the market holds of a rental or order
/// whose captures total `captured`.
pub fn fee_of(captured: i64, percent: u8) -> i64 {
    (i128::from(captured) * i128::from(std::cmp::min(percent, 100)) / 100) as i64
}

/// The meter's id of a reference.
fn meter_id(r: &Reference) -> Result<(String, &str), AppError> {
    let ref_id = r.ref_id.as_deref().ok_or_else(|| AppError::Internal(anyhow::anyhow!("a market capture needs a reference id ({})", r.ref_type)))?;
    Ok((format!("{}:{ref_id}", r.ref_type), ref_id))
}

/// Creates the reference's meter at `percent` unless it exists (two creators racing: one row).
async fn ensure(conn: &impl ConnectionTrait, reference: &Reference, percent: u8) -> Result<String, AppError> {
    let (id, ref_id) = meter_id(reference)?;
    meters::Entity::insert(meters::ActiveModel {
        id: Set(id.clone()),
        ref_type: Set(reference.ref_type.clone()),
        ref_id: Set(ref_id.to_string()),
        fee_percent: Set(i32::from(percent)),
        captured: Set(0),
        fee: Set(0),
        carry: Set(0),
        updated_at: Set(now()),
    })
    .on_conflict_do_nothing_on([meters::Column::Id])
    .exec_without_returning(conn)
    .await?;
    Ok(id)
}

/// Adds `seconds` at `per_hour` cents an hour to what the reference's meter carries (in 1/3600 of
/// a cent) and answers the whole cents it holds now: the capture of those cents takes them out of
/// the carry ([`claim`]'s `carried`, in the same statement as its fee), the fraction staying
/// carried for the next seconds. Over a reference's life the cents taken add up to
/// `floor(per_hour × all its seconds / 3600)`: nothing lost at a pause, nothing taken twice.
/// Changed by conditional `UPDATE … RETURNING`s inside the capture's transaction (the row lock
/// orders two writers), so a refused or replayed capture leaves the carry as it was.
pub(crate) async fn carry(conn: &impl ConnectionTrait, reference: &Reference, percent: u8, per_hour: i64, seconds: i64) -> Result<i64, AppError> {
    use meters::Column as M;
    let worth = per_hour.checked_mul(seconds).filter(|w| *w >= 0).ok_or_else(|| AppError::invalid("amount", crate::error::Msg::AmountInvalid))?;
    let (id, _) = meter_id(reference)?;
    let mut step = Query::update();
    step.table(meters::Entity).value(M::Carry, Expr::col(M::Carry).add(worth)).value(M::UpdatedAt, now()).and_where(Expr::col(M::Id).eq(id.clone())).returning_col(M::Carry);
    // The meter exists after the reference's first capture: created only when the step finds none.
    let row = match conn.query_one(&step).await? {
        Some(row) => row,
        None => {
            ensure(conn, reference, std::cmp::min(percent, 100)).await?;
            conn.query_one(&step).await?.ok_or_else(|| AppError::Internal(anyhow::anyhow!("the fee meter {id} is gone")))?
        }
    };
    let carried: i64 = row.try_get("", "carry")?;
    Ok(carried / 3600)
}

async fn add(conn: &impl ConnectionTrait, id: &str, percent: u8, amount: i64, carried: i64) -> Result<Option<meters::Model>, AppError> {
    use meters::Column as M;
    let p = i64::from(percent);
    let mut q = Query::update();
    q.table(meters::Entity)
        .value(M::Captured, Expr::col(M::Captured).add(amount))
        .value(M::Fee, Expr::col(M::Captured).add(amount).mul(p).div(100))
        .value(M::UpdatedAt, now());
    if carried != 0 {
        q.value(M::Carry, Expr::col(M::Carry).sub(carried));
    }
    q.and_where(Expr::col(M::Id).eq(id)).and_where(Expr::col(M::FeePercent).eq(i32::from(percent))).returning_all();
    Ok(match conn.query_one(&q).await? {
        Some(row) => Some(meters::Model::from_query_result(&row, "")?),
        None => None,
    })
}

/// Adds `amount` to the reference's meter (created at its first capture) and answers the splits
/// of this capture: the provider's share and the market's fee, which bring the meter's fee to
/// `floor(captured × percent / 100)`. A reference's percent is fixed by its first capture. The
/// carry gives up `carried` (1/3600 of a cent: the seconds' cents this capture takes, [`carry`]) in
/// the same statement.
pub(crate) async fn claim(conn: &impl ConnectionTrait, reference: &Reference, provider: AccountRef, percent: u8, amount: i64, carried: i64) -> Result<Vec<Split>, AppError> {
    let percent = std::cmp::min(percent, 100);
    let (id, _) = meter_id(reference)?;
    let row = match add(conn, &id, percent, amount, carried).await? {
        Some(row) => row,
        None => {
            ensure(conn, reference, percent).await?;
            add(conn, &id, percent, amount, carried).await?.ok_or_else(|| AppError::Internal(anyhow::anyhow!("the fee meter {id} is kept at another percent than {percent}")))?
        }
    };
    let fee = row.fee - fee_of(row.captured - amount, percent);
    let mut splits = vec![Split { account: provider, amount: amount - fee }, Split { account: AccountRef::MarketFee, amount: fee }];
    splits.retain(|s| s.amount > 0);
    Ok(splits)
}

#[cfg(test)]
mod tests {
    use super::fee_of;

    #[test]
    fn fees_of_small_captures_add_up_to_the_fee_of_their_total() {
        let mut total = 0;
        let mut credited = 0;
        for amount in [3, 4, 3, 3, 4, 3, 1, 1, 7] {
            let before = fee_of(total, 10);
            total += amount;
            credited += fee_of(total, 10) - before;
            assert_eq!(credited, fee_of(total, 10));
        }
        assert_eq!(total, 29);
        assert_eq!(credited, 2);
        assert_eq!(fee_of(10_000_000_000_000, 100), 10_000_000_000_000);
        assert_eq!(fee_of(99, 0), 0);
    }
}
