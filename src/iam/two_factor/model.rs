//! Two-factor sign-in's request and answer types (issue 43, item 12).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::{AppError, Msg};
use crate::http::Checked;
use crate::iam::model::Password;

/// Whether two-factor sign-in is on for the caller.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TwoFactorStatus {
    pub enabled: bool,
    /// Recovery codes not used yet.
    pub recovery_codes_left: u64,
    /// The operator requires it of the caller (an operator or a company administrator) and it is off.
    pub required: bool,
}

/// A started enrolment: the secret as the authenticator app takes it, typed or scanned.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TwoFactorSetup {
    /// Base32 (RFC 4648, no padding).
    pub secret: String,
    /// `otpauth://totp/…`: what the QR code holds.
    pub otpauth_uri: String,
    /// The QR code of `otpauth_uri`, an SVG document made on the server.
    pub qr_svg: String,
}

/// The recovery codes, shown this once (each signs in once in place of a code).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecoveryCodes {
    pub recovery_codes: Vec<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct TwoFactorCodeRequest {
    /// 6 digits from the authenticator app (or, where accepted, a recovery code).
    pub code: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct TwoFactorOffRequest {
    pub password: Option<String>,
    pub code: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct TwoFactorLoginRequest {
    /// The challenge of the `two_factor_required` answer to the password sign-in.
    pub challenge: Option<String>,
    pub code: Option<String>,
    /// Skip the code on this browser for 30 days (an HttpOnly cookie).
    #[serde(default)]
    pub remember: Option<bool>,
}

/// What a person typed as a code: a TOTP code (6 digits) or a recovery code, normalized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Code {
    Totp(String),
    Recovery(String),
}

impl Code {
    /// Spaces and dashes dropped, lower case; 6 digits are a TOTP code, 10 letters and digits a
    /// recovery code; anything else is 400 naming `code`.
    pub fn parse(raw: Option<&str>) -> Result<Code, AppError> {
        let raw = raw.map(str::trim).filter(|s| !s.is_empty()).ok_or(AppError::invalid("code", Msg::TwoFactorCodeRequired))?;
        let t: String = raw.chars().filter(|c| !c.is_whitespace() && *c != '-').collect::<String>().to_ascii_lowercase();
        if t.len() == 6 && t.chars().all(|c| c.is_ascii_digit()) {
            Ok(Code::Totp(t))
        } else if t.len() == super::RECOVERY_CODE_LEN && t.chars().all(|c| c.is_ascii_alphanumeric()) {
            Ok(Code::Recovery(t))
        } else {
            Err(AppError::invalid("code", Msg::TwoFactorCodeInvalid))
        }
    }
    /// Only the authenticator app's code (enrolment, where a recovery code means nothing yet).
    pub fn totp(raw: Option<&str>) -> Result<String, AppError> {
        match Code::parse(raw)? {
            Code::Totp(c) => Ok(c),
            Code::Recovery(_) => Err(AppError::invalid("code", Msg::TwoFactorCodeInvalid)),
        }
    }
}

pub struct EnrolCode(pub String);

impl Checked for EnrolCode {
    type Body = TwoFactorCodeRequest;
    fn check(req: TwoFactorCodeRequest) -> Result<Self, AppError> {
        Ok(EnrolCode(Code::totp(req.code.as_deref())?))
    }
}

pub struct TurnOff {
    pub password: String,
    pub code: Code,
}

impl Checked for TurnOff {
    type Body = TwoFactorOffRequest;
    fn check(req: TwoFactorOffRequest) -> Result<Self, AppError> {
        Ok(TurnOff { password: Password::presented("password", req.password.as_deref())?, code: Code::parse(req.code.as_deref())? })
    }
}

pub struct SecondStep {
    pub challenge: String,
    pub code: Code,
    pub remember: bool,
}

impl Checked for SecondStep {
    type Body = TwoFactorLoginRequest;
    fn check(req: TwoFactorLoginRequest) -> Result<Self, AppError> {
        let challenge = req.challenge.map(|c| c.trim().to_string()).filter(|c| !c.is_empty() && c.len() <= 128).ok_or(AppError::invalid("challenge", Msg::TwoFactorChallengeInvalid))?;
        Ok(SecondStep { challenge, code: Code::parse(req.code.as_deref())?, remember: req.remember.unwrap_or(false) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_told_apart() {
        assert_eq!(Code::parse(Some(" 123 456 ")).unwrap(), Code::Totp("123456".into()));
        assert_eq!(Code::parse(Some("ABCDE-12345")).unwrap(), Code::Recovery("abcde12345".into()));
        assert!(Code::parse(Some("12345")).is_err());
        assert!(Code::parse(None).is_err());
        assert!(Code::totp(Some("abcde-12345")).is_err());
    }
}
