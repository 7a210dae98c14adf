//! `zmarket ledger verify`: every invariant of the ledger, checked from the rows themselves.
//! The first breach found is named; the Rust test suite runs the same check after every test
//! that moves coins.

use sea_orm::{ConnectionTrait, DbErr, Statement};

/// What was checked, when everything holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    pub accounts: i64,
    pub transfers: i64,
    pub entries: i64,
    pub holds: i64,
    pub bills: i64,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ledger verified: {} accounts, {} transfers, {} entries, {} holds, {} bills; every invariant holds",
            self.accounts, self.transfers, self.entries, self.holds, self.bills
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// An invariant does not hold: which one, and the first row that breaks it.
    #[error("ledger breach: {0}")]
    Breach(String),
    #[error("ledger verify could not read the database: {0}")]
    Db(#[from] DbErr),
}

/// One invariant: a query answering the rows that break it (first column: what the row is),
/// and how to say it.
struct Check {
    what: &'static str,
    sql: &'static str,
}

/// Every query answers nothing when its invariant holds. They are plain SQL that SQLite and
/// PostgreSQL read alike (window functions, CAST AS BIGINT).
const CHECKS: &[Check] = &[
    Check {
        what: "a transfer whose entries do not sum to zero",
        sql: "SELECT t.id AS subject, CAST(COALESCE(SUM(e.amount), 0) AS BIGINT) AS figure FROM ledger_transfers t \
              LEFT JOIN ledger_entries e ON e.transfer_id = t.id GROUP BY t.id HAVING COALESCE(SUM(e.amount), 0) <> 0",
    },
    Check {
        what: "a transfer with fewer than two entries",
        sql: "SELECT t.id AS subject, CAST(COUNT(e.seq) AS BIGINT) AS figure FROM ledger_transfers t \
              LEFT JOIN ledger_entries e ON e.transfer_id = t.id GROUP BY t.id HAVING COUNT(e.seq) < 2",
    },
    Check {
        what: "a transfer whose amount is not the sum of its credits",
        sql: "SELECT t.id AS subject, t.amount AS figure FROM ledger_transfers t \
              WHERE t.amount <> (SELECT CAST(COALESCE(SUM(e.amount), 0) AS BIGINT) FROM ledger_entries e WHERE e.transfer_id = t.id AND e.amount > 0)",
    },
    Check {
        what: "an entry of an unknown transfer or account, of zero, or of the wrong kind",
        sql: "SELECT e.id AS subject, e.amount AS figure FROM ledger_entries e \
              WHERE e.transfer_id NOT IN (SELECT id FROM ledger_transfers) OR e.account_id NOT IN (SELECT id FROM ledger_accounts) \
                 OR e.amount = 0 OR (e.amount > 0 AND e.kind <> 'income') OR (e.amount < 0 AND e.kind <> 'expense')",
    },
    Check {
        what: "two transfers with one idempotency key",
        sql: "SELECT key AS subject, CAST(COUNT(*) AS BIGINT) AS figure FROM ledger_transfers GROUP BY key HAVING COUNT(*) > 1",
    },
    Check {
        what: "a hold whose amounts or state do not add up (it must resolve exactly once)",
        sql: "SELECT h.id AS subject, h.captured AS figure FROM ledger_holds h WHERE h.amount <= 0 OR h.captured < 0 OR h.released < 0 \
                 OR h.captured + h.released > h.amount \
                 OR (h.status = 'pending' AND (h.released <> 0 OR h.resolved_at IS NOT NULL)) \
                 OR (h.status = 'captured' AND (h.captured <> h.amount OR h.released <> 0 OR h.resolved_at IS NULL)) \
                 OR (h.status IN ('released', 'expired') AND (h.captured + h.released <> h.amount OR h.resolved_at IS NULL)) \
                 OR h.status NOT IN ('pending', 'captured', 'released', 'expired')",
    },
    Check {
        what: "a hold whose captured amount is not what its captures took from its account",
        sql: "SELECT h.id AS subject, h.captured AS figure FROM ledger_holds h \
              WHERE h.captured <> (SELECT CAST(COALESCE(-SUM(e.amount), 0) AS BIGINT) FROM ledger_transfers t \
                                   JOIN ledger_entries e ON e.transfer_id = t.id AND e.account_id = h.account_id AND e.amount < 0 WHERE t.hold_id = h.id)",
    },
    Check {
        what: "an account whose cached balance is not the sum of its entries",
        sql: "SELECT a.id AS subject, a.balance AS figure FROM ledger_accounts a \
              WHERE a.balance <> (SELECT CAST(COALESCE(SUM(e.amount), 0) AS BIGINT) FROM ledger_entries e WHERE e.account_id = a.id)",
    },
    Check {
        what: "an account whose cached income or expense total is not the sum of its entries",
        sql: "SELECT a.id AS subject, a.income_total AS figure FROM ledger_accounts a \
              WHERE a.income_total <> (SELECT CAST(COALESCE(SUM(e.amount), 0) AS BIGINT) FROM ledger_entries e WHERE e.account_id = a.id AND e.amount > 0) \
                 OR a.expense_total <> (SELECT CAST(COALESCE(-SUM(e.amount), 0) AS BIGINT) FROM ledger_entries e WHERE e.account_id = a.id AND e.amount < 0)",
    },
    Check {
        what: "an account whose cached held amount is not what its pending holds keep",
        sql: "SELECT a.id AS subject, a.held AS figure FROM ledger_accounts a \
              WHERE a.held <> (SELECT CAST(COALESCE(SUM(h.amount - h.captured), 0) AS BIGINT) FROM ledger_holds h WHERE h.account_id = a.id AND h.status = 'pending')",
    },
    Check {
        what: "an account whose available balance is below zero now",
        sql: "SELECT a.id AS subject, a.balance - a.held AS figure FROM ledger_accounts a \
              WHERE a.id <> 'system:issuance' AND (a.held < 0 OR a.balance - a.held < 0)",
    },
    Check {
        what: "an entry whose balance_after is not the running sum of its account's entries",
        sql: "SELECT x.id AS subject, x.balance_after AS figure FROM \
              (SELECT e.id, e.balance_after, SUM(e.amount) OVER (PARTITION BY e.account_id ORDER BY e.seq ROWS UNBOUNDED PRECEDING) AS running \
               FROM ledger_entries e) x WHERE x.running <> x.balance_after",
    },
    Check {
        what: "an entry after which its account's available balance was below zero",
        sql: "SELECT e.id AS subject, e.balance_after - e.held_after AS figure FROM ledger_entries e \
              WHERE e.account_id <> 'system:issuance' AND (e.held_after < 0 OR e.balance_after - e.held_after < 0)",
    },
    Check {
        what: "a capture of an unknown hold",
        sql: "SELECT t.id AS subject, t.amount AS figure FROM ledger_transfers t \
              WHERE (t.kind = 'capture') <> (t.hold_id IS NOT NULL) OR (t.hold_id IS NOT NULL AND t.hold_id NOT IN (SELECT id FROM ledger_holds))",
    },
    Check {
        what: "metered usage of an unknown bill",
        sql: "SELECT t.id AS subject, t.amount AS figure FROM ledger_transfers t \
              WHERE t.bill_id IS NOT NULL AND t.bill_id NOT IN (SELECT id FROM bills)",
    },
    Check {
        what: "a bill (billed or unbilled) that is not the metered usage posted to it",
        sql: "SELECT b.id AS subject, b.amount AS figure FROM bills b \
              WHERE b.amount <> (SELECT CAST(COALESCE(-SUM(e.amount), 0) AS BIGINT) FROM ledger_transfers t \
                                 JOIN ledger_entries e ON e.transfer_id = t.id AND e.account_id = b.account_id AND e.amount < 0 WHERE t.bill_id = b.id) \
                 OR (b.status = 'billed' AND b.billed_at IS NULL) OR b.status NOT IN ('billed', 'unbilled') OR b.period_end <= b.period_start",
    },
    Check {
        what: "a rental's (app or Z-CLOUD) or order's market fee that is not floor(captured × fee percent / 100) after one of its captures",
        sql: "SELECT x.id AS subject, x.fee AS figure FROM \
              (SELECT t.id, t.ref_type, t.ref_id, \
                      CAST(SUM(t.amount) OVER (PARTITION BY t.ref_type, t.ref_id ORDER BY s.seq ROWS UNBOUNDED PRECEDING) AS BIGINT) AS captured, \
                      CAST(SUM(s.fee) OVER (PARTITION BY t.ref_type, t.ref_id ORDER BY s.seq ROWS UNBOUNDED PRECEDING) AS BIGINT) AS fee \
               FROM ledger_transfers t JOIN \
                    (SELECT e.transfer_id, MIN(e.seq) AS seq, \
                            CAST(COALESCE(SUM(CASE WHEN e.account_id = 'system:market_fee' THEN e.amount ELSE 0 END), 0) AS BIGINT) AS fee \
                     FROM ledger_entries e GROUP BY e.transfer_id) s ON s.transfer_id = t.id \
               WHERE t.kind = 'capture' AND t.ref_type IN ('rental', 'order', 'zcloud')) x \
              LEFT JOIN ledger_fee_meters m ON m.id = x.ref_type || ':' || x.ref_id \
              WHERE m.id IS NULL OR x.fee <> x.captured * m.fee_percent / 100",
    },
    Check {
        what: "a fee meter that is not its reference's captures and fee",
        sql: "SELECT m.id AS subject, m.captured AS figure FROM ledger_fee_meters m \
              WHERE m.fee <> m.captured * m.fee_percent / 100 \
                 OR m.captured <> (SELECT CAST(COALESCE(SUM(t.amount), 0) AS BIGINT) FROM ledger_transfers t \
                                   WHERE t.kind = 'capture' AND t.ref_type = m.ref_type AND t.ref_id = m.ref_id)",
    },
    Check {
        what: "a fee meter carrying a whole cent or more (or less than nothing) of its metered seconds",
        sql: "SELECT m.id AS subject, m.carry AS figure FROM ledger_fee_meters m WHERE m.carry < 0 OR m.carry >= 3600",
    },
];

/// Runs every check; the first breach is the error.
pub async fn verify(conn: &impl ConnectionTrait) -> Result<Report, VerifyError> {
    let backend = conn.get_database_backend();
    for check in CHECKS {
        if let Some(row) = conn.query_one_raw(Statement::from_string(backend, check.sql)).await? {
            let subject: String = row.try_get("", "subject")?;
            let figure: i64 = row.try_get("", "figure").unwrap_or_default();
            return Err(VerifyError::Breach(format!("{} ({subject}: {figure})", check.what)));
        }
    }
    let count = async |table: &str| -> Result<i64, DbErr> {
        let row = conn.query_one_raw(Statement::from_string(backend, format!("SELECT CAST(COUNT(*) AS BIGINT) AS n FROM {table}"))).await?;
        Ok(row.map(|r| r.try_get::<i64>("", "n")).transpose()?.unwrap_or(0))
    };
    Ok(Report {
        accounts: count("ledger_accounts").await?,
        transfers: count("ledger_transfers").await?,
        entries: count("ledger_entries").await?,
        holds: count("ledger_holds").await?,
        bills: count("bills").await?,
    })
}
