//! The history of a company (every membership and allocation event), kept after the company
//! is deleted. No HTTP types here.

use sea_orm::{ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set};

use crate::companies::CompaniesCtx;
use crate::companies::lookup::{DEFAULT_PAGE, company_id, rfc3339};
use crate::companies::model::HistoryEntry;
use crate::db::entity::{companies, company_history, company_members};
use crate::db::{new_id, now};
use crate::error::AppError;
use crate::http::{List, Page};
use crate::iam::auth::Auth;
use crate::iam::people::Person;
use crate::ids::CompanyId;

/// One history event.
pub(crate) struct Event<'a> {
    pub action: &'a str,
    pub subject_type: &'a str,
    pub subject_id: &'a str,
    pub subject_name: &'a str,
    pub detail: String,
}

pub(crate) async fn record(conn: &impl ConnectionTrait, c: &companies::Model, actor: Option<&Person>, e: Event<'_>) -> Result<(), AppError> {
    company_history::ActiveModel {
        id: Set(new_id()),
        company_id: Set(c.id.clone()),
        company_name: Set(c.name.clone()),
        actor_id: Set(actor.map(|a| a.id.clone())),
        actor_name: Set(actor.map(|a| a.name.clone()).unwrap_or_default()),
        action: Set(e.action.into()),
        subject_type: Set(e.subject_type.into()),
        subject_id: Set(e.subject_id.into()),
        subject_name: Set(e.subject_name.into()),
        detail: Set(e.detail),
        created_at: Set(now()),
    }
    .insert(conn)
    .await?;
    Ok(())
}

pub(crate) fn user_event<'a>(action: &'a str, u: &'a Person, detail: String) -> Event<'a> {
    Event { action, subject_type: "user", subject_id: u.id.as_str(), subject_name: &u.email, detail }
}


fn entry(h: company_history::Model) -> HistoryEntry {
    HistoryEntry {
        id: h.id,
        sme_id: h.company_id.into(),
        sme_name: h.company_name,
        actor_id: h.actor_id.map(String::from),
        actor_name: h.actor_name,
        action: h.action,
        subject_type: h.subject_type,
        subject_id: h.subject_id,
        subject_name: h.subject_name,
        detail: h.detail,
        created_at: rfc3339(h.created_at),
    }
}

async fn history_page(db: &DatabaseConnection, filter: Condition, page: Page) -> Result<List<HistoryEntry>, AppError> {
    let (offset, limit) = page.checked(DEFAULT_PAGE)?;
    let q = company_history::Entity::find().filter(filter);
    let total = q.clone().count(db).await?;
    let rows = q
        .order_by_desc(company_history::Column::CreatedAt)
        .order_by_desc(company_history::Column::Id)
        .offset(offset)
        .limit(limit)
        .all(db)
        .await?;
    Ok(List { items: rows.into_iter().map(entry).collect(), total })
}

/// The caller's company's history (admins).
pub async fn company_history(cx: &CompaniesCtx, admin: &Auth, page: Page) -> Result<List<HistoryEntry>, AppError> {
    let c = company_id(admin)?;
    history_page(&cx.db, Condition::all().add(company_history::Column::CompanyId.eq(c)), page).await
}

/// The history of the caller's own companies, and every event they took part in or were the
/// subject of (also in companies they left or that were deleted).
pub async fn my_history(cx: &CompaniesCtx, auth: &Auth, page: Page) -> Result<List<HistoryEntry>, AppError> {
    let mine: Vec<CompanyId> = company_members::Entity::find()
        .filter(company_members::Column::UserId.eq(auth.user_id.clone()))
        .all(&cx.db)
        .await?
        .into_iter()
        .map(|m| m.company_id)
        .collect();
    let mut filter = Condition::any()
        .add(company_history::Column::ActorId.eq(auth.user_id.clone()))
        .add(company_history::Column::SubjectId.eq(auth.user_id.clone()));
    if !mine.is_empty() {
        filter = filter.add(company_history::Column::CompanyId.is_in(mine));
    }
    history_page(&cx.db, filter, page).await
}
