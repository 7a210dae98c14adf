//! The console's requests and answers (docs/api.md §Operator), checked before any rule runs.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::billing::model::CodeState;
use crate::error::{AppError, Msg};
use crate::http::Checked;
use crate::settings::{DownloadLinks, MarketSettings};

/// Who wrote: an operator (their id and email), or the command line.
#[derive(Debug, Clone)]
pub struct Actor {
    pub id: String,
    pub email: String,
}

impl Actor {
    pub fn command_line() -> Actor {
        Actor { id: String::new(), email: "command line".into() }
    }
}

/// What an operator did (the audit's `action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditAction {
    OperatorGrant,
    OperatorRevoke,
    UserSuspend,
    UserUnsuspend,
    UserGrant,
    SettingsUpdate,
    CodesIssue,
    AppCreate,
    AppUpdate,
    AppIcon,
    AppImage,
    BackupRun,
}

impl AuditAction {
    pub const ALL: [AuditAction; 12] = [
        Self::OperatorGrant,
        Self::OperatorRevoke,
        Self::UserSuspend,
        Self::UserUnsuspend,
        Self::UserGrant,
        Self::SettingsUpdate,
        Self::CodesIssue,
        Self::AppCreate,
        Self::AppUpdate,
        Self::AppIcon,
        Self::AppImage,
        Self::BackupRun,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OperatorGrant => "operator.grant",
            Self::OperatorRevoke => "operator.revoke",
            Self::UserSuspend => "user.suspend",
            Self::UserUnsuspend => "user.unsuspend",
            Self::UserGrant => "user.grant",
            Self::SettingsUpdate => "settings.update",
            Self::CodesIssue => "codes.issue",
            Self::AppCreate => "app.create",
            Self::AppUpdate => "app.update",
            Self::AppIcon => "app.icon",
            Self::AppImage => "app.image",
            Self::BackupRun => "backup.run",
        }
    }
    pub fn parse(s: &str) -> Option<AuditAction> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// One operator write, newest first.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct AuditEntry {
    pub at: DateTime<Utc>,
    /// The operator's email (or "command line").
    pub operator: String,
    /// `operator.grant`, `operator.revoke`, `user.suspend`, `user.unsuspend`, `user.grant`,
    /// `settings.update`, `codes.issue`, `app.create`, `app.update`, `app.icon`, `app.image`.
    pub action: String,
    /// What it was done to, e.g. `user:<id>`.
    pub target: String,
    /// `{before, after, …}`.
    #[schema(value_type = Object)]
    pub detail: Value,
}

#[derive(Debug, Clone, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Keep one action, e.g. `user.suspend`.
    pub action: Option<String>,
}

impl AuditQuery {
    pub fn checked(&self) -> Result<Option<AuditAction>, AppError> {
        match self.action.as_deref().map(str::trim) {
            None | Some("") => Ok(None),
            Some(a) => AuditAction::parse(a).map(Some).ok_or(AppError::invalid("action", Msg::AuditActionInvalid)),
        }
    }
}

#[derive(Debug, Clone, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UsersQuery {
    /// Part of an email or a name (case-insensitive).
    pub q: Option<String>,
}

pub const QUERY_MAX_CHARS: usize = 100;

impl UsersQuery {
    pub fn checked(&self) -> Result<Option<String>, AppError> {
        let q = self.q.as_deref().unwrap_or("").trim().to_lowercase();
        if q.chars().count() > QUERY_MAX_CHARS || q.chars().any(char::is_control) {
            return Err(AppError::invalid("q", Msg::InvalidField("q")));
        }
        Ok((!q.is_empty()).then_some(q))
    }
}

/// A person as the operator sees them.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct UserRow {
    pub id: String,
    pub email: String,
    pub name: String,
    pub verified: bool,
    pub suspended: bool,
    /// The reason given when suspended.
    pub suspended_reason: Option<String>,
    pub operator: bool,
    /// Cents of the personal wallet.
    pub balance: i64,
    /// Boxes they own personally.
    pub devices: u64,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct SuspendRequest {
    /// 1 to 500 characters, shown to the person when they try to sign in.
    pub reason: Option<String>,
}

pub const REASON_MAX_CHARS: usize = 500;

#[derive(Debug, Clone)]
pub struct Suspend {
    pub reason: String,
}

impl Checked for Suspend {
    type Body = SuspendRequest;
    fn check(req: SuspendRequest) -> Result<Suspend, AppError> {
        let reason = req.reason.unwrap_or_default().trim().to_string();
        let n = reason.chars().count();
        if n == 0 || n > REASON_MAX_CHARS || reason.chars().any(|c| c.is_control() && c != '\n') {
            return Err(AppError::invalid("reason", Msg::SuspendReasonInvalid));
        }
        Ok(Suspend { reason })
    }
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema, Default)]
pub struct UnsuspendRequest {
    /// Optional: why, for the audit.
    pub reason: Option<String>,
}

impl Checked for UnsuspendRequest {
    type Body = UnsuspendRequest;
    fn check(req: UnsuspendRequest) -> Result<UnsuspendRequest, AppError> {
        let reason = req.reason.unwrap_or_default().trim().to_string();
        if reason.chars().count() > REASON_MAX_CHARS || reason.chars().any(|c| c.is_control() && c != '\n') {
            return Err(AppError::invalid("reason", Msg::SuspendReasonInvalid));
        }
        Ok(UnsuspendRequest { reason: Some(reason) })
    }
}

/// The market at a glance (GET /overview). Amounts in cents.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Overview {
    /// People with an account.
    pub users: u64,
    /// Of them, those who joined in the last 7 days.
    pub users_7d: u64,
    pub devices_online: u64,
    pub devices_total: u64,
    /// Installations running (owned and rented).
    pub installations_running: u64,
    /// Rented apps and Z-CLOUD machines running.
    pub rentals_running: u64,
    /// What people's and companies' wallets hold.
    pub coins_in_circulation: i64,
    /// The part of it held for what runs.
    pub held: i64,
    /// The market's fee income, all time.
    pub fee_income: i64,
    /// The fee income per UTC day, the last 30 days, oldest first.
    pub fee_income_30d: Vec<FeeDay>,
    /// The newest backup this market took, scheduled or manual (`zmarket backup --to FILE`, "Back
    /// up now"); none yet, or a PostgreSQL market: null.
    pub last_backup: Option<crate::ops::backup::BackupInfo>,
    /// GPUs across the market: known, online, held, busy, mean use.
    pub gpus: crate::devices::gpus::MarketGpus,
    /// Snapshots kept (docs/data.md): how many are ready, their bytes in the market's store and
    /// on the boxes.
    pub snapshots: SnapshotStorage,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct SnapshotStorage {
    pub count: u64,
    pub market_bytes: i64,
    pub box_bytes: i64,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct FeeDay {
    /// YYYY-MM-DD.
    pub day: String,
    pub amount: i64,
}

/// PUT /settings: the settings to change (any left out keep their value).
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
pub struct SettingsRequest {
    /// 0-100: applies to rentals and orders started after the change.
    pub market_fee_percent: Option<i64>,
    /// Cents, 0 or more: applies to accounts verified after the change.
    pub signup_bonus: Option<i64>,
    pub download_links: Option<DownloadLinksRequest>,
    /// 0-720; 0 disables the notice.
    pub low_balance_hours: Option<i64>,
    /// At most 2,000 characters each; empty gives the default text.
    pub how_to_get_coins: Option<String>,
    pub how_to_get_coins_zh: Option<String>,
    /// Operators and company administrators must turn two-factor sign-in on first.
    pub two_factor_required_for_staff: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
pub struct DownloadLinksRequest {
    pub windows: Option<String>,
    pub mac: Option<String>,
    pub android: Option<String>,
}

pub const LINK_MAX_CHARS: usize = 500;
pub const TOP_UP_TEXT_MAX_CHARS: usize = 2000;
pub const LOW_BALANCE_HOURS_MAX: i64 = 720;

/// A checked settings change.
#[derive(Debug, Clone)]
pub struct SettingsChange(SettingsRequest);

impl SettingsChange {
    /// `base` with this change over it.
    pub fn apply(&self, base: &MarketSettings) -> MarketSettings {
        let r = &self.0;
        let mut s = base.clone();
        if let Some(v) = r.market_fee_percent {
            s.market_fee_percent = v as u8;
        }
        if let Some(v) = r.signup_bonus {
            s.signup_bonus = v;
        }
        if let Some(l) = &r.download_links {
            let trimmed = |v: &Option<String>, old: &String| v.as_deref().map_or_else(|| old.clone(), |t| t.trim().to_string());
            s.download_links = DownloadLinks {
                windows: trimmed(&l.windows, &s.download_links.windows),
                mac: trimmed(&l.mac, &s.download_links.mac),
                android: trimmed(&l.android, &s.download_links.android),
            };
        }
        if let Some(v) = r.low_balance_hours {
            s.low_balance_hours = v as u32;
        }
        if let Some(t) = &r.how_to_get_coins {
            s.how_to_get_coins = t.trim().to_string();
        }
        if let Some(t) = &r.how_to_get_coins_zh {
            s.how_to_get_coins_zh = t.trim().to_string();
        }
        if let Some(v) = r.two_factor_required_for_staff {
            s.two_factor_required_for_staff = v;
        }
        s
    }
}

fn link_ok(link: &str) -> bool {
    let l = link.trim();
    l.is_empty() || (l.chars().count() <= LINK_MAX_CHARS && !l.chars().any(char::is_whitespace) && (l.starts_with("https://") || l.starts_with("http://")) && l.len() > "https://".len())
}

fn text_ok(text: &str) -> bool {
    text.trim().chars().count() <= TOP_UP_TEXT_MAX_CHARS && !text.chars().any(|c| c.is_control() && c != '\n')
}

impl Checked for SettingsChange {
    type Body = SettingsRequest;
    fn check(r: SettingsRequest) -> Result<SettingsChange, AppError> {
        if r.market_fee_percent.is_some_and(|v| !(0..=100).contains(&v)) {
            return Err(AppError::invalid("market_fee_percent", Msg::FeePercentInvalid));
        }
        if r.signup_bonus.is_some_and(|v| !(0..=crate::billing::ledger::AMOUNT_MAX).contains(&v)) {
            return Err(AppError::invalid("signup_bonus", Msg::SignupBonusInvalid));
        }
        if let Some(l) = &r.download_links {
            for (name, v) in [("download_links.windows", &l.windows), ("download_links.mac", &l.mac), ("download_links.android", &l.android)] {
                if v.as_deref().is_some_and(|v| !link_ok(v)) {
                    return Err(AppError::invalid(name, Msg::DownloadLinkInvalid));
                }
            }
        }
        if r.low_balance_hours.is_some_and(|v| !(0..=LOW_BALANCE_HOURS_MAX).contains(&v)) {
            return Err(AppError::invalid("low_balance_hours", Msg::LowBalanceHoursInvalid));
        }
        for (name, v) in [("how_to_get_coins", &r.how_to_get_coins), ("how_to_get_coins_zh", &r.how_to_get_coins_zh)] {
            if v.as_deref().is_some_and(|t| !text_ok(t)) {
                return Err(AppError::invalid(name, Msg::TopUpTextInvalid));
            }
        }
        Ok(SettingsChange(r))
    }
}

/// POST /topup-codes.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct IssueCodesRequest {
    /// Cents each code is worth.
    pub amount: Option<i64>,
    /// 1 to 10,000.
    pub count: Option<i64>,
    /// Optional; a time in the future.
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone)]
pub struct IssueCodes {
    pub amount: i64,
    pub count: u32,
    pub expires_at: Option<DateTime<Utc>>,
}

impl Checked for IssueCodes {
    type Body = IssueCodesRequest;
    fn check(r: IssueCodesRequest) -> Result<IssueCodes, AppError> {
        let amount = r.amount.filter(|a| (1..=crate::billing::ledger::AMOUNT_MAX).contains(a)).ok_or(AppError::invalid("amount", Msg::AmountInvalid))?;
        let count = r
            .count
            .filter(|c| (1..=i64::from(crate::billing::codes::ISSUE_MAX)).contains(c))
            .ok_or(AppError::invalid("count", Msg::CodeCountInvalid))?;
        if r.expires_at.is_some_and(|e| e <= crate::db::now()) {
            return Err(AppError::invalid("expires_at", Msg::CodeExpiryInvalid));
        }
        Ok(IssueCodes { amount, count: count as u32, expires_at: r.expires_at })
    }
}

/// The codes just issued: shown once (only their hash is kept).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct IssuedCodes {
    /// The batch they share (`GET /topup-codes?batch=`).
    pub batch: String,
    pub items: Vec<IssuedCode>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct IssuedCode {
    pub code: String,
    pub amount: i64,
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CodesQuery {
    /// `unused`, `redeemed` or `expired`.
    pub state: Option<String>,
    /// One batch of codes.
    pub batch: Option<String>,
}

impl CodesQuery {
    pub fn checked(&self) -> Result<(Option<CodeState>, Option<String>), AppError> {
        let state = match self.state.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(s) => Some(CodeState::parse(s).ok_or(AppError::invalid("state", Msg::CodeStateInvalid))?),
        };
        let batch = self.batch.as_deref().map(str::trim).filter(|b| !b.is_empty());
        if batch.is_some_and(|b| b.len() > 64 || !b.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')) {
            return Err(AppError::invalid("batch", Msg::InvalidField("batch")));
        }
        Ok((state, batch.map(str::to_string)))
    }
}
