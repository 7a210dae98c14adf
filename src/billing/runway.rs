//! Runway notices: a wallet's owners are told when something running on it is going to stop for
//! want of coins — a running rental whose held coins are used up within `billing.low_balance_hours`,
//! and again within an hour, before the rental's own end (a hold that pays to its end stops
//! nothing early: the rental's ending notice, src/apps/rental.rs, speaks of that) — once per crossing (the level noticed is kept on the account and reset when the
//! runway grows past the widest level again), as a notification in both languages (with the
//! top-up page's path) and a mail. Coins already held for a fixed order or an idle rental stop
//! nothing, so they send nothing. At zero the apps domain suspends the rental; the wallet never does.

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};
use serde_json::json;

use crate::billing::BillingCtx;
use crate::billing::ledger::{self, AccountRef};
use crate::billing::store::begin;
use crate::billing::wallet::{burning, runway, wallet};
use crate::coins::format_coins;
use crate::db::entity::ledger_accounts as accounts;
use crate::db::entity::ledger_holds as holds;
use crate::db::enums::{HoldStatus, NotificationKind};
use crate::error::AppError;
use crate::mail::Mail;
use crate::ids::UserId;

/// The top-up page, where a person's notice sends its reader.
pub const TOP_UP_PATH: &str = "/wallet/top-up";
/// The company page, where a company's admins see and fund its wallet.
pub const COMPANY_WALLET_PATH: &str = "/company";

/// The levels noticed, in hours, widest first: `low_balance_hours`, then 1 (0 disables both).
fn levels(low_balance_hours: u32) -> Vec<i64> {
    match i64::from(low_balance_hours) {
        0 => vec![],
        h if h <= 1 => vec![1],
        h => vec![h, 1],
    }
}

/// The notice due at `runway_secs`: the narrowest level the runway is within, or 0.
pub fn notice_level(runway_secs: Option<i64>, low_balance_hours: u32) -> i64 {
    match runway_secs {
        Some(s) => levels(low_balance_hours).iter().rev().copied().find(|h| s <= h * 3600).unwrap_or(0),
        None => 0,
    }
}

/// Whether a notice goes out moving from the level last noticed to `level`: only to a
/// narrower level than the last one.
fn due(last: i64, level: i64) -> bool {
    level != 0 && (last == 0 || level < last)
}

/// Tells the owners of wallets whose runway fell within a level. Returns how many notices went out.
pub async fn send_notices(cx: &BillingCtx) -> Result<u64, AppError> {
    let db = &cx.db;
    let burning: Vec<String> = holds::Entity::find()
        .select_only()
        .column(holds::Column::AccountId)
        .filter(holds::Column::Status.eq(HoldStatus::Pending))
        .filter(holds::Column::BurnPerHour.gt(0))
        .distinct()
        .into_tuple()
        .all(db)
        .await?;
    let noticed: Vec<String> =
        accounts::Entity::find().select_only().column(accounts::Column::Id).filter(accounts::Column::RunwayNotice.ne(0)).into_tuple().all(db).await?;
    let mut ids = burning;
    ids.extend(noticed);
    ids.sort();
    ids.dedup();
    let mut sent = 0;
    for id in ids {
        let account = AccountRef::parse(&id)?;
        let w = wallet(db, &account).await?;
        let short = short_runway(db, &account, crate::db::now()).await?;
        let level = notice_level(short, cx.market_settings.current().low_balance_hours);
        let txn = begin(db).await?;
        let Some(a) = ledger::account(&txn, &account).await? else { continue };
        let notify = due(a.runway_notice, level);
        if notify || (level == 0 && a.runway_notice != 0) {
            // Conditional on the notice seen, so two runs never send the same notice twice.
            let changed = accounts::Entity::update_many()
                .col_expr(accounts::Column::RunwayNotice, Expr::value(level))
                .filter(accounts::Column::Id.eq(id.clone()))
                .filter(accounts::Column::RunwayNotice.eq(a.runway_notice))
                .exec(&txn)
                .await?
                .rows_affected;
            if changed == 1 && notify {
                for user_id in owners(&txn, &account).await? {
                    notice(cx, &txn, &user_id, &account, level, short.unwrap_or(0), w.available).await?;
                    sent += 1;
                }
            }
        }
        txn.commit().await?;
    }
    if sent > 0 {
        cx.mailer.wake();
    }
    Ok(sent)
}

/// Seconds until the first running thing of the account stops for want of coins: of its burning
/// pending holds, those whose coins are used up before the end of the work they pay for (or whose
/// end is not known), the one used up first; `None` when none.
async fn short_runway(conn: &impl ConnectionTrait, account: &AccountRef, at: chrono::DateTime<chrono::Utc>) -> Result<Option<i64>, AppError> {
    Ok(burning(conn, account).await?.into_iter().filter_map(|b| stops_early(runway(b.left, b.burn_per_hour)?, b.ends_at, at)).min())
}

/// `runway` seconds, when the coins run out before `ends` (always, when the end is not known).
fn stops_early(runway: i64, ends: Option<chrono::DateTime<chrono::Utc>>, at: chrono::DateTime<chrono::Utc>) -> Option<i64> {
    match ends {
        Some(e) if runway >= (e - at).num_seconds() => None,
        _ => Some(runway),
    }
}

/// The people who answer for a wallet: its person, or the company's administrators.
async fn owners(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<Vec<UserId>, AppError> {
    Ok(match account {
        AccountRef::User(u) => vec![u.clone()],
        AccountRef::Company(c) => crate::companies::company::admins(conn, c).await?,
        _ => Vec::new(),
    })
}

/// "5 h 10 min" / "5 小时 10 分钟".
fn duration_text(secs: i64, zh: bool) -> String {
    let (h, m) = (secs / 3600, (secs % 3600) / 60);
    match (h, zh) {
        (0, false) => format!("{} min", m.max(1)),
        (0, true) => format!("{} 分钟", m.max(1)),
        (_, false) => format!("{h} h {m} min"),
        (_, true) => format!("{h} 小时 {m} 分钟"),
    }
}

async fn notice(
    cx: &BillingCtx,
    conn: &impl ConnectionTrait,
    user_id: &UserId,
    account: &AccountRef,
    hours: i64,
    runway_secs: i64,
    available: i64,
) -> Result<(), AppError> {
    let available_text = format_coins(available);
    let kind = if hours == 1 { NotificationKind::Runway1h } else { NotificationKind::Runway24h };
    let (left, left_zh) = (duration_text(runway_secs, false), duration_text(runway_secs, true));
    // A company's wallet is funded on the company page by its admins; a person tops up their own.
    let (path, whose, whose_zh, get, get_zh) = match account {
        AccountRef::Company(_) => (
            COMPANY_WALLET_PATH,
            "the company's",
            "企业的",
            "fund the company's wallet on the company page",
            "可在企业页为企业钱包充值",
        ),
        _ => (TOP_UP_PATH, "your", "你的", "get coins on the top-up page", "可在充值页获取币"),
    };
    let title = format!("A running rental stops in about {left}");
    let title_zh = format!("运行中的租用约 {left_zh} 后暂停");
    let body = format!(
        "Its held coins are used up in about {left}; it is then suspended (kept, not deleted). {available_text} coins are available in {whose} wallet: {get} and resume it."
    );
    let body_zh = format!("冻结的币约 {left_zh} 后用完，届时租用将被暂停（保留，不删除）。{whose_zh}钱包当前可用 {available_text} 币：{get_zh}后恢复。");
    let params = json!({ "hours": hours, "available": available, "runway_secs": runway_secs, "path": path, "title_zh": title_zh, "body_zh": body_zh });
    crate::notifications::service::notify(conn, user_id, kind, &title, &body, &params).await?;
    let email = crate::iam::people::one(conn, user_id).await?.map(|p| p.email);
    if let Some(email) = email {
        let link = format!("{}{path}", cx.public_url.trim_end_matches('/'));
        let subject = format!("{title_zh} / {title}");
        let text = format!("{body_zh}\n{link}\n\n{body}\n{link}\n");
        cx.mailer.enqueue(conn, Mail { to: &email, subject: &subject, body: &text, link: Some(&link) }).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notice_levels() {
        assert_eq!(notice_level(None, 24), 0);
        assert_eq!(notice_level(Some(86_401), 24), 0);
        assert_eq!(notice_level(Some(86_400), 24), 24);
        assert_eq!(notice_level(Some(3601), 24), 24);
        assert_eq!(notice_level(Some(3600), 24), 1);
        assert_eq!(notice_level(Some(0), 24), 1);
        assert_eq!(notice_level(Some(7 * 3600), 8), 8);
        assert_eq!(notice_level(Some(0), 0), 0);
        assert_eq!(notice_level(Some(10), 1), 1);
    }

    #[test]
    fn a_hold_that_pays_to_its_end_stops_nothing_early() {
        let at = crate::db::now();
        assert_eq!(stops_early(3600, Some(at + chrono::Duration::hours(1)), at), None);
        assert_eq!(stops_early(3599, Some(at + chrono::Duration::hours(1)), at), Some(3599));
        assert_eq!(stops_early(3600, None, at), Some(3600));
    }

    #[test]
    fn a_notice_goes_out_once_per_narrower_level() {
        assert!(due(0, 24));
        assert!(due(0, 1));
        assert!(due(24, 1));
        assert!(!due(24, 24));
        assert!(!due(1, 1));
        assert!(!due(1, 24));
        assert!(!due(0, 0));
    }
}
