//! A seeded simulation of the ledger: thousands of random grants, payments, holds, captures,
//! releases, expiries, retries with the same key (and with the same key for another request),
//! and bursts of concurrent callers, against the service on the test database. After every step
//! the wallets must equal a model kept here and `ledger verify` must pass.
//!
//! The seed is printed first (cargo shows it when the test fails) and is in every assertion;
//! replay with `SIM_SEED=<seed>`; `SIM_STEPS` changes the length (default 1000 steps, about 1,800 operations).

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sea_orm::DatabaseConnection;
use zmarket::billing::ledger;
use zmarket::billing::ledger::{AccountRef, CaptureSpec, HoldSpec, Reference, Split, TransferSpec, market_splits};
use zmarket::db::enums::HoldStatus;
use zmarket::error::{AppError, Msg};


const FEE: u8 = 10;

/// One operation, replayable with the same key.
#[derive(Debug, Clone)]
enum Op {
    Grant { to: AccountRef, amount: i64, key: String },
    Pay { from: AccountRef, to: AccountRef, amount: i64, key: String },
    Hold { account: AccountRef, amount: i64, key: String, expired: bool },
    Capture { hold: usize, amount: i64, to: AccountRef, key: String },
    Release { hold: usize },
}

/// What an operation did.
#[derive(Debug)]
enum Outcome {
    Moved { replayed: bool },
    Held { id: zmarket::ids::HoldId, replayed: bool },
    Released { status: HoldStatus, released: i64 },
    Short,
    Resolved,
    TooMuch,
    KeyReused,
}

#[derive(Debug, Clone)]
struct SimHold {
    id: zmarket::ids::HoldId,
    account: AccountRef,
    amount: i64,
    captured: i64,
    status: HoldStatus,
    expired: bool,
}

#[derive(Default)]
struct Model {
    balance: HashMap<AccountRef, i64>,
    held: HashMap<AccountRef, i64>,
    holds: Vec<SimHold>,
    done: Vec<Op>,
}

impl Model {
    fn available(&self, a: &AccountRef) -> i64 {
        self.balance.get(a).copied().unwrap_or(0) - self.held.get(a).copied().unwrap_or(0)
    }
    fn add(&mut self, a: &AccountRef, amount: i64) {
        *self.balance.entry(a.clone()).or_default() += amount;
    }
    fn hold_delta(&mut self, a: &AccountRef, amount: i64) {
        *self.held.entry(a.clone()).or_default() += amount;
    }
    /// What a sequential `op` must do, judged from the model before it runs.
    fn expect(&self, op: &Op) -> &'static str {
        match op {
            Op::Grant { .. } => "moved",
            Op::Pay { from, amount, .. } | Op::Hold { account: from, amount, .. } => {
                if self.available(from) >= *amount { "moved" } else { "short" }
            }
            Op::Capture { hold, amount, .. } => {
                let h = &self.holds[*hold];
                match h.status {
                    HoldStatus::Pending if h.amount - h.captured >= *amount => "moved",
                    HoldStatus::Pending => "too_much",
                    _ => "resolved",
                }
            }
            Op::Release { .. } => "released",
        }
    }
    /// Applies what the ledger reports it did.
    /// `strict`: the op ran alone, so a release must free exactly what the model says is left.
    fn apply(&mut self, op: &Op, out: &Outcome, seed: u64, strict: bool) {
        match (op, out) {
            (_, Outcome::Moved { replayed: true }) | (_, Outcome::Held { replayed: true, .. }) => {}
            (Op::Grant { to, amount, .. }, Outcome::Moved { .. }) => {
                self.add(&AccountRef::Issuance, -amount);
                self.add(to, *amount);
            }
            (Op::Pay { from, to, amount, .. }, Outcome::Moved { .. }) => {
                self.add(from, -amount);
                self.add(to, *amount);
            }
            (Op::Hold { account, amount, expired, .. }, Outcome::Held { id, .. }) => {
                self.hold_delta(account, *amount);
                self.holds.push(SimHold { id: id.clone(), account: account.clone(), amount: *amount, captured: 0, status: HoldStatus::Pending, expired: *expired });
            }
            (Op::Capture { hold, amount, to, .. }, Outcome::Moved { .. }) => {
                let payer = self.holds[*hold].account.clone();
                self.add(&payer, -amount);
                self.hold_delta(&payer, -amount);
                for s in market_splits(*amount, to.clone(), FEE) {
                    self.add(&s.account, s.amount);
                }
                let h = &mut self.holds[*hold];
                h.captured += amount;
                if h.captured == h.amount {
                    h.status = HoldStatus::Captured;
                }
            }
            (Op::Release { hold }, Outcome::Released { status, released }) => {
                let h = self.holds[*hold].clone();
                if h.status == HoldStatus::Pending && *status == HoldStatus::Released {
                    if strict {
                        assert_eq!(*released, h.amount - h.captured, "seed {seed}: release of {h:?}");
                    }
                    self.hold_delta(&h.account, -released);
                    self.holds[*hold].status = HoldStatus::Released;
                } else if strict {
                    assert_eq!(*status, h.status, "seed {seed}: a resolved hold changed on release");
                }
            }
            (_, Outcome::Short | Outcome::Resolved | Outcome::TooMuch | Outcome::KeyReused) => {}
            (op, out) => panic!("seed {seed}: {op:?} answered {out:?}"),
        }
    }
}

fn outcome(r: Result<Outcome, AppError>, seed: u64) -> Outcome {
    match r {
        Ok(o) => o,
        Err(AppError::Explained { msg: Msg::InsufficientBalance { .. }, .. }) => Outcome::Short,
        Err(AppError::Refused(Msg::HoldResolved)) => Outcome::Resolved,
        Err(AppError::Refused(Msg::CaptureExceedsHold { .. })) => Outcome::TooMuch,
        Err(AppError::Refused(Msg::IdempotencyKeyReused)) => Outcome::KeyReused,
        Err(e) => panic!("seed {seed}: unexpected error {e:?}"),
    }
}

async fn run(db: &DatabaseConnection, op: &Op, holds: &[SimHold], now: DateTime<Utc>) -> Result<Outcome, AppError> {
    match op.clone() {
        Op::Grant { to, amount, key } => ledger::grant(db, to, amount, key, "sim".into()).await.map(|p| Outcome::Moved { replayed: p.replayed }),
        Op::Pay { from, to, amount, key } => {
            let spec = TransferSpec { from, splits: vec![Split { account: to, amount }], key, reference: Reference::kind_only("sim"), memo: String::new(), metered: false };
            ledger::transfer(db, spec).await.map(|p| Outcome::Moved { replayed: p.replayed })
        }
        Op::Hold { account, amount, key, expired } => {
            let expires_at = if expired { now - Duration::seconds(1) } else { now + Duration::hours(1) };
            let spec = HoldSpec { account, amount, reference: Reference::new("sim", key.clone()), key, memo: String::new(), expires_at, burn_per_hour: 0 };
            ledger::hold(db, spec).await.map(|h| Outcome::Held { id: h.hold.id, replayed: h.replayed })
        }
        Op::Capture { hold, amount, to, key } => {
            let spec = CaptureSpec { hold_id: holds[hold].id.clone(), amount, splits: market_splits(amount, to, FEE), key, memo: String::new(), metered: true };
            ledger::capture(db, spec).await.map(|p| Outcome::Moved { replayed: p.replayed })
        }
        Op::Release { hold } => ledger::release(db, &holds[hold].id).await.map(|h| Outcome::Released { status: h.status, released: h.released }),
    }
}

fn random_op(rng: &mut StdRng, m: &Model, accounts: &[AccountRef], n: &mut u64) -> Op {
    *n += 1;
    let key = format!("sim:{n}");
    let pick = |rng: &mut StdRng| accounts[rng.random_range(0..accounts.len())].clone();
    let amount = |rng: &mut StdRng| rng.random_range(1..=2_000);
    let roll = rng.random_range(0..100);
    match roll {
        0..10 => Op::Grant { to: pick(rng), amount: rng.random_range(1_000..=20_000), key },
        10..35 => Op::Pay { from: pick(rng), to: pick(rng), amount: amount(rng), key },
        35..60 => Op::Hold { account: pick(rng), amount: amount(rng), key, expired: rng.random_bool(0.2) },
        60..85 if !m.holds.is_empty() => {
            let hold = rng.random_range(0..m.holds.len());
            let left = (m.holds[hold].amount - m.holds[hold].captured).max(1);
            // Mostly within what is left, sometimes more.
            let amount = if rng.random_bool(0.85) { rng.random_range(1..=left) } else { left + rng.random_range(1..=50) };
            Op::Capture { hold, amount, to: pick(rng), key }
        }
        85..100 if !m.holds.is_empty() => Op::Release { hold: rng.random_range(0..m.holds.len()) },
        _ => Op::Grant { to: pick(rng), amount: 5_000, key },
    }
}

/// The same key for another request: its amount changed.
fn altered(op: &Op) -> Option<Op> {
    let mut op = op.clone();
    match &mut op {
        Op::Grant { amount, .. } | Op::Pay { amount, .. } | Op::Hold { amount, .. } | Op::Capture { amount, .. } => *amount += 1,
        Op::Release { .. } => return None,
    }
    Some(op)
}

async fn check(db: &DatabaseConnection, m: &Model, accounts: &[AccountRef], seed: u64, step: usize) {
    if let Err(e) = zmarket::billing::verify::verify(db).await {
        panic!("seed {seed}, step {step}: {e}");
    }
    for a in accounts.iter().chain([AccountRef::Issuance, AccountRef::MarketFee].iter()) {
        let row = ledger::account(db, a).await.unwrap();
        let (balance, held) = row.map_or((0, 0), |r| (r.balance, r.held));
        let want = (m.balance.get(a).copied().unwrap_or(0), m.held.get(a).copied().unwrap_or(0));
        assert_eq!((balance, held), want, "seed {seed}, step {step}: account {a:?}");
        if *a != AccountRef::Issuance {
            assert!(balance - held >= 0, "seed {seed}, step {step}: {a:?} below zero");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_seeded_random_simulation_keeps_every_invariant() {
    let seed: u64 = std::env::var("SIM_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    let steps: usize = std::env::var("SIM_STEPS").ok().and_then(|s| s.parse().ok()).unwrap_or(1000);
    eprintln!("billing simulation seed: {seed} (replay with SIM_SEED={seed})");
    // No server: the scheduled hold expiry would race the model's own expiry steps.
    let (state, _dir, _database) = crate::common::TestApp::services_only(super::without_bonus).await;
    let db = state.db.clone();
    let mut rng = StdRng::seed_from_u64(seed);
    let accounts: Vec<AccountRef> =
        (0..4).map(|i| AccountRef::User(format!("sim-user-{i}").into())).chain([AccountRef::Company("sim-company".into())]).collect();
    let mut m = Model::default();
    let mut n = 0;
    let mut ops = 0;
    for step in 0..steps {
        let now = zmarket::db::now();
        match rng.random_range(0..100) {
            // A retry of something done before: the same answer, nothing moves.
            0..12 if !m.done.is_empty() => {
                let op = m.done[rng.random_range(0..m.done.len())].clone();
                let out = outcome(run(&db, &op, &m.holds, now).await, seed);
                assert!(matches!(out, Outcome::Moved { replayed: true } | Outcome::Held { replayed: true, .. }), "seed {seed}, step {step}: retry {op:?} gave {out:?}");
                ops += 1;
            }
            // The same key for another request: refused.
            12..16 if !m.done.is_empty() => {
                let op = m.done[rng.random_range(0..m.done.len())].clone();
                if let Some(other) = altered(&op) {
                    let out = outcome(run(&db, &other, &m.holds, now).await, seed);
                    assert!(matches!(out, Outcome::KeyReused), "seed {seed}, step {step}: {other:?} gave {out:?}");
                    ops += 1;
                }
            }
            16..22 => {
                let due = m.holds.iter().filter(|h| h.status == HoldStatus::Pending && h.expired).count() as u64;
                assert_eq!(ledger::expire_due(&db, now).await.unwrap(), due, "seed {seed}, step {step}: expiry");
                for i in 0..m.holds.len() {
                    let h = m.holds[i].clone();
                    if h.status == HoldStatus::Pending && h.expired {
                        m.hold_delta(&h.account, -(h.amount - h.captured));
                        m.holds[i].status = HoldStatus::Expired;
                    }
                }
                ops += 1;
            }
            // Concurrent callers, some of them sending the same request twice.
            22..40 => {
                let mut burst: Vec<Op> = (0..rng.random_range(2..=8)).map(|_| random_op(&mut rng, &m, &accounts, &mut n)).collect();
                if rng.random_bool(0.5) {
                    let twin = burst[0].clone();
                    burst.push(twin);
                }
                let holds = m.holds.clone();
                let tasks: Vec<_> = burst
                    .iter()
                    .cloned()
                    .map(|op| {
                        let (db, holds) = (db.clone(), holds.clone());
                        tokio::spawn(async move { run(&db, &op, &holds, now).await })
                    })
                    .collect();
                let mut results = Vec::new();
                for (op, t) in burst.iter().zip(tasks) {
                    results.push((op, outcome(t.await.unwrap(), seed)));
                }
                // Releases last: what they freed is what the captures before them left.
                results.sort_by_key(|(op, _)| matches!(op, Op::Release { .. }));
                let mut moved_keys = Vec::new();
                for (op, out) in &results {
                    m.apply(op, out, seed, false);
                    if matches!(out, Outcome::Moved { replayed: false } | Outcome::Held { replayed: false, .. }) {
                        moved_keys.push(format!("{op:?}"));
                        m.done.push((*op).clone());
                    }
                }
                let before = moved_keys.len();
                moved_keys.sort();
                moved_keys.dedup();
                assert_eq!(before, moved_keys.len(), "seed {seed}, step {step}: one request moved twice");
                ops += burst.len();
            }
            _ => {
                let op = random_op(&mut rng, &m, &accounts, &mut n);
                let expected = m.expect(&op);
                let out = outcome(run(&db, &op, &m.holds, now).await, seed);
                let got = match out {
                    Outcome::Moved { replayed: false } | Outcome::Held { replayed: false, .. } => "moved",
                    Outcome::Released { .. } => "released",
                    Outcome::Short => "short",
                    Outcome::TooMuch => "too_much",
                    Outcome::Resolved => "resolved",
                    _ => "other",
                };
                assert_eq!(got, expected, "seed {seed}, step {step}: {op:?} gave {out:?}");
                m.apply(&op, &out, seed, true);
                if got == "moved" {
                    m.done.push(op);
                }
                ops += 1;
            }
        }
        check(&db, &m, &accounts, seed, step).await;
    }
    eprintln!("billing simulation: {steps} steps, {ops} operations, seed {seed}");
    assert!(ops >= steps, "seed {seed}");
}
