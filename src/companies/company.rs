//! A company: creation, rename, deletion, members, leaving; and the membership primitives the
//! other company rules share. No HTTP types here.
//!
//! The caller's company is always the `sme` of their token: nothing here takes a company id from
//! a request except applying to, or leaving, a company.

use sea_orm::{ActiveEnum, ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set};
use serde_json::json;

use crate::companies::CompaniesCtx;
use crate::companies::lookup::{DEFAULT_PAGE, admin_company_locked, company, company_id, company_locked, rfc3339, user};
use crate::companies::history::{Event, record, user_event};
use crate::companies::model::*;
use crate::db::entity::{companies, company_members, member_records, resource_assignments};
use crate::db::enums::Role;
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::http::{List, Page};
use crate::iam::auth::{Auth, membership};
use crate::iam::model::Organization;
use crate::iam::people;
use crate::iam::sessions::organizations;
use crate::ids::{CompanyId, UserId};





pub(crate) fn organization(c: companies::Model) -> Organization {
    Organization { id: c.id.into(), name: c.name, network_id: c.network_id, owner: c.owner_id.into() }
}

pub(crate) async fn admin_count(conn: &impl ConnectionTrait, company_id: &CompanyId) -> Result<u64, AppError> {
    Ok(company_members::Entity::find()
        .filter(company_members::Column::CompanyId.eq(company_id))
        .filter(company_members::Column::Role.eq(Role::Admin))
        .count(conn)
        .await?)
}

/// Adds `user_id` to the company with `role`; an existing membership is kept as it is.
pub(crate) async fn add_member(conn: &impl ConnectionTrait, company_id: &CompanyId, user_id: &UserId, role: Role) -> Result<bool, AppError> {
    if membership(conn, company_id, user_id).await?.is_some() {
        return Ok(false);
    }
    company_members::ActiveModel {
        company_id: Set(company_id.into()),
        user_id: Set(user_id.into()),
        role: Set(role),
        joined_at: Set(now()),
    }
    .insert(conn)
    .await?;
    Ok(true)
}

/// Takes `user_id` out of the company: membership, assignments, and ownership (which passes to
/// the longest-standing remaining admin). Refuses to remove the last admin.
pub(crate) async fn take_out(conn: &impl ConnectionTrait, c: &companies::Model, m: &company_members::Model) -> Result<(), AppError> {
    if m.role == Role::Admin && admin_count(conn, &c.id).await? <= 1 {
        return Err(AppError::Refused(Msg::LastAdmin));
    }
    company_members::Entity::delete_by_id((c.id.clone(), m.user_id.clone())).exec(conn).await?;
    resource_assignments::Entity::delete_many()
        .filter(resource_assignments::Column::CompanyId.eq(c.id.clone()))
        .filter(resource_assignments::Column::UserId.eq(m.user_id.clone()))
        .exec(conn)
        .await?;
    if c.owner_id == m.user_id {
        let next = company_members::Entity::find()
            .filter(company_members::Column::CompanyId.eq(c.id.clone()))
            .filter(company_members::Column::Role.eq(Role::Admin))
            .order_by_asc(company_members::Column::JoinedAt)
            .one(conn)
            .await?;
        if let Some(next) = next {
            companies::Entity::update_many()
                .col_expr(companies::Column::OwnerId, next.user_id.into())
                .filter(companies::Column::Id.eq(c.id.clone()))
                .exec(conn)
                .await?;
        }
    }
    Ok(())
}



pub async fn list(cx: &CompaniesCtx, auth: &Auth) -> Result<Vec<Organization>, AppError> {
    organizations(&cx.db, &auth.user_id).await
}

pub async fn create(cx: &CompaniesCtx, auth: &Auth, name: CompanyName) -> Result<Organization, AppError> {
    let name = name.into_string();
    let txn = write_txn(&cx.db).await?;
    let me = user(&txn, &auth.user_id).await?;
    let c = companies::ActiveModel {
        id: Set(CompanyId::new()),
        name: Set(name),
        network_id: Set(hex::encode(rand::random::<[u8; 8]>())),
        owner_id: Set(UserId::from(&me.id)),
        created_at: Set(now()),
    }
    .insert(&txn)
    .await?;
    add_member(&txn, &c.id, &me.id, Role::Admin).await?;
    record(&txn, &c, Some(&me), Event { action: "company_created", subject_type: "company", subject_id: c.id.as_str(), subject_name: &c.name, detail: String::new() })
        .await?;
    txn.commit().await?;
    Ok(organization(c))
}

pub async fn rename(cx: &CompaniesCtx, admin: &Auth, name: CompanyName) -> Result<Organization, AppError> {
    let name = name.into_string();
    let txn = write_txn(&cx.db).await?;
    let c = admin_company_locked(&txn, admin).await?;
    let me = user(&txn, &admin.user_id).await?;
    let old = c.name.clone();
    let mut a: companies::ActiveModel = c.into();
    a.name = Set(name.clone());
    let c = a.update(&txn).await?;
    if old != name {
        record(&txn, &c, Some(&me), Event { action: "company_renamed", subject_type: "company", subject_id: c.id.as_str(), subject_name: &c.name, detail: old })
            .await?;
    }
    txn.commit().await?;
    Ok(organization(c))
}

/// Deletes the caller's company: refused while devices are linked or AI compute is held.
pub async fn delete(cx: &CompaniesCtx, admin: &Auth) -> Result<(), AppError> {
    let txn = write_txn(&cx.db).await?;
    let c = admin_company_locked(&txn, admin).await?;
    let reasons = cx.resources.held(&txn, &c.id).await?;
    if !reasons.is_empty() {
        return Err(AppError::Explained { msg: Msg::CompanyNotDeletable, data: json!({ "reasons": reasons }) });
    }
    let me = user(&txn, &admin.user_id).await?;
    let members = company_members::Entity::find().filter(company_members::Column::CompanyId.eq(c.id.clone())).count(&txn).await?;
    record(
        &txn,
        &c,
        Some(&me),
        Event { action: "company_deleted", subject_type: "company", subject_id: c.id.as_str(), subject_name: &c.name, detail: format!("{members} members") },
    )
    .await?;
    // Members, records and assignments go with the company (foreign keys cascade); history stays.
    // Explicit deletes too, so a backend without enforced foreign keys ends in the same state.
    resource_assignments::Entity::delete_many().filter(resource_assignments::Column::CompanyId.eq(c.id.clone())).exec(&txn).await?;
    member_records::Entity::delete_many().filter(member_records::Column::CompanyId.eq(c.id.clone())).exec(&txn).await?;
    company_members::Entity::delete_many().filter(company_members::Column::CompanyId.eq(c.id.clone())).exec(&txn).await?;
    companies::Entity::delete_by_id(c.id).exec(&txn).await?;
    txn.commit().await?;
    Ok(())
}

/// What the companies among `ids` are called, by id (the operator's list of top-up codes names
/// the companies that redeemed them).
pub async fn names(conn: &impl ConnectionTrait, ids: Vec<CompanyId>) -> Result<std::collections::HashMap<CompanyId, String>, AppError> {
    if ids.is_empty() {
        return Ok(Default::default());
    }
    Ok(companies::Entity::find().filter(companies::Column::Id.is_in(ids)).all(conn).await?.into_iter().map(|c| (c.id, c.name)).collect())
}

// ---- members ----

/// The administrators of company `company_id`, by user id: who is told about its boxes and its
/// wallet (devices::notify, billing::runway).
pub async fn admins(conn: &impl ConnectionTrait, company_id: &CompanyId) -> Result<Vec<UserId>, AppError> {
    Ok(company_members::Entity::find()
        .select_only()
        .column(company_members::Column::UserId)
        .filter(company_members::Column::CompanyId.eq(company_id))
        .filter(company_members::Column::Role.eq(Role::Admin))
        .into_tuple()
        .all(conn)
        .await?)
}

pub async fn members(cx: &CompaniesCtx, auth: &Auth, page: Page) -> Result<List<Member>, AppError> {
    let (offset, limit) = page.checked(DEFAULT_PAGE.max(50))?;
    let c = company(&cx.db, company_id(auth)?).await?;
    let q = company_members::Entity::find().filter(company_members::Column::CompanyId.eq(c.id.clone()));
    let total = q.clone().count(&cx.db).await?;
    let rows = q.order_by_asc(company_members::Column::JoinedAt).offset(offset).limit(limit).all(&cx.db).await?;
    let ids: Vec<UserId> = rows.iter().map(|m| m.user_id.clone()).collect();
    let people = people::by_ids(&cx.db, ids).await?;
    let items = rows
        .into_iter()
        .filter_map(|m| {
            let u = people.get(&m.user_id)?;
            Some(Member {
                owner: c.owner_id == m.user_id,
                user_id: m.user_id.into(),
                name: u.name.clone(),
                email: u.email.clone(),
                role: m.role,
                joined_at: rfc3339(m.joined_at),
            })
        })
        .collect();
    Ok(List { items, total })
}

pub async fn remove_member(cx: &CompaniesCtx, admin: &Auth, TargetUser(target): TargetUser) -> Result<(), AppError> {
    let txn = write_txn(&cx.db).await?;
    let c = admin_company_locked(&txn, admin).await?;
    let m = membership(&txn, &c.id, &target).await?.ok_or(AppError::Refused(Msg::MemberNotFound))?;
    take_out(&txn, &c, &m).await?;
    let me = user(&txn, &admin.user_id).await?;
    let them = user(&txn, &target).await?;
    let action = if target == admin.user_id { "member_left" } else { "member_removed" };
    record(&txn, &c, Some(&me), user_event(action, &them, m.role.to_value())).await?;
    txn.commit().await?;
    Ok(())
}

/// The caller leaves a company they belong to (from any context).
pub async fn leave(cx: &CompaniesCtx, auth: &Auth, CompanyRef(sme): CompanyRef) -> Result<(), AppError> {
    let txn = write_txn(&cx.db).await?;
    let c = match company_locked(&txn, &sme).await {
        Err(e) if e.status() == axum::http::StatusCode::NOT_FOUND => return Err(AppError::Refused(Msg::NotCompanyMember)),
        c => c?,
    };
    let m = membership(&txn, &sme, &auth.user_id).await?.ok_or(AppError::Refused(Msg::NotCompanyMember))?;
    take_out(&txn, &c, &m).await?;
    let me = user(&txn, &auth.user_id).await?;
    record(&txn, &c, Some(&me), user_event("member_left", &me, m.role.to_value())).await?;
    txn.commit().await?;
    Ok(())
}

