//! Runway notices: a wallet's owners are told when what is running will use up the available
//! coins within a day, and again within an hour (once per level, until the runway grows past a
//! day again). At zero the apps domain suspends the rental; the wallet never does.

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect};
use serde_json::json;

use crate::billing::ledger::{self, AccountRef};
use crate::billing::store::begin;
use crate::billing::wallet::{burn_per_hour, wallet};
use crate::coins::format_coins;
use crate::db::entity::company_members;
use crate::db::entity::ledger_accounts as accounts;
use crate::db::entity::ledger_holds as holds;
use crate::db::enums::{HoldStatus, NotificationKind, Role};
use crate::error::AppError;

/// Runway levels that are notified, in hours, widest first.
const LEVELS: [i64; 2] = [24, 1];

/// The notice due at `runway_secs`: 1 (an hour or less), 24 (a day or less) or 0.
pub fn notice_level(runway_secs: Option<i64>) -> i64 {
    match runway_secs {
        Some(s) => LEVELS.iter().rev().copied().find(|h| s <= h * 3600).unwrap_or(0),
        None => 0,
    }
}

/// Whether a notice goes out moving from the level last noticed to `level`: only to a
/// narrower level than the last one.
fn due(last: i64, level: i64) -> bool {
    level != 0 && (last == 0 || level < last)
}

/// Tells the owners of wallets whose runway fell to 24 hours or to 1 hour. Returns how many
/// notices went out.
pub async fn send_notices(db: &DatabaseConnection) -> Result<u64, AppError> {
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
        let burn = burn_per_hour(db, &account).await?;
        let level = notice_level(w.runway_secs);
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
                    notice(&txn, &user_id, level, w.available, burn).await?;
                    sent += 1;
                }
            }
        }
        txn.commit().await?;
    }
    Ok(sent)
}

/// The people who answer for a wallet: its person, or the company's administrators.
async fn owners(conn: &impl ConnectionTrait, account: &AccountRef) -> Result<Vec<String>, AppError> {
    Ok(match account {
        AccountRef::User(u) => vec![u.clone()],
        AccountRef::Company(c) => company_members::Entity::find()
            .select_only()
            .column(company_members::Column::UserId)
            .filter(company_members::Column::CompanyId.eq(c.as_str()))
            .filter(company_members::Column::Role.eq(Role::Admin))
            .into_tuple()
            .all(conn)
            .await?,
        _ => Vec::new(),
    })
}

async fn notice(conn: &impl ConnectionTrait, user_id: &str, hours: i64, available: i64, burn: i64) -> Result<(), AppError> {
    let (available_text, burn) = (format_coins(available), format_coins(burn));
    let (kind, title, title_zh) = if hours == 1 {
        (NotificationKind::Runway1h, "Your wallet runs out within an hour", "钱包余额将在一小时内用完")
    } else {
        (NotificationKind::Runway24h, "Your wallet runs out within a day", "钱包余额将在一天内用完")
    };
    let body = format!("{available_text} coins are available and running rentals spend about {burn} coins an hour. Add coins so they keep running.");
    let body_zh = format!("可用余额 {available_text} 币，运行中的租用每小时约消耗 {burn} 币。请及时充值，以免租用被暂停。");
    let params = json!({ "hours": hours, "available": available, "title_zh": title_zh, "body_zh": body_zh });
    crate::notifications::service::notify(conn, user_id, kind, title, &body, &params).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notice_levels() {
        assert_eq!(notice_level(None), 0);
        assert_eq!(notice_level(Some(86_401)), 0);
        assert_eq!(notice_level(Some(86_400)), 24);
        assert_eq!(notice_level(Some(3601)), 24);
        assert_eq!(notice_level(Some(3600)), 1);
        assert_eq!(notice_level(Some(0)), 1);
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
