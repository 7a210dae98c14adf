//! Demands and orders (`/api/rmp/v1`, docs/api.md §Demands and orders). The board and the live count
//! are public; everything else is for a signed-in person in their personal context (403 in a
//! company's).

use axum::extract::{FromRef, State};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::devices::model::DeviceId;
use crate::ids::{self, OrderId};
use crate::billing::idempotency::IdempotencyKey;
use crate::db::enums::OrderStatus;
use crate::error::{ApiResult, AppError, Envelope, Msg, ok};
use crate::http::{ApiPath, ApiQuery, List, Page, Valid};
use crate::iam::auth::{Auth, Sessions};
use crate::lang::Lang;
use crate::orders::flow::{self, DemanderAction};
use crate::orders::model::*;
use crate::orders::{OrdersCtx, demands, personal, take, view};

pub fn router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    OrdersCtx: FromRef<S>,
    Sessions: FromRef<S>,
{
    OpenApiRouter::new()
        .merge(OpenApiRouter::new().routes(routes!(post_demand, list_demands)).route_layer(crate::billing::idempotency::layer()))
        .routes(routes!(qualifying_devices))
        .routes(routes!(check_device))
        .routes(routes!(my_device_checks))
        .routes(routes!(take_demand))
        .routes(routes!(list_orders))
        .routes(routes!(get_order))
        .routes(routes!(confirm_order))
        .routes(routes!(finish_order))
        .routes(routes!(cancel_order))
}

/// Post a demand; `price_per_hour × hours` is held on the demander's wallet (409 with
/// `{available, needed}` when it cannot be). Accepts `Idempotency-Key`.
#[utoipa::path(post, path = "/api/rmp/v1/demands", tag = "orders", request_body = DemandRequest,
    params(("Idempotency-Key" = Option<String>, Header)),
    responses((status = 200, body = Envelope<Order>), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn post_demand(State(cx): State<OrdersCtx>, auth: Auth, lang: Lang, IdempotencyKey(key): IdempotencyKey, Valid(d): Valid<Demand>) -> ApiResult<Order> {
    ok(demands::post(&cx, &auth, d, key, lang).await?)
}

/// Open demands, newest first (public); `lat`/`lng` give each one's `distance_from_you_km`.
#[utoipa::path(get, path = "/api/rmp/v1/demands", tag = "orders", params(BoardQuery, Page),
    responses((status = 200, body = Envelope<List<Order>>)))]
async fn list_demands(State(cx): State<OrdersCtx>, lang: Lang, ApiQuery(q): ApiQuery<BoardQuery>, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<Order>> {
    ok(demands::board(&cx, q, page.checked(20)?, lang).await?)
}

/// How many online, rentable devices satisfy these terms now (the form's live count; public).
#[utoipa::path(get, path = "/api/rmp/v1/demands/qualifying", tag = "orders", params(CountQuery),
    responses((status = 200, body = Envelope<Qualifying>), (status = 400), (status = 404)))]
async fn qualifying_devices(State(cx): State<OrdersCtx>, ApiQuery(q): ApiQuery<CountQuery>) -> ApiResult<Qualifying> {
    let terms = Terms::check(q)?;
    ok(demands::qualifying(&cx, terms).await?)
}

/// What one of the caller's devices lacks for a demand: one gap per unmet requirement.
#[utoipa::path(get, path = "/api/rmp/v1/demands/{id}/check", tag = "orders", params(("id" = String, Path), CheckQuery),
    responses((status = 200, body = Envelope<Check>), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn check_device(State(cx): State<OrdersCtx>, auth: Auth, ApiPath(id): ApiPath<OrderId>, ApiQuery(q): ApiQuery<CheckQuery>) -> ApiResult<Check> {
    let device: DeviceId = ids::required(q.device_id, "device_id", Msg::InvalidDeviceId)?;
    ok(demands::check(&cx, &auth, &id, &device).await?)
}

/// Every device of the caller against a demand (the board's "your devices").
#[utoipa::path(get, path = "/api/rmp/v1/demands/{id}/devices", tag = "orders", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Vec<DeviceCheck>>), (status = 403), (status = 404), (status = 409)))]
async fn my_device_checks(State(cx): State<OrdersCtx>, auth: Auth, ApiPath(id): ApiPath<OrderId>) -> ApiResult<Vec<DeviceCheck>> {
    ok(demands::my_devices(&cx, &auth, &id).await?)
}

/// Take a demand with one of the caller's devices: exactly one provider wins (the others 409);
/// the device is reserved and the demanded app's installation starts on it. 409 "Order
/// requirements not satisfied, cannot take this order." with `data.gaps` when it does not qualify.
#[utoipa::path(post, path = "/api/rmp/v1/demands/{id}/take", tag = "orders", params(("id" = String, Path)), request_body = TakeRequest,
    responses((status = 200, body = Envelope<Order>), (status = 400), (status = 403), (status = 404), (status = 409)))]
async fn take_demand(State(cx): State<OrdersCtx>, auth: Auth, lang: Lang, ApiPath(id): ApiPath<OrderId>, Valid(ask): Valid<Take>) -> ApiResult<Order> {
    ok(take::take(&cx, &auth, &id, ask, lang).await?)
}

/// The caller's orders as demander or provider, newest first, each with its history.
#[utoipa::path(get, path = "/api/rmp/v1/orders", tag = "orders", params(OrdersQuery, Page),
    responses((status = 200, body = Envelope<List<Order>>), (status = 400), (status = 403)))]
async fn list_orders(State(cx): State<OrdersCtx>, auth: Auth, lang: Lang, ApiQuery(q): ApiQuery<OrdersQuery>, ApiQuery(page): ApiQuery<Page>) -> ApiResult<List<Order>> {
    let me = personal(&auth)?;
    let role = Role::parse(q.role.as_deref())?;
    let status = match q.status.as_deref().map(str::trim) {
        None => None,
        Some(s) => Some(OrderStatus::parse(s).ok_or(AppError::invalid("status", Msg::InvalidField("status")))?),
    };
    ok(view::list(&cx.db, &cx.settings, &me, role, status, page.checked(20)?, lang).await?)
}

#[utoipa::path(get, path = "/api/rmp/v1/orders/{id}", tag = "orders", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Order>), (status = 403), (status = 404)))]
async fn get_order(State(cx): State<OrdersCtx>, auth: Auth, lang: Lang, ApiPath(id): ApiPath<OrderId>) -> ApiResult<Order> {
    let me = personal(&auth)?;
    let o = view::mine(&cx.db, &me, &id).await?;
    ok(view::one(&cx.db, &o, &cx.settings, lang).await?)
}

/// The demander confirms the app works (`order_accepted` → `order_confirmed`): billing by the minute starts.
#[utoipa::path(post, path = "/api/rmp/v1/orders/{id}/confirm", tag = "orders", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Order>), (status = 403), (status = 404), (status = 409)))]
async fn confirm_order(State(cx): State<OrdersCtx>, auth: Auth, lang: Lang, ApiPath(id): ApiPath<OrderId>) -> ApiResult<Order> {
    ok(flow::act(&cx, &auth, &id, DemanderAction::Confirm, lang).await?)
}

/// The demander finishes early (`order_confirmed` → `order_finished`): the minutes so far are
/// charged, the rest of the hold released.
#[utoipa::path(post, path = "/api/rmp/v1/orders/{id}/finish", tag = "orders", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Order>), (status = 403), (status = 404), (status = 409)))]
async fn finish_order(State(cx): State<OrdersCtx>, auth: Auth, lang: Lang, ApiPath(id): ApiPath<OrderId>) -> ApiResult<Order> {
    ok(flow::act(&cx, &auth, &id, DemanderAction::Finish, lang).await?)
}

/// The demander withdraws a demand nobody has taken (`order_pending` → `order_failed`): the hold is released.
#[utoipa::path(post, path = "/api/rmp/v1/orders/{id}/cancel", tag = "orders", params(("id" = String, Path)),
    responses((status = 200, body = Envelope<Order>), (status = 403), (status = 404), (status = 409)))]
async fn cancel_order(State(cx): State<OrdersCtx>, auth: Auth, lang: Lang, ApiPath(id): ApiPath<OrderId>) -> ApiResult<Order> {
    ok(flow::act(&cx, &auth, &id, DemanderAction::Cancel, lang).await?)
}
