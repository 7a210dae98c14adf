//! Two-factor sign-in (issue 43, item 12): TOTP (RFC 6238: SHA-1, 6 digits, 30 s steps, one step
//! of skew either way; the `totp-rs` crate), enrolled on the account page, asked after the
//! password (`sign_in`), required of operators and company administrators when the operator says
//! so (the setting `two_factor_required_for_staff`, `settings`), and asked again for a money move above
//! `auth.two_factor_step_up` (`StepUp`). docs/identity.md says why each rule is so.
//!
//! A code is good once: the last accepted step is kept, and a code is accepted only by a
//! conditional `UPDATE … WHERE last_step < step` (one winner on SQLite and PostgreSQL). Recovery
//! codes (10, shown once) are kept as SHA-256 and claimed the same way (`WHERE used_at IS NULL`).

pub mod model;
pub mod sign_in;

use std::net::IpAddr;
use std::sync::Arc;

use rand::{Rng, RngCore};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, Set};
use totp_rs::{Algorithm, Builder, Secret, Totp};

use crate::coins::Coins;
use crate::db::entity::{remembered_browsers, two_factor, two_factor_recovery_codes, users};
use crate::db::{for_update, now, write_txn};
use crate::error::{AppError, Msg};
use crate::iam::IamCtx;
use crate::iam::auth::{Auth, enrolment_required, two_factor_on};
use crate::iam::ratelimit::Limits;
use crate::iam::tokens::hash_token;
use crate::ids::UserId;
use model::*;

/// How many recovery codes a person gets, and how long each is (letters and digits, shown as
/// `abcde-12345`).
pub const RECOVERY_CODES: usize = 10;
pub const RECOVERY_CODE_LEN: usize = 10;
/// The letters of a recovery code: no 0/o, 1/l/i.
const RECOVERY_ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";

fn totp(secret: &str) -> Result<Totp, AppError> {
    let secret = Secret::try_from_base32(secret).map_err(|e| AppError::Internal(anyhow::anyhow!("stored TOTP secret: {e:?}")))?;
    Builder::new()
        .with_algorithm(Algorithm::SHA1)
        .with_digits(6)
        .with_skew(1)
        .with_step_duration(30)
        .with_secret(secret)
        .build()
        .map_err(|e| AppError::Internal(anyhow::anyhow!("TOTP: {e:?}")))
}

/// The step a code belongs to, if it is one of the current step or the one either side.
fn step_of(secret: &str, code: &str) -> Result<Option<i64>, AppError> {
    let secs = now().timestamp().max(0) as u64;
    Ok(totp(secret)?.check(code, secs).map(|s| s as i64))
}

/// `otpauth://totp/Issuer:email?secret=…&issuer=…`: the label and the issuer percent-encoded.
fn otpauth_uri(issuer: &str, email: &str, secret: &str) -> String {
    fn enc(s: &str) -> String {
        s.bytes()
            .map(|b| if b.is_ascii_alphanumeric() || b"-._~@".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect()
    }
    let issuer = enc(issuer);
    format!("otpauth://totp/{issuer}:{}?secret={secret}&issuer={issuer}&algorithm=SHA1&digits=6&period=30", enc(email))
}

fn qr_svg(data: &str) -> Result<String, AppError> {
    let code = qrcode::QrCode::new(data.as_bytes()).map_err(|e| AppError::Internal(anyhow::anyhow!("QR code: {e}")))?;
    Ok(code.render::<qrcode::render::svg::Color<'_>>().min_dimensions(200, 200).quiet_zone(true).build())
}

async fn row(db: &impl ConnectionTrait, user_id: &UserId) -> Result<Option<two_factor::Model>, AppError> {
    Ok(two_factor::Entity::find_by_id(user_id.to_string()).one(db).await?)
}

/// Whether two-factor sign-in is on for this person.
pub async fn enabled(db: &impl ConnectionTrait, user_id: &UserId) -> Result<bool, AppError> {
    two_factor_on(db, user_id).await
}

pub async fn status(cx: &IamCtx, auth: &Auth) -> Result<TwoFactorStatus, AppError> {
    let on = enabled(&cx.db, &auth.user_id).await?;
    let left = if on {
        two_factor_recovery_codes::Entity::find()
            .filter(two_factor_recovery_codes::Column::UserId.eq(&auth.user_id))
            .filter(two_factor_recovery_codes::Column::UsedAt.is_null())
            .count(&cx.db)
            .await?
    } else {
        0
    };
    let required = enrolment_required(&cx.db, cx.market_settings.current().two_factor_required_for_staff, auth).await?;
    Ok(TwoFactorStatus { enabled: on, recovery_codes_left: left, required })
}

/// Starts (or starts again) an enrolment: a new secret, not in force until `confirm`. 409 while
/// 2FA is on (turn it off first).
pub async fn start(cx: &IamCtx, auth: &Auth) -> Result<TwoFactorSetup, AppError> {
    auth.session()?;
    let user = users::Entity::find_by_id(auth.user_id.to_string()).one(&cx.db).await?.ok_or(AppError::Refused(Msg::Unauthorized))?;
    let mut bytes = [0u8; 20];
    rand::rng().fill_bytes(&mut bytes);
    let secret = Secret::from(bytes.to_vec()).to_base32();
    let txn = write_txn(&cx.db).await?;
    // The person's row first: two starts at once take turns (no second insert of the same row).
    for_update(&txn, users::Entity::find_by_id(user.id.clone())).one(&txn).await?;
    match for_update(&txn, two_factor::Entity::find_by_id(user.id.clone())).one(&txn).await? {
        Some(r) if r.enabled_at.is_some() => return Err(AppError::Refused(Msg::TwoFactorAlreadyOn)),
        Some(r) => {
            let mut a: two_factor::ActiveModel = r.into();
            a.secret = Set(secret.clone());
            a.created_at = Set(now());
            a.last_step = Set(-1);
            a.update(&txn).await?;
        }
        None => {
            two_factor::ActiveModel { user_id: Set(user.id.clone()), secret: Set(secret.clone()), created_at: Set(now()), enabled_at: Set(None), last_step: Set(-1) }
                .insert(&txn)
                .await?;
        }
    }
    txn.commit().await?;
    let otpauth_uri = otpauth_uri(&cx.site.product_name, &user.email, &secret);
    let qr_svg = qr_svg(&otpauth_uri)?;
    Ok(TwoFactorSetup { secret, otpauth_uri, qr_svg })
}

fn recovery_code() -> String {
    let mut rng = rand::rng();
    (0..RECOVERY_CODE_LEN).map(|_| RECOVERY_ALPHABET[rng.random_range(0..RECOVERY_ALPHABET.len())] as char).collect()
}

/// Confirms the enrolment with a code of the new secret: 2FA is on, and the recovery codes are
/// answered this once (any earlier ones die).
pub async fn confirm(cx: &IamCtx, auth: &Auth, ip: IpAddr, code: &str) -> Result<RecoveryCodes, AppError> {
    auth.session()?;
    let key = auth.user_id.to_string();
    cx.limiter.login_attempt(ip, &key).await?;
    let txn = write_txn(&cx.db).await?;
    let r = for_update(&txn, two_factor::Entity::find_by_id(key.clone())).one(&txn).await?.ok_or(AppError::Refused(Msg::TwoFactorNotStarted))?;
    if r.enabled_at.is_some() {
        return Err(AppError::Refused(Msg::TwoFactorAlreadyOn));
    }
    let Some(step) = step_of(&r.secret, code)? else {
        drop(txn);
        cx.limiter.login_failed(ip, &key).await?;
        return Err(AppError::invalid("code", Msg::TwoFactorCodeInvalid));
    };
    let t = now();
    let mut a: two_factor::ActiveModel = r.into();
    a.enabled_at = Set(Some(t));
    a.last_step = Set(step);
    a.update(&txn).await?;
    two_factor_recovery_codes::Entity::delete_many().filter(two_factor_recovery_codes::Column::UserId.eq(key.clone())).exec(&txn).await?;
    let codes: Vec<String> = (0..RECOVERY_CODES).map(|_| recovery_code()).collect();
    for c in &codes {
        two_factor_recovery_codes::ActiveModel { code_hash: Set(hash_token(c)), user_id: Set(key.clone().into()), created_at: Set(t), used_at: Set(None) }.insert(&txn).await?;
    }
    txn.commit().await?;
    // Shown as `abcde-12345`; typed with or without the dash.
    Ok(RecoveryCodes { recovery_codes: codes.into_iter().map(|c| format!("{}-{}", &c[..5], &c[5..])).collect() })
}

/// Turns 2FA off: the password and a current code (or a recovery code). The secret, the recovery
/// codes and every remembered browser go.
pub async fn turn_off(cx: &IamCtx, auth: &Auth, ip: IpAddr, req: TurnOff) -> Result<(), AppError> {
    auth.session()?;
    let key = auth.user_id.to_string();
    cx.limiter.login_attempt(ip, &key).await?;
    let user = users::Entity::find_by_id(key.clone()).one(&cx.db).await?.ok_or(AppError::Refused(Msg::Unauthorized))?;
    if !cx.hasher.verify(req.password, Some(user.password_hash.clone())).await? {
        cx.limiter.login_failed(ip, &key).await?;
        return Err(AppError::invalid("password", Msg::PasswordIncorrect));
    }
    if !enabled(&cx.db, &auth.user_id).await? {
        return Err(AppError::Refused(Msg::TwoFactorNotOn));
    }
    let txn = write_txn(&cx.db).await?;
    if !use_code(&txn, &auth.user_id, &req.code).await? {
        drop(txn);
        cx.limiter.login_failed(ip, &key).await?;
        return Err(AppError::invalid("code", Msg::TwoFactorCodeInvalid));
    }
    two_factor::Entity::delete_by_id(key.clone()).exec(&txn).await?;
    two_factor_recovery_codes::Entity::delete_many().filter(two_factor_recovery_codes::Column::UserId.eq(key.clone())).exec(&txn).await?;
    forget_browsers(&txn, &auth.user_id).await?;
    txn.commit().await?;
    Ok(())
}

/// Every remembered browser of this person asks for the code again (2FA off, a new password).
pub async fn forget_browsers(conn: &impl ConnectionTrait, user_id: &UserId) -> Result<(), AppError> {
    remembered_browsers::Entity::delete_many().filter(remembered_browsers::Column::UserId.eq(user_id)).exec(conn).await?;
    Ok(())
}

/// Uses a code of a person with 2FA on, once: a TOTP code of a step later than the last one
/// accepted, or an unused recovery code. False when it is not good (nothing changes then).
pub async fn use_code(conn: &impl ConnectionTrait, user_id: &UserId, code: &Code) -> Result<bool, AppError> {
    let Some(r) = row(conn, user_id).await?.filter(|r| r.enabled_at.is_some()) else { return Ok(false) };
    match code {
        Code::Totp(c) => {
            let Some(step) = step_of(&r.secret, c)? else { return Ok(false) };
            let won = two_factor::Entity::update_many()
                .col_expr(two_factor::Column::LastStep, Expr::value(step))
                .filter(two_factor::Column::UserId.eq(user_id))
                .filter(two_factor::Column::LastStep.lt(step))
                .exec(conn)
                .await?;
            Ok(won.rows_affected == 1)
        }
        Code::Recovery(c) => {
            let won = two_factor_recovery_codes::Entity::update_many()
                .col_expr(two_factor_recovery_codes::Column::UsedAt, Expr::value(now()))
                .filter(two_factor_recovery_codes::Column::CodeHash.eq(hash_token(c)))
                .filter(two_factor_recovery_codes::Column::UserId.eq(user_id))
                .filter(two_factor_recovery_codes::Column::UsedAt.is_null())
                .exec(conn)
                .await?;
            Ok(won.rows_affected == 1)
        }
    }
}

/// The code asked again for a money move above a threshold (item 4 of issue 43's item 12), for
/// the domains that move money (billing). Wrong codes are limited as wrong passwords are.
#[derive(Clone)]
pub struct StepUp {
    pub db: DatabaseConnection,
    pub limiter: Arc<Limits>,
    pub threshold: Coins,
}

impl StepUp {
    /// Ok when the move of `cents` needs no code (at most the threshold, or 2FA off), or `code`
    /// is a current code of the caller (used up). Else 400 naming `code`.
    pub async fn check(&self, auth: &Auth, ip: IpAddr, cents: i64, code: Option<&str>) -> Result<(), AppError> {
        if cents <= self.threshold.cents() || !enabled(&self.db, &auth.user_id).await? {
            return Ok(());
        }
        let asked = || AppError::invalid("code", Msg::TwoFactorStepUp(crate::coins::format_coins(self.threshold.cents())));
        let Some(code) = code.map(str::trim).filter(|c| !c.is_empty()) else { return Err(asked()) };
        let key = auth.user_id.to_string();
        self.limiter.login_attempt(ip, &key).await?;
        let good = match Code::parse(Some(code)) {
            Ok(code) => use_code(&self.db, &auth.user_id, &code).await?,
            Err(_) => false,
        };
        if !good {
            self.limiter.login_failed(ip, &key).await?;
            return Err(AppError::invalid("code", Msg::TwoFactorCodeInvalid));
        }
        Ok(())
    }
}

/// Expired challenges and remembered browsers (the hourly clean-up).
pub async fn cleanup(db: &DatabaseConnection) -> Result<u64, AppError> {
    let t = now();
    let a = crate::db::entity::two_factor_challenges::Entity::delete_many().filter(crate::db::entity::two_factor_challenges::Column::ExpiresAt.lt(t)).exec(db).await?;
    let b = remembered_browsers::Entity::delete_many().filter(remembered_browsers::Column::ExpiresAt.lt(t)).exec(db).await?;
    Ok(a.rows_affected + b.rows_affected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_uri_and_the_qr_code() {
        let uri = otpauth_uri("Z Market", "a+b@x.io", "JBSWY3DPEHPK3PXP");
        assert_eq!(uri, "otpauth://totp/Z%20Market:a%2Bb@x.io?secret=JBSWY3DPEHPK3PXP&issuer=Z%20Market&algorithm=SHA1&digits=6&period=30");
        let svg = qr_svg(&uri).unwrap();
        assert!(svg.contains("<svg"), "{svg}");
        assert_eq!(recovery_code().len(), RECOVERY_CODE_LEN);
    }
}
