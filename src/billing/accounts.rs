//! The ledger's vocabulary, as other domains use it: whose account ([`AccountRef`]), what a
//! movement is about ([`Reference`]), and the specs of a hold, a capture and a transfer. No
//! database here (docs/wallet.md).

use chrono::{DateTime, Utc};

use crate::db::enums::AccountKind;
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use crate::ids::{CompanyId, HoldId, UserId};

/// The most one movement may carry: 10^13 cents, far beyond any wallet, far below i64 overflow.
pub const AMOUNT_MAX: i64 = 10_000_000_000_000;

/// A ledger account: a person's or a company's wallet, or a system account.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccountRef {
    /// A person's wallet (their user id).
    User(UserId),
    /// A company's wallet (its id), used by its administrators in the company context.
    Company(CompanyId),
    /// Where operator-issued coins come from (grants, signup bonuses); the only account below zero.
    Issuance,
    /// The market's fee income.
    MarketFee,
}

impl AccountRef {
    /// The row id: `user:<id>`, `company:<id>`, `system:issuance`, `system:market_fee`.
    pub fn id(&self) -> String {
        match self {
            AccountRef::User(u) => format!("user:{u}"),
            AccountRef::Company(c) => format!("company:{c}"),
            AccountRef::Issuance => "system:issuance".into(),
            AccountRef::MarketFee => "system:market_fee".into(),
        }
    }
    /// The account named by a row id.
    pub fn parse(id: &str) -> Result<AccountRef, AppError> {
        match id.split_once(':') {
            Some(("user", u)) => Ok(AccountRef::User(u.into())),
            Some(("company", c)) => Ok(AccountRef::Company(CompanyId::from(c))),
            _ if id == AccountRef::Issuance.id() => Ok(AccountRef::Issuance),
            _ if id == AccountRef::MarketFee.id() => Ok(AccountRef::MarketFee),
            _ => Err(AppError::Internal(anyhow::anyhow!("unknown ledger account {id}"))),
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
            AccountRef::User(id) => Some(id.as_str()),
            AccountRef::Company(id) => Some(id.as_str()),
            _ => None,
        }
    }
    /// A wallet of a person or company (holds and spends come only from these).
    pub fn is_wallet(&self) -> bool {
        matches!(self, AccountRef::User(_) | AccountRef::Company(_))
    }
    /// The wallet of the caller's context: their own in the personal context, the company's for
    /// its administrators; members have none (403).
    pub fn of_context(auth: &Auth) -> Result<AccountRef, AppError> {
        match auth.company() {
            None => Ok(AccountRef::User(auth.user_id.clone())),
            Some(c) if auth.is_admin() => Ok(AccountRef::Company(c.clone())),
            Some(_) => Err(AppError::Refused(Msg::NotAdmin)),
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
    /// Cents per hour this hold will be spent at while its work runs (0: not metered); the
    /// runway is computed from it.
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
    pub hold_id: HoldId,
    pub amount: i64,
    pub splits: Vec<Split>,
    /// Unique per posting, e.g. `rental:{id}:minute:{n}`.
    pub key: String,
    pub memo: String,
    /// Metered usage: counts in the bill of the current period for the hold's reference.
    pub metered: bool,
}

/// Post `amount` of a rental's or order's hold to its provider less the market's fee, the fee
/// exact over the reference's life (`billing::fees`): after every capture the market holds
/// `floor(total captured × fee_percent / 100)` of it.
#[derive(Debug, Clone)]
pub struct MarketCapture {
    pub hold_id: HoldId,
    pub amount: i64,
    pub provider: AccountRef,
    pub fee_percent: u8,
    /// Unique per posting, e.g. `rental:{id}:minutes:{k}-{n}`.
    pub key: String,
    pub memo: String,
    pub metered: bool,
}

/// Charge `seconds` of metered work (a rental's, an order's) at `per_hour` cents an hour from its
/// hold, to its provider less the market's fee: the cents they come to with the fraction of a
/// cent the hold's reference carried from its earlier seconds (`billing::fees::carry`), the new
/// fraction carried to the next capture.
#[derive(Debug, Clone)]
pub struct MeteredCapture {
    pub hold_id: HoldId,
    pub per_hour: i64,
    pub seconds: i64,
    pub provider: AccountRef,
    pub fee_percent: u8,
    /// Unique per stretch, named by the seconds it charges: `rental:{id}:seconds:{from}-{to}`.
    pub key: String,
    pub memo: String,
    /// How fast the hold burns from now on (`ledger::set_burn`), set with the capture: the
    /// meter stopping or starting as it charges. `None` leaves it.
    pub burn_per_hour: Option<i64>,
}

/// Spend from `from`'s available balance (no hold) to `splits`.
#[derive(Debug, Clone)]
pub struct TransferSpec {
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

/// The price of minute `n` (0-based) of something billed at `per_hour` cents an hour: the cents
/// are spread so that any 60 consecutive minutes cost exactly `per_hour`.
pub fn minute_price(per_hour: i64, n: i64) -> i64 {
    per_hour * (n + 1) / 60 - per_hour * n / 60
}

/// The refusal naming what is missing, with the figures in `data`.
pub fn insufficient(available: i64, needed: i64) -> AppError {
    AppError::Explained {
        msg: Msg::InsufficientBalance { available, needed },
        data: serde_json::json!({ "available": available, "needed": needed }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let p = || AccountRef::User("p".into());
        assert_eq!(market_splits(1000, p(), 10), vec![Split { account: p(), amount: 900 }, Split { account: AccountRef::MarketFee, amount: 100 }]);
        let s = market_splits(9, p(), 10);
        assert_eq!(s.iter().map(|x| x.amount).sum::<i64>(), 9);
        assert_eq!(s.len(), 1);
        assert_eq!(market_splits(5, p(), 100), vec![Split { account: AccountRef::MarketFee, amount: 5 }]);
    }

    #[test]
    fn account_ids_round_trip() {
        for a in [AccountRef::User("u1".into()), AccountRef::Company("c1".into()), AccountRef::Issuance, AccountRef::MarketFee] {
            assert_eq!(AccountRef::parse(&a.id()).unwrap(), a);
        }
        assert!(AccountRef::parse("system:other").is_err());
    }
}
