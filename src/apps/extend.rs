//! Extending a running rental (`POST /apps/{id}/extend`): its hold grows by `price × hours` from
//! the renter's wallet (409 when it cannot) and its end moves that far; and the notice ten minutes
//! before a rental's end, once per end, that links to its Extend (issue 39).

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter};

use crate::apps::AppsCtx;
use crate::apps::access::{Names, installer, owned_by, to_installation};
use crate::apps::lifecycle::{extendable, under_way};
use crate::apps::model::*;
use crate::apps::notify;
use crate::billing::ledger::{self, Growth};
use crate::db::entity::installations;
use crate::db::enums::NotificationKind;
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::ids::InstallationId;
use crate::lang::Lang;

/// How long before its end a rental's ending notice goes out.
pub const ENDING_NOTICE_MINUTES: i64 = 10;

/// Extends the caller's rental `id` by `ask.hours`: the hold grows by `price × hours` (409 when
/// the wallet cannot hold it), `rental.ends_at` moves that far. `request_key` (the
/// `Idempotency-Key`) makes the growth's key, so a retried request grows the hold once. Another
/// person's rental is not found; one ended, failed or whose time is up answers 409.
pub async fn extend(cx: &AppsCtx, auth: &Auth, id: &InstallationId, ask: ExtendAsk, request_key: Option<String>, lang: Lang) -> Result<Installation, AppError> {
    let owner = installer(auth)?;
    let txn = write_txn(&cx.db).await?;
    // Under the installation's row lock (PostgreSQL; SQLite's write transaction is one at a time):
    // extends at once grow the hold one after another, each reading the end the previous one left.
    installations::Entity::update_many()
        .col_expr(installations::Column::UpdatedAt, Expr::col(installations::Column::UpdatedAt))
        .filter(installations::Column::Id.eq(id.as_str()))
        .exec(&txn)
        .await?;
    let r = installations::Entity::find_by_id(id.to_string())
        .filter(owned_by(&owner))
        .one(&txn)
        .await?
        .ok_or(AppError::Refused(Msg::InstallationNotFound))?;
    let t = now();
    let (true, Some(ends)) = (extendable(&r, t), r.rent_ends_at) else { return Err(AppError::Refused(Msg::RentalNotExtendable)) };
    let new_end = ends + Duration::hours(ask.hours);
    let price = r.rent_price_per_hour.unwrap_or(0);
    if let (Some(hold), true) = (&r.hold_id, price > 0) {
        let key = match &request_key {
            Some(k) => format!("rental:{}:extend:{k}", r.id),
            None => format!("rental:{}:extend:{}", r.id, ends.timestamp()),
        };
        let growth = Growth { hold_id: hold.clone().into(), amount: price * ask.hours, key, ends_at: new_end, expires_at: new_end + Duration::hours(1) };
        let grown = ledger::grow(&txn, growth).await.map_err(|e| match e {
            // Its coins are used up (the rental is being suspended): nothing to grow.
            AppError::Refused(Msg::HoldResolved) => AppError::Refused(Msg::RentalNotExtendable),
            e => e,
        })?;
        if grown.replayed {
            // Grown by the first request with this key, its end moved then: answered as it is.
            let names = Names::load(&txn, std::slice::from_ref(&r)).await?;
            txn.commit().await?;
            return Ok(to_installation(&r, &names, lang));
        }
    }
    installations::Entity::update_many()
        .col_expr(installations::Column::RentEndsAt, Expr::value(new_end))
        .col_expr(installations::Column::UpdatedAt, Expr::value(t))
        .filter(installations::Column::Id.eq(r.id.clone()))
        .filter(installations::Column::RentEndsAt.eq(ends))
        .exec(&txn)
        .await?;
    let r = installations::Entity::find_by_id(r.id).one(&txn).await?.ok_or(AppError::Refused(Msg::InstallationNotFound))?;
    let names = Names::load(&txn, std::slice::from_ref(&r)).await?;
    txn.commit().await?;
    Ok(to_installation(&r, &names, lang))
}

/// Tells the renters of rentals under way that end within [`ENDING_NOTICE_MINUTES`] of `at`: once
/// per end (an extended rental is told again before its new end), the notice linking to its
/// Extend. Returns how many notices went out.
pub async fn ending_notices(db: &DatabaseConnection, at: DateTime<Utc>) -> Result<usize, AppError> {
    use installations::Column as C;
    use sea_orm::sea_query::ExprTrait as _; // `lt` of two columns
    let soon = installations::Entity::find()
        .filter(C::Kind.eq(InstallKind::Rent))
        .filter(C::ActiveKey.is_not_null())
        .filter(C::RentEndsAt.gt(at))
        .filter(C::RentEndsAt.lte(at + Duration::minutes(ENDING_NOTICE_MINUTES)))
        .filter(Condition::any().add(C::RentEndNoticed.is_null()).add(Expr::col(C::RentEndNoticed).lt(Expr::col(C::RentEndsAt))))
        .all(db)
        .await?;
    let mut n = 0;
    for r in soon.into_iter().filter(|r| under_way(r.status)) {
        let Some(ends) = r.rent_ends_at else { continue };
        let txn = write_txn(db).await?;
        // Conditional on the end it is about and on no notice of it yet: once, whoever runs it.
        if claim(&txn, &r.id, ends).await? {
            notify::send(&txn, &r, NotificationKind::RentalEnding).await?;
            n += 1;
        }
        txn.commit().await?;
    }
    Ok(n)
}

async fn claim(conn: &impl ConnectionTrait, id: &InstallationId, ends: DateTime<Utc>) -> Result<bool, AppError> {
    use installations::Column as C;
    let changed = installations::Entity::update_many()
        .col_expr(C::RentEndNoticed, Expr::value(ends))
        .filter(C::Id.eq(id))
        .filter(C::RentEndsAt.eq(ends))
        .filter(Condition::any().add(C::RentEndNoticed.is_null()).add(C::RentEndNoticed.ne(ends)))
        .exec(conn)
        .await?
        .rows_affected;
    Ok(changed == 1)
}
