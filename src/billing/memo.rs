//! Memos a person reads in their wallet, stored as a code with its figures (`~rental_minutes:5`)
//! and rendered in the reader's language when read; a memo typed by a person (an operator's grant,
//! a company top-up) is stored and shown as typed. Entries written before the codes (English text)
//! are shown as they are.

use crate::lang::Lang;

/// What a coin movement was, as the ledger stores it for people to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memo {
    /// Minutes of a rental charged from its hold (entries before the meter ran by the second).
    RentalMinutes(i64),
    /// Minutes of an order charged from its hold (entries before the meter ran by the second).
    OrderMinutes(i64),
    /// Seconds of a rental charged from its hold.
    RentalSeconds(i64),
    /// Seconds of an order charged from its hold.
    OrderSeconds(i64),
    /// Coins held for a rental's hours.
    RentalHold(i64),
    /// Coins held for an order's hours.
    OrderHold(i64),
    /// A top-up code redeemed.
    CodeRedeemed,
}

const PREFIX: char = '~';

impl Memo {
    /// The stored form: a code and its figure.
    pub fn encode(self) -> String {
        let (code, n) = match self {
            Memo::RentalMinutes(n) => ("rental_minutes", n),
            Memo::OrderMinutes(n) => ("order_minutes", n),
            Memo::RentalSeconds(n) => ("rental_seconds", n),
            Memo::OrderSeconds(n) => ("order_seconds", n),
            Memo::RentalHold(n) => ("rental_hold", n),
            Memo::OrderHold(n) => ("order_hold", n),
            Memo::CodeRedeemed => ("code_redeemed", 0),
        };
        format!("{PREFIX}{code}:{n}")
    }

    fn decode(raw: &str) -> Option<Memo> {
        let (code, n) = raw.strip_prefix(PREFIX)?.split_once(':')?;
        let n: i64 = n.parse().ok()?;
        Some(match code {
            "rental_minutes" => Memo::RentalMinutes(n),
            "order_minutes" => Memo::OrderMinutes(n),
            "rental_seconds" => Memo::RentalSeconds(n),
            "order_seconds" => Memo::OrderSeconds(n),
            "rental_hold" => Memo::RentalHold(n),
            "order_hold" => Memo::OrderHold(n),
            "code_redeemed" => Memo::CodeRedeemed,
            _ => return None,
        })
    }

    pub fn text(self, lang: Lang) -> String {
        match (self, lang) {
            (Memo::RentalMinutes(n), Lang::Zh) => format!("租用计费 {n} 分钟"),
            (Memo::RentalMinutes(n), _) => format!("Rental charged: {n} min"),
            (Memo::OrderMinutes(n), Lang::Zh) => format!("订单计费 {n} 分钟"),
            (Memo::OrderMinutes(n), _) => format!("Order charged: {n} min"),
            (Memo::RentalSeconds(n), Lang::Zh) => format!("租用计费 {}", span(n, lang)),
            (Memo::RentalSeconds(n), _) => format!("Rental charged: {}", span(n, lang)),
            (Memo::OrderSeconds(n), Lang::Zh) => format!("订单计费 {}", span(n, lang)),
            (Memo::OrderSeconds(n), _) => format!("Order charged: {}", span(n, lang)),
            (Memo::RentalHold(h), Lang::Zh) => format!("租用冻结 {h} 小时"),
            (Memo::RentalHold(h), _) => format!("Held for a rental: {h} h"),
            (Memo::OrderHold(h), Lang::Zh) => format!("订单冻结 {h} 小时"),
            (Memo::OrderHold(h), _) => format!("Held for an order: {h} h"),
            (Memo::CodeRedeemed, Lang::Zh) => "兑换充值码".into(),
            (Memo::CodeRedeemed, _) => "Top-up code redeemed".into(),
        }
    }
}

/// A span of seconds as people read it: `1 h 2 min 5 s`, `25 s` (`1 小时 2 分 5 秒`).
fn span(secs: i64, lang: Lang) -> String {
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let units = if lang == Lang::Zh { ["小时", "分", "秒"] } else { ["h", "min", "s"] };
    let parts: Vec<String> = [h, m, s].into_iter().zip(units).filter(|(n, _)| *n > 0).map(|(n, u)| format!("{n} {u}")).collect();
    if parts.is_empty() { format!("0 {}", units[2]) } else { parts.join(" ") }
}

/// A stored memo in the reader's language: a code is rendered, typed text is shown as typed.
pub fn render(raw: &str, lang: Lang) -> String {
    match Memo::decode(raw) {
        Some(m) => m.text(lang),
        None => raw.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_render_in_both_languages_and_typed_text_stays() {
        let m = Memo::RentalMinutes(5).encode();
        assert_eq!(m, "~rental_minutes:5");
        assert_eq!(render(&m, Lang::En), "Rental charged: 5 min");
        assert_eq!(render(&m, Lang::Zh), "租用计费 5 分钟");
        assert_eq!(render(&Memo::OrderHold(2).encode(), Lang::Zh), "订单冻结 2 小时");
        assert_eq!(render(&Memo::RentalSeconds(25).encode(), Lang::En), "Rental charged: 25 s");
        assert_eq!(render(&Memo::RentalSeconds(3725).encode(), Lang::En), "Rental charged: 1 h 2 min 5 s");
        assert_eq!(render(&Memo::OrderSeconds(300).encode(), Lang::Zh), "订单计费 5 分");
        assert_eq!(render("Thanks for testing", Lang::Zh), "Thanks for testing");
        assert_eq!(render("~unknown:3", Lang::En), "~unknown:3");
    }
}
