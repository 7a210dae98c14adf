//! The wallet's entries and bills as CSV for spreadsheet programs: UTF-8 with a byte-order mark
//! (so Excel reads Chinese), a header row in the reader's language, amounts in coins as shown
//! (`1,234.50` would split a column, so plain `1234.50`), times in UTC (RFC 3339).

use sea_orm::{ConnectionTrait, DatabaseConnection};

use crate::billing::titles::Titles;
use crate::billing::{bills, codes};
use crate::billing::ledger::AccountRef;
use crate::billing::model::{BillStatus, CodeState, EntryKind};
use crate::billing::wallet;
use crate::error::AppError;
use crate::lang::Lang;

/// At most this many rows in one export (newest first).
pub const EXPORT_MAX_ROWS: u64 = 50_000;

/// Cents as coins without grouping: `-1234.50`.
fn coins(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let a = cents.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100)
}

/// What a movement was, when it has no title of its own.
fn ref_label(ref_type: &str, lang: Lang) -> String {
    let (en, zh) = match ref_type {
        "grant" => ("Operator grant", "运营者发放"),
        "signup_bonus" => ("Signup bonus", "注册奖励"),
        "top_up" => ("Company top-up", "企业充值"),
        "rental" => ("Rental", "租用"),
        "order" => ("Order", "订单"),
        "zcloud" => ("Z-CLOUD machine", "Z-CLOUD 云主机"),
        other => (other, other),
    };
    (if lang == Lang::Zh { zh } else { en }).to_string()
}

fn finish(w: csv::Writer<Vec<u8>>) -> Result<Vec<u8>, AppError> {
    let body = w.into_inner().map_err(|e| AppError::Internal(anyhow::anyhow!("csv: {e}")))?;
    let mut out = "\u{feff}".as_bytes().to_vec();
    out.extend(body);
    Ok(out)
}

/// Every row of every CSV the market writes goes through here, each cell through [`cell`].
fn row(w: &mut csv::Writer<Vec<u8>>, cells: &[&str]) -> Result<(), AppError> {
    w.write_record(cells.iter().map(|c| cell(c).into_owned())).map_err(|e| AppError::Internal(anyhow::anyhow!("csv: {e}")))
}

/// A cell a spreadsheet reads as text (issue 43, item 9: a memo `=HYPERLINK(…)` was written
/// verbatim into the wallet's CSV): one beginning with `=`, `+`, `-`, `@`, a tab or a carriage
/// return gets a leading `'`, unless it is a plain number (the amounts, `-12.50`).
pub fn cell(s: &str) -> std::borrow::Cow<'_, str> {
    let risky = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let number = s.strip_prefix('-').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    if risky && !number { format!("'{s}").into() } else { s.into() }
}

/// The account's entries (of `kind`, or all) as CSV.
pub async fn entries_csv(conn: &DatabaseConnection, titles: &Titles, account: &AccountRef, kind: Option<EntryKind>, lang: Lang) -> Result<Vec<u8>, AppError> {
    let list = wallet::entries(conn, titles, account, kind, 0, EXPORT_MAX_ROWS, lang).await?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let head: &[&str] = match lang {
        Lang::Zh => &["时间 (UTC)", "类型", "项目", "备注", "金额 (币)", "总额 (币)", "市场费 (币)", "余额 (币)", "编号"],
        Lang::En => &["Time (UTC)", "Kind", "What", "Memo", "Amount (coins)", "Gross (coins)", "Market fee (coins)", "Balance after (coins)", "Reference"],
    };
    row(&mut w, head)?;
    for e in list.items {
        let kind = match (e.kind, lang) {
            (EntryKind::Income, Lang::Zh) => "收入",
            (EntryKind::Income, _) => "Income",
            (EntryKind::Expense, Lang::Zh) => "支出",
            (EntryKind::Expense, _) => "Expense",
        };
        let what = e.title.clone().unwrap_or_else(|| ref_label(&e.ref_type, lang));
        let time = e.created_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let (gross, fee) = (e.gross.map(coins).unwrap_or_default(), e.fee.map(coins).unwrap_or_default());
        row(&mut w, &[&time, kind, &what, &e.memo, &coins(e.amount), &gross, &fee, &coins(e.balance_after), e.ref_id.as_deref().unwrap_or("")])?;
    }
    finish(w)
}

/// The account's bills (of `status`, or all) as CSV.
pub async fn bills_csv(conn: &DatabaseConnection, titles: &Titles, account: &AccountRef, status: Option<BillStatus>, lang: Lang) -> Result<Vec<u8>, AppError> {
    let list = bills::list(conn, titles, account, status, 0, EXPORT_MAX_ROWS, lang).await?;
    let mut w = csv::Writer::from_writer(Vec::new());
    // A company's bills name who rented (`Bill.by`); a person's own bills have no such column.
    let company = matches!(account, AccountRef::Company(_));
    let mut head: Vec<&str> = match lang {
        Lang::Zh => vec!["开始 (UTC)", "结束 (UTC)", "状态", "项目", "金额 (币)", "编号"],
        Lang::En => vec!["Period start (UTC)", "Period end (UTC)", "Status", "For", "Amount (coins)", "Reference"],
    };
    if company {
        head.push(if lang == Lang::Zh { "使用人" } else { "By" });
    }
    row(&mut w, &head)?;
    for b in list.items {
        let status = match (b.status, lang) {
            (BillStatus::Billed, Lang::Zh) => "已结算",
            (BillStatus::Billed, _) => "Closed",
            (BillStatus::Unbilled, Lang::Zh) => "本小时进行中",
            (BillStatus::Unbilled, _) => "Open hour",
        };
        let what = b.title.clone().unwrap_or_else(|| ref_label(&b.ref_type, lang));
        let fmt = |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let (start, end, amount) = (fmt(b.period_start), fmt(b.period_end), coins(b.amount));
        let mut cells: Vec<&str> = vec![&start, &end, status, &what, &amount, &b.ref_id];
        if company {
            cells.push(b.by.as_deref().unwrap_or(""));
        }
        row(&mut w, &cells)?;
    }
    finish(w)
}

/// Top-up codes (the operator's list, newest first) as CSV: no code is stored, so a row names
/// its last four characters.
pub async fn codes_csv(conn: &impl ConnectionTrait, state: Option<CodeState>, batch: Option<&str>, lang: Lang) -> Result<Vec<u8>, AppError> {
    let list = codes::list(conn, state, batch, 0, EXPORT_MAX_ROWS).await?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let head: &[&str] = match lang {
        Lang::Zh => &["末四位", "金额 (币)", "状态", "创建 (UTC)", "到期 (UTC)", "兑换 (UTC)", "兑换者", "批次"],
        Lang::En => &["Ends with", "Amount (coins)", "State", "Issued (UTC)", "Expires (UTC)", "Redeemed (UTC)", "Redeemed by", "Batch"],
    };
    row(&mut w, head)?;
    let fmt = |t: Option<chrono::DateTime<chrono::Utc>>| t.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)).unwrap_or_default();
    for c in list.items {
        let state = match (c.state, lang) {
            (CodeState::Unused, Lang::Zh) => "未使用",
            (CodeState::Unused, _) => "Unused",
            (CodeState::Redeemed, Lang::Zh) => "已兑换",
            (CodeState::Redeemed, _) => "Redeemed",
            (CodeState::Expired, Lang::Zh) => "已过期",
            (CodeState::Expired, _) => "Expired",
        };
        let cells = [
            c.hint.unwrap_or_default(),
            coins(c.amount),
            state.to_string(),
            fmt(Some(c.created_at)),
            fmt(c.expires_at),
            fmt(c.redeemed_at),
            c.redeemed_by.unwrap_or_default(),
            c.batch.unwrap_or_default(),
        ];
        row(&mut w, &cells.iter().map(String::as_str).collect::<Vec<_>>())?;
    }
    finish(w)
}

#[cfg(test)]
mod tests {
    use super::{cell, coins};

    #[test]
    fn formula_cells_are_text_and_amounts_stay_numbers() {
        assert_eq!(cell("=HYPERLINK(\"http://x\")"), "'=HYPERLINK(\"http://x\")");
        assert_eq!(cell("+1"), "'+1");
        assert_eq!(cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(cell("-2+3"), "'-2+3");
        assert_eq!(cell("-12.50"), "-12.50");
        assert_eq!(cell("memo"), "memo");
    }

    #[test]
    fn coins_are_written_without_grouping() {
        assert_eq!(coins(123_450), "1234.50");
        assert_eq!(coins(-5), "-0.05");
        assert_eq!(coins(0), "0.00");
    }
}
