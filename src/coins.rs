//! The product's coin: amounts are i64 cents (100 = 1 coin), never floats. [`Coins`] is how an
//! amount is written by people (config files, the `coins grant` command: "12.50"), and
//! [`format_coins`] is how one is shown (`1,234.50`, the same in messages and in the UI).

use serde::{Deserialize, Serialize};

/// An amount of the product's coin, in cents. Written and read as coins with at most two
/// decimals ("12.50"); in config files also as a whole number (`100`).
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
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
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
}
