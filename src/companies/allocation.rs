//! Allocating a company's resources (devices, apps) to its members. No HTTP types here.

use sea_orm::{ActiveEnum, ActiveModelTrait, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set};

use crate::ids::{self, UserId};
use crate::companies::CompaniesCtx;
use crate::companies::lookup::{DEFAULT_PAGE, admin_company_locked, company_id, rfc3339, user};
use crate::companies::history::{Event, record};
use crate::companies::model::*;
use crate::db::entity::resource_assignments;
use crate::db::enums::ResourceType;
use crate::db::now;
use crate::db::write_txn;
use crate::error::{AppError, Msg};
use crate::http::{List, Page};
use crate::iam::auth::{Auth, membership};
use crate::iam::people;
use crate::lang::Lang;


struct Allocation {
    kind: ResourceType,
    user_id: UserId,
    resource_id: String,
}

/// Checks an assign/unassign request: a company admin, a member of the same company, a
/// resource of the company.
fn allocation(auth: &Auth, req: AssignRequest) -> Result<Allocation, AppError> {
    let kind = ResourceType::parse(req.resource_type.as_deref())?;
    if auth.company().is_none() || !auth.is_admin() {
        return Err(AppError::Refused(kind.no_permission()));
    }
    let user_id = ids::required(req.user_id, "user_id", Msg::InvalidField("user_id"))?;
    let resource_id = ids::required(req.resource_id, "resource_id", Msg::InvalidField("resource_id"))?;
    Ok(Allocation { kind, user_id, resource_id })
}

pub async fn assign(cx: &CompaniesCtx, auth: &Auth, req: AssignRequest) -> Result<(), AppError> {
    let a = allocation(auth, req)?;
    let txn = write_txn(&cx.db).await?;
    let c = admin_company_locked(&txn, auth).await?;
    membership(&txn, &c.id, &a.user_id).await?.ok_or(AppError::Refused(Msg::MemberNotFound))?;
    if !cx.resources.assignable(&(&txn).into(), a.kind, &a.resource_id, &c.id).await? {
        return Err(AppError::Refused(Msg::ResourceNotFound));
    }
    let key = (c.id.clone(), a.kind, a.resource_id.clone(), a.user_id.clone());
    if resource_assignments::Entity::find_by_id(key).one(&txn).await?.is_some() {
        return Ok(()); // already assigned: nothing changes
    }
    resource_assignments::ActiveModel {
        company_id: Set(c.id.clone()),
        user_id: Set(UserId::from(&a.user_id)),
        resource_type: Set(a.kind),
        resource_id: Set(a.resource_id.clone()),
        assigned_at: Set(now()),
        assigned_by: Set(UserId::from(&auth.user_id)),
    }
    .insert(&txn)
    .await?;
    let me = user(&txn, &auth.user_id).await?;
    let them = user(&txn, &a.user_id).await?;
    let kind = a.kind.to_value();
    let e = Event { action: "resource_assigned", subject_type: &kind, subject_id: &a.resource_id, subject_name: &a.resource_id, detail: them.email.clone() };
    record(&txn, &c, Some(&me), e).await?;
    txn.commit().await?;
    Ok(())
}

pub async fn unassign(cx: &CompaniesCtx, auth: &Auth, req: AssignRequest) -> Result<(), AppError> {
    let a = allocation(auth, req)?;
    let txn = write_txn(&cx.db).await?;
    let c = admin_company_locked(&txn, auth).await?;
    membership(&txn, &c.id, &a.user_id).await?.ok_or(AppError::Refused(Msg::MemberNotFound))?;
    let key = (c.id.clone(), a.kind, a.resource_id.clone(), a.user_id.clone());
    let gone = resource_assignments::Entity::delete_by_id(key).exec(&txn).await?;
    if gone.rows_affected == 0 {
        return Err(AppError::Refused(Msg::AssignmentNotFound));
    }
    let me = user(&txn, &auth.user_id).await?;
    let them = user(&txn, &a.user_id).await?;
    let kind = a.kind.to_value();
    let e = Event { action: "resource_unassigned", subject_type: &kind, subject_id: &a.resource_id, subject_name: &a.resource_id, detail: them.email.clone() };
    record(&txn, &c, Some(&me), e).await?;
    txn.commit().await?;
    Ok(())
}

/// The company's assignments: an admin sees all (optionally one member's), a member only theirs.
pub async fn assignments(cx: &CompaniesCtx, auth: &Auth, q: AssignmentQuery, lang: Lang) -> Result<List<Assignment>, AppError> {
    let (offset, limit) = Page { offset: q.offset, limit: q.limit }.checked(DEFAULT_PAGE.max(100))?;
    let c = company_id(auth)?;
    let mut find = resource_assignments::Entity::find().filter(resource_assignments::Column::CompanyId.eq(c));
    if !auth.is_admin() {
        find = find.filter(resource_assignments::Column::UserId.eq(auth.user_id.clone()));
    } else if let Some(u) = q.user_id.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
        find = find.filter(resource_assignments::Column::UserId.eq(u));
    }
    let total = find.clone().count(&cx.db).await?;
    let rows = find
        .order_by_asc(resource_assignments::Column::AssignedAt)
        .order_by_asc(resource_assignments::Column::ResourceId)
        .offset(offset)
        .limit(limit)
        .all(&cx.db)
        .await?;
    let ids: Vec<UserId> = rows.iter().map(|r| r.user_id.clone()).collect();
    let people = people::by_ids(&cx.db, ids).await?;
    // What the resources are called (issue 26: the table showed bare ids).
    let of = |kind: ResourceType| rows.iter().filter(|r| r.resource_type == kind).map(|r| r.resource_id.clone()).collect::<Vec<_>>();
    let device_names = cx.resources.names(&(&cx.db).into(), ResourceType::Device, &of(ResourceType::Device), lang).await?;
    let app_names = cx.resources.names(&(&cx.db).into(), ResourceType::App, &of(ResourceType::App), lang).await?;
    let name_of = |r: &resource_assignments::Model| {
        let names = if r.resource_type == ResourceType::Device { &device_names } else { &app_names };
        names.iter().find(|(id, _)| *id == r.resource_id).map(|(_, n)| n.clone()).unwrap_or_default()
    };
    let items = rows
        .into_iter()
        .map(|r| {
            let u = people.get(&r.user_id);
            Assignment {
                resource_name: name_of(&r),
                user_name: u.map(|u| u.name.clone()).unwrap_or_default(),
                user_email: u.map(|u| u.email.clone()).unwrap_or_default(),
                user_id: r.user_id.into(),
                resource_type: r.resource_type,
                resource_id: r.resource_id,
                assigned_at: rfc3339(r.assigned_at),
                assigned_by: r.assigned_by.into(),
            }
        })
        .collect();
    Ok(List { items, total })
}

