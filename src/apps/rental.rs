//! Renting an app on another owner's device. Coins move only through the wallet's ledger
//! (docs/wallet.md): a hold of `price × hours` when the rental starts, captures by the minute
//! while the agent reports the app `running` (a minute it is not running is not charged), each
//! capture crediting the provider the price less the market's fee in the same transfer, and the
//! hold released when the rental ends, is uninstalled or fails (`rent_failed`: released in full).
//! When a capture is refused (the hold ran out or expired) the rental is suspended, not deleted.

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::apps::AppsCtx;
use crate::apps::access::{Names, installer, to_installation};
use crate::apps::install::{installable, judge, lock_device, place, rentable};
use std::sync::Arc;

use crate::devices::model::Location;
use crate::encoded::Encoded;
use crate::devices::nearby::{coarse, distance_km};
use crate::market::fit::Standing;
use crate::apps::lifecycle::Event;
use crate::apps::model::*;
use zmarket_protocol::heartbeat::CommandBody;
use crate::apps::notify;
use crate::apps::money::{self, Happened, Settled};
use crate::apps::state::{self, Change};
use crate::billing::ledger::{self, AccountRef, HoldSpec, Reference};
use crate::billing::memo::Memo;
use crate::db::entity::{devices, installations};
use crate::db::enums::{DeviceStatus, NotificationKind, SharingMode};
use crate::db::{now, write_txn};
use crate::devices::access::{Owner, owner_of as device_owner};
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::lang::Lang;
use crate::ids::{DeviceId, InstallationId, UserId};

fn account_of(o: &Owner) -> AccountRef {
    match o {
        Owner::User(u) => AccountRef::User(u.clone()),
        Owner::Company(c) => AccountRef::Company(c.clone()),
    }
}

/// Rents `app` on another owner's online, rentable device for `hours`: the renter's wallet holds
/// `price × hours` (409 when it cannot), then the install proceeds as for an own app.
/// `request_key` (the `Idempotency-Key`) makes the hold's key, so a retried request holds once.
pub async fn rent(cx: &AppsCtx, auth: &Auth, ask: RentAsk, request_key: Option<String>, lang: Lang) -> Result<Installation, AppError> {
    rent_from(cx, auth, ask, request_key, lang, None).await
}

/// [`rent`], starting from a snapshot's data when `from` says (a restore as a rental).
pub async fn rent_from(
    cx: &AppsCtx,
    auth: &Auth,
    ask: RentAsk,
    request_key: Option<String>,
    lang: Lang,
    from: Option<crate::apps::model::Restore>,
) -> Result<Installation, AppError> {
    let owner = installer(auth)?;
    let txn = write_txn(&cx.db).await?;
    let (app, _) = installable(cx, &txn, &ask.app_id).await?;
    let device = devices::Entity::find_by_id(ask.device_id.clone()).one(&txn).await?.ok_or(AppError::Refused(Msg::DeviceNotFound))?;
    let provider = device_owner(&device).ok_or(AppError::Refused(Msg::DeviceNotFound))?;
    if provider == owner {
        return Err(AppError::Refused(Msg::RentOwnDevice));
    }
    // A company and one of its administrators are the same people: a rental between them, either
    // way, would move the company's coins to the person (issue 29, finding 5).
    if let (Owner::Company(c), Owner::User(u)) | (Owner::User(u), Owner::Company(c)) = (&owner, &provider)
        && crate::iam::auth::membership(&txn, c, u).await?.is_some_and(|m| m.role == crate::db::enums::Role::Admin)
    {
        return Err(AppError::Refused(Msg::RentWithinCompany));
    }
    // A device taken for an order (src/orders) is not rented meanwhile, and the offer is charged
    // as it is now: checked under the device's lock, which a take and a sharing change also hold
    // (the row is read again once locked).
    lock_device(&txn, &device.id).await?;
    let device = devices::Entity::find_by_id(device.id.clone()).one(&txn).await?.ok_or(AppError::Refused(Msg::DeviceNotFound))?;
    rentable(&device)?;
    if let Some(seen) = ask.seen_price
        && seen != device.price_per_hour
    {
        return Err(AppError::Explained { msg: Msg::OfferPriceChanged { now: device.price_per_hour }, data: serde_json::json!({ "price_per_hour": device.price_per_hour }) });
    }
    if !cx.reservations.reserved(&(&txn).into(), std::slice::from_ref(&device.id)).await?.is_empty() {
        return Err(AppError::Refused(Msg::DeviceReserved));
    }
    let row = place(cx, &txn, &owner, &auth.user_id, InstallKind::Rent, &app.id, &device, from.as_ref()).await?;
    let price = device.price_per_hour;
    let (t, ends) = (now(), now() + Duration::hours(ask.hours));
    let hold_id = if price > 0 {
        let key = match &request_key {
            Some(k) => format!("rental:{}:{}:{k}:hold", auth.user_id, auth.context.sme_id()),
            None => format!("rental:{}:hold", row.id),
        };
        let held = ledger::hold(&txn, HoldSpec {
            account: account_of(&owner),
            amount: price * ask.hours,
            key,
            reference: Reference::new("rental", row.id.clone()),
            memo: Memo::RentalHold(ask.hours).encode(),
            expires_at: ends + Duration::hours(1),
            burn_per_hour: 0,
        })
        .await?;
        ledger::set_end(&txn, &held.hold.id, ends).await?;
        Some(held.hold.id)
    } else {
        None
    };
    installations::Entity::update_many()
        .col_expr(installations::Column::RentPricePerHour, Expr::value(price))
        .col_expr(installations::Column::RentHours, Expr::value(ask.hours))
        .col_expr(installations::Column::RentStartedAt, Expr::value(t))
        .col_expr(installations::Column::RentEndsAt, Expr::value(ends))
        .col_expr(installations::Column::HoldId, Expr::value(hold_id))
        .col_expr(installations::Column::RentProvider, Expr::value(account_of(&provider).id()))
        .col_expr(installations::Column::RentFeePercent, Expr::value(i32::from(cx.market_settings.current().market_fee_percent)))
        .filter(installations::Column::Id.eq(row.id.clone()))
        .exec(&txn)
        .await?;
    let row = installations::Entity::find_by_id(row.id).one(&txn).await?.ok_or(AppError::Refused(Msg::InstallationNotFound))?;
    notify::send(&txn, &row, NotificationKind::RentalStarted).await?;
    notify::send_provider(&txn, &row, NotificationKind::DeviceRented).await?;
    let names = Names::load(&txn, std::slice::from_ref(&row)).await?;
    txn.commit().await?;
    Ok(to_installation(&row, &names, lang))
}

/// The installations running (owned and rented) and, of them, the rentals: the operator's
/// overview.
pub async fn running_counts(conn: &impl ConnectionTrait) -> Result<(u64, u64), AppError> {
    let running = installations::Entity::find().filter(installations::Column::Status.eq(AppStatus::Running));
    let all = running.clone().count(conn).await?;
    let rented = running.filter(installations::Column::Kind.eq(InstallKind::Rent)).filter(installations::Column::ActiveKey.is_not_null()).count(conn).await?;
    Ok((all, rented))
}

/// The rental job: charges the running rentals up to `at`, suspends a running rental whose paid
/// time is up or whose hold cannot pay, and ends (removes from the provider's box) a rental whose
/// time has been up for longer than `grace` (`apps.suspended_grace_hours`).
/// Returns how many rentals it touched.
pub async fn meter(db: &DatabaseConnection, at: DateTime<Utc>, grace: Duration) -> Result<usize, AppError> {
    let active = installations::Entity::find()
        .filter(installations::Column::Kind.eq(InstallKind::Rent))
        .filter(installations::Column::ActiveKey.is_not_null())
        .all(db)
        .await?;
    let mut n = 0;
    for r in active {
        let txn = write_txn(db).await?;
        let Some(r) = installations::Entity::find_by_id(r.id.clone()).one(&txn).await? else { continue };
        let device = devices::Entity::find_by_id(r.device_id.clone()).one(&txn).await?;
        let online = device.as_ref().is_some_and(|d| d.status == DeviceStatus::Online);
        // A running rental is charged up to now while the box reports; only up to its last
        // heartbeat once it stopped reporting (offline or unlinked), and the meter then pauses.
        let tick = Happened::Tick { at, online, seen: device.as_ref().and_then(|d| d.last_seen_at) };
        // Its paid time is up: a running rental is suspended (kept, the box still reserved) for
        // the grace period, in which its renter may add coins and resume it; then it is ended.
        let up = r.rent_ends_at.is_some_and(|e| e <= at) && r.command_id.is_none();
        if money::settle(&txn, &r, money::plan(&r, tick)).await? == Settled::Halted {
            // The hold cannot pay any more: suspended, not deleted; the renter is told.
            suspend(&txn, &r).await?;
            n += 1;
        } else if up && r.rent_ends_at.is_some_and(|e| e + grace <= at) {
            if end(&txn, &r).await?.is_some() {
                n += 1;
            }
        } else if up && r.status == AppStatus::Running {
            suspend(&txn, &r).await?;
            n += 1;
        }
        txn.commit().await?;
    }
    Ok(n)
}

/// Ends a rented installation: the app is removed from the provider's box (`shutting_down`, or
/// `deleting` what a failed install left). `None` when its state does not allow it now (e.g. still
/// installing). Also used by the operator's console and, once an order is over, by `seen::release`.
pub async fn end(conn: &impl ledger::Conn, r: &installations::Model) -> Result<Option<installations::Model>, AppError> {
    // Its data is kept for the renter (docs/data.md): the box snapshots it before the removal.
    let kept = crate::apps::taking::keep_ended(conn, r).await?;
    let uninstall = AppCommandPayload { installation_id: r.id.clone().into(), snapshot_id: kept.clone() };
    let change = Change { command: Some(CommandBody::AppUninstall(uninstall)), desired: Some(Desired::Removed), ..Default::default() };
    let ended = state::apply(conn, r, Event::EndRental, change).await?;
    if ended.is_none()
        && let Some(id) = kept
    {
        // Not ended now (its state does not allow it): nothing is kept either.
        crate::db::entity::snapshots::Entity::delete_by_id(id).exec(conn).await?;
    }
    Ok(ended)
}

/// Ends and settles every rental person `user_id` holds as the renter, like one whose time is
/// up (their suspension, `ops::people::suspend`). Answers the ids of those ended.
pub async fn end_all_of(conn: &impl ledger::Conn, user_id: &UserId) -> Result<Vec<InstallationId>, AppError> {
    let rentals = installations::Entity::find()
        .filter(installations::Column::OwnerUserId.eq(user_id))
        .filter(installations::Column::Kind.eq(InstallKind::Rent))
        .all(conn)
        .await?;
    let mut ended = Vec::new();
    for r in rentals {
        if end(conn, &r).await?.is_some() {
            ended.push(r.id);
        }
    }
    Ok(ended)
}

/// Suspends a running rental (its time is up, or its hold cannot pay: then `settle` stopped its
/// meter first, so the transition does not try to charge those seconds again), in the meter
/// job's transaction; the renter is told.
async fn suspend(txn: &DatabaseTransaction, r: &installations::Model) -> Result<(), AppError> {
    let change = Change { command: Some(CommandBody::AppSuspend(AppCommandPayload::new(r.id.as_str()))), desired: Some(Desired::Suspended), ..Default::default() };
    if let Some(now_row) = state::apply(txn, r, Event::Act(Action::Suspend), change).await? {
        notify::send(txn, &now_row, NotificationKind::RentalSuspended).await?;
    }
    Ok(())
}

/// Other owners' online, rentable devices not reserved for an order, with how each fits the app
/// (the market's rule, src/market/fit.rs), its GPUs and its price (the rent dialog), cheapest first.
/// Offers answers (the envelope's bytes, compressed once per encoding when asked) by (who asks,
/// what they ask), under the public data version and this instance's standing epoch
/// (`versions::standing`), each kept at most [`OFFER_ANSWER_FRESH`]: a renter who reopens the
/// dialog, or a page polling it, costs no query. A change made here shows at once; one made on
/// another instance within a second (the rent itself re-checks everything under the box's lock).
pub type OfferAnswers = crate::versions::VersionedCache<String, (std::time::Instant, Arc<Encoded>)>;
pub const OFFER_ANSWERS_KEPT: usize = 128;
pub const OFFER_ANSWER_FRESH: std::time::Duration = std::time::Duration::from_secs(1);
static OFFERS_MADE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The Rent dialog's answer for `ask`, from the cache when it is fresh.
pub async fn options_answer(cx: &AppsCtx, auth: &Auth, ask: OffersAsk) -> Result<Arc<Encoded>, AppError> {
    let me = installer(auth)?;
    let key = format!("{me:?}|{ask:?}");
    // Both only grow: either moving starts the cache again. The public version as this instance
    // knows it (no database read): its own changes move it at once, another instance's within a
    // second (the follow job), and an answer is kept a second at most anyway.
    let version = ((cx.public.version() as i64) << 32) + (crate::versions::standing() & 0xffff_ffff) as i64;
    let kept = cx.offers.get(version, &key);
    if let Some((at, body)) = &kept
        && at.elapsed() < OFFER_ANSWER_FRESH
    {
        return Ok(body.clone());
    }
    // One answer computed at a time. While it is made, the others asking take the answer it
    // replaces (same version: nothing changed here, it is only older than a second), or wait
    // for it when there is none.
    let _making = match OFFERS_MADE.try_lock() {
        Ok(guard) => guard,
        Err(_) => match kept {
            Some((_, body)) => return Ok(body),
            None => OFFERS_MADE.lock().await,
        },
    };
    if let Some((at, body)) = cx.offers.get(version, &key)
        && at.elapsed() < OFFER_ANSWER_FRESH
    {
        return Ok(body);
    }
    let list = options(cx, auth, ask).await?;
    let data = serde_json::to_string(&list).map_err(|e| AppError::Internal(e.into()))?;
    let body = Arc::new(Encoded::new(format!("{{\"code\":200,\"data\":{data},\"msg\":\"success\"}}")));
    cx.offers.put(version, key, (std::time::Instant::now(), body.clone()));
    Ok(body)
}

/// The most boxes one offers answer weighs (the cheapest first), and the most it lists.
pub const OFFER_CANDIDATES: u64 = 500;
pub const OFFERS_LISTED: usize = 100;

/// Other owners' online, rentable boxes as offers for `app`: each with how it fits (a "why not"
/// for one that does not), its spec, free GPUs, verification, reliability and place; filtered and
/// sorted as asked. Where every box stands is read at once (two queries, whatever their number).
pub async fn options(cx: &AppsCtx, auth: &Auth, ask: OffersAsk) -> Result<Vec<DeviceFit>, AppError> {
    let me = installer(auth)?;
    let (app, _) = installable(cx, &cx.db, &ask.app_id).await?;
    let offered = devices::Entity::find()
        .filter(devices::Column::Rentable.eq(true))
        .filter(devices::Column::Status.eq(DeviceStatus::Online))
        .filter(devices::Column::SharingMode.ne(SharingMode::Dedicated))
        .order_by_asc(devices::Column::PricePerHour)
        .limit(OFFER_CANDIDATES)
        .all(&cx.db)
        .await?;
    // A device taken for an order is no offer (the rent refuses it; the market leaves it out).
    let ids: Vec<DeviceId> = offered.iter().map(|d| d.id.clone()).collect();
    let reserved = cx.reservations.reserved(&(&cx.db).into(), &ids).await?;
    let offered: Vec<devices::Model> = offered
        .into_iter()
        .filter(|d| device_owner(d).is_some_and(|o| o != me) && !reserved.contains(&d.id) && wanted(&ask, d))
        .collect();
    let standing = Standing::load(&cx.db, &offered).await?;
    let mut out: Vec<DeviceFit> = Vec::new();
    for d in &offered {
        let Some(st) = standing.get(&d.id) else { continue };
        let (_, mut fit) = judge(&app, d, st);
        if ask.min_reliability.is_some_and(|min| fit.reliability.uptime_30d.is_none_or(|u| u < min)) {
            continue;
        }
        fit.price_per_hour = Some(d.price_per_hour);
        fit.location = d.lat.zip(d.lng).map(|(lat, lng)| Location { lat: coarse(lat), lng: coarse(lng) });
        fit.distance_km = ask.at.as_ref().zip(fit.location.as_ref()).map(|(a, l)| distance_km(a.lat, a.lng, l.lat, l.lng));
        out.push(fit);
    }
    sort_offers(&mut out, ask.sort);
    out.truncate(OFFERS_LISTED);
    Ok(out)
}

/// Whether `d` passes the offers' GPU filters (model, memory, CUDA).
fn wanted(ask: &OffersAsk, d: &devices::Model) -> bool {
    if ask.gpu_model.is_none() && ask.min_vram.is_none() && ask.min_cuda.is_none() {
        return true;
    }
    let gpus = crate::devices::gpus::gpus_of(d);
    let model = ask.gpu_model.as_deref().map(str::to_lowercase);
    let has_model = model.is_none_or(|m| gpus.iter().any(|g| g.name.to_lowercase().contains(&m)));
    let has_vram = ask.min_vram.is_none_or(|v| gpus.iter().any(|g| g.vram >= v));
    let has_cuda = ask.min_cuda.is_none_or(|need| gpus.iter().filter_map(|g| g.cuda_version()).min().is_some_and(|have| have >= need));
    has_model && has_vram && has_cuda
}

/// Orders offers by `sort`, then by price, name and id (a stable order for equal figures); a
/// figure the box lacks (no reliability yet, no place) sorts last.
fn sort_offers(out: &mut [DeviceFit], sort: OfferSort) {
    let vram = |f: &DeviceFit| f.spec.gpus.iter().map(|g| g.vram).max().unwrap_or(0);
    let tie = |a: &DeviceFit, b: &DeviceFit| (a.price_per_hour, &a.device_name, &a.device_id).cmp(&(b.price_per_hour, &b.device_name, &b.device_id));
    out.sort_by(|a, b| {
        let first = match sort {
            OfferSort::Price => std::cmp::Ordering::Equal,
            OfferSort::Reliability => {
                let r = |f: &DeviceFit| f.reliability.uptime_30d.map_or(-1.0, |u| u);
                r(b).total_cmp(&r(a))
            }
            OfferSort::Distance => a.distance_km.unwrap_or(i64::MAX).cmp(&b.distance_km.unwrap_or(i64::MAX)),
            OfferSort::Vram => vram(b).cmp(&vram(a)),
        };
        first.then_with(|| tie(a, b))
    });
}
