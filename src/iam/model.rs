//! Identity request/response types and the validated newtypes built at the edge.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::ids;
use crate::db::entity::users;
use crate::error::{AppError, Msg};
use crate::http::Checked;
use crate::iam::auth::UserType;
use crate::iam::scopes::{DEFAULT_SCOPES, Scope};
use crate::ids::UserId;

/// An email address: trimmed, lower-cased, at most 254 characters, valid per RFC 5321.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    pub const MAX_LEN: usize = 254;
    pub fn parse(raw: Option<&str>) -> Result<Email, AppError> {
        let raw = raw.map(str::trim).unwrap_or("");
        if raw.is_empty() {
            return Err(AppError::invalid("email", Msg::EmailRequired));
        }
        if raw.chars().count() > Self::MAX_LEN {
            return Err(AppError::invalid("email", Msg::EmailTooLong));
        }
        let lower = raw.to_lowercase();
        let valid = lower.parse::<lettre::Address>().is_ok_and(|a| a.domain().contains('.'));
        if !valid {
            return Err(AppError::invalid("email", Msg::EmailFormatInvalid));
        }
        Ok(Email(lower))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A new password: 8-15 characters with at least one letter and one digit.
pub struct Password(String);

impl Password {
    pub fn parse(field: &'static str, raw: Option<&str>) -> Result<Password, AppError> {
        let raw = raw.unwrap_or("");
        if raw.is_empty() {
            return Err(AppError::invalid(field, Msg::PasswordRequired));
        }
        let n = raw.chars().count();
        let letter = raw.chars().any(|c| c.is_alphabetic());
        let digit = raw.chars().any(|c| c.is_ascii_digit());
        if !(8..=15).contains(&n) || !letter || !digit {
            return Err(AppError::invalid(field, Msg::PasswordFormatInvalid));
        }
        Ok(Password(raw.to_string()))
    }
    /// A password being presented (sign-in, confirmation of a deletion): only required.
    pub fn presented(field: &'static str, raw: Option<&str>) -> Result<String, AppError> {
        match raw {
            Some(p) if !p.is_empty() => Ok(p.to_string()),
            _ => Err(AppError::invalid(field, Msg::PasswordRequired)),
        }
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A display name: trimmed, 3-50 characters.
#[derive(Debug, Clone)]
pub struct Username(String);

impl Username {
    pub fn parse(raw: Option<&str>) -> Result<Username, AppError> {
        let raw = raw.map(str::trim).unwrap_or("");
        if raw.is_empty() {
            return Err(AppError::invalid("name", Msg::UsernameRequired));
        }
        let n = raw.chars().count();
        if !(3..=50).contains(&n) || raw.chars().any(char::is_control) {
            return Err(AppError::invalid("name", Msg::UsernameFormatInvalid));
        }
        Ok(Username(raw.to_string()))
    }
    /// The name given to an account created without one: the email's local part when it fits.
    pub fn from_email(email: &Email) -> Username {
        let local = email.as_str().split('@').next().unwrap_or("");
        let n = local.chars().count();
        if (3..=50).contains(&n) {
            Username(local.to_string())
        } else {
            Username(email.as_str().chars().take(50).collect())
        }
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
    pub fn into_string(self) -> String {
        self.0
    }
}

// Request bodies take every field as optional, so a missing field gets its own message
// ("Email Required") instead of a generic parse error.

#[derive(Debug, Deserialize, ToSchema)]
pub struct RegisterRequest {
    pub email: Option<String>,
    pub password: Option<String>,
    pub confirm_password: Option<String>,
    pub username: Option<String>,
    /// Agreement to the Terms of Use and Privacy Policy; must be true.
    pub agree: Option<bool>,
    /// A page of this site the verification link leads to after sign-in (an invitation link).
    pub redirect: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RegisterResponse {
    pub email: String,
    pub verification_required: bool,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VerifyQuery {
    pub token: Option<String>,
}

/// The answer to a verification link.
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailVerified {
    pub email: String,
    /// Set when the address had several pending sign-ups: none of their passwords became valid,
    /// and this reset token (`POST /api/iam/v1/password/reset`) lets the mailbox's owner choose one.
    pub password_token: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct LoginRequest {
    pub email: Option<String>,
    pub password: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct SwitchRequest {
    #[serde(rename = "smeId")]
    pub sme_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserInfo {
    pub name: String,
    pub avatar_url: String,
    pub email: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Organization {
    /// "user" for the personal pseudo-organization, else the company id.
    pub id: String,
    pub name: String,
    pub network_id: String,
    /// User id of the company's owner (the person themself for "user").
    pub owner: String,
}

/// The signed-in session, as docs/product.md §3 names its fields.
#[derive(Debug, Serialize, ToSchema)]
pub struct Session {
    pub token: String,
    pub refresh_token: String,
    /// Epoch seconds.
    pub access_token_expire: i64,
    #[serde(rename = "smeId")]
    pub sme_id: String,
    #[serde(rename = "userType")]
    pub user_type: UserType,
    #[serde(rename = "userInfo")]
    pub user_info: UserInfo,
    #[serde(rename = "organizationList")]
    pub organization_list: Vec<Organization>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RefreshResponse {
    pub access_token: String,
    pub refresh_token: String,
    pub access_token_expire: i64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Profile {
    pub id: String,
    pub email: String,
    pub name: String,
    pub avatar_url: String,
    /// RFC 3339.
    pub created_at: String,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ProfileInfoRequest {
    pub name: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ChangePasswordRequest {
    pub old_password: Option<String>,
    pub new_password: Option<String>,
    pub confirm_password: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AvatarResponse {
    pub avatar_url: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AccountCheck {
    pub deletable: bool,
    /// Among devices_linked, apps_rented, balance_outstanding, companies_joined.
    pub reasons: Vec<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct DeleteAccountRequest {
    pub password: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MenuMeta {
    pub icon: String,
    /// The title key the UI translates.
    pub title: String,
    #[serde(rename = "isLink")]
    pub is_link: bool,
    #[serde(rename = "isHide")]
    pub is_hide: bool,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MenuEntry {
    pub path: String,
    pub name: String,
    pub component: String,
    pub meta: MenuMeta,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(no_recursion)]
    pub children: Vec<MenuEntry>,
}

/// Where a person's avatar is served (empty without one); the version busts caches.
pub fn avatar_url(user: &users::Model) -> String {
    let version = if user.avatar.is_some() { user.avatar_version.max(1) } else { user.avatar_version };
    avatar_path(&user.id, version)
}

/// The avatar URL of a person from their id and avatar version (0: none, empty URL), for readers
/// that do not load the image bytes (src/social).
pub fn avatar_path(user_id: &UserId, avatar_version: i32) -> String {
    if avatar_version > 0 { format!("/api/iam/v1/avatars/{user_id}?v={avatar_version}") } else { String::new() }
}

// ---- checked requests (built at the edge by `http::Valid`) ----

/// A password and its confirmation, which must match (`field` names the new password).
fn confirmed(field: &'static str, password: Option<&str>, confirm: Option<&str>) -> Result<Password, AppError> {
    let password = Password::parse(field, password)?;
    if confirm.unwrap_or("").is_empty() {
        return Err(AppError::invalid("confirm_password", Msg::PasswordRequired));
    }
    if confirm != Some(password.as_str()) {
        return Err(AppError::invalid("confirm_password", Msg::PasswordMismatch));
    }
    Ok(password)
}

/// A sign-up: a valid email, a valid confirmed password, an optional valid name, and the
/// agreement given.
pub struct NewAccount {
    pub email: Email,
    pub password: Password,
    pub username: Option<Username>,
    pub redirect: Option<String>,
}

impl Checked for NewAccount {
    type Body = RegisterRequest;
    fn check(req: RegisterRequest) -> Result<Self, AppError> {
        let email = Email::parse(req.email.as_deref())?;
        let password = confirmed("password", req.password.as_deref(), req.confirm_password.as_deref())?;
        let username = match req.username.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(n) => Some(Username::parse(Some(n))?),
        };
        if req.agree != Some(true) {
            return Err(AppError::invalid("agree", Msg::AgreementRequired));
        }
        Ok(NewAccount { email, password, username, redirect: after_verification(req.redirect.as_deref())? })
    }
}

/// A sign-in: a valid email and a presented password.
pub struct Credentials {
    pub email: Email,
    pub password: String,
}

impl Checked for Credentials {
    type Body = LoginRequest;
    fn check(req: LoginRequest) -> Result<Self, AppError> {
        Ok(Credentials { email: Email::parse(req.email.as_deref())?, password: Password::presented("password", req.password.as_deref())? })
    }
}

/// The context to switch to: `"user"` or a company id.
pub struct SwitchTo(pub String);

impl Checked for SwitchTo {
    type Body = SwitchRequest;
    fn check(req: SwitchRequest) -> Result<Self, AppError> {
        Ok(SwitchTo(ids::required(req.sme_id, "smeId", Msg::CompanyIdRequired)?))
    }
}

impl Checked for Username {
    type Body = ProfileInfoRequest;
    fn check(req: ProfileInfoRequest) -> Result<Self, AppError> {
        Username::parse(req.name.as_deref())
    }
}

/// A password change: the current password presented, the new one valid and confirmed.
pub struct PasswordChange {
    pub old: String,
    pub new: Password,
}

impl Checked for PasswordChange {
    type Body = ChangePasswordRequest;
    fn check(req: ChangePasswordRequest) -> Result<Self, AppError> {
        let old = Password::presented("old_password", req.old_password.as_deref())?;
        let new = confirmed("new_password", req.new_password.as_deref(), req.confirm_password.as_deref())?;
        Ok(PasswordChange { old, new })
    }
}

/// The password presented to confirm deleting the account.
pub struct DeletionConfirmed {
    pub password: String,
}

impl Checked for DeletionConfirmed {
    type Body = DeleteAccountRequest;
    fn check(req: DeleteAccountRequest) -> Result<Self, AppError> {
        Ok(DeletionConfirmed { password: Password::presented("password", req.password.as_deref())? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        assert!(matches!(Email::parse(None), Err(AppError::Invalid { msg: Msg::EmailRequired, .. })));
        assert!(matches!(Email::parse(Some("  ")), Err(AppError::Invalid { msg: Msg::EmailRequired, .. })));
        assert!(matches!(Email::parse(Some("nope")), Err(AppError::Invalid { msg: Msg::EmailFormatInvalid, .. })));
        assert!(matches!(Email::parse(Some("a@b")), Err(AppError::Invalid { msg: Msg::EmailFormatInvalid, .. })));
        let long = format!("{}@example.com", "a".repeat(250));
        assert!(matches!(Email::parse(Some(&long)), Err(AppError::Invalid { msg: Msg::EmailTooLong, .. })));
        assert_eq!(Email::parse(Some(" Ada@Example.COM ")).unwrap().as_str(), "ada@example.com");
    }

    #[test]
    fn passwords() {
        for bad in ["short1", "abcdefghij", "1234567890", "abcdefgh12345678"] {
            assert!(Password::parse("password", Some(bad)).is_err(), "{bad}");
        }
        for good in ["abcdefg1", "Passw0rd!", "a1b2c3d4e5f6g7h"] {
            assert!(Password::parse("password", Some(good)).is_ok(), "{good}");
        }
    }

    #[test]
    fn usernames() {
        assert!(Username::parse(Some("ab")).is_err());
        assert!(Username::parse(Some(&"x".repeat(51))).is_err());
        assert_eq!(Username::parse(Some("  张三丰  ")).unwrap().as_str(), "张三丰");
        let e = Email::parse(Some("ab@example.com")).unwrap();
        assert_eq!(Username::from_email(&e).as_str(), "ab@example.com");
    }
}

// ---- account recovery (issue 17) ----

#[derive(Debug, Deserialize, ToSchema)]
pub struct RecoveryRequest {
    pub email: Option<String>,
    /// Resend only: the page the new verification link leads to after sign-in (an invitation).
    pub redirect: Option<String>,
}

/// The address a recovery mail (reset link, verification link) is asked for.
pub struct RecoveryEmail {
    pub email: Email,
    pub redirect: Option<String>,
}

impl Checked for RecoveryEmail {
    type Body = RecoveryRequest;
    fn check(req: RecoveryRequest) -> Result<Self, AppError> {
        Ok(RecoveryEmail { email: Email::parse(req.email.as_deref())?, redirect: after_verification(req.redirect.as_deref())? })
    }
}

/// The same answer whether or not an account has the address (no account enumeration).
#[derive(Debug, Serialize, ToSchema)]
pub struct RecoveryAnswer {
    pub email: String,
    /// Always true: a mail goes out when the address has an account that needs one.
    pub sent: bool,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ResetPasswordRequest {
    /// The token of the mailed link (`/reset-password?token=`).
    pub token: Option<String>,
    pub password: Option<String>,
    pub confirm_password: Option<String>,
}

pub struct PasswordReset {
    pub token: String,
    pub password: Password,
}

impl Checked for PasswordReset {
    type Body = ResetPasswordRequest;
    fn check(req: ResetPasswordRequest) -> Result<Self, AppError> {
        let token = req.token.as_deref().map(str::trim).filter(|t| !t.is_empty() && t.len() <= 128).ok_or(AppError::invalid("token", Msg::ResetLinkInvalid))?;
        let password = confirmed("password", req.password.as_deref(), req.confirm_password.as_deref())?;
        Ok(PasswordReset { token: token.to_string(), password })
    }
}

/// Where a mailed verification link sends the person after sign-in (an invitation page): a path
/// of this site, at most 512 characters.
pub fn after_verification(raw: Option<&str>) -> Result<Option<String>, AppError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(p) if p.starts_with('/') && !p.starts_with("//") && !p.contains('\\') && p.len() <= 512 && !p.chars().any(char::is_control) => {
            Ok(Some(p.to_string()))
        }
        Some(_) => Err(AppError::invalid("redirect", Msg::RedirectInvalid)),
    }
}

// ---- personal API keys (issue 22) ----

#[derive(Debug, Deserialize, ToSchema)]
pub struct ApiKeyRequest {
    /// 1-64 characters, no control characters.
    pub name: Option<String>,
    /// RFC 3339, in the future, at most 365 days ahead; null or absent: in 90 days.
    pub expires_at: Option<String>,
    /// What the key may do (`read`, `apps`, `wallet`, `ops`); absent: `read` and `apps`.
    pub scopes: Option<Vec<String>>,
    /// The caller's password: required for an `ops` key (its own confirmation).
    pub password: Option<String>,
}

/// A new key: its only appearance in clear (`key`, `zk_…`); the database keeps its hash.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyCreated {
    pub id: String,
    pub name: String,
    pub key: String,
    pub prefix: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub scopes: Vec<Scope>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKey {
    pub id: String,
    pub name: String,
    /// The key's first characters (`zk_ab12cd`).
    pub prefix: String,
    /// The context the key acts in: `"user"` or a company id.
    #[serde(rename = "smeId")]
    pub sme_id: String,
    pub created_at: DateTime<Utc>,
    /// Recorded at most once a minute.
    pub last_used_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
    pub scopes: Vec<Scope>,
}

/// A checked key request: a trimmed name, an expiry in the future, its scopes (at least one),
/// and the password that confirms an `ops` key (checked by `api_keys::create`).
pub struct NewApiKey {
    pub name: String,
    pub expires_at: DateTime<Utc>,
    pub scopes: Vec<Scope>,
    pub password: Option<String>,
}

impl NewApiKey {
    pub const MAX_NAME: usize = 64;
    /// A key's life when its creator names none, and the longest one may name.
    pub const DEFAULT_DAYS: i64 = 90;
    pub const MAX_DAYS: i64 = 365;
}

impl Checked for NewApiKey {
    type Body = ApiKeyRequest;
    fn check(req: ApiKeyRequest) -> Result<Self, AppError> {
        let name = req.name.as_deref().map(str::trim).unwrap_or("");
        if name.is_empty() {
            return Err(AppError::invalid("name", Msg::ApiKeyNameRequired));
        }
        if name.chars().count() > Self::MAX_NAME || name.chars().any(char::is_control) {
            return Err(AppError::invalid("name", Msg::ApiKeyNameInvalid));
        }
        let t = crate::db::now();
        let expires_at = match req.expires_at.as_deref().map(str::trim) {
            None | Some("") => t + chrono::Duration::days(Self::DEFAULT_DAYS),
            Some(raw) => {
                let at = DateTime::parse_from_rfc3339(raw).map_err(|_| AppError::invalid("expires_at", Msg::ApiKeyExpiryInvalid))?.with_timezone(&Utc);
                if at <= t {
                    return Err(AppError::invalid("expires_at", Msg::ApiKeyExpiryPast));
                }
                // A day of slack: "in a year" picked in a browser whose clock runs ahead.
                if at > t + chrono::Duration::days(Self::MAX_DAYS + 1) {
                    return Err(AppError::invalid("expires_at", Msg::ApiKeyExpiryTooFar(Self::MAX_DAYS as u64)));
                }
                at
            }
        };
        let scopes = match req.scopes {
            None => DEFAULT_SCOPES.to_vec(),
            Some(names) => {
                let mut scopes = Vec::new();
                for n in &names {
                    scopes.push(Scope::parse(n.trim()).ok_or(AppError::invalid("scopes", Msg::ApiKeyScopeUnknown))?);
                }
                scopes.sort();
                scopes.dedup();
                if scopes.is_empty() {
                    return Err(AppError::invalid("scopes", Msg::ApiKeyScopesRequired));
                }
                scopes
            }
        };
        let password = req.password.filter(|p| !p.is_empty());
        Ok(NewApiKey { name: name.to_string(), expires_at, scopes, password })
    }
}
