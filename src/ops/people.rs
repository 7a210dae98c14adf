//! The people: search, suspend and unsuspend, and the operator's grant of coins.
//!
//! Suspending someone ends their sessions (revoked in the transaction; the `sessions` version moves
//! by m0014's and m0021's triggers, so every instance refuses the token on its next call), stops
//! their rentals (ended and settled like a rental whose time is up), withdraws their boxes from
//! the market (`rentable` off; Z-CLOUD machines others rent on them get the notice, as when an
//! owner withdraws a host) and refuses their sign-in with the reason. Each part goes through the
//! domain that owns it (iam, apps, devices).

use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{
    ActiveModelTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, IntoActiveModel, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use serde_json::json;

use crate::ids::UserId;
use crate::billing::ledger::AccountRef;
use crate::billing::model::{Entry, TopUp};
use crate::db::entity::users;
use crate::db::{for_update, now, write_txn};
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::lang::Lang;
use crate::ops::audit;
use crate::ops::model::{Actor, AuditAction, Suspend, UserRow};
use crate::ops::operators::locked_operators;

pub async fn list(conn: &impl ConnectionTrait, q: Option<String>, offset: u64, limit: u64) -> Result<List<UserRow>, AppError> {
    let mut find = users::Entity::find();
    if let Some(q) = q {
        let pattern = format!("%{}%", q.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_"));
        find = find.filter(
            Condition::any()
                .add(Expr::expr(Func::lower(Expr::col(users::Column::Email))).like(sea_orm::sea_query::LikeExpr::new(pattern.clone()).escape('\\')))
                .add(Expr::expr(Func::lower(Expr::col(users::Column::Name))).like(sea_orm::sea_query::LikeExpr::new(pattern).escape('\\'))),
        );
    }
    let total = find.clone().count(conn).await?;
    let rows = find.order_by_desc(users::Column::CreatedAt).order_by_desc(users::Column::Id).offset(offset).limit(limit).all(conn).await?;
    let ids: Vec<UserId> = rows.iter().map(|u| u.id.clone()).collect();
    let accounts = crate::billing::store::balances(conn, &ids.iter().map(|id| AccountRef::User(id.clone().into())).collect::<Vec<_>>()).await?;
    let boxes = crate::devices::binding::counts_by_owner(conn, &ids).await?;
    let items = rows
        .into_iter()
        .map(|u| UserRow {
            balance: accounts.get(&AccountRef::User(u.id.clone().into()).id()).copied().unwrap_or(0),
            devices: boxes.get(&u.id).copied().unwrap_or(0),
            verified: u.email_verified_at.is_some(),
            suspended: u.suspended_at.is_some(),
            suspended_reason: u.suspended_reason,
            operator: u.operator,
            id: u.id.into(),
            email: u.email,
            name: u.name,
            created_at: u.created_at,
        })
        .collect();
    Ok(List { items, total })
}

async fn one(conn: &impl ConnectionTrait, id: &UserId) -> Result<UserRow, AppError> {
    let u = users::Entity::find_by_id(id.to_string()).one(conn).await?.ok_or(AppError::Refused(Msg::UserNotFound))?;
    let mut list = list(conn, Some(u.email.clone()), 0, 100).await?;
    list.items.retain(|r| r.id == u.id);
    list.items.pop().ok_or(AppError::Refused(Msg::UserNotFound))
}

pub async fn suspend(db: &DatabaseConnection, devices: &crate::devices::DevicesCtx, actor: &Actor, user_id: &UserId, req: Suspend) -> Result<UserRow, AppError> {
    if *user_id == actor.id {
        return Err(AppError::Refused(Msg::SuspendSelf));
    }
    let txn = write_txn(db).await?;
    let operators = locked_operators(&txn).await?;
    let user = for_update(&txn, users::Entity::find_by_id(user_id.to_string())).one(&txn).await?.ok_or(AppError::Refused(Msg::UserNotFound))?;
    if user.operator && operators.iter().all(|o| o.id == user.id || o.suspended_at.is_some()) {
        return Err(AppError::Refused(Msg::LastOperator));
    }
    let before = json!({"suspended": user.suspended_at.is_some(), "reason": user.suspended_reason});
    let t = now();
    let mut row = user.into_active_model();
    row.suspended_at = Set(Some(t));
    row.suspended_reason = Set(Some(req.reason.clone()));
    row.updated_at = Set(t);
    row.update(&txn).await?;
    let ended_sessions = crate::iam::sessions::end_all(&txn, user_id, None, "suspended", t).await?;
    // Their rentals end and are settled (the meter's last minutes captured, the hold released).
    let ended_rentals = crate::apps::rental::end_all_of(&txn, user_id).await?;
    // Their boxes stop being offered; Z-CLOUD machines rented on them get the notice.
    let withdrawn = crate::devices::sharing::withdraw_all_of(devices, &txn, user_id).await?;
    let detail = json!({
        "before": before,
        "after": {"suspended": true, "reason": req.reason},
        "sessions_ended": ended_sessions,
        "rentals_ended": ended_rentals,
        "devices_withdrawn": withdrawn,
    });
    audit::record(&txn, actor, AuditAction::UserSuspend, &format!("user:{user_id}"), detail).await?;
    let answer = one(&txn, user_id).await?;
    txn.commit().await?;
    if !withdrawn.is_empty() {
        devices.public.changed();
    }
    Ok(answer)
}

pub async fn unsuspend(db: &DatabaseConnection, actor: &Actor, user_id: &UserId, reason: String) -> Result<UserRow, AppError> {
    let txn = write_txn(db).await?;
    let user = for_update(&txn, users::Entity::find_by_id(user_id.to_string())).one(&txn).await?.ok_or(AppError::Refused(Msg::UserNotFound))?;
    if user.suspended_at.is_some() {
        let before = json!({"suspended": true, "reason": user.suspended_reason});
        let mut row = user.into_active_model();
        row.suspended_at = Set(None);
        row.suspended_reason = Set(None);
        row.updated_at = Set(now());
        row.update(&txn).await?;
        audit::record(&txn, actor, AuditAction::UserUnsuspend, &format!("user:{user_id}"), json!({"before": before, "after": {"suspended": false}, "reason": reason})).await?;
    }
    let answer = one(&txn, user_id).await?;
    txn.commit().await?;
    Ok(answer)
}

/// Coins into a person's wallet through the ledger (`billing::issuance::grant_to_user`, what
/// `zmarket coins grant` posts). With an `Idempotency-Key` the ledger key is derived from it, so
/// a retry never grants twice.
pub async fn grant(db: &DatabaseConnection, actor: &Actor, user_id: &UserId, req: TopUp, idempotency_key: Option<&str>, lang: Lang) -> Result<Entry, AppError> {
    let txn = write_txn(db).await?;
    users::Entity::find_by_id(user_id.to_string()).one(&txn).await?.ok_or(AppError::Refused(Msg::UserNotFound))?;
    let key = match idempotency_key {
        Some(k) => format!("ops_grant:{}:{user_id}:{k}", actor.id),
        None => format!("ops_grant:{}", crate::db::new_id()),
    };
    let to = AccountRef::User(user_id.clone());
    let posted = crate::billing::issuance::grant_to_user(&txn, user_id, req.amount, key, req.memo.clone()).await?;
    let entry = posted.entry_of(&to).cloned().ok_or_else(|| AppError::Internal(anyhow::anyhow!("grant without the person's entry")))?;
    if !posted.replayed {
        let detail = json!({"amount": req.amount, "memo": req.memo, "before": {"balance": entry.balance_after - req.amount}, "after": {"balance": entry.balance_after}});
        audit::record(&txn, actor, AuditAction::UserGrant, &format!("user:{user_id}"), detail).await?;
    }
    // A grant names nothing but its memo: no title to look up.
    let view = crate::billing::wallet::entry_view(entry, None, lang);
    txn.commit().await?;
    Ok(view)
}
