//! Identity endpoints (`/api/iam/v1`, `/api/iam/v2/login/password`): parse, call, answer.

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, FromRef, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::ids::{ApiKeyId, UserId};
use crate::error::{ApiResult, AppError, Envelope, Msg, Null, ok};
use crate::http::{ApiMultipart, ApiPath, ApiQuery, ClientIp, List, Page, Valid};
use crate::iam::IamCtx;
use crate::iam::account::{self, AVATAR_MAX_BYTES};
use crate::iam::auth::{Auth, Sessions};
use crate::iam::model::*;
use crate::iam::two_factor::{self, model::*};
use crate::iam::{api_keys, sessions, signup};

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    IamCtx: FromRef<S>,
    Sessions: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(register))
        .routes(routes!(verify_email))
        .routes(routes!(login))
        .routes(routes!(login_two_factor))
        .routes(routes!(two_factor_status))
        .routes(routes!(two_factor_setup))
        .routes(routes!(two_factor_confirm))
        .routes(routes!(two_factor_off))
        .routes(routes!(refresh))
        .routes(routes!(switch))
        .routes(routes!(logout))
        .routes(routes!(profile))
        .routes(routes!(update_profile_info))
        .routes(routes!(change_password))
        .merge(OpenApiRouter::new().routes(routes!(upload_avatar)).layer(DefaultBodyLimit::max(AVATAR_MAX_BYTES + 64 * 1024)))
        .routes(routes!(get_avatar))
        .routes(routes!(account_check))
        .routes(routes!(delete_account))
        .routes(routes!(menus))
        .routes(routes!(forgot_password))
        .routes(routes!(reset_password))
        .routes(routes!(resend_verification))
        .routes(routes!(create_api_key, list_api_keys))
        .routes(routes!(revoke_api_key))
}

/// Create a personal API key acting as the caller in the current context: `key` is shown this
/// once. Only from a signed-in session (403 for an API key); at most 20 live keys (409).
#[utoipa::path(post, path = "/api/iam/v1/api-keys", tag = "identity", request_body = ApiKeyRequest,
    responses((status = 200, body = Envelope<ApiKeyCreated>), (status = 403), (status = 409)))]
async fn create_api_key(State(cx): State<IamCtx>, auth: Auth, Valid(req): Valid<NewApiKey>) -> ApiResult<ApiKeyCreated> {
    ok(api_keys::create(&cx, &auth, req).await?)
}

/// The caller's API keys (not revoked; expired ones included), newest first.
#[utoipa::path(get, path = "/api/iam/v1/api-keys", tag = "identity", params(Page),
    responses((status = 200, body = Envelope<List<ApiKey>>)))]
async fn list_api_keys(State(cx): State<IamCtx>, auth: Auth, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<ApiKey>> {
    let (offset, limit) = page.checked(Page::MAX_LIMIT)?;
    ok(api_keys::list(&cx, &auth, offset, limit).await?)
}

/// Revoke one of the caller's API keys: it stops working at once (404 for anyone else's).
#[utoipa::path(delete, path = "/api/iam/v1/api-keys/{id}", tag = "identity", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Null>), (status = 404)))]
async fn revoke_api_key(State(cx): State<IamCtx>, auth: Auth, ApiPath(id): ApiPath<ApiKeyId>) -> ApiResult<Null> {
    api_keys::revoke(&cx, &auth, &id).await?;
    ok(Null)
}

/// Mail a password reset link (the same answer for an address without an account; 429 when limited).
#[utoipa::path(post, path = "/api/iam/v1/password/forgot", tag = "identity", request_body = RecoveryRequest,
    responses((status = 200, body = Envelope<RecoveryAnswer>), (status = 429)))]
async fn forgot_password(State(cx): State<IamCtx>, ClientIp(ip): ClientIp, Valid(req): Valid<RecoveryEmail>) -> ApiResult<RecoveryAnswer> {
    ok(crate::iam::recovery::forgot_password(&cx, ip, req.email).await?)
}

/// Set a new password with the mailed link's token: once, before it expires; every session ends.
#[utoipa::path(post, path = "/api/iam/v1/password/reset", tag = "identity", request_body = ResetPasswordRequest,
    responses((status = 200, body = Envelope<Null>), (status = 409)))]
async fn reset_password(State(cx): State<IamCtx>, Valid(req): Valid<PasswordReset>) -> ApiResult<Null> {
    crate::iam::recovery::reset_password(&cx, req).await?;
    ok(Null)
}

/// Mail a new verification link to an account still waiting for one (the same answer for any address; 429 when limited).
#[utoipa::path(post, path = "/api/iam/v1/verify-email/resend", tag = "identity", request_body = RecoveryRequest,
    responses((status = 200, body = Envelope<RecoveryAnswer>), (status = 429)))]
async fn resend_verification(State(cx): State<IamCtx>, ClientIp(ip): ClientIp, Valid(req): Valid<RecoveryEmail>) -> ApiResult<RecoveryAnswer> {
    ok(crate::iam::recovery::resend_verification(&cx, ip, req.email, req.redirect).await?)
}

/// Sign up; a verification mail is sent when verification is on.
#[utoipa::path(post, path = "/api/iam/v1/register", tag = "identity", operation_id = "register_account", request_body = RegisterRequest,
    responses((status = 200, body = Envelope<RegisterResponse>)))]
async fn register(State(cx): State<IamCtx>, ClientIp(ip): ClientIp, Valid(req): Valid<NewAccount>) -> ApiResult<RegisterResponse> {
    ok(signup::register(&cx, ip, req).await?)
}

/// Verify an email address with the token from the mailed link.
#[utoipa::path(get, path = "/api/iam/v1/verify-email", tag = "identity", params(VerifyQuery),
    responses((status = 200, body = Envelope<EmailVerified>)))]
async fn verify_email(State(cx): State<IamCtx>, ApiQuery(q): ApiQuery<VerifyQuery>) -> ApiResult<EmailVerified> {
    ok(signup::verify_email(&cx, q.token.as_deref()).await?)
}

/// Sign in with email and password (403 before the email is verified; 429 when limited).
#[utoipa::path(post, path = "/api/iam/v2/login/password", tag = "identity", request_body = LoginRequest,
    responses((status = 200, body = Envelope<Session>)))]
async fn login(
    State(cx): State<IamCtx>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    Valid(req): Valid<Credentials>,
) -> ApiResult<Session> {
    let cookie = headers.get(header::COOKIE).and_then(|v| v.to_str().ok());
    ok(sessions::login(&cx, ip, req, two_factor::sign_in::remembered_token(cookie)).await?)
}

/// The second step of the sign-in when two-factor sign-in is on: the challenge of the
/// `two_factor_required` answer and a code (or a recovery code) give the session; `remember`
/// sets an HttpOnly cookie that skips this step on this browser for 30 days.
#[utoipa::path(post, path = "/api/iam/v2/login/two-factor", tag = "identity", request_body = TwoFactorLoginRequest,
    responses((status = 200, body = Envelope<Session>), (status = 400), (status = 429)))]
async fn login_two_factor(State(cx): State<IamCtx>, ClientIp(ip): ClientIp, Valid(req): Valid<SecondStep>) -> Result<Response, AppError> {
    let (session, remember) = sessions::login_second_step(&cx, ip, req).await?;
    let mut res = ok(session)?.into_response();
    if let Some(token) = remember {
        let secure = cx.site.public_url.starts_with("https://");
        let v = HeaderValue::from_str(&two_factor::sign_in::remember_cookie(&token, secure)).map_err(|e| AppError::Internal(e.into()))?;
        res.headers_mut().insert(header::SET_COOKIE, v);
    }
    Ok(res)
}

/// Whether two-factor sign-in is on for the caller, their recovery codes left, and whether the
/// operator requires it of them.
#[utoipa::path(get, path = "/api/iam/v1/account/two-factor", tag = "identity", responses((status = 200, body = Envelope<TwoFactorStatus>)))]
async fn two_factor_status(State(cx): State<IamCtx>, auth: Auth) -> ApiResult<TwoFactorStatus> {
    ok(two_factor::status(&cx, &auth).await?)
}

/// Start enrolling: a new secret, its `otpauth://` URI and its QR code (SVG). Not in force until
/// confirmed with a code; 409 while two-factor sign-in is on.
#[utoipa::path(post, path = "/api/iam/v1/account/two-factor/setup", tag = "identity",
    responses((status = 200, body = Envelope<TwoFactorSetup>), (status = 409)))]
async fn two_factor_setup(State(cx): State<IamCtx>, auth: Auth) -> ApiResult<TwoFactorSetup> {
    ok(two_factor::start(&cx, &auth).await?)
}

/// Confirm the enrolment with a 6-digit code: two-factor sign-in is on, and the 10 recovery
/// codes are answered this once.
#[utoipa::path(post, path = "/api/iam/v1/account/two-factor/confirm", tag = "identity", request_body = TwoFactorCodeRequest,
    responses((status = 200, body = Envelope<RecoveryCodes>), (status = 400), (status = 409), (status = 429)))]
async fn two_factor_confirm(State(cx): State<IamCtx>, auth: Auth, ClientIp(ip): ClientIp, Valid(req): Valid<EnrolCode>) -> ApiResult<RecoveryCodes> {
    ok(two_factor::confirm(&cx, &auth, ip, &req.0).await?)
}

/// Turn two-factor sign-in off: the password and a current code (or a recovery code); every
/// remembered browser is forgotten.
#[utoipa::path(post, path = "/api/iam/v1/account/two-factor/off", tag = "identity", request_body = TwoFactorOffRequest,
    responses((status = 200, body = Envelope<Null>), (status = 400), (status = 409), (status = 429)))]
async fn two_factor_off(State(cx): State<IamCtx>, auth: Auth, ClientIp(ip): ClientIp, Valid(req): Valid<TurnOff>) -> ApiResult<Null> {
    two_factor::turn_off(&cx, &auth, ip, req).await?;
    ok(Null)
}

/// Exchange the refresh token (as Bearer) for a new token pair.
#[utoipa::path(get, path = "/api/iam/v1/refresh", tag = "identity",
    responses((status = 200, body = Envelope<RefreshResponse>)))]
async fn refresh(State(cx): State<IamCtx>, parts: Parts) -> ApiResult<RefreshResponse> {
    ok(sessions::refresh(&cx, crate::iam::auth::bearer(&parts)).await?)
}

/// Switch the session into a company the caller belongs to, or back to "user".
#[utoipa::path(post, path = "/api/iam/v1/switch", tag = "identity", request_body = SwitchRequest,
    responses((status = 200, body = Envelope<Session>)))]
async fn switch(State(cx): State<IamCtx>, auth: Auth, Valid(req): Valid<SwitchTo>) -> ApiResult<Session> {
    ok(sessions::switch(&cx, &auth, req).await?)
}

/// End this session: its refresh token stops working.
#[utoipa::path(post, path = "/api/iam/v1/logout", tag = "identity", responses((status = 200, body = Envelope<Null>)))]
async fn logout(State(cx): State<IamCtx>, auth: Auth) -> ApiResult<Null> {
    sessions::logout(&cx, &auth).await?;
    ok(Null)
}

#[utoipa::path(get, path = "/api/iam/v1/account/profile", tag = "identity", responses((status = 200, body = Envelope<Profile>)))]
async fn profile(State(cx): State<IamCtx>, auth: Auth) -> ApiResult<Profile> {
    ok(account::profile(&cx, &auth).await?)
}

/// Change the username (3-50 characters).
#[utoipa::path(put, path = "/api/iam/v1/account/profile/info", tag = "identity", request_body = ProfileInfoRequest,
    responses((status = 200, body = Envelope<Profile>)))]
async fn update_profile_info(State(cx): State<IamCtx>, auth: Auth, Valid(req): Valid<Username>) -> ApiResult<Profile> {
    ok(account::update_name(&cx, &auth, req).await?)
}

/// Change the password; the user's other sessions end.
#[utoipa::path(put, path = "/api/iam/v1/account/password", tag = "identity", request_body = ChangePasswordRequest,
    responses((status = 200, body = Envelope<Null>)))]
async fn change_password(State(cx): State<IamCtx>, auth: Auth, Valid(req): Valid<PasswordChange>) -> ApiResult<Null> {
    account::change_password(&cx, &auth, req).await?;
    ok(Null)
}

/// Upload an avatar (multipart field `file`): at most 3 MB, JPG/PNG/WEBP/GIF by content.
#[utoipa::path(put, path = "/api/iam/v1/account/profile/avatar", tag = "identity",
    responses((status = 200, body = Envelope<AvatarResponse>), (status = 413), (status = 415)))]
async fn upload_avatar(State(cx): State<IamCtx>, auth: Auth, headers: axum::http::HeaderMap, form: ApiMultipart) -> ApiResult<AvatarResponse> {
    let bytes = form.small_file(&headers, "file", AVATAR_MAX_BYTES, Msg::AvatarTooLarge, Msg::AvatarMissing).await?;
    ok(account::set_avatar(&cx, &auth, bytes).await?)
}

/// A user's avatar image.
#[utoipa::path(get, path = "/api/iam/v1/avatars/{id}", tag = "identity", params(("id" = String, Path)),
    responses((status = 200, content_type = "image/*")))]
async fn get_avatar(State(cx): State<IamCtx>, ApiPath(id): ApiPath<UserId>) -> Result<Response, AppError> {
    let (bytes, mime) = account::avatar(&cx, &id).await?;
    let mut res = Body::from(bytes).into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_str(&mime).map_err(|e| AppError::Internal(e.into()))?);
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // The URL carries the avatar's version, so it may be cached.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400"));
    h.insert(header::CONTENT_DISPOSITION, HeaderValue::from_static("inline"));
    Ok(res)
}

/// Whether the account can be deleted now, and why not.
#[utoipa::path(post, path = "/api/iam/v1/account/check", tag = "identity", responses((status = 200, body = Envelope<AccountCheck>)))]
async fn account_check(State(cx): State<IamCtx>, auth: Auth) -> ApiResult<AccountCheck> {
    ok(account::account_check(&cx, &auth).await?)
}

/// Delete the account (409 with the reasons while something blocks it).
#[utoipa::path(delete, path = "/api/iam/v1/account", tag = "identity", request_body = DeleteAccountRequest,
    responses((status = 200, body = Envelope<Null>), (status = 409)))]
async fn delete_account(State(cx): State<IamCtx>, auth: Auth, Valid(req): Valid<DeletionConfirmed>) -> ApiResult<Null> {
    account::delete_account(&cx, &auth, req).await?;
    ok(Null)
}

/// The menu tree for the caller's userType.
#[utoipa::path(get, path = "/api/iam/v1/menus", tag = "identity", responses((status = 200, body = Envelope<Vec<MenuEntry>>)))]
async fn menus(State(cx): State<IamCtx>, auth: Auth) -> ApiResult<Vec<MenuEntry>> {
    let operator = auth.context == crate::iam::auth::Context::Personal && crate::iam::auth::is_operator(&cx.db, &auth.user_id).await?;
    ok(crate::iam::menus::menu_for(auth.user_type(), operator))
}
