//! Company endpoints (`/api/iam/v1/sme…`, `/api/ebs/v1/sme/resources…`): parse, call, answer.

use axum::extract::{FromRef, State};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::companies::model::*;
use crate::companies::{CompaniesCtx, allocation, company, history, membership};
use crate::error::{ApiResult, Envelope, Null, ok};
use crate::http::{ApiJson, ApiPath, ApiQuery, List, Page, Valid};
use crate::iam::auth::{Admin, Auth, Sessions};
use crate::iam::model::Organization;
use crate::ids::RecordId;
use crate::lang::Lang;

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    CompaniesCtx: FromRef<S>,
    Sessions: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list, create, delete))
        .routes(routes!(update))
        .routes(routes!(members))
        .routes(routes!(remove_member))
        .routes(routes!(leave))
        .routes(routes!(invite))
        .routes(routes!(invitation, join))
        .routes(routes!(apply))
        .routes(routes!(records))
        .routes(routes!(accept))
        .routes(routes!(decline))
        .routes(routes!(history))
        .routes(routes!(my_history))
        .routes(routes!(assign))
        .routes(routes!(unassign))
        .routes(routes!(assignments))
}

/// The organization list: the personal pseudo-organization "user" first, then the caller's companies.
#[utoipa::path(get, path = "/api/iam/v1/sme", tag = "companies", operation_id = "list_companies", responses((status = 200, body = Envelope<Vec<Organization>>)))]
async fn list(State(cx): State<CompaniesCtx>, auth: Auth) -> ApiResult<Vec<Organization>> {
    ok(company::list(&cx, &auth).await?)
}

/// Create a company (name 3-50 characters); the caller becomes its admin and owner.
#[utoipa::path(post, path = "/api/iam/v1/sme", tag = "companies", request_body = NameRequest,
    responses((status = 200, body = Envelope<Organization>)))]
async fn create(State(cx): State<CompaniesCtx>, auth: Auth, Valid(req): Valid<CompanyName>) -> ApiResult<Organization> {
    ok(company::create(&cx, &auth, req).await?)
}

/// Rename the current company (admins).
#[utoipa::path(post, path = "/api/iam/v1/sme/update", tag = "companies", request_body = NameRequest,
    responses((status = 200, body = Envelope<Organization>), (status = 403)))]
async fn update(State(cx): State<CompaniesCtx>, Admin(auth): Admin, Valid(req): Valid<CompanyName>) -> ApiResult<Organization> {
    ok(company::rename(&cx, &auth, req).await?)
}

/// Delete the current company (admins); 409 with `data.reasons` (devices_linked,
/// ai_compute_held) while devices are linked or AI compute resources are held.
#[utoipa::path(delete, path = "/api/iam/v1/sme", tag = "companies",
    responses((status = 200, body = Envelope<Null>), (status = 403), (status = 409)))]
async fn delete(State(cx): State<CompaniesCtx>, Admin(auth): Admin) -> ApiResult<Null> {
    company::delete(&cx, &auth).await?;
    ok(Null)
}

/// The current company's members (any member of it).
#[utoipa::path(get, path = "/api/iam/v1/sme/members", tag = "companies", params(Page),
    responses((status = 200, body = Envelope<List<Member>>), (status = 403)))]
async fn members(State(cx): State<CompaniesCtx>, auth: Auth, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<Member>> {
    ok(company::members(&cx, &auth, page).await?)
}

/// Remove a member of the current company (admins); the last admin cannot be removed.
#[utoipa::path(post, path = "/api/iam/v1/sme/remove-member", tag = "companies", request_body = UserIdRequest,
    responses((status = 200, body = Envelope<Null>), (status = 403), (status = 404), (status = 409)))]
async fn remove_member(State(cx): State<CompaniesCtx>, Admin(auth): Admin, Valid(req): Valid<TargetUser>) -> ApiResult<Null> {
    company::remove_member(&cx, &auth, req).await?;
    ok(Null)
}

/// Leave a company the caller belongs to (from any context); the last admin cannot leave.
#[utoipa::path(post, path = "/api/iam/v1/sme/leave", tag = "companies", request_body = SmeIdRequest,
    responses((status = 200, body = Envelope<Null>), (status = 403), (status = 409)))]
async fn leave(State(cx): State<CompaniesCtx>, auth: Auth, Valid(req): Valid<CompanyRef>) -> ApiResult<Null> {
    company::leave(&cx, &auth, req).await?;
    ok(Null)
}

/// Invite someone by email (admins): a record `invited` and a mail with the link
/// `/iam/v1/sme/join?code=…`, valid for `auth.invitation_ttl_secs`.
#[utoipa::path(post, path = "/api/iam/v1/sme/invite", tag = "companies", request_body = InviteRequest,
    responses((status = 200, body = Envelope<MemberRecord>), (status = 403), (status = 409)))]
async fn invite(State(cx): State<CompaniesCtx>, Admin(auth): Admin, Valid(req): Valid<Invitation>) -> ApiResult<MemberRecord> {
    ok(membership::invite(&cx, &auth, req).await?)
}

/// The invitation of a link, for its invited address: the company, who invited, the role and
/// whether it is still to answer. Changes nothing (the page asks before joining). 403 for
/// another account, 404 for an unknown code.
#[utoipa::path(get, path = "/api/iam/v1/sme/join", tag = "companies", params(JoinQuery),
    responses((status = 200, body = Envelope<JoinInvitation>), (status = 400), (status = 403), (status = 404)))]
async fn invitation(State(cx): State<CompaniesCtx>, auth: Auth, ApiQuery(q): ApiQuery<JoinQuery>) -> ApiResult<JoinInvitation> {
    ok(membership::invitation(&cx, &auth, q.code.as_deref()).await?)
}

/// Answer the invitation of a link, signed in as its address: `accept: true` joins
/// (`accepted`, also when already joined), `false` declines (`declined`); 409 with `data.status`
/// `expired` (or `declined`) when it is no longer pending; 403 for another account.
#[utoipa::path(post, path = "/api/iam/v1/sme/join", tag = "companies", request_body = JoinRequest,
    responses((status = 200, body = Envelope<JoinResult>), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn join(State(cx): State<CompaniesCtx>, auth: Auth, ApiJson(req): ApiJson<JoinRequest>) -> ApiResult<JoinResult> {
    ok(membership::join(&cx, &auth, req.code.as_deref(), req.accept).await?)
}

/// Apply to a company by its id: `applied` for the applicant, `waiting` for its admins.
#[utoipa::path(post, path = "/api/iam/v1/sme/apply", tag = "companies", request_body = SmeIdRequest,
    responses((status = 200, body = Envelope<MemberRecord>), (status = 400), (status = 404), (status = 409)))]
async fn apply(State(cx): State<CompaniesCtx>, auth: Auth, Valid(req): Valid<CompanyRef>) -> ApiResult<MemberRecord> {
    ok(membership::apply(&cx, &auth, req).await?)
}

/// Invitations and applications: an admin in the company's context sees the company's, anyone
/// else their own (also an admin with `scope=mine`). Listing marks them read.
#[utoipa::path(get, path = "/api/iam/v1/sme/member/records", tag = "companies", params(RecordsQuery),
    responses((status = 200, body = Envelope<List<MemberRecord>>)))]
async fn records(State(cx): State<CompaniesCtx>, auth: Auth, ApiQuery(q): ApiQuery<RecordsQuery>) -> ApiResult<List<MemberRecord>> {
    ok(membership::records(&cx, &auth, q).await?)
}

/// Accept a record: an application (admins of its company) or an invitation (the invited person).
#[utoipa::path(post, path = "/api/iam/v1/sme/member/records/{id}/accept", tag = "companies", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<MemberRecord>), (status = 403), (status = 404), (status = 409)))]
async fn accept(State(cx): State<CompaniesCtx>, auth: Auth, ApiPath(id): ApiPath<RecordId>) -> ApiResult<MemberRecord> {
    ok(membership::answer(&cx, &auth, id.as_str(), true).await?)
}

/// Decline a record: an application (admins of its company) or an invitation (the invited person).
#[utoipa::path(post, path = "/api/iam/v1/sme/member/records/{id}/decline", tag = "companies", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<MemberRecord>), (status = 403), (status = 404), (status = 409)))]
async fn decline(State(cx): State<CompaniesCtx>, auth: Auth, ApiPath(id): ApiPath<RecordId>) -> ApiResult<MemberRecord> {
    ok(membership::answer(&cx, &auth, id.as_str(), false).await?)
}

/// The current company's membership and allocation history, newest first (admins).
#[utoipa::path(get, path = "/api/iam/v1/sme/history", tag = "companies", params(Page),
    responses((status = 200, body = Envelope<List<HistoryEntry>>), (status = 403)))]
async fn history(State(cx): State<CompaniesCtx>, Admin(auth): Admin, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<HistoryEntry>> {
    ok(history::company_history(&cx, &auth, page).await?)
}

/// The history of the caller's companies and of what concerned them, newest first.
#[utoipa::path(get, path = "/api/iam/v1/sme/history/mine", tag = "companies", params(Page),
    responses((status = 200, body = Envelope<List<HistoryEntry>>)))]
async fn my_history(State(cx): State<CompaniesCtx>, auth: Auth, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<HistoryEntry>> {
    ok(history::my_history(&cx, &auth, page).await?)
}

/// Assign a company device or app to a member (admins; members get docs/product.md §6's permission message).
#[utoipa::path(post, path = "/api/ebs/v1/sme/resources/assign", tag = "companies", request_body = AssignRequest,
    responses((status = 200, body = Envelope<Null>), (status = 403), (status = 404)))]
async fn assign(State(cx): State<CompaniesCtx>, auth: Auth, ApiJson(req): ApiJson<AssignRequest>) -> ApiResult<Null> {
    allocation::assign(&cx, &auth, req).await?;
    ok(Null)
}

/// Take a device or app back from a member (admins).
#[utoipa::path(post, path = "/api/ebs/v1/sme/resources/unassign", tag = "companies", request_body = AssignRequest,
    responses((status = 200, body = Envelope<Null>), (status = 403), (status = 404)))]
async fn unassign(State(cx): State<CompaniesCtx>, auth: Auth, ApiJson(req): ApiJson<AssignRequest>) -> ApiResult<Null> {
    allocation::unassign(&cx, &auth, req).await?;
    ok(Null)
}

/// The current company's assignments: all of them for an admin (or one member's with
/// `user_id`), the caller's own for a member.
#[utoipa::path(get, path = "/api/ebs/v1/sme/resources", tag = "companies", params(AssignmentQuery),
    responses((status = 200, body = Envelope<List<Assignment>>), (status = 403)))]
async fn assignments(State(cx): State<CompaniesCtx>, auth: Auth, lang: Lang, ApiQuery(q): ApiQuery<AssignmentQuery>) -> ApiResult<List<Assignment>> {
    ok(allocation::assignments(&cx, &auth, q, lang).await?)
}
