//! Wallet request and response types (docs/api.md §Wallet) and the checked values built from them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

pub use crate::db::enums::{BillStatus, EntryKind};
use crate::error::{AppError, Msg};
use crate::http::Checked;

/// The wallet of the current context. Amounts in cents.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Wallet {
    pub balance: i64,
    /// Reserved by pending holds (running rentals, open orders).
    pub held: i64,
    /// `balance - held`, never below 0.
    pub available: i64,
    pub income_total: i64,
    pub expense_total: i64,
    /// Metered usage of periods still open.
    pub unbilled: i64,
    /// `available` divided by the burn rate of what is running; null when nothing is.
    pub runway_secs: Option<i64>,
}

/// One entry of the wallet. `amount` is signed: positive for income, negative for expense.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Entry {
    pub id: String,
    pub kind: EntryKind,
    pub amount: i64,
    pub balance_after: i64,
    pub memo: String,
    /// grant, signup_bonus, top_up, rental, order …
    pub ref_type: String,
    pub ref_id: Option<String>,
    /// What it is for, in the reader's language: the app and device of a rental, the order's
    /// name; null for grants, bonuses and top-ups (the memo says it).
    pub title: Option<String>,
    /// A provider's income from a rental, an order or a Z-CLOUD machine: what the renter paid for
    /// it (`amount` is this less `fee`); null for other entries.
    pub gross: Option<i64>,
    /// The market's fee kept of `gross`; null where `gross` is.
    pub fee: Option<i64>,
    pub created_at: DateTime<Utc>,
}

/// Metered usage of one thing in one period.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Bill {
    pub id: String,
    pub status: BillStatus,
    pub ref_type: String,
    pub ref_id: String,
    /// The app and device of a rental, or the order, in the reader's language.
    pub title: Option<String>,
    /// On a company's bill, the name of the person who rented it (an administrator or member of
    /// the company); null on a person's own bills.
    pub by: Option<String>,
    pub period_start: DateTime<Utc>,
    pub period_end: DateTime<Utc>,
    pub amount: i64,
    pub created_at: DateTime<Utc>,
}

/// Income and expense of one day (UTC), for the wallet's chart.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Day {
    /// YYYY-MM-DD.
    pub day: String,
    pub income: i64,
    /// Positive: what was spent.
    pub expense: i64,
}

/// `?days=`: how many days back the chart goes, today included (1-90; 30 when absent).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DailyQuery {
    pub days: Option<i64>,
}

impl DailyQuery {
    pub fn checked(&self) -> Result<i64, AppError> {
        match self.days {
            None => Ok(30),
            Some(d) if (1..=90).contains(&d) => Ok(d),
            Some(_) => Err(AppError::invalid("days", Msg::InvalidField("days"))),
        }
    }
}

/// `?kind=income|expense`; all when absent.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EntriesQuery {
    pub kind: Option<String>,
}

impl EntriesQuery {
    pub fn checked(&self) -> Result<Option<EntryKind>, AppError> {
        match self.kind.as_deref().map(str::trim) {
            None | Some("") => Ok(None),
            Some("income") => Ok(Some(EntryKind::Income)),
            Some("expense") => Ok(Some(EntryKind::Expense)),
            Some(_) => Err(AppError::invalid("kind", Msg::InvalidField("kind"))),
        }
    }
}

/// `?status=billed|unbilled`; both when absent.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BillsQuery {
    #[param(inline, value_type = Option<BillStatus>)]
    pub status: Option<String>,
}

impl BillsQuery {
    pub fn checked(&self) -> Result<Option<BillStatus>, AppError> {
        match self.status.as_deref().map(str::trim) {
            None => Ok(None),
            Some("billed") => Ok(Some(BillStatus::Billed)),
            Some("unbilled") => Ok(Some(BillStatus::Unbilled)),
            Some(_) => Err(AppError::invalid("status", Msg::InvalidField("status"))),
        }
    }
}

/// A top-up code to redeem into the wallet of the current context.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RedeemRequest {
    /// As printed, e.g. `ZM-7K3P-Q9XD-M2RT-WH4B` (case, spaces and dashes do not matter).
    pub code: Option<String>,
}

/// A checked redeem: a code of at most 64 characters (its form is checked when it is read).
#[derive(Debug, Clone)]
pub struct Redeem {
    pub code: String,
}

impl Checked for Redeem {
    type Body = RedeemRequest;
    fn check(req: RedeemRequest) -> Result<Redeem, AppError> {
        match req.code.map(|c| c.trim().to_string()) {
            Some(c) if !c.is_empty() && c.chars().count() <= 64 => Ok(Redeem { code: c }),
            _ => Err(AppError::invalid("code", Msg::TopUpCodeInvalid)),
        }
    }
}

/// How coins are had on this market: the operator's words, in the reader's language.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TopUpInfo {
    pub text: String,
}

/// Move coins from the administrator's personal wallet into the company's (company context).
#[derive(Debug, Deserialize, ToSchema)]
pub struct TopUpRequest {
    /// Cents, at least 1.
    pub amount: Option<i64>,
    pub memo: Option<String>,
}

pub const MEMO_MAX_CHARS: usize = 200;

/// A checked top-up: 1 cent to `AMOUNT_MAX`, a memo of one line up to 200 characters.
#[derive(Debug, Clone)]
pub struct TopUp {
    pub amount: i64,
    pub memo: String,
}

impl Checked for TopUp {
    type Body = TopUpRequest;
    fn check(req: TopUpRequest) -> Result<TopUp, AppError> {
        let amount = match req.amount {
            Some(a) if (1..=crate::billing::accounts::AMOUNT_MAX).contains(&a) => a,
            _ => return Err(AppError::invalid("amount", Msg::AmountInvalid)),
        };
        let memo = req.memo.unwrap_or_default().trim().to_string();
        if memo.chars().count() > MEMO_MAX_CHARS || memo.chars().any(char::is_control) {
            return Err(AppError::invalid("memo", Msg::MemoInvalid));
        }
        Ok(TopUp { amount, memo })
    }
}

/// Funding the company's wallet: a top-up, and a current two-factor code when the amount is above
/// `auth.two_factor_step_up` and the caller has two-factor sign-in on.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FundRequest {
    /// Cents, at least 1.
    pub amount: Option<i64>,
    pub memo: Option<String>,
    /// 6 digits from the caller's authenticator app (or a recovery code).
    pub code: Option<String>,
}

pub struct Fund {
    pub top_up: TopUp,
    /// Checked by `iam::two_factor::StepUp`.
    pub code: Option<String>,
}

impl Checked for Fund {
    type Body = FundRequest;
    fn check(req: FundRequest) -> Result<Fund, AppError> {
        Ok(Fund { top_up: TopUp::check(TopUpRequest { amount: req.amount, memo: req.memo })?, code: req.code })
    }
}

/// A top-up code as the operator lists it (the code itself is never stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CodeState {
    /// Can still be redeemed.
    Unused,
    Redeemed,
    /// Not redeemed before it expired.
    Expired,
}

impl CodeState {
    pub const ALL: [CodeState; 3] = [CodeState::Unused, CodeState::Redeemed, CodeState::Expired];
    pub fn as_str(self) -> &'static str {
        match self {
            CodeState::Unused => "unused",
            CodeState::Redeemed => "redeemed",
            CodeState::Expired => "expired",
        }
    }
    pub fn parse(s: &str) -> Option<CodeState> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CodeRow {
    pub id: String,
    /// The code's last four characters (null for codes issued before they were kept).
    pub hint: Option<String>,
    /// Cents.
    pub amount: i64,
    pub state: CodeState,
    /// The codes issued together share it.
    pub batch: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub redeemed_at: Option<DateTime<Utc>>,
    /// Whose wallet it went to: an email, or a company's name.
    pub redeemed_by: Option<String>,
}
