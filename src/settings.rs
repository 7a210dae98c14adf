//! The market's settings an operator changes while it runs (the operator's console): the market's
//! fee, the sign-up bonus, the client download links, the low-balance notice, the words of the
//! wallet's top-up page and whether operators and company administrators must use two-factor
//! sign-in. config.toml gives the defaults; a setting the operator changed is a row
//! of `market_settings` (m0022) and wins over its default.
//!
//! Every instance keeps the settings in memory ([`LiveSettings`]): the one that writes applies them
//! at once, the others read the table every [`FOLLOW_EVERY`] (a per-instance job), so a change
//! reaches every instance within that interval. A reader takes [`LiveSettings::current`] when its
//! rule runs: a rental or an order fixes the fee it started with, so a change applies to what
//! starts after it. A cache of something the settings change (the server-rendered pages carry the
//! download links) keys its entries by [`LiveSettings::generation`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, DbBackend, DbErr, EntityTrait, Set, Statement};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::Config;
use crate::db::entity::market_settings as rows;
use crate::db::now;

/// How often an instance reads the settings other instances may have changed.
pub const FOLLOW_EVERY: Duration = Duration::from_secs(5);

/// The settings in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MarketSettings {
    /// Percent of every rental or order payment kept by the market (0-100), fixed when a rental
    /// or an order starts.
    pub market_fee_percent: u8,
    /// Cents credited once to every newly verified account; 0 disables it.
    pub signup_bonus: i64,
    /// Where the desktop and phone clients are downloaded (empty: not offered).
    pub download_links: DownloadLinks,
    /// People are told when what runs on their coins has less than this many hours left; 0
    /// disables the notice.
    pub low_balance_hours: u32,
    /// The wallet's top-up page: how people get coins on this market (empty: a default text).
    pub how_to_get_coins: String,
    pub how_to_get_coins_zh: String,
    /// Operators and company administrators must turn two-factor sign-in on before they use what
    /// their role allows (`iam::auth::enrolment_required`; issue 43, item 12).
    #[serde(default)]
    pub two_factor_required_for_staff: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DownloadLinks {
    pub windows: String,
    pub mac: String,
    pub android: String,
}

impl MarketSettings {
    /// The defaults config.toml gives.
    pub fn from_config(config: &Config) -> MarketSettings {
        let b = &config.billing;
        let d = &config.downloads;
        MarketSettings {
            market_fee_percent: b.market_fee_percent,
            signup_bonus: b.signup_bonus.cents(),
            download_links: DownloadLinks { windows: d.windows.clone(), mac: d.mac.clone(), android: d.android.clone() },
            low_balance_hours: b.low_balance_hours,
            how_to_get_coins: b.how_to_get_coins.clone(),
            how_to_get_coins_zh: b.how_to_get_coins_zh.clone(),
            two_factor_required_for_staff: config.auth.two_factor_required_for_staff,
        }
    }

    /// The settings as `(name, value)` pairs: the rows of `market_settings`.
    fn fields(&self) -> Vec<(String, Value)> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m.into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// These settings with the stored values over them; a stored value that no longer reads as
    /// its setting (an unknown name, a hand-edited row) is left out.
    fn overlaid(&self, stored: &[(String, Value)]) -> MarketSettings {
        let mut out = self.clone();
        for (name, value) in stored {
            let Ok(Value::Object(mut m)) = serde_json::to_value(&out) else { break };
            if !m.contains_key(name) {
                continue;
            }
            m.insert(name.clone(), value.clone());
            match serde_json::from_value(Value::Object(m)) {
                Ok(s) => out = s,
                Err(e) => tracing::warn!(setting = %name, error = %e, "a stored market setting is unreadable: its default applies"),
            }
        }
        out
    }

    /// The names whose values differ from `other`'s.
    pub fn changed_from(&self, other: &MarketSettings) -> Vec<String> {
        let theirs: std::collections::HashMap<String, Value> = other.fields().into_iter().collect();
        self.fields().into_iter().filter(|(n, v)| theirs.get(n) != Some(v)).map(|(n, _)| n).collect()
    }

    /// The value of one setting, as JSON.
    pub fn value_of(&self, name: &str) -> Value {
        self.fields().into_iter().find(|(n, _)| n == name).map(|(_, v)| v).unwrap_or(Value::Null)
    }
}

/// The settings this instance applies.
#[derive(Clone, Debug)]
pub struct LiveSettings(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    defaults: MarketSettings,
    current: RwLock<Arc<MarketSettings>>,
    generation: AtomicU64,
}

impl LiveSettings {
    /// The defaults alone (until [`LiveSettings::reload`] reads the table).
    pub fn new(defaults: MarketSettings) -> LiveSettings {
        LiveSettings(Arc::new(Inner { current: RwLock::new(Arc::new(defaults.clone())), defaults, generation: AtomicU64::new(1) }))
    }

    pub fn current(&self) -> Arc<MarketSettings> {
        self.0.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn defaults(&self) -> &MarketSettings {
        &self.0.defaults
    }

    /// Moves whenever the settings in force change.
    pub fn generation(&self) -> u64 {
        self.0.generation.load(Ordering::SeqCst)
    }

    /// Reads the stored settings and applies them; answers whether anything changed.
    pub async fn reload(&self, conn: &impl ConnectionTrait) -> Result<bool, DbErr> {
        let stored = stored(conn).await?;
        let next = self.0.defaults.overlaid(&stored);
        let mut cur = self.0.current.write().unwrap_or_else(|e| e.into_inner());
        if **cur == next {
            return Ok(false);
        }
        *cur = Arc::new(next);
        self.0.generation.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }

    /// The settings as stored now, read in `conn` (a writer's transaction).
    pub async fn read(&self, conn: &impl ConnectionTrait) -> Result<MarketSettings, DbErr> {
        Ok(self.0.defaults.overlaid(&stored(conn).await?))
    }
}

async fn stored(conn: &impl ConnectionTrait) -> Result<Vec<(String, Value)>, DbErr> {
    let rows = rows::Entity::find().all(conn).await?;
    Ok(rows.into_iter().filter_map(|r| serde_json::from_str(&r.value).ok().map(|v| (r.name, v))).collect())
}

/// Makes writers of the settings take turns (a writer reads them, then stores a change): on
/// PostgreSQL a transaction-scoped advisory lock; SQLite's write transaction already excludes.
pub async fn lock(txn: &impl ConnectionTrait) -> Result<(), DbErr> {
    if txn.get_database_backend() == DbBackend::Postgres {
        // "zmarket.settings" as 64 bits: any fixed number unique to this lock.
        const KEY: i64 = 0x7a6d_7365_7474_696e;
        txn.execute_raw(Statement::from_sql_and_values(DbBackend::Postgres, "SELECT pg_advisory_xact_lock($1)", [KEY.into()])).await?;
    }
    Ok(())
}

/// Stores the settings of `next` named in `names` (the writer's transaction, after [`lock`]).
pub async fn store(conn: &impl ConnectionTrait, next: &MarketSettings, names: &[String]) -> Result<(), DbErr> {
    let t = now();
    for name in names {
        let row = rows::ActiveModel { name: Set(name.clone()), value: Set(next.value_of(name).to_string()), updated_at: Set(t) };
        rows::Entity::insert(row)
            .on_conflict(OnConflict::column(rows::Column::Name).update_columns([rows::Column::Value, rows::Column::UpdatedAt]).to_owned())
            .exec_without_returning(conn)
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> MarketSettings {
        MarketSettings::from_config(&Config::default())
    }

    #[test]
    fn stored_values_win_and_an_unreadable_one_is_left_out() {
        let d = defaults();
        let stored = vec![
            ("market_fee_percent".to_string(), Value::from(25)),
            ("low_balance_hours".to_string(), Value::from("many")),
            ("no_such_setting".to_string(), Value::from(1)),
            ("download_links".to_string(), serde_json::json!({"windows": "https://x/w.exe", "mac": "", "android": ""})),
        ];
        let s = d.overlaid(&stored);
        assert_eq!(s.market_fee_percent, 25);
        assert_eq!(s.low_balance_hours, d.low_balance_hours);
        assert_eq!(s.download_links.windows, "https://x/w.exe");
        assert_eq!(s.changed_from(&d), vec!["download_links".to_string(), "market_fee_percent".to_string()]);
    }
}
