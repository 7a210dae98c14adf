//! Company request/response types and validated newtypes.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::ids::{self, CompanyId, UserId};
use crate::error::{AppError, Msg};
use crate::http::Checked;
use crate::iam::model::Email;

/// A company name: trimmed, 3-50 characters, no control characters.
#[derive(Debug, Clone)]
pub struct CompanyName(String);

impl CompanyName {
    pub fn parse(raw: Option<&str>) -> Result<CompanyName, AppError> {
        let raw = raw.map(str::trim).unwrap_or("");
        let n = raw.chars().count();
        if !(3..=50).contains(&n) || raw.chars().any(char::is_control) {
            return Err(AppError::invalid("name", Msg::CompanyNameInvalid));
        }
        Ok(CompanyName(raw.to_string()))
    }
    pub fn into_string(self) -> String {
        self.0
    }
}

/// What can be assigned to a member.
pub use crate::db::enums::{RecordKind, RecordStatus, ResourceType, Role};

impl ResourceType {
    pub fn parse(raw: Option<&str>) -> Result<ResourceType, AppError> {
        match raw.map(str::trim) {
            Some("device") => Ok(ResourceType::Device),
            Some("app") => Ok(ResourceType::App),
            _ => Err(AppError::invalid("resource_type", Msg::InvalidField("resource_type"))),
        }
    }
    /// The permission message of a member who may not manage this kind of resource.
    pub fn no_permission(self) -> Msg {
        match self {
            ResourceType::Device => Msg::NoPermissionManageDevices,
            ResourceType::App => Msg::NoPermissionApps,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct NameRequest {
    pub name: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Member {
    pub user_id: String,
    pub name: String,
    pub email: String,
    /// admin or member
    pub role: Role,
    /// RFC 3339.
    pub joined_at: String,
    /// True for the company's owner (its creator, or the admin it passed to).
    pub owner: bool,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct UserIdRequest {
    pub user_id: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct SmeIdRequest {
    pub sme_id: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct InviteRequest {
    pub email: Option<String>,
    /// `member` (default) or `admin`: the role the invitee gets.
    pub role: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct JoinQuery {
    pub code: Option<String>,
}

/// `POST /sme/join`: the invitation link's answer.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinRequest {
    pub code: Option<String>,
    /// true joins the company, false declines the invitation.
    pub accept: Option<bool>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct JoinResult {
    pub sme_id: String,
    /// `accepted` or `declined` (a refusal answers 409 with `data.status` `expired` or `declined`).
    pub status: RecordStatus,
}

/// `GET /sme/join?code=`: the invitation a link carries, as its invited person sees it before
/// answering (nothing changes).
#[derive(Debug, Serialize, ToSchema)]
pub struct JoinInvitation {
    pub sme_id: String,
    /// The company's name.
    pub company: String,
    /// The name of the admin who sent the invitation.
    pub invited_by: String,
    /// The role it gives: member or admin.
    pub role: Role,
    /// invited (to answer), accepted (by you), declined or expired.
    pub status: RecordStatus,
    /// RFC 3339.
    pub expires_at: Option<String>,
}

/// An invitation or application, as the caller sees it: an admin sees applications as
/// `waiting`, the applicant as `applied`.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemberRecord {
    pub id: String,
    /// invite or apply
    pub kind: RecordKind,
    pub sme_id: String,
    pub sme_name: String,
    /// The invited email, or the applicant's.
    pub email: String,
    /// The applicant's name (applications), or the name of the account that answered an invitation.
    pub name: String,
    /// invited, applied, waiting, accepted, declined or expired.
    pub status: RecordStatus,
    /// The role the membership gets when accepted.
    pub role: Role,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339; invitations only.
    pub expires_at: Option<String>,
    /// RFC 3339.
    pub decided_at: Option<String>,
    /// Whether the caller may accept or decline it now.
    pub actionable: bool,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RecordsQuery {
    pub offset: Option<i64>,
    pub limit: Option<i64>,
    /// `mine`: the caller's own records even in a company context where they are an admin.
    pub scope: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct AssignRequest {
    pub user_id: Option<String>,
    /// device or app
    pub resource_type: Option<String>,
    pub resource_id: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AssignmentQuery {
    pub user_id: Option<String>,
    pub offset: Option<i64>,
    pub limit: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Assignment {
    pub user_id: String,
    pub user_name: String,
    pub user_email: String,
    pub resource_type: ResourceType,
    pub resource_id: String,
    /// The device's name, or the app's in the request's language; empty when it is gone.
    pub resource_name: String,
    /// RFC 3339.
    pub assigned_at: String,
    pub assigned_by: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryEntry {
    pub id: String,
    pub sme_id: String,
    pub sme_name: String,
    pub actor_id: Option<String>,
    pub actor_name: String,
    /// company_created, company_renamed, company_deleted, member_invited, invitation_accepted,
    /// invitation_declined, member_applied, application_accepted, application_declined,
    /// member_removed, member_left, resource_assigned, resource_unassigned.
    pub action: String,
    /// user, device, app or company.
    pub subject_type: String,
    pub subject_id: String,
    pub subject_name: String,
    pub detail: String,
    /// RFC 3339.
    pub created_at: String,
}

// ---- checked requests (built at the edge by `http::Valid`) ----

impl Checked for CompanyName {
    type Body = NameRequest;
    fn check(req: NameRequest) -> Result<Self, AppError> {
        CompanyName::parse(req.name.as_deref())
    }
}

/// The member a call is about (`user_id`).
pub struct TargetUser(pub UserId);

impl Checked for TargetUser {
    type Body = UserIdRequest;
    fn check(req: UserIdRequest) -> Result<Self, AppError> {
        Ok(TargetUser(ids::required(req.user_id, "user_id", Msg::InvalidField("user_id"))?))
    }
}

/// The company a call names (`sme_id`): applying to it, leaving it.
pub struct CompanyRef(pub CompanyId);

impl Checked for CompanyRef {
    type Body = SmeIdRequest;
    fn check(req: SmeIdRequest) -> Result<Self, AppError> {
        Ok(CompanyRef(ids::required(req.sme_id, "sme_id", Msg::CompanyIdRequired)?))
    }
}

/// An invitation to send: a valid address and the role offered (member unless admin is asked).
pub struct Invitation {
    pub email: Email,
    pub role: Role,
}

impl Checked for Invitation {
    type Body = InviteRequest;
    fn check(req: InviteRequest) -> Result<Self, AppError> {
        let email = Email::parse(req.email.as_deref())?;
        let role = match req.role.as_deref().map(str::trim) {
            None | Some("") | Some("member") => Role::Member,
            Some("admin") => Role::Admin,
            _ => return Err(AppError::invalid("role", Msg::InvalidField("role"))),
        };
        Ok(Invitation { email, role })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn company_names() {
        assert!(CompanyName::parse(None).is_err());
        assert!(CompanyName::parse(Some("ab")).is_err());
        assert!(CompanyName::parse(Some(&"x".repeat(51))).is_err());
        assert!(CompanyName::parse(Some("a\u{7}bc")).is_err());
        assert_eq!(CompanyName::parse(Some("  算力公司  ")).unwrap().into_string(), "算力公司");
        assert_eq!(CompanyName::parse(Some(&"x".repeat(50))).unwrap().into_string().len(), 50);
    }

    #[test]
    fn resource_types() {
        assert_eq!(ResourceType::parse(Some("device")).unwrap(), ResourceType::Device);
        assert_eq!(ResourceType::parse(Some("app")).unwrap(), ResourceType::App);
        assert!(ResourceType::parse(Some("gpu")).is_err());
        assert!(ResourceType::parse(None).is_err());
    }
}
