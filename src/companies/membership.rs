//! Membership by invitation (a mailed link) or application (a company id): invite, join, apply,
//! accept or decline, the records each side sees, their unread count, and expiry. No HTTP types.

use chrono::Duration;
use sea_orm::sea_query::{Expr, Query};
use sea_orm::{ActiveEnum, ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Select, Set};
use serde_json::json;

use crate::companies::CompaniesCtx;
use crate::companies::company::add_member;
use crate::companies::lookup::{DEFAULT_PAGE, admin_company_locked, company, company_locked, rfc3339, user};
use crate::companies::history::{Event, record, user_event};
use crate::companies::model::*;
use crate::db::entity::{companies, company_members, member_records};
use crate::db::enums::{RecordKind, RecordStatus, Role};
use crate::db::{now, write_txn};
use crate::error::{AppError, Msg};
use crate::http::{List, Page};
use crate::iam::auth::{Auth, membership};
use crate::iam::people::{self, Person};
use crate::iam::tokens;
use crate::mail::Mail;
use crate::ids::{CompanyId, RecordId, UserId};


/// Whose side of a record the caller is on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// An admin of the record's company, in that company's context.
    Admin,
    /// The invited person or the applicant.
    Person,
}

fn effective_status(r: &member_records::Model, at: chrono::DateTime<chrono::Utc>) -> RecordStatus {
    if r.status == RecordStatus::Invited && r.expires_at.is_some_and(|e| e <= at) { RecordStatus::Expired } else { r.status }
}

fn view(r: &member_records::Model, company_name: &str, name: &str, side: Side) -> MemberRecord {
    let st = effective_status(r, now());
    let shown = if st == RecordStatus::Applied && side == Side::Admin { RecordStatus::Waiting } else { st };
    let actionable = match (r.kind, side) {
        (RecordKind::Apply, Side::Admin) => st == RecordStatus::Applied,
        (RecordKind::Invite, Side::Person) => st == RecordStatus::Invited,
        _ => false,
    };
    MemberRecord {
        id: r.id.clone().into(),
        kind: r.kind,
        sme_id: r.company_id.clone().into(),
        sme_name: company_name.to_string(),
        email: r.email.clone(),
        name: name.to_string(),
        status: shown,
        role: r.role,
        created_at: rfc3339(r.created_at),
        expires_at: r.expires_at.map(rfc3339),
        decided_at: r.decided_at.map(rfc3339),
        actionable,
    }
}

/// Views of several records, with company and person names looked up once.
async fn views(conn: &impl ConnectionTrait, rows: &[member_records::Model], side: impl Fn(&member_records::Model) -> Side) -> Result<Vec<MemberRecord>, AppError> {
    let cids: Vec<CompanyId> = rows.iter().map(|r| r.company_id.clone()).collect();
    let uids: Vec<UserId> = rows.iter().filter_map(|r| r.user_id.clone()).collect();
    let cs = companies::Entity::find().filter(companies::Column::Id.is_in(cids)).all(conn).await?;
    let us = people::by_ids(conn, uids).await?;
    Ok(rows
        .iter()
        .map(|r| {
            let cname = cs.iter().find(|c| c.id == r.company_id).map(|c| c.name.as_str()).unwrap_or("");
            let uname = r.user_id.as_ref().and_then(|id| us.get(id)).map(|u| u.name.as_str()).unwrap_or("");
            view(r, cname, uname, side(r))
        })
        .collect())
}

pub async fn invite(cx: &CompaniesCtx, admin: &Auth, req: Invitation) -> Result<MemberRecord, AppError> {
    let Invitation { email, role } = req;
    let txn = write_txn(&cx.db).await?;
    let c = admin_company_locked(&txn, admin).await?;
    let me = user(&txn, &admin.user_id).await?;
    let invited = people::by_email(&txn, email.as_str()).await?;
    if let Some(existing) = &invited
        && membership(&txn, &c.id, &existing.id).await?.is_some() {
            return Err(AppError::Refused(Msg::AlreadyMember));
        }
    let t = now();
    // A new invitation replaces an outstanding one to the same address: the old link expires.
    member_records::Entity::update_many()
        .col_expr(member_records::Column::Status, Expr::value(RecordStatus::Expired))
        .col_expr(member_records::Column::ExpiresAt, Some(t).into())
        .filter(member_records::Column::CompanyId.eq(c.id.clone()))
        .filter(member_records::Column::Kind.eq(RecordKind::Invite))
        .filter(member_records::Column::Email.eq(email.as_str()))
        .filter(member_records::Column::Status.eq(RecordStatus::Invited))
        .exec(&txn)
        .await?;
    let code = tokens::random_token();
    let ttl = cx.invitation_ttl_secs;
    let r = member_records::ActiveModel {
        id: Set(RecordId::new()),
        kind: Set(RecordKind::Invite),
        company_id: Set(c.id.clone()),
        email: Set(email.as_str().into()),
        user_id: Set(None),
        role: Set(role),
        status: Set(RecordStatus::Invited),
        code_hash: Set(Some(tokens::hash_token(&code))),
        expires_at: Set(Some(t + Duration::seconds(ttl as i64))),
        created_by: Set(UserId::from(&me.id)),
        created_at: Set(t),
        decided_at: Set(None),
        decided_by: Set(None),
        read_by_admin: Set(true),
        read_by_user: Set(false),
    }
    .insert(&txn)
    .await?;
    record(&txn, &c, Some(&me), Event { action: "member_invited", subject_type: "user", subject_id: "", subject_name: email.as_str(), detail: role.to_value() })
        .await?;

    let link = cx.site.link(&format!("/iam/v1/sme/join?code={code}"));
    let product = &cx.site.product_name;
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
    cx.mailer.enqueue(&txn, Mail { to: email.as_str(), subject: &subject, body: &body, link: Some(&link) }).await?;
    if let Some(person) = &invited {
        notify_invited(&txn, person, &me, &c).await?;
    }
    txn.commit().await?;
    cx.mailer.wake();
    Ok(view(&r, &c.name, "", Side::Admin))
}

/// The invited person's bell: a pending invitation is news for someone who already has an
/// account (the mail reaches the others). It points to the company page of invitations, not to
/// the mailed link: the code is a secret kept only hashed.
async fn notify_invited(conn: &impl ConnectionTrait, person: &Person, inviter: &Person, c: &companies::Model) -> Result<(), AppError> {
    let (who, name) = (&inviter.name, &c.name);
    let title = format!("Invitation to join {name}");
    let body = format!("{who} invited you to join the company \"{name}\". Accept or decline it on the Companies page.");
    let params = json!({
        "sme_id": c.id, "company": name, "inviter": who, "path": "/company-email",
        "title_zh": format!("邀请您加入 {name}"),
        "body_zh": format!("{who} 邀请您加入企业「{name}」。请在“企业”页面接受或拒绝。"),
    });
    crate::notifications::service::notify(conn, &person.id, crate::db::enums::NotificationKind::CompanyInvitation, &title, &body, &params).await
}

/// Accepts an invitation for `me` (the checks of a pending, unexpired invitation to `me`'s
/// address are the caller's). Returns the updated record.
async fn accept_invitation(conn: &impl ConnectionTrait, r: member_records::Model, me: &Person) -> Result<member_records::Model, AppError> {
    let c = company(conn, &r.company_id).await?;
    add_member(conn, &c.id, &me.id, r.role).await?;
    let r = decide(conn, r, me, RecordStatus::Accepted).await?;
    record(conn, &c, Some(me), user_event("invitation_accepted", me, r.role.to_value())).await?;
    Ok(r)
}

/// Marks invitation `r` answered by `me` with `status` (unread by the company's admins).
async fn decide(conn: &impl ConnectionTrait, r: member_records::Model, me: &Person, status: RecordStatus) -> Result<member_records::Model, AppError> {
    let mut a: member_records::ActiveModel = r.into();
    a.status = Set(status);
    a.user_id = Set(Some(UserId::from(&me.id)));
    a.decided_at = Set(Some(now()));
    a.decided_by = Set(Some(UserId::from(&me.id)));
    a.read_by_admin = Set(false);
    a.read_by_user = Set(true);
    Ok(a.update(conn).await?)
}

/// Locks the record's company (`company_locked`) and reads the record again under that lock:
/// what it says now is what the decision is checked against.
async fn record_locked(conn: &impl ConnectionTrait, found: member_records::Model) -> Result<member_records::Model, AppError> {
    company_locked(conn, &found.company_id).await?;
    member_records::Entity::find_by_id(found.id).one(conn).await?.ok_or(AppError::Refused(Msg::RecordNotFound))
}

/// Marks an invitation found past its expiry as `expired` and answers the 409 for it.
async fn refuse_expired(conn: &impl ConnectionTrait, r: &member_records::Model) -> Result<AppError, AppError> {
    if r.status == RecordStatus::Invited {
        member_records::Entity::update_many()
            .col_expr(member_records::Column::Status, Expr::value(RecordStatus::Expired))
            .filter(member_records::Column::Id.eq(r.id.clone()))
            .exec(conn)
            .await?;
    }
    Ok(AppError::Explained { msg: Msg::InvitationExpired, data: json!({ "status": RecordStatus::Expired, "sme_id": r.company_id }) })
}

fn not_pending(r: &member_records::Model) -> AppError {
    AppError::Explained { msg: Msg::RecordNotPending, data: json!({ "status": r.status, "sme_id": r.company_id }) }
}

/// The invitation of a link, found by its code, for the signed-in caller, whose email must be
/// the invited one (403 for another account, 404 for an unknown code).
async fn invitation_of(conn: &impl ConnectionTrait, me: &Person, code: Option<&str>) -> Result<member_records::Model, AppError> {
    let code = code.map(str::trim).filter(|c| !c.is_empty()).ok_or(AppError::invalid("code", Msg::InvalidField("code")))?;
    let r = member_records::Entity::find()
        .filter(member_records::Column::CodeHash.eq(tokens::hash_token(code)))
        .filter(member_records::Column::Kind.eq(RecordKind::Invite))
        .one(conn)
        .await?
        .ok_or(AppError::Refused(Msg::InvitationNotFound))?;
    if r.email != me.email {
        return Err(AppError::Refused(Msg::InvitationNotForYou));
    }
    Ok(r)
}

/// `GET /sme/join?code=`: the company and who invited, for the page that asks before joining.
/// Changes nothing.
pub async fn invitation(cx: &CompaniesCtx, auth: &Auth, code: Option<&str>) -> Result<JoinInvitation, AppError> {
    let me = user(&cx.db, &auth.user_id).await?;
    let r = invitation_of(&cx.db, &me, code).await?;
    let c = company(&cx.db, &r.company_id).await?;
    let inviter = people::by_ids(&cx.db, [r.created_by.clone()]).await?.remove(&r.created_by).map(|p| p.name).unwrap_or_default();
    let status = match effective_status(&r, now()) {
        // Accepted by someone else under this address: not theirs to show as joined.
        RecordStatus::Accepted if r.user_id.as_ref() != Some(&me.id) => RecordStatus::Expired,
        s => s,
    };
    Ok(JoinInvitation { sme_id: c.id.into(), company: c.name, invited_by: inviter, role: r.role, status, expires_at: r.expires_at.map(rfc3339) })
}

/// `POST /sme/join`: accepts (joins) or declines the invitation of a link, under the lock of its
/// company. Accepting again once joined is fine; anything else no longer pending is 409.
pub async fn join(cx: &CompaniesCtx, auth: &Auth, code: Option<&str>, accept: Option<bool>) -> Result<JoinResult, AppError> {
    let accept = accept.ok_or(AppError::invalid("accept", Msg::InvalidField("accept")))?;
    let txn = write_txn(&cx.db).await?;
    let me = user(&txn, &auth.user_id).await?;
    let found = invitation_of(&txn, &me, code).await?;
    let r = record_locked(&txn, found).await?;
    let sme_id = r.company_id.clone();
    let status = match (effective_status(&r, now()), accept) {
        (RecordStatus::Invited, true) => accept_invitation(&txn, r, &me).await?.status,
        (RecordStatus::Invited, false) => {
            let c = company(&txn, &r.company_id).await?;
            decline_invitation(&txn, r, &me, &c).await?.status
        }
        // Opening the link again after joining is fine.
        (RecordStatus::Accepted, true) if r.user_id.as_ref() == Some(&me.id) => RecordStatus::Accepted,
        (RecordStatus::Expired, _) => {
            let e = refuse_expired(&txn, &r).await?;
            txn.commit().await?;
            return Err(e);
        }
        _ => return Err(not_pending(&r)),
    };
    txn.commit().await?;
    Ok(JoinResult { sme_id: sme_id.into(), status })
}

/// Declines an invitation for `me` (the checks are the caller's).
async fn decline_invitation(conn: &impl ConnectionTrait, r: member_records::Model, me: &Person, c: &companies::Model) -> Result<member_records::Model, AppError> {
    let r = decide(conn, r, me, RecordStatus::Declined).await?;
    record(conn, c, Some(me), user_event("invitation_declined", me, String::new())).await?;
    Ok(r)
}

pub async fn apply(cx: &CompaniesCtx, auth: &Auth, CompanyRef(sme): CompanyRef) -> Result<MemberRecord, AppError> {
    let txn = write_txn(&cx.db).await?;
    let c = company_locked(&txn, &sme).await?;
    let me = user(&txn, &auth.user_id).await?;
    if membership(&txn, &c.id, &me.id).await?.is_some() {
        return Err(AppError::Refused(Msg::AlreadyMember));
    }
    let waiting = member_records::Entity::find()
        .filter(member_records::Column::CompanyId.eq(c.id.clone()))
        .filter(member_records::Column::Kind.eq(RecordKind::Apply))
        .filter(member_records::Column::UserId.eq(me.id.clone()))
        .filter(member_records::Column::Status.eq(RecordStatus::Applied))
        .count(&txn)
        .await?;
    if waiting > 0 {
        return Err(AppError::Refused(Msg::AlreadyApplied));
    }
    let r = member_records::ActiveModel {
        id: Set(RecordId::new()),
        kind: Set(RecordKind::Apply),
        company_id: Set(c.id.clone()),
        email: Set(me.email.clone()),
        user_id: Set(Some(UserId::from(&me.id))),
        role: Set(Role::Member),
        status: Set(RecordStatus::Applied),
        code_hash: Set(None),
        expires_at: Set(None),
        created_by: Set(UserId::from(&me.id)),
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
fn own_records(me: &Person) -> Condition {
    own_records_where(&me.id, member_records::Column::Email.eq(me.email.clone()))
}

/// The records of person `user_id`: theirs, and the invitations to the address `email` matches.
fn own_records_where(user_id: &UserId, email: sea_orm::sea_query::SimpleExpr) -> Condition {
    Condition::any()
        .add(member_records::Column::UserId.eq(user_id))
        .add(Condition::all().add(member_records::Column::Kind.eq(RecordKind::Invite)).add(email))
}

/// An admin in their company's context sees the company's records; anyone else their own.
/// Listing marks the listed side's records as read.
pub async fn records(cx: &CompaniesCtx, auth: &Auth, q: RecordsQuery) -> Result<List<MemberRecord>, AppError> {
    let (offset, limit) = Page { offset: q.offset, limit: q.limit }.checked(DEFAULT_PAGE)?;
    let me = user(&cx.db, &auth.user_id).await?;
    let mine = q.scope.as_deref() == Some("mine");
    let (filter, side, read_col) = match auth.company() {
        Some(c) if auth.is_admin() && !mine => (Condition::all().add(member_records::Column::CompanyId.eq(c)), Side::Admin, member_records::Column::ReadByAdmin),
        _ => (own_records(&me), Side::Person, member_records::Column::ReadByUser),
    };
    let q = member_records::Entity::find().filter(filter.clone());
    let total = q.clone().count(&cx.db).await?;
    let rows = q
        .order_by_desc(member_records::Column::CreatedAt)
        .order_by_desc(member_records::Column::Id)
        .offset(offset)
        .limit(limit)
        .all(&cx.db)
        .await?;
    let items = views(&cx.db, &rows, |_| side).await?;
    member_records::Entity::update_many().col_expr(read_col, true.into()).filter(filter).filter(read_col.eq(false)).exec(&cx.db).await?;
    Ok(List { items, total })
}

/// Accepts or declines a record: applications by an admin of the company (in its context),
/// invitations by the invited person.
pub async fn answer(cx: &CompaniesCtx, auth: &Auth, id: &str, accept: bool) -> Result<MemberRecord, AppError> {
    let txn = write_txn(&cx.db).await?;
    let me = user(&txn, &auth.user_id).await?;
    let found = member_records::Entity::find_by_id(id.to_string()).one(&txn).await?.ok_or(AppError::Refused(Msg::RecordNotFound))?;
    let r = record_locked(&txn, found).await?;
    let in_company = auth.company() == Some(&r.company_id);
    let side = match r.kind {
        RecordKind::Apply => {
            if in_company && auth.is_admin() {
                admin_company_locked(&txn, auth).await?;
                Side::Admin
            } else if in_company || r.user_id.as_ref() == Some(&me.id) {
                return Err(AppError::Refused(Msg::NotAdmin));
            } else {
                return Err(AppError::Refused(Msg::RecordNotFound));
            }
        }
        _ => {
            if r.email == me.email {
                Side::Person
            } else if in_company {
                return Err(AppError::Refused(Msg::InvitationNotForYou));
            } else {
                return Err(AppError::Refused(Msg::RecordNotFound));
            }
        }
    };
    let st = effective_status(&r, now());
    if st == RecordStatus::Expired {
        let e = refuse_expired(&txn, &r).await?;
        txn.commit().await?;
        return Err(e);
    }
    if st != RecordStatus::Invited && st != RecordStatus::Applied {
        return Err(not_pending(&r));
    }
    let c = company(&txn, &r.company_id).await?;
    let r = match (side, accept) {
        (Side::Person, true) => accept_invitation(&txn, r, &me).await?,
        (Side::Person, false) => decline_invitation(&txn, r, &me, &c).await?,
        (Side::Admin, _) => {
            let applicant_id = r.user_id.clone().ok_or(AppError::Refused(Msg::MemberNotFound))?;
            let applicant = user(&txn, &applicant_id).await?;
            if accept {
                add_member(&txn, &c.id, &applicant.id, r.role).await?;
            }
            let mut a: member_records::ActiveModel = r.into();
            a.status = Set(if accept { RecordStatus::Accepted } else { RecordStatus::Declined });
            a.decided_at = Set(Some(now()));
            a.decided_by = Set(Some(UserId::from(&me.id)));
            a.read_by_admin = Set(true);
            a.read_by_user = Set(false);
            let r = a.update(&txn).await?;
            let action = if accept { "application_accepted" } else { "application_declined" };
            record(&txn, &c, Some(&me), user_event(action, &applicant, String::new())).await?;
            r
        }
    };
    let out = views(&txn, std::slice::from_ref(&r), |_| side).await?.pop().ok_or(AppError::Refused(Msg::RecordNotFound))?;
    txn.commit().await?;
    Ok(out)
}

/// Unread invitation/application news for the notification stats (`member_records_unread`).
/// In a company context an admin counts the company's unread records. Otherwise a person counts
/// their own unread records plus the unread ones of the companies they administer (so the
/// personal-context poll shows new applications too).
pub async fn member_records_unread(db: &DatabaseConnection, auth: &Auth) -> Result<u64, AppError> {
    let mut n = 0;
    for (_, q) in member_records_unread_counts(auth) {
        n += q.count(db).await?;
    }
    Ok(n)
}

/// The queries whose counts sum to `member_records_unread`, named (the stats poll counts them in
/// its one statement).
pub fn member_records_unread_counts(auth: &Auth) -> Vec<(&'static str, Select<member_records::Entity>)> {
    let unread_by_admin = |companies: Condition| member_records::Entity::find().filter(companies).filter(member_records::Column::ReadByAdmin.eq(false));
    if let Some(c) = auth.company().filter(|_| auth.is_admin()) {
        return vec![(ADMIN_UNREAD, unread_by_admin(Condition::all().add(member_records::Column::CompanyId.eq(c))))];
    }
    // The address and the administered companies are subqueries: no read before the count.
    let uid = &auth.user_id;
    let my_email = people::email_of(uid);
    let own = member_records::Entity::find()
        .filter(own_records_where(uid, member_records::Column::Email.in_subquery(my_email)))
        .filter(member_records::Column::ReadByUser.eq(false));
    let administered = Query::select()
        .column(company_members::Column::CompanyId)
        .from(company_members::Entity)
        .and_where(company_members::Column::UserId.eq(uid))
        .and_where(company_members::Column::Role.eq(Role::Admin))
        .to_owned();
    vec![(OWN_UNREAD, own), (ADMIN_UNREAD, unread_by_admin(Condition::all().add(member_records::Column::CompanyId.in_subquery(administered))))]
}

/// The names of [`member_records_unread`]'s counts.
pub const OWN_UNREAD: &str = "member_records_own_unread";
pub const ADMIN_UNREAD: &str = "member_records_admin_unread";

/// Invitations past their expiry become `expired`. Returns how many.
pub async fn expire_invitations(db: &DatabaseConnection) -> Result<u64, AppError> {
    let r = member_records::Entity::update_many()
        .col_expr(member_records::Column::Status, Expr::value(RecordStatus::Expired))
        .filter(member_records::Column::Status.eq(RecordStatus::Invited))
        .filter(member_records::Column::ExpiresAt.lte(now()))
        .exec(db)
        .await?;
    Ok(r.rows_affected)
}

