//! Wallet endpoints (`/api/billing/v1`) of the current context: a person's own wallet, or the
//! company's for its administrators (members: 403).

use axum::extract::{FromRef, State};
use axum::response::Response;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::billing::idempotency::{self, IdempotencyKey};
use crate::billing::ledger::AccountRef;
use crate::billing::model::*;
use crate::billing::{BillingCtx, bills, export, wallet};
use crate::error::{ApiResult, AppError, Envelope, ok};
use crate::http::{ApiQuery, List, Page, Valid};
use crate::iam::auth::{Auth, Sessions};
use crate::lang::Lang;

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    BillingCtx: FromRef<S>,
    Sessions: FromRef<S>,
{
    let moving = OpenApiRouter::new().routes(routes!(fund)).routes(routes!(redeem)).route_layer(idempotency::layer());
    OpenApiRouter::new().routes(routes!(get_wallet)).routes(routes!(top_up_info)).routes(routes!(entries)).routes(routes!(daily)).routes(routes!(list_bills)).routes(routes!(entries_csv)).routes(routes!(bills_csv)).merge(moving)
}

/// Balance, held, available, totals, unbilled usage and runway.
#[utoipa::path(get, path = "/api/billing/v1/wallet", tag = "wallet",
    responses((status = 200, body = Envelope<Wallet>), (status = 401), (status = 403)))]
async fn get_wallet(State(cx): State<BillingCtx>, auth: Auth) -> ApiResult<Wallet> {
    ok(wallet::wallet(&cx.db, &AccountRef::of_context(&auth)?).await?)
}

/// Entries, newest first; `amount` is negative for an expense.
#[utoipa::path(get, path = "/api/billing/v1/wallet/entries", tag = "wallet", params(EntriesQuery, Page),
    responses((status = 200, body = Envelope<List<Entry>>), (status = 400), (status = 403)))]
async fn entries(State(cx): State<BillingCtx>, auth: Auth, lang: Lang, ApiQuery(q): ApiQuery<EntriesQuery>, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<Entry>> {
    let (offset, limit) = page.checked(20)?;
    ok(wallet::entries(&cx.db, &cx.titles, &AccountRef::of_context(&auth)?, q.checked()?, offset, limit, lang).await?)
}

/// Income and expense per day (UTC), oldest first, for the wallet's chart.
#[utoipa::path(get, path = "/api/billing/v1/wallet/daily", tag = "wallet", params(DailyQuery),
    responses((status = 200, body = Envelope<Vec<Day>>), (status = 400), (status = 403)))]
async fn daily(State(cx): State<BillingCtx>, auth: Auth, ApiQuery(q): ApiQuery<DailyQuery>) -> ApiResult<Vec<Day>> {
    ok(wallet::daily(&cx.db, &AccountRef::of_context(&auth)?, q.checked()?, crate::db::now()).await?)
}

/// Metered usage per period: `unbilled` while its period is open, then `billed`.
#[utoipa::path(get, path = "/api/billing/v1/bills", tag = "wallet", params(BillsQuery, Page),
    responses((status = 200, body = Envelope<List<Bill>>), (status = 400), (status = 403)))]
async fn list_bills(State(cx): State<BillingCtx>, auth: Auth, lang: Lang, ApiQuery(q): ApiQuery<BillsQuery>, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<Bill>> {
    let (offset, limit) = page.checked(20)?;
    ok(bills::list(&cx.db, &cx.titles, &AccountRef::of_context(&auth)?, q.checked()?, offset, limit, lang).await?)
}

/// Fund the company's wallet from the administrator's own (an administrator in the company
/// context; members and the personal context 403). Above `auth.two_factor_step_up` coins, a
/// person with two-factor sign-in on adds a current code (`code`). Accepts `Idempotency-Key`; 409 with
/// `{available, needed}` when the administrator's wallet has too little.
#[utoipa::path(post, path = "/api/billing/v1/wallet/fund", tag = "wallet", request_body = FundRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "1-255 characters: a retry with the same key and body answers the first answer and moves nothing")),
    responses((status = 200, body = Envelope<Entry>), (status = 400), (status = 403), (status = 409)))]
async fn fund(State(cx): State<BillingCtx>, auth: Auth, lang: Lang, ip: crate::http::ClientIp, IdempotencyKey(key): IdempotencyKey, Valid(req): Valid<Fund>) -> ApiResult<Entry> {
    // Above the threshold, a person with two-factor sign-in on presents a current code (400 naming `code`).
    cx.step_up.check(&auth, ip.0, req.top_up.amount, req.code.as_deref()).await?;
    ok(wallet::fund(&cx.db, &auth, req.top_up, key.as_deref(), lang).await?)
}

/// Redeem a top-up code into the wallet of the current context (a person's own, or the company's
/// for its administrators). Accepts `Idempotency-Key`; 404 unknown code, 409 used or expired.
#[utoipa::path(post, path = "/api/billing/v1/wallet/redeem", tag = "wallet", request_body = RedeemRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "1-255 characters: a retry with the same key and body answers the first answer and redeems nothing")),
    responses((status = 200, body = Envelope<Wallet>), (status = 400), (status = 403), (status = 404), (status = 409), (status = 429)))]
async fn redeem(State(cx): State<BillingCtx>, auth: Auth, ip: crate::http::ClientIp, Valid(req): Valid<Redeem>) -> ApiResult<Wallet> {
    let to = AccountRef::of_context(&auth)?;
    // Limited like sign-in (issue 43, item 8): attempts per address, failures per person.
    cx.redeem_limits.attempt(ip.0, &auth.user_id).await?;
    if let Err(e) = crate::billing::codes::redeem(&cx.db, &to, &req.code).await {
        if e.status().is_client_error() {
            cx.redeem_limits.failed(&auth.user_id).await?;
        }
        return Err(e);
    }
    ok(wallet::wallet(&cx.db, &to).await?)
}

/// How coins are had on this market (the top-up page's text, the operator's words).
#[utoipa::path(get, path = "/api/billing/v1/wallet/top-up-info", tag = "wallet",
    responses((status = 200, body = Envelope<TopUpInfo>), (status = 401)))]
async fn top_up_info(State(cx): State<BillingCtx>, _auth: Auth, lang: Lang) -> ApiResult<TopUpInfo> {
    ok(wallet::top_up_info(&cx.market_settings.current(), lang))
}

/// The entries (same `kind` filter) as CSV, UTF-8 with a byte-order mark, newest first.
#[utoipa::path(get, path = "/api/billing/v1/wallet/entries.csv", tag = "wallet", params(EntriesQuery),
    responses((status = 200, content_type = "text/csv", body = String), (status = 400), (status = 403)))]
async fn entries_csv(State(cx): State<BillingCtx>, auth: Auth, lang: Lang, ApiQuery(q): ApiQuery<EntriesQuery>) -> Result<Response, AppError> {
    let body = export::entries_csv(&cx.db, &cx.titles, &AccountRef::of_context(&auth)?, q.checked()?, lang).await?;
    Ok(crate::http::csv_response(body, "wallet-entries.csv"))
}

/// The bills (same `status` filter) as CSV, UTF-8 with a byte-order mark, newest period first.
#[utoipa::path(get, path = "/api/billing/v1/bills.csv", tag = "wallet", params(BillsQuery),
    responses((status = 200, content_type = "text/csv", body = String), (status = 400), (status = 403)))]
async fn bills_csv(State(cx): State<BillingCtx>, auth: Auth, lang: Lang, ApiQuery(q): ApiQuery<BillsQuery>) -> Result<Response, AppError> {
    let body = export::bills_csv(&cx.db, &cx.titles, &AccountRef::of_context(&auth)?, q.checked()?, lang).await?;
    Ok(crate::http::csv_response(body, "wallet-bills.csv"))
}
