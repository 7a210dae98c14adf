//! Wallet types: the coin amount, the ledger's inputs for other domains (accounts, references,
//! hold/capture/payment specs), the hold state machine, and the HTTP request/response types.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

pub use crate::db::entity::bills::BillStatus;
pub use crate::db::entity::ledger_accounts::AccountKind;
pub use crate::db::entity::ledger_entries::EntryKind;
pub use crate::db::entity::ledger_holds::HoldStatus;
use crate::error::{AppError, Msg};
use crate::iam::service::Auth;

// ---- coins ----

/// An amount of the product's coin, in cents (100 = 1 coin). Written and read as coins with at
/// most two decimals ("12.50"); in config files also as a whole number (`100`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Coins(i64);

impl Coins {
    pub const fn from_cents(cents: i64) -> Coins {
        Coins(cents)
    }
    pub const fn cents(self) -> i64 {
        self.0
    }
    /// "12.50", "12.5", "12", "-3": at most two decimals, no exponent, no grouping.
    pub fn parse(text: &str) -> Option<Coins> {
        let t = text.trim();
        let (negative, digits) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
        let all_digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
        if whole.is_empty() || !all_digits(whole) || frac.len() > 2 || !all_digits(frac) || (digits.contains('.') && frac.is_empty()) {
            return None;
        }
        let frac_cents: i64 = format!("{frac:0<2}").parse().ok()?;
        let cents = whole.parse::<i64>().ok()?.checked_mul(100)?.checked_add(frac_cents)?;
        Some(Coins(if negative { -cents } else { cents }))
    }
}

/// `1,234.50`: cents as coins with two decimals and thousands separators (what messages show;
/// the UI formats the same way, without Intl).
pub fn format_coins(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    let whole = (abs / 100).to_string();
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}.{:02}", abs % 100)
}

impl std::fmt::Display for Coins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_coins(self.0))
    }
}

impl Serialize for Coins {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_coins(self.0).replace(',', ""))
    }
}

impl<'de> Deserialize<'de> for Coins {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Coins, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Float(f64),
            Text(String),
        }
        let bad = || D::Error::custom("expected coins with at most two decimals, e.g. 100 or \"12.50\"");
        match Raw::deserialize(d)? {
            Raw::Int(n) => n.checked_mul(100).map(Coins).ok_or_else(bad),
            // Environment overrides arrive as numbers: accept exact cents only.
            Raw::Float(x) => {
                let cents = (x * 100.0).round();
                if (x * 100.0 - cents).abs() > 1e-6 || cents.abs() > 1e15 { Err(bad()) } else { Ok(Coins(cents as i64)) }
            }
            Raw::Text(t) => Coins::parse(&t).ok_or_else(bad),
        }
    }
}

/// The price of minute `n` (0-based) of something billed at `per_hour` cents an hour: the cents
/// are spread so that any 60 consecutive minutes cost exactly `per_hour`.
pub fn minute_price(per_hour: i64, n: i64) -> i64 {
    per_hour * (n + 1) / 60 - per_hour * n / 60
}

// ---- the ledger's inputs (the API other domains call, see docs/billing.md) ----

/// A ledger account: a person's or a company's wallet, or a system account.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccountRef {
    User(String),
    Company(String),
    /// Where operator-issued coins come from (grants, signup bonuses); the only account below zero.
    Issuance,
    /// The market's fee income.
    MarketFee,
}

impl AccountRef {
    pub fn id(&self) -> String {
        match self {
            AccountRef::User(u) => format!("user:{u}"),
            AccountRef::Company(c) => format!("company:{c}"),
            AccountRef::Issuance => "system:issuance".into(),
            AccountRef::MarketFee => "system:market_fee".into(),
        }
    }
    pub fn kind(&self) -> AccountKind {
        match self {
            AccountRef::User(_) => AccountKind::User,
            AccountRef::Company(_) => AccountKind::Company,
            AccountRef::Issuance => AccountKind::Issuance,
            AccountRef::MarketFee => AccountKind::MarketFee,
        }
    }
    pub fn owner(&self) -> Option<&str> {
        match self {
            AccountRef::User(id) | AccountRef::Company(id) => Some(id),
            _ => None,
        }
    }
    /// The wallet of the caller's context: their own in the personal context, the company's for
    /// its administrators; members have none (403).
    pub fn of_context(auth: &Auth) -> Result<AccountRef, AppError> {
        match auth.company() {
            None => Ok(AccountRef::User(auth.user_id.clone())),
            Some(c) if auth.is_admin() => Ok(AccountRef::Company(c.to_string())),
            Some(_) => Err(AppError::Forbidden(Msg::NotAdmin)),
        }
    }
}

/// What a movement is about, e.g. `("rental", Some(rental_id))`; shown with the entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub ref_type: String,
    pub ref_id: Option<String>,
}

impl Reference {
    pub fn new(ref_type: &str, ref_id: impl Into<String>) -> Reference {
        Reference { ref_type: ref_type.into(), ref_id: Some(ref_id.into()) }
    }
    pub fn kind_only(ref_type: &str) -> Reference {
        Reference { ref_type: ref_type.into(), ref_id: None }
    }
}

/// Reserve `amount` of `account`'s available coins until captured, released or `expires_at`.
#[derive(Debug, Clone)]
pub struct HoldSpec {
    pub account: AccountRef,
    pub amount: i64,
    /// Unique per hold, e.g. `rental:{id}:hold`: a retry returns the same hold.
    pub key: String,
    pub reference: Reference,
    pub memo: String,
    pub expires_at: DateTime<Utc>,
    /// Cents per hour this hold will be spent at while its work runs (0: not metered).
    pub burn_per_hour: i64,
}

/// A credit of a transfer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub account: AccountRef,
    pub amount: i64,
}

/// Post `amount` of a hold to `splits` (which sum to `amount`).
#[derive(Debug, Clone)]
pub struct CaptureSpec {
    pub hold_id: String,
    pub amount: i64,
    pub splits: Vec<Split>,
    /// Unique per posting, e.g. `rental:{id}:minute:{n}`.
    pub key: String,
    pub memo: String,
    /// Metered usage: counts in the bill of the current period for the hold's reference.
    pub metered: bool,
}

/// Spend from `from`'s available balance (no hold) to `splits`.
#[derive(Debug, Clone)]
pub struct PaySpec {
    pub from: AccountRef,
    pub splits: Vec<Split>,
    pub key: String,
    pub reference: Reference,
    pub memo: String,
    pub metered: bool,
}

/// The provider's share and the market's fee of a payment of `amount` (the fee rounds down).
pub fn market_splits(amount: i64, provider: AccountRef, fee_percent: u8) -> Vec<Split> {
    let fee = amount * i64::from(fee_percent.min(100)) / 100;
    let mut splits = vec![Split { account: provider, amount: amount - fee }];
    if fee > 0 {
        splits.push(Split { account: AccountRef::MarketFee, amount: fee });
    }
    splits.retain(|s| s.amount > 0);
    splits
}

// ---- the hold state machine ----

/// What happens to a hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldEvent {
    /// A capture leaving `left` cents uncaptured.
    Capture { left: i64 },
    Release,
    Expire,
}

impl HoldStatus {
    /// The status after `event`, or `None` when the event is not allowed (a resolved hold stays
    /// as it is: it resolves exactly once).
    pub fn next(self, event: HoldEvent) -> Option<HoldStatus> {
        use HoldStatus::*;
        match (self, event) {
            (Pending, HoldEvent::Capture { left }) if left > 0 => Some(Pending),
            (Pending, HoldEvent::Capture { left: 0 }) => Some(Captured),
            (Pending, HoldEvent::Release) => Some(Released),
            (Pending, HoldEvent::Expire) => Some(Expired),
            _ => None,
        }
    }
}

// ---- HTTP ----

/// The wallet of the current context.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Wallet {
    /// Cents.
    pub balance: i64,
    /// Cents reserved by pending holds.
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
    pub created_at: DateTime<Utc>,
}

/// Metered usage of one thing in one period.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Bill {
    pub id: String,
    pub status: BillStatus,
    pub ref_type: String,
    pub ref_id: String,
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

#[derive(Debug, Deserialize, IntoParams)]
pub struct DailyQuery {
    /// How many days back, today included (1-90; 30 when absent).
    pub days: Option<i64>,
}

impl DailyQuery {
    pub fn parse(&self) -> Result<i64, AppError> {
        match self.days {
            None => Ok(30),
            Some(d) if (1..=90).contains(&d) => Ok(d),
            Some(_) => Err(AppError::invalid("days", Msg::InvalidField("days"))),
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct EntriesQuery {
    /// income or expense; all when absent.
    pub kind: Option<String>,
}

impl EntriesQuery {
    pub fn parse(&self) -> Result<Option<EntryKind>, AppError> {
        match self.kind.as_deref().map(str::trim) {
            None | Some("") => Ok(None),
            Some("income") => Ok(Some(EntryKind::Income)),
            Some("expense") => Ok(Some(EntryKind::Expense)),
            Some(_) => Err(AppError::invalid("kind", Msg::InvalidField("kind"))),
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct BillsQuery {
    /// billed or unbilled; both when absent.
    pub status: Option<String>,
}

impl BillsQuery {
    pub fn parse(&self) -> Result<Option<BillStatus>, AppError> {
        match self.status.as_deref().map(str::trim) {
            None | Some("") => Ok(None),
            Some("billed") => Ok(Some(BillStatus::Billed)),
            Some("unbilled") => Ok(Some(BillStatus::Unbilled)),
            Some(_) => Err(AppError::invalid("status", Msg::InvalidField("status"))),
        }
    }
}

/// Move coins from the administrator's personal wallet into the company's (company context).
#[derive(Debug, Deserialize, ToSchema)]
pub struct TopUpRequest {
    /// Cents, at least 1.
    pub amount: Option<i64>,
    pub memo: Option<String>,
}

/// A validated top-up.
#[derive(Debug, Clone)]
pub struct TopUp {
    pub amount: i64,
    pub memo: String,
}

pub const MEMO_MAX_CHARS: usize = 200;
/// The most one movement may carry: 10^13 cents, far beyond any wallet, far below i64 overflow.
pub const AMOUNT_MAX: i64 = 10_000_000_000_000;

impl TryFrom<TopUpRequest> for TopUp {
    type Error = AppError;
    fn try_from(req: TopUpRequest) -> Result<TopUp, AppError> {
        let amount = match req.amount {
            Some(a) if (1..=AMOUNT_MAX).contains(&a) => a,
            _ => return Err(AppError::invalid("amount", Msg::AmountInvalid)),
        };
        let memo = req.memo.unwrap_or_default().trim().to_string();
        if memo.chars().count() > MEMO_MAX_CHARS || memo.chars().any(char::is_control) {
            return Err(AppError::invalid("memo", Msg::MemoInvalid));
        }
        Ok(TopUp { amount, memo })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coins_parse_and_format() {
        assert_eq!(Coins::parse("12.50"), Some(Coins(1250)));
        assert_eq!(Coins::parse("12.5"), Some(Coins(1250)));
        assert_eq!(Coins::parse(" 7 "), Some(Coins(700)));
        assert_eq!(Coins::parse("-0.01"), Some(Coins(-1)));
        for bad in ["", "1.234", "1.", ".5", "1e3", "1,000", "abc", "--1", "99999999999999999999"] {
            assert_eq!(Coins::parse(bad), None, "{bad}");
        }
        assert_eq!(format_coins(123_450), "1,234.50");
        assert_eq!(format_coins(0), "0.00");
        assert_eq!(format_coins(-5), "-0.05");
        assert_eq!(format_coins(100_000_000), "1,000,000.00");
    }

    #[test]
    fn minute_prices_add_up_to_the_hour() {
        for per_hour in [0, 1, 59, 60, 100, 12_345] {
            let hour: i64 = (0..60).map(|n| minute_price(per_hour, n)).sum();
            assert_eq!(hour, per_hour);
            let later: i64 = (60..120).map(|n| minute_price(per_hour, n)).sum();
            assert_eq!(later, per_hour);
        }
    }

    #[test]
    fn market_fee_rounds_down_and_sums() {
        let s = market_splits(1000, AccountRef::User("p".into()), 10);
        assert_eq!(s, vec![Split { account: AccountRef::User("p".into()), amount: 900 }, Split { account: AccountRef::MarketFee, amount: 100 }]);
        let s = market_splits(9, AccountRef::User("p".into()), 10);
        assert_eq!(s.iter().map(|x| x.amount).sum::<i64>(), 9);
        assert_eq!(s.len(), 1);
        assert_eq!(market_splits(5, AccountRef::User("p".into()), 100), vec![Split { account: AccountRef::MarketFee, amount: 5 }]);
    }

    #[test]
    fn hold_transitions() {
        use HoldStatus::*;
        assert_eq!(Pending.next(HoldEvent::Capture { left: 5 }), Some(Pending));
        assert_eq!(Pending.next(HoldEvent::Capture { left: 0 }), Some(Captured));
        assert_eq!(Pending.next(HoldEvent::Release), Some(Released));
        assert_eq!(Pending.next(HoldEvent::Expire), Some(Expired));
        for resolved in [Captured, Released, Expired] {
            for e in [HoldEvent::Capture { left: 0 }, HoldEvent::Capture { left: 3 }, HoldEvent::Release, HoldEvent::Expire] {
                assert_eq!(resolved.next(e), None, "{resolved:?} {e:?}");
            }
        }
        assert_eq!(Pending.next(HoldEvent::Capture { left: -1 }), None);
    }
}
