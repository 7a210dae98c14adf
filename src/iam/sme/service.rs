//! Company rules: creation, rename, deletion; membership by invitation (email link) or
//! application (company id); members; resource allocation; history. No HTTP types here.
//!
//! The caller's company is always the `sme` of their token: nothing here takes a company id from
//! a request except applying to, or leaving, a company.

use chrono::Duration;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Set,
};
use serde_json::json;

use crate::app::AppState;
use crate::db::entity::{companies, company_history, company_members, member_records, resource_assignments, users};
use crate::db::{new_id, now, write_txn};
use crate::error::{AppError, Msg};
use crate::http::{List, Page};
use crate::iam::model::{Email, Organization};
use crate::iam::service::{Auth, membership, organizations};
use crate::iam::sme::model::*;
use crate::iam::sme::resources;
use crate::iam::tokens;
use crate::mail::Mail;

const DEFAULT_PAGE: u64 = 20;

// ---- helpers ----

async fn user(conn: &impl ConnectionTrait, id: &str) -> Result<users::Model, AppError> {
    users::Entity::find_by_id(id.to_string()).one(conn).await?.ok_or(AppError::Unauthorized(Msg::SessionExpired))
}

async fn company(conn: &impl ConnectionTrait, id: &str) -> Result<companies::Model, AppError> {
    companies::Entity::find_by_id(id.to_string()).one(conn).await?.ok_or(AppError::NotFound(Msg::CompanyNotFound))
}

/// The caller's company (their token's `sme`), for calls any member may make.
fn company_id(auth: &Auth) -> Result<&str, AppError> {
    auth.company().ok_or(AppError::Forbidden(Msg::CompanyContextRequired))
}

fn organization(c: companies::Model) -> Organization {
    Organization { id: c.id, name: c.name, network_id: c.network_id, owner: c.owner_id }
}

/// One history event.
struct Event<'a> {
    action: &'a str,
    subject_type: &'a str,
    subject_id: &'a str,
    subject_name: &'a str,
    detail: String,
}

async fn record(conn: &impl ConnectionTrait, c: &companies::Model, actor: Option<&users::Model>, e: Event<'_>) -> Result<(), AppError> {
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

fn user_event<'a>(action: &'a str, u: &'a users::Model, detail: String) -> Event<'a> {
    Event { action, subject_type: "user", subject_id: &u.id, subject_name: &u.email, detail }
}

async fn admin_count(conn: &impl ConnectionTrait, company_id: &str) -> Result<u64, AppError> {
    Ok(company_members::Entity::find()
        .filter(company_members::Column::CompanyId.eq(company_id))
        .filter(company_members::Column::Role.eq(role::ADMIN))
        .count(conn)
        .await?)
}

/// Adds `user_id` to the company with `role`; an existing membership is kept as it is.
async fn add_member(conn: &impl ConnectionTrait, company_id: &str, user_id: &str, role: &str) -> Result<bool, AppError> {
    if membership(conn, company_id, user_id).await?.is_some() {
        return Ok(false);
    }
    company_members::ActiveModel {
        company_id: Set(company_id.into()),
        user_id: Set(user_id.into()),
        role: Set(role.into()),
        joined_at: Set(now()),
    }
    .insert(conn)
    .await?;
    Ok(true)
}

/// Takes `user_id` out of the company: membership, assignments, and ownership (which passes to
/// the longest-standing remaining admin). Refuses to remove the last admin.
async fn take_out(conn: &impl ConnectionTrait, c: &companies::Model, m: &company_members::Model) -> Result<(), AppError> {
    if m.role == role::ADMIN && admin_count(conn, &c.id).await? <= 1 {
        return Err(AppError::conflict(Msg::LastAdmin));
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
            .filter(company_members::Column::Role.eq(role::ADMIN))
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

fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339()
}

// ---- companies ----

pub async fn list(state: &AppState, auth: &Auth) -> Result<Vec<Organization>, AppError> {
    organizations(&state.db, &auth.user_id).await
}

pub async fn create(state: &AppState, auth: &Auth, req: NameRequest) -> Result<Organization, AppError> {
    let name = CompanyName::parse(req.name.as_deref())?.into_string();
    let txn = write_txn(&state.db).await?;
    let me = user(&txn, &auth.user_id).await?;
    let c = companies::ActiveModel {
        id: Set(new_id()),
        name: Set(name),
        network_id: Set(hex::encode(rand::random::<[u8; 8]>())),
        owner_id: Set(me.id.clone()),
        created_at: Set(now()),
    }
    .insert(&txn)
    .await?;
    add_member(&txn, &c.id, &me.id, role::ADMIN).await?;
    record(&txn, &c, Some(&me), Event { action: "company_created", subject_type: "company", subject_id: &c.id, subject_name: &c.name, detail: String::new() })
        .await?;
    txn.commit().await?;
    Ok(organization(c))
}

pub async fn rename(state: &AppState, admin: &Auth, req: NameRequest) -> Result<Organization, AppError> {
    let name = CompanyName::parse(req.name.as_deref())?.into_string();
    let txn = write_txn(&state.db).await?;
    let c = company(&txn, company_id(admin)?).await?;
    let me = user(&txn, &admin.user_id).await?;
    let old = c.name.clone();
    let mut a: companies::ActiveModel = c.into();
    a.name = Set(name.clone());
    let c = a.update(&txn).await?;
    if old != name {
        record(&txn, &c, Some(&me), Event { action: "company_renamed", subject_type: "company", subject_id: &c.id, subject_name: &c.name, detail: old })
            .await?;
    }
    txn.commit().await?;
    Ok(organization(c))
}

/// Deletes the caller's company: refused while devices are linked or AI compute is held.
pub async fn delete(state: &AppState, admin: &Auth) -> Result<(), AppError> {
    let txn = write_txn(&state.db).await?;
    let c = company(&txn, company_id(admin)?).await?;
    let mut reasons = Vec::new();
    if resources::company_devices_linked(&txn, &c.id).await? > 0 {
        reasons.push("devices_linked");
    }
    if resources::company_ai_compute_held(&txn, &c.id).await? > 0 {
        reasons.push("ai_compute_held");
    }
    if !reasons.is_empty() {
        return Err(AppError::Conflict { msg: Msg::CompanyNotDeletable, data: Some(json!({ "reasons": reasons })) });
    }
    let me = user(&txn, &admin.user_id).await?;
    let members = company_members::Entity::find().filter(company_members::Column::CompanyId.eq(c.id.clone())).count(&txn).await?;
    record(
        &txn,
        &c,
        Some(&me),
        Event { action: "company_deleted", subject_type: "company", subject_id: &c.id, subject_name: &c.name, detail: format!("{members} members") },
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

// ---- members ----

pub async fn members(state: &AppState, auth: &Auth, page: Page) -> Result<List<Member>, AppError> {
    let (offset, limit) = page.checked(DEFAULT_PAGE.max(50))?;
    let c = company(&state.db, company_id(auth)?).await?;
    let q = company_members::Entity::find().filter(company_members::Column::CompanyId.eq(c.id.clone()));
    let total = q.clone().count(&state.db).await?;
    let rows = q.order_by_asc(company_members::Column::JoinedAt).offset(offset).limit(limit).all(&state.db).await?;
    let ids: Vec<String> = rows.iter().map(|m| m.user_id.clone()).collect();
    let people = users::Entity::find().filter(users::Column::Id.is_in(ids)).all(&state.db).await?;
    let items = rows
        .into_iter()
        .filter_map(|m| {
            let u = people.iter().find(|u| u.id == m.user_id)?;
            Some(Member {
                owner: c.owner_id == m.user_id,
                user_id: m.user_id,
                name: u.name.clone(),
                email: u.email.clone(),
                role: m.role,
                joined_at: rfc3339(m.joined_at),
            })
        })
        .collect();
    Ok(List { items, total })
}

pub async fn remove_member(state: &AppState, admin: &Auth, req: UserIdRequest) -> Result<(), AppError> {
    let target = req.user_id.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).ok_or(AppError::invalid("user_id", Msg::InvalidField("user_id")))?;
    let txn = write_txn(&state.db).await?;
    let c = company(&txn, company_id(admin)?).await?;
    let m = membership(&txn, &c.id, &target).await?.ok_or(AppError::NotFound(Msg::MemberNotFound))?;
    take_out(&txn, &c, &m).await?;
    let me = user(&txn, &admin.user_id).await?;
    let them = user(&txn, &target).await?;
    let action = if target == admin.user_id { "member_left" } else { "member_removed" };
    record(&txn, &c, Some(&me), user_event(action, &them, m.role.clone())).await?;
    txn.commit().await?;
    Ok(())
}

/// The caller leaves a company they belong to (from any context).
pub async fn leave(state: &AppState, auth: &Auth, req: SmeIdRequest) -> Result<(), AppError> {
    let sme = req.sme_id.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).ok_or(AppError::invalid("sme_id", Msg::CompanyIdRequired))?;
    let txn = write_txn(&state.db).await?;
    let m = membership(&txn, &sme, &auth.user_id).await?.ok_or(AppError::Forbidden(Msg::NotCompanyMember))?;
    let c = company(&txn, &sme).await?;
    take_out(&txn, &c, &m).await?;
    let me = user(&txn, &auth.user_id).await?;
    record(&txn, &c, Some(&me), user_event("member_left", &me, m.role.clone())).await?;
    txn.commit().await?;
    Ok(())
}

// ---- invitations and applications ----

/// Whose side of a record the caller is on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// An admin of the record's company, in that company's context.
    Admin,
    /// The invited person or the applicant.
    Person,
}

fn effective_status(r: &member_records::Model, at: chrono::DateTime<chrono::Utc>) -> &str {
    if r.status == status::INVITED && r.expires_at.is_some_and(|e| e <= at) { status::EXPIRED } else { r.status.as_str() }
}

fn view(r: &member_records::Model, company_name: &str, name: &str, side: Side) -> MemberRecord {
    let st = effective_status(r, now());
    let shown = if st == status::APPLIED && side == Side::Admin { status::WAITING } else { st };
    let actionable = match (r.kind.as_str(), side) {
        (kind::APPLY, Side::Admin) => st == status::APPLIED,
        (kind::INVITE, Side::Person) => st == status::INVITED,
        _ => false,
    };
    MemberRecord {
        id: r.id.clone(),
        kind: r.kind.clone(),
        sme_id: r.company_id.clone(),
        sme_name: company_name.to_string(),
        email: r.email.clone(),
        name: name.to_string(),
        status: shown.to_string(),
        role: r.role.clone(),
        created_at: rfc3339(r.created_at),
        expires_at: r.expires_at.map(rfc3339),
        decided_at: r.decided_at.map(rfc3339),
        actionable,
    }
}

/// Views of several records, with company and person names looked up once.
async fn views(conn: &impl ConnectionTrait, rows: &[member_records::Model], side: impl Fn(&member_records::Model) -> Side) -> Result<Vec<MemberRecord>, AppError> {
    let cids: Vec<String> = rows.iter().map(|r| r.company_id.clone()).collect();
    let uids: Vec<String> = rows.iter().filter_map(|r| r.user_id.clone()).collect();
    let cs = companies::Entity::find().filter(companies::Column::Id.is_in(cids)).all(conn).await?;
    let us = users::Entity::find().filter(users::Column::Id.is_in(uids)).all(conn).await?;
    Ok(rows
        .iter()
        .map(|r| {
            let cname = cs.iter().find(|c| c.id == r.company_id).map(|c| c.name.as_str()).unwrap_or("");
            let uname = r.user_id.as_ref().and_then(|id| us.iter().find(|u| &u.id == id)).map(|u| u.name.as_str()).unwrap_or("");
            view(r, cname, uname, side(r))
        })
        .collect())
}

fn role_of(raw: Option<&str>) -> Result<&'static str, AppError> {
    match raw.map(str::trim) {
        None | Some("") | Some("member") => Ok(role::MEMBER),
        Some("admin") => Ok(role::ADMIN),
        _ => Err(AppError::invalid("role", Msg::InvalidField("role"))),
    }
}

pub async fn invite(state: &AppState, admin: &Auth, req: InviteRequest) -> Result<MemberRecord, AppError> {
    let email = Email::parse(req.email.as_deref())?;
    let role = role_of(req.role.as_deref())?;
    let txn = write_txn(&state.db).await?;
    let c = company(&txn, company_id(admin)?).await?;
    let me = user(&txn, &admin.user_id).await?;
    if let Some(existing) = users::Entity::find().filter(users::Column::Email.eq(email.as_str())).one(&txn).await?
        && membership(&txn, &c.id, &existing.id).await?.is_some() {
            return Err(AppError::conflict(Msg::AlreadyMember));
        }
    let t = now();
    // A new invitation replaces an outstanding one to the same address: the old link expires.
    member_records::Entity::update_many()
        .col_expr(member_records::Column::Status, status::EXPIRED.into())
        .col_expr(member_records::Column::ExpiresAt, Some(t).into())
        .filter(member_records::Column::CompanyId.eq(c.id.clone()))
        .filter(member_records::Column::Kind.eq(kind::INVITE))
        .filter(member_records::Column::Email.eq(email.as_str()))
        .filter(member_records::Column::Status.eq(status::INVITED))
        .exec(&txn)
        .await?;
    let code = tokens::random_token();
    let ttl = state.config.auth.invitation_ttl_secs;
    let r = member_records::ActiveModel {
        id: Set(new_id()),
        kind: Set(kind::INVITE.into()),
        company_id: Set(c.id.clone()),
        email: Set(email.as_str().into()),
        user_id: Set(None),
        role: Set(role.into()),
        status: Set(status::INVITED.into()),
        code_hash: Set(Some(tokens::hash_token(&code))),
        expires_at: Set(Some(t + Duration::seconds(ttl as i64))),
        created_by: Set(me.id.clone()),
        created_at: Set(t),
        decided_at: Set(None),
        decided_by: Set(None),
        read_by_admin: Set(true),
        read_by_user: Set(false),
    }
    .insert(&txn)
    .await?;
    record(&txn, &c, Some(&me), Event { action: "member_invited", subject_type: "user", subject_id: "", subject_name: email.as_str(), detail: role.into() })
        .await?;

    let link = format!("{}/iam/v1/sme/join?code={code}", state.config.server.public_url.trim_end_matches('/'));
    let product = &state.config.product_name;
    let days = (ttl / 86400).max(1);
    let (inviter, company_name) = (&me.name, &c.name);
    let body = format!(
        "{inviter} invited you to join the company \"{company_name}\" on {product}.\n\n\
         Open this link, signed in with this email address, to join:\n{link}\n\n\
         The invitation is valid for {days} days. If you do not want to join, ignore this message.\n\n\
         {inviter} 邀请您加入 {product} 上的企业「{company_name}」。\n\n\
         请使用本邮箱登录后打开以下链接加入：\n{link}\n\n邀请 {days} 天内有效。如果您不想加入，请忽略本邮件。\n"
    );
    let subject = format!("Invitation to join {company_name} / 邀请您加入 {company_name} - {product}");
    state.mailer.enqueue(&txn, Mail { to: email.as_str(), subject: &subject, body: &body, link: Some(&link) }).await?;
    txn.commit().await?;
    state.mailer.wake();
    Ok(view(&r, &c.name, "", Side::Admin))
}

/// Accepts an invitation for `me` (the checks of a pending, unexpired invitation to `me`'s
/// address are the caller's). Returns the updated record.
async fn accept_invitation(conn: &impl ConnectionTrait, r: member_records::Model, me: &users::Model) -> Result<member_records::Model, AppError> {
    let c = company(conn, &r.company_id).await?;
    add_member(conn, &c.id, &me.id, &r.role).await?;
    let mut a: member_records::ActiveModel = r.into();
    a.status = Set(status::ACCEPTED.into());
    a.user_id = Set(Some(me.id.clone()));
    a.decided_at = Set(Some(now()));
    a.decided_by = Set(Some(me.id.clone()));
    a.read_by_admin = Set(false);
    a.read_by_user = Set(true);
    let r = a.update(conn).await?;
    record(conn, &c, Some(me), user_event("invitation_accepted", me, r.role.clone())).await?;
    Ok(r)
}

/// Marks an invitation found past its expiry as `expired` and answers the 409 for it.
async fn refuse_expired(conn: &impl ConnectionTrait, r: &member_records::Model) -> Result<AppError, AppError> {
    if r.status == status::INVITED {
        member_records::Entity::update_many()
            .col_expr(member_records::Column::Status, status::EXPIRED.into())
            .filter(member_records::Column::Id.eq(r.id.clone()))
            .exec(conn)
            .await?;
    }
    Ok(AppError::Conflict { msg: Msg::InvitationExpired, data: Some(json!({ "status": status::EXPIRED, "sme_id": r.company_id })) })
}

fn not_pending(r: &member_records::Model) -> AppError {
    AppError::Conflict { msg: Msg::RecordNotPending, data: Some(json!({ "status": r.status, "sme_id": r.company_id })) }
}

/// The invitation link: accepts the invitation for the signed-in caller, whose email must be
/// the invited one.
pub async fn join(state: &AppState, auth: &Auth, code: Option<&str>) -> Result<JoinResult, AppError> {
    let code = code.map(str::trim).filter(|c| !c.is_empty()).ok_or(AppError::invalid("code", Msg::InvitationNotFound))?;
    let txn = write_txn(&state.db).await?;
    let r = member_records::Entity::find()
        .filter(member_records::Column::CodeHash.eq(tokens::hash_token(code)))
        .one(&txn)
        .await?
        .ok_or(AppError::NotFound(Msg::InvitationNotFound))?;
    let me = user(&txn, &auth.user_id).await?;
    if r.email != me.email {
        return Err(AppError::Forbidden(Msg::InvitationNotForYou));
    }
    let sme_id = r.company_id.clone();
    match effective_status(&r, now()) {
        status::INVITED => {
            accept_invitation(&txn, r, &me).await?;
        }
        // Opening the link again after joining is fine.
        status::ACCEPTED if r.user_id.as_deref() == Some(me.id.as_str()) => {}
        status::EXPIRED => {
            let e = refuse_expired(&txn, &r).await?;
            txn.commit().await?;
            return Err(e);
        }
        _ => return Err(not_pending(&r)),
    }
    txn.commit().await?;
    Ok(JoinResult { sme_id, status: status::ACCEPTED.into() })
}

pub async fn apply(state: &AppState, auth: &Auth, req: SmeIdRequest) -> Result<MemberRecord, AppError> {
    let sme = req.sme_id.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).ok_or(AppError::invalid("sme_id", Msg::CompanyIdRequired))?;
    let txn = write_txn(&state.db).await?;
    let c = company(&txn, &sme).await?;
    let me = user(&txn, &auth.user_id).await?;
    if membership(&txn, &c.id, &me.id).await?.is_some() {
        return Err(AppError::conflict(Msg::AlreadyMember));
    }
    let waiting = member_records::Entity::find()
        .filter(member_records::Column::CompanyId.eq(c.id.clone()))
        .filter(member_records::Column::Kind.eq(kind::APPLY))
        .filter(member_records::Column::UserId.eq(me.id.clone()))
        .filter(member_records::Column::Status.eq(status::APPLIED))
        .count(&txn)
        .await?;
    if waiting > 0 {
        return Err(AppError::conflict(Msg::AlreadyApplied));
    }
    let r = member_records::ActiveModel {
        id: Set(new_id()),
        kind: Set(kind::APPLY.into()),
        company_id: Set(c.id.clone()),
        email: Set(me.email.clone()),
        user_id: Set(Some(me.id.clone())),
        role: Set(role::MEMBER.into()),
        status: Set(status::APPLIED.into()),
        code_hash: Set(None),
        expires_at: Set(None),
        created_by: Set(me.id.clone()),
        created_at: Set(now()),
        decided_at: Set(None),
        decided_by: Set(None),
        read_by_admin: Set(false),
        read_by_user: Set(true),
    }
    .insert(&txn)
    .await?;
    record(&txn, &c, Some(&me), user_event("member_applied", &me, String::new())).await?;
    txn.commit().await?;
    Ok(view(&r, &c.name, &me.name, Side::Person))
}

/// The records a person sees as theirs: their applications and the invitations to their address.
fn own_records(me: &users::Model) -> Condition {
    Condition::any()
        .add(member_records::Column::UserId.eq(me.id.clone()))
        .add(Condition::all().add(member_records::Column::Kind.eq(kind::INVITE)).add(member_records::Column::Email.eq(me.email.clone())))
}

/// An admin in their company's context sees the company's records; anyone else their own.
/// Listing marks the listed side's records as read.
pub async fn records(state: &AppState, auth: &Auth, q: RecordsQuery) -> Result<List<MemberRecord>, AppError> {
    let (offset, limit) = Page { offset: q.offset, limit: q.limit }.checked(DEFAULT_PAGE)?;
    let me = user(&state.db, &auth.user_id).await?;
    let mine = q.scope.as_deref() == Some("mine");
    let (filter, side, read_col) = match auth.company() {
        Some(c) if auth.is_admin() && !mine => (Condition::all().add(member_records::Column::CompanyId.eq(c)), Side::Admin, member_records::Column::ReadByAdmin),
        _ => (own_records(&me), Side::Person, member_records::Column::ReadByUser),
    };
    let q = member_records::Entity::find().filter(filter.clone());
    let total = q.clone().count(&state.db).await?;
    let rows = q
        .order_by_desc(member_records::Column::CreatedAt)
        .order_by_desc(member_records::Column::Id)
        .offset(offset)
        .limit(limit)
        .all(&state.db)
        .await?;
    let items = views(&state.db, &rows, |_| side).await?;
    member_records::Entity::update_many().col_expr(read_col, true.into()).filter(filter).filter(read_col.eq(false)).exec(&state.db).await?;
    Ok(List { items, total })
}

/// Accepts or declines a record: applications by an admin of the company (in its context),
/// invitations by the invited person.
pub async fn answer(state: &AppState, auth: &Auth, id: &str, accept: bool) -> Result<MemberRecord, AppError> {
    let txn = write_txn(&state.db).await?;
    let me = user(&txn, &auth.user_id).await?;
    let r = member_records::Entity::find_by_id(id.to_string()).one(&txn).await?.ok_or(AppError::NotFound(Msg::RecordNotFound))?;
    let in_company = auth.company() == Some(r.company_id.as_str());
    let side = match r.kind.as_str() {
        kind::APPLY => {
            if in_company && auth.is_admin() {
                Side::Admin
            } else if in_company || r.user_id.as_deref() == Some(me.id.as_str()) {
                return Err(AppError::Forbidden(Msg::NotAdmin));
            } else {
                return Err(AppError::NotFound(Msg::RecordNotFound));
            }
        }
        _ => {
            if r.email == me.email {
                Side::Person
            } else if in_company {
                return Err(AppError::Forbidden(Msg::InvitationNotForYou));
            } else {
                return Err(AppError::NotFound(Msg::RecordNotFound));
            }
        }
    };
    let st = effective_status(&r, now()).to_string();
    if st == status::EXPIRED {
        let e = refuse_expired(&txn, &r).await?;
        txn.commit().await?;
        return Err(e);
    }
    if st != status::INVITED && st != status::APPLIED {
        return Err(not_pending(&r));
    }
    let c = company(&txn, &r.company_id).await?;
    let r = match (side, accept) {
        (Side::Person, true) => accept_invitation(&txn, r, &me).await?,
        (Side::Person, false) => {
            let mut a: member_records::ActiveModel = r.into();
            a.status = Set(status::DECLINED.into());
            a.user_id = Set(Some(me.id.clone()));
            a.decided_at = Set(Some(now()));
            a.decided_by = Set(Some(me.id.clone()));
            a.read_by_admin = Set(false);
            a.read_by_user = Set(true);
            let r = a.update(&txn).await?;
            record(&txn, &c, Some(&me), user_event("invitation_declined", &me, String::new())).await?;
            r
        }
        (Side::Admin, _) => {
            let applicant_id = r.user_id.clone().ok_or(AppError::NotFound(Msg::MemberNotFound))?;
            let applicant = user(&txn, &applicant_id).await?;
            if accept {
                add_member(&txn, &c.id, &applicant.id, &r.role).await?;
            }
            let mut a: member_records::ActiveModel = r.into();
            a.status = Set(if accept { status::ACCEPTED } else { status::DECLINED }.into());
            a.decided_at = Set(Some(now()));
            a.decided_by = Set(Some(me.id.clone()));
            a.read_by_admin = Set(true);
            a.read_by_user = Set(false);
            let r = a.update(&txn).await?;
            let action = if accept { "application_accepted" } else { "application_declined" };
            record(&txn, &c, Some(&me), user_event(action, &applicant, String::new())).await?;
            r
        }
    };
    let out = views(&txn, std::slice::from_ref(&r), |_| side).await?.pop().ok_or(AppError::NotFound(Msg::RecordNotFound))?;
    txn.commit().await?;
    Ok(out)
}

/// Unread invitation/application news for the notification stats (`member_records_unread`).
/// In a company context an admin counts the company's unread records. Otherwise a person counts
/// their own unread records plus the unread ones of the companies they administer (so the
/// personal-context poll shows new applications too).
pub async fn member_records_unread(db: &DatabaseConnection, auth: &Auth) -> Result<u64, AppError> {
    if let Some(c) = auth.company().filter(|_| auth.is_admin()) {
        return Ok(member_records::Entity::find()
            .filter(member_records::Column::CompanyId.eq(c))
            .filter(member_records::Column::ReadByAdmin.eq(false))
            .count(db)
            .await?);
    }
    let me = user(db, &auth.user_id).await?;
    let own = member_records::Entity::find().filter(own_records(&me)).filter(member_records::Column::ReadByUser.eq(false)).count(db).await?;
    let administered: Vec<String> = company_members::Entity::find()
        .filter(company_members::Column::UserId.eq(me.id.clone()))
        .filter(company_members::Column::Role.eq(role::ADMIN))
        .all(db)
        .await?
        .into_iter()
        .map(|m| m.company_id)
        .collect();
    let admin = if administered.is_empty() {
        0
    } else {
        member_records::Entity::find()
            .filter(member_records::Column::CompanyId.is_in(administered))
            .filter(member_records::Column::ReadByAdmin.eq(false))
            .count(db)
            .await?
    };
    Ok(own + admin)
}

/// Invitations past their expiry become `expired`. Returns how many.
pub async fn expire_invitations(db: &DatabaseConnection) -> Result<u64, AppError> {
    let r = member_records::Entity::update_many()
        .col_expr(member_records::Column::Status, status::EXPIRED.into())
        .filter(member_records::Column::Status.eq(status::INVITED))
        .filter(member_records::Column::ExpiresAt.lte(now()))
        .exec(db)
        .await?;
    Ok(r.rows_affected)
}

// ---- resource allocation ----

struct Allocation {
    kind: ResourceType,
    user_id: String,
    resource_id: String,
}

/// Checks an assign/unassign request: a company admin, a member of the same company, a
/// resource of the company.
fn allocation(auth: &Auth, req: AssignRequest) -> Result<Allocation, AppError> {
    let kind = ResourceType::parse(req.resource_type.as_deref())?;
    if auth.company().is_none() || !auth.is_admin() {
        return Err(AppError::Forbidden(kind.no_permission()));
    }
    let user_id = req.user_id.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).ok_or(AppError::invalid("user_id", Msg::InvalidField("user_id")))?;
    let resource_id =
        req.resource_id.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).ok_or(AppError::invalid("resource_id", Msg::InvalidField("resource_id")))?;
    Ok(Allocation { kind, user_id, resource_id })
}

pub async fn assign(state: &AppState, auth: &Auth, req: AssignRequest) -> Result<(), AppError> {
    let a = allocation(auth, req)?;
    let txn = write_txn(&state.db).await?;
    let c = company(&txn, company_id(auth)?).await?;
    membership(&txn, &c.id, &a.user_id).await?.ok_or(AppError::NotFound(Msg::MemberNotFound))?;
    if !resources::resource_owned_by_company(&txn, a.kind, &a.resource_id, &c.id).await? {
        return Err(AppError::NotFound(Msg::ResourceNotFound));
    }
    let key = (c.id.clone(), a.kind.as_str().to_string(), a.resource_id.clone(), a.user_id.clone());
    if resource_assignments::Entity::find_by_id(key).one(&txn).await?.is_some() {
        return Ok(()); // already assigned: nothing changes
    }
    resource_assignments::ActiveModel {
        company_id: Set(c.id.clone()),
        user_id: Set(a.user_id.clone()),
        resource_type: Set(a.kind.as_str().into()),
        resource_id: Set(a.resource_id.clone()),
        assigned_at: Set(now()),
        assigned_by: Set(auth.user_id.clone()),
    }
    .insert(&txn)
    .await?;
    let me = user(&txn, &auth.user_id).await?;
    let them = user(&txn, &a.user_id).await?;
    let e = Event { action: "resource_assigned", subject_type: a.kind.as_str(), subject_id: &a.resource_id, subject_name: &a.resource_id, detail: them.email.clone() };
    record(&txn, &c, Some(&me), e).await?;
    txn.commit().await?;
    Ok(())
}

pub async fn unassign(state: &AppState, auth: &Auth, req: AssignRequest) -> Result<(), AppError> {
    let a = allocation(auth, req)?;
    let txn = write_txn(&state.db).await?;
    let c = company(&txn, company_id(auth)?).await?;
    membership(&txn, &c.id, &a.user_id).await?.ok_or(AppError::NotFound(Msg::MemberNotFound))?;
    let key = (c.id.clone(), a.kind.as_str().to_string(), a.resource_id.clone(), a.user_id.clone());
    let gone = resource_assignments::Entity::delete_by_id(key).exec(&txn).await?;
    if gone.rows_affected == 0 {
        return Err(AppError::NotFound(Msg::AssignmentNotFound));
    }
    let me = user(&txn, &auth.user_id).await?;
    let them = user(&txn, &a.user_id).await?;
    let e = Event { action: "resource_unassigned", subject_type: a.kind.as_str(), subject_id: &a.resource_id, subject_name: &a.resource_id, detail: them.email.clone() };
    record(&txn, &c, Some(&me), e).await?;
    txn.commit().await?;
    Ok(())
}

/// The company's assignments: an admin sees all (optionally one member's), a member only theirs.
pub async fn assignments(state: &AppState, auth: &Auth, q: AssignmentQuery) -> Result<List<Assignment>, AppError> {
    let (offset, limit) = Page { offset: q.offset, limit: q.limit }.checked(DEFAULT_PAGE.max(100))?;
    let c = company_id(auth)?;
    let mut find = resource_assignments::Entity::find().filter(resource_assignments::Column::CompanyId.eq(c));
    if !auth.is_admin() {
        find = find.filter(resource_assignments::Column::UserId.eq(auth.user_id.clone()));
    } else if let Some(u) = q.user_id.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
        find = find.filter(resource_assignments::Column::UserId.eq(u));
    }
    let total = find.clone().count(&state.db).await?;
    let rows = find
        .order_by_asc(resource_assignments::Column::AssignedAt)
        .order_by_asc(resource_assignments::Column::ResourceId)
        .offset(offset)
        .limit(limit)
        .all(&state.db)
        .await?;
    let ids: Vec<String> = rows.iter().map(|r| r.user_id.clone()).collect();
    let people = users::Entity::find().filter(users::Column::Id.is_in(ids)).all(&state.db).await?;
    let items = rows
        .into_iter()
        .map(|r| {
            let u = people.iter().find(|u| u.id == r.user_id);
            Assignment {
                user_name: u.map(|u| u.name.clone()).unwrap_or_default(),
                user_email: u.map(|u| u.email.clone()).unwrap_or_default(),
                user_id: r.user_id,
                resource_type: r.resource_type,
                resource_id: r.resource_id,
                assigned_at: rfc3339(r.assigned_at),
                assigned_by: r.assigned_by,
            }
        })
        .collect();
    Ok(List { items, total })
}

// ---- history ----

fn entry(h: company_history::Model) -> HistoryEntry {
    HistoryEntry {
        id: h.id,
        sme_id: h.company_id,
        sme_name: h.company_name,
        actor_id: h.actor_id,
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
pub async fn company_history(state: &AppState, admin: &Auth, page: Page) -> Result<List<HistoryEntry>, AppError> {
    let c = company_id(admin)?;
    history_page(&state.db, Condition::all().add(company_history::Column::CompanyId.eq(c)), page).await
}

/// The history of the caller's own companies, and every event they took part in or were the
/// subject of (also in companies they left or that were deleted).
pub async fn my_history(state: &AppState, auth: &Auth, page: Page) -> Result<List<HistoryEntry>, AppError> {
    let mine: Vec<String> = company_members::Entity::find()
        .filter(company_members::Column::UserId.eq(auth.user_id.clone()))
        .all(&state.db)
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
    history_page(&state.db, filter, page).await
}
