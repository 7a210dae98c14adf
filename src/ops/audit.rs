//! The audit of operator writes: who (the operator), when, what (an action on a target) and the
//! detail (before/after), written in the transaction of the write it records.

use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set};
use serde_json::Value;

use crate::db::entity::ops_audit;
use crate::db::{new_id, now};
use crate::error::AppError;
use crate::http::List;
use crate::ops::model::{AuditAction, AuditEntry, Actor};

pub async fn record(conn: &impl ConnectionTrait, actor: &Actor, action: AuditAction, target: &str, detail: Value) -> Result<(), AppError> {
    ops_audit::ActiveModel {
        id: Set(new_id()),
        at: Set(now()),
        operator_id: Set(actor.id.clone().into()),
        operator_email: Set(actor.email.clone()),
        action: Set(action.as_str().to_string()),
        target: Set(target.to_string()),
        detail: Set(detail.to_string()),
    }
    .insert(conn)
    .await?;
    Ok(())
}

/// Newest first; `action` keeps one kind.
pub async fn list(conn: &impl ConnectionTrait, action: Option<AuditAction>, offset: u64, limit: u64) -> Result<List<AuditEntry>, AppError> {
    let mut q = ops_audit::Entity::find();
    if let Some(a) = action {
        q = q.filter(ops_audit::Column::Action.eq(a.as_str()));
    }
    let total = q.clone().count(conn).await?;
    let rows = q.order_by_desc(ops_audit::Column::At).order_by_desc(ops_audit::Column::Id).offset(offset).limit(limit).all(conn).await?;
    let items = rows
        .into_iter()
        .map(|r| AuditEntry {
            at: r.at,
            operator: r.operator_email,
            action: r.action,
            target: r.target,
            detail: serde_json::from_str(&r.detail).unwrap_or(Value::Null),
        })
        .collect();
    Ok(List { items, total })
}
