//! Top-up codes: the operator prints them (`zmarket coins codes`), a person redeems one into the
//! wallet of their context (`POST /api/billing/v1/wallet/redeem`). A code is stored as its SHA-256
//! only; it is redeemed once (a conditional `UPDATE … WHERE redeemed_by IS NULL`, so of two
//! redeems racing on SQLite or PostgreSQL exactly one wins) and credits its coins from the
//! issuance account in the same transaction, under the key `redeem:<code id>`.

use chrono::{DateTime, Utc};
use rand::Rng;
use sea_orm::sea_query::Expr;
use std::collections::HashMap;

use sea_orm::{ColumnTrait, Condition, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set};

use crate::billing::ledger::{self, AMOUNT_MAX, AccountRef, Conn};
use crate::billing::memo::Memo;
use crate::billing::store::{begin, finish, sha256_hex};
use crate::billing::model::{CodeRow, CodeState};
use crate::db::entity::topup_codes as codes;
use crate::db::{new_id, now};
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::ids::UserId;

/// Letters and digits nobody mistakes for one another (no 0/O, 1/I/L).
const ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";
/// Groups of four characters: `ZM-XXXX-XXXX-XXXX-XXXX` (~99 bits).
const GROUPS: usize = 4;

fn new_code() -> String {
    let mut rng = rand::rng();
    let groups: Vec<String> = (0..GROUPS).map(|_| (0..4).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect()).collect();
    format!("ZM-{}", groups.join("-"))
}

/// The code as typed, compared without case, spaces or dashes; `None` when it cannot be one.
fn normalized(code: &str) -> Option<String> {
    let c: String = code.chars().filter(|c| !c.is_whitespace() && *c != '-').flat_map(char::to_uppercase).collect();
    let c = c.strip_prefix("ZM").unwrap_or(&c).to_string();
    (c.len() == GROUPS * 4 && c.bytes().all(|b| ALPHABET.contains(&b))).then_some(c)
}

fn hash(normal: &str) -> String {
    sha256_hex(&format!("topup-code|{normal}"))
}

/// At most this many codes are issued at once.
pub const ISSUE_MAX: u32 = 10_000;

/// Creates `count` codes of `amount` cents each, valid until `expires_at` (or for ever); answers
/// the codes themselves, which are not stored (the command line's codes).
pub async fn generate(conn: &impl Conn, amount: i64, count: u32, expires_at: Option<DateTime<Utc>>) -> Result<Vec<String>, AppError> {
    Ok(issue(conn, amount, count, expires_at, None).await?.codes)
}

/// Codes issued together: the batch's id and the codes, in the order they were made.
pub struct Issued {
    pub batch: String,
    pub codes: Vec<String>,
}

/// Creates `count` codes of `amount` cents each as one batch, written by `created_by` (an
/// operator's user id; None for the command line), in one transaction.
pub async fn issue(conn: &impl Conn, amount: i64, count: u32, expires_at: Option<DateTime<Utc>>, created_by: Option<&str>) -> Result<Issued, AppError> {
    if !(1..=AMOUNT_MAX).contains(&amount) {
        return Err(AppError::invalid("amount", Msg::AmountInvalid));
    }
    if !(1..=ISSUE_MAX).contains(&count) {
        return Err(AppError::invalid("count", Msg::CodeCountInvalid));
    }
    let batch = new_id();
    let txn = begin(conn).await?;
    let r = async {
        let mut out = Vec::with_capacity(count as usize);
        let t = now();
        for _ in 0..count {
            let code = new_code();
            let normal = normalized(&code).unwrap_or_default();
            codes::Entity::insert(codes::ActiveModel {
                id: Set(new_id()),
                code_hash: Set(hash(&normal)),
                amount: Set(amount),
                expires_at: Set(expires_at),
                created_at: Set(t),
                redeemed_by: Set(None),
                redeemed_at: Set(None),
                hint: Set(Some(normal[normal.len() - 4..].to_string())),
                batch: Set(Some(batch.clone())),
                created_by: Set(created_by.map(str::to_string).map(UserId::from)),
            })
            .exec_without_returning(&txn)
            .await?;
            out.push(code);
        }
        Ok(out)
    }
    .await;
    Ok(Issued { batch, codes: finish(txn, r).await? })
}

/// The codes issued (newest first), optionally of one state or one batch; `redeemed_by` is the
/// wallet's owner as people know them (an email, a company's name).
pub async fn list(conn: &impl ConnectionTrait, state: Option<CodeState>, batch: Option<&str>, offset: u64, limit: u64) -> Result<List<CodeRow>, AppError> {
    let t = now();
    let mut q = codes::Entity::find();
    q = match state {
        None => q,
        Some(CodeState::Redeemed) => q.filter(codes::Column::RedeemedBy.is_not_null()),
        Some(CodeState::Expired) => q.filter(codes::Column::RedeemedBy.is_null()).filter(codes::Column::ExpiresAt.lte(t)),
        Some(CodeState::Unused) => {
            q.filter(codes::Column::RedeemedBy.is_null()).filter(Condition::any().add(codes::Column::ExpiresAt.is_null()).add(codes::Column::ExpiresAt.gt(t)))
        }
    };
    if let Some(b) = batch {
        q = q.filter(codes::Column::Batch.eq(b));
    }
    let total = q.clone().count(conn).await?;
    let rows = q.order_by_desc(codes::Column::CreatedAt).order_by_desc(codes::Column::Id).offset(offset).limit(limit).all(conn).await?;
    let owners = holders(conn, rows.iter().filter_map(|r| r.redeemed_by.as_ref().map(|u| u.as_str()))).await?;
    let items = rows
        .into_iter()
        .map(|r| CodeRow {
            state: match (&r.redeemed_by, r.expires_at) {
                (Some(_), _) => CodeState::Redeemed,
                (None, Some(e)) if e <= t => CodeState::Expired,
                _ => CodeState::Unused,
            },
            redeemed_by: r.redeemed_by.as_ref().map(|a| owners.get(a.as_str()).cloned().unwrap_or_else(|| a.clone().into())),
            id: r.id,
            hint: r.hint,
            amount: r.amount,
            batch: r.batch,
            created_at: r.created_at,
            expires_at: r.expires_at,
            redeemed_at: r.redeemed_at,
        })
        .collect();
    Ok(List { items, total })
}

/// Wallet account ids (`user:<id>`, `company:<id>`) → the email or the company's name.
async fn holders<'a>(conn: &impl ConnectionTrait, accounts: impl Iterator<Item = &'a str>) -> Result<HashMap<String, String>, AppError> {
    let (mut people, mut firms) = (Vec::new(), Vec::new());
    for a in accounts {
        match AccountRef::parse(a) {
            Ok(AccountRef::User(id)) => people.push(id),
            Ok(AccountRef::Company(id)) => firms.push(id),
            _ => {}
        }
    }
    let mut out = HashMap::new();
    if !people.is_empty() {
        for u in crate::iam::people::by_ids(conn, people).await?.into_values() {
            out.insert(AccountRef::User(u.id).id(), u.email);
        }
    }
    for (id, name) in crate::companies::company::names(conn, firms).await? {
        out.insert(AccountRef::Company(id).id(), name);
    }
    Ok(out)
}

/// Redeems `code` into `to`: 400 when it cannot be a code, 404 unknown, 409 used or expired.
/// Answers the coins credited.
pub async fn redeem(conn: &impl Conn, to: &AccountRef, code: &str) -> Result<i64, AppError> {
    let normal = normalized(code).ok_or_else(|| AppError::invalid("code", Msg::TopUpCodeInvalid))?;
    let txn = begin(conn).await?;
    let r = async {
        let row = codes::Entity::find().filter(codes::Column::CodeHash.eq(hash(&normal))).one(&txn).await?.ok_or(AppError::Refused(Msg::TopUpCodeNotFound))?;
        let t = now();
        let claimed = codes::Entity::update_many()
            .col_expr(codes::Column::RedeemedBy, Expr::value(to.id()))
            .col_expr(codes::Column::RedeemedAt, Expr::value(t))
            .filter(codes::Column::Id.eq(row.id.clone()))
            .filter(codes::Column::RedeemedBy.is_null())
            .filter(Condition::any().add(codes::Column::ExpiresAt.is_null()).add(codes::Column::ExpiresAt.gt(t)))
            .exec(&txn)
            .await?;
        if claimed.rows_affected != 1 {
            let now_row = codes::Entity::find_by_id(row.id).one(&txn).await?;
            return Err(match now_row {
                Some(c) if c.redeemed_by.is_some() => AppError::Refused(Msg::TopUpCodeUsed),
                _ => AppError::Refused(Msg::TopUpCodeExpired),
            });
        }
        ledger::grant(&txn, to.clone(), row.amount, format!("redeem:{}", row.id), Memo::CodeRedeemed.encode()).await?;
        Ok(row.amount)
    }
    .await;
    finish(txn, r).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_read_as_typed_without_case_spaces_or_dashes() {
        let code = new_code();
        assert!(code.starts_with("ZM-") && code.len() == 3 + GROUPS * 5 - 1, "{code}");
        let n = normalized(&code).unwrap();
        assert_eq!(normalized(&code.to_lowercase()), Some(n.clone()));
        assert_eq!(normalized(&code.replace('-', " ")), Some(n.clone()));
        assert_eq!(normalized(&n), Some(n));
        assert_eq!(normalized("ZM-0000-0000-0000-0000"), None);
        assert_eq!(normalized(""), None);
        assert_eq!(normalized("ZM-ABCD"), None);
    }
}
