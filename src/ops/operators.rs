//! Who runs the market: `zmarket operator grant --email E` / `revoke`. The market keeps at least
//! one operator once it has one: revoking the last answers 409.

use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, IntoActiveModel, QueryFilter, Set};
use serde_json::json;

use crate::db::entity::users;
use crate::db::{for_update, now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::model::Email;
use crate::ops::audit;
use crate::ops::model::{Actor, AuditAction};

/// The operator making a call, as the audit names them.
pub async fn actor_of(db: &DatabaseConnection, op: &crate::iam::auth::Operator) -> Result<Actor, AppError> {
    let u = users::Entity::find_by_id(op.0.user_id.clone()).one(db).await?.ok_or(AppError::Refused(Msg::NotOperator))?;
    Ok(Actor { id: u.id.into(), email: u.email })
}

/// The operators, locked for the transaction's check-then-write (on PostgreSQL a writer that waited
/// reads the rows as the first left them).
pub async fn locked_operators(conn: &impl ConnectionTrait) -> Result<Vec<users::Model>, AppError> {
    Ok(for_update(conn, users::Entity::find().filter(users::Column::Operator.eq(true))).all(conn).await?)
}

/// Sets or clears the operator flag of the account with this email; answers whether it changed.
pub async fn set_operator(db: &DatabaseConnection, email: &str, operator: bool) -> Result<bool, AppError> {
    let email = Email::parse(Some(email)).map_err(|_| AppError::invalid("email", Msg::InvalidField("email")))?;
    let txn = write_txn(db).await?;
    let operators = locked_operators(&txn).await?;
    let user = for_update(&txn, users::Entity::find().filter(users::Column::Email.eq(email.as_str())))
        .one(&txn)
        .await?
        .ok_or(AppError::Refused(Msg::UserNotFound))?;
    if user.operator == operator {
        return Ok(false);
    }
    if !operator && operators.iter().all(|o| o.id == user.id) {
        return Err(AppError::Refused(Msg::LastOperator));
    }
    let id = user.id.clone();
    let mut row = user.into_active_model();
    row.operator = Set(operator);
    row.updated_at = Set(now());
    row.update(&txn).await?;
    let action = if operator { AuditAction::OperatorGrant } else { AuditAction::OperatorRevoke };
    audit::record(&txn, &Actor::command_line(), action, &format!("user:{id}"), json!({"email": email.as_str(), "before": {"operator": !operator}, "after": {"operator": operator}})).await?;
    txn.commit().await?;
    Ok(true)
}
