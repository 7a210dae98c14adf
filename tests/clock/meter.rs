//! The rental meter's property (issue 29). For random sequences of the renter's wishes (stop,
//! start, restart, suspend, resume), the box's reports and acknowledgements (done, failed, not
//! yet), the app crashing or being started by hand on the box, silences longer than
//! `offline_after_secs`, offline sweeps and meter runs, the minutes charged never exceed the
//! minutes in which the renter wanted the app running (`desired = running`), the box's last
//! report said it was running, and the box was online (heard from within `offline_after_secs`).
//!
//! Each run is one seed; `ZM_METER_SEEDS=first..last` replays others (a failure prints its seed).

use chrono::{DateTime, Duration, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sea_orm::EntityTrait;
use serde_json::{Value, json};
use zmarket::coins::Coins;
use zmarket::db::now;

use crate::boxes::{act, bound_device, box_spec, get, heartbeat, rent, verified};
use crate::common::*;
use crate::{CLOCK, market, meter, pass};

const OFFLINE_AFTER_SECS: i64 = 90;
const STEPS: usize = 120;

/// What the renter could have been charged for, as the test saw it happen. Each event's own
/// duration (a request) counts on both sides of it, so the figure errs on the generous side.
struct Seen {
    /// The installation's `desired` is `running`.
    wanted: bool,
    /// The box's last report said `running`.
    reported: bool,
    /// When the box was last heard from.
    last_beat: Option<DateTime<Utc>>,
    /// The start of the state above.
    since: DateTime<Utc>,
    /// The time the three held together.
    total: Duration,
}

impl Seen {
    /// Counts the time from the last event up to `until` under the state the event left.
    fn count(&mut self, until: DateTime<Utc>) {
        if let (true, true, Some(beat)) = (self.wanted, self.reported, self.last_beat) {
            let end = until.min(beat + Duration::seconds(OFFLINE_AFTER_SECS));
            if end > self.since {
                self.total += end - self.since;
            }
        }
    }
}

/// The provider's box as its agent behaves: it carries out commands (or fails them, or gets to
/// them later), reports the app's actual state with each beat, and its app may crash or be
/// started by hand.
struct Agent {
    secret: String,
    installation: String,
    /// The app's actual state on the box: `None` before the install and after the removal.
    actual: Option<&'static str>,
    /// The commands the last beat answered.
    answered: Vec<Value>,
}

impl Agent {
    /// One heartbeat: acknowledges some of the commands answered last time (having carried them
    /// out or not), reports the app's state. Returns whether it reported the app running.
    async fn beat(&mut self, app: &TestApp, rng: &mut StdRng) -> bool {
        let mut acks = Vec::new();
        for c in std::mem::take(&mut self.answered) {
            let roll = rng.random_range(0..100);
            if roll < 25 {
                continue; // not yet: sent again with this beat's answer
            }
            let ok = roll >= 40;
            if ok {
                self.actual = match c["kind"].as_str().unwrap_or("") {
                    "app_install" | "app_start" | "app_restart" | "app_resume" => Some("running"),
                    "app_stop" => Some("stopped"),
                    "app_suspend" => Some("suspended"),
                    "app_uninstall" => None,
                    _ => self.actual,
                };
            }
            acks.push(json!({"id": c["id"], "ok": ok, "error": (!ok).then_some("it did not work")}));
        }
        let reports = match self.actual {
            Some(status) => json!([{"id": self.installation, "status": status}]),
            None => json!([]),
        };
        let (s, b) = heartbeat(app, &self.secret, json!({"installations": reports, "acks": acks})).await;
        assert_eq!(s, 200, "{b}");
        self.answered = b["data"]["commands"].as_array().cloned().unwrap_or_default();
        self.actual == Some("running")
    }
}

async fn desired(app: &TestApp, token: &str, id: &str) -> bool {
    get(app, token, id).await["desired"] == "running"
}

/// One random run; returns (charged minutes, minutes seen running while wanted and online).
async fn run(app: &TestApp, seed: u64) -> (i64, f64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let renter_email = format!("renter{seed}@example.com");
    let renter = token_of(&app.signed_in(&renter_email).await);
    let provider = token_of(&app.signed_in(&format!("provider{seed}@example.com")).await);
    zmarket::billing::issuance::grant_by_email(&app.state.db, &renter_email, Coins::from_cents(1_000_000), "test").await.unwrap();
    let (dev, secret) = bound_device(app, &provider, "Z-BOX", box_spec(8, 0)).await;
    let price = [600, 61, 3600, 1][rng.random_range(0..4)];
    let (s, b) = app.put_json(&format!("/api/ebs/v2/devices/{dev}/sharing"), &json!({"mode": "manual", "rentable": true, "price_per_hour": price}), &provider).await;
    assert_eq!(s, 200, "{b}");
    let hours = rng.random_range(1..=3);
    let before = now();
    let (s, b) = rent(app, &renter, "grafana", &dev, hours).await;
    assert_eq!(s, 200, "{b}");
    let id = b["data"]["id"].as_str().unwrap().to_string();
    let mut agent = Agent { secret, installation: id.clone(), actual: None, answered: Vec::new() };
    let mut seen = Seen { wanted: desired(app, &renter, &id).await, reported: false, last_beat: Some(before), since: before, total: Duration::zero() };

    for _ in 0..STEPS {
        // Time passes first (no event), then one event between `start` and `end`: the time up
        // to `end` counts under the state before it, the state after it counts from `start`.
        match rng.random_range(0..100) {
            0..40 => pass(Duration::seconds(rng.random_range(0..20))),
            40..85 => pass(Duration::seconds(rng.random_range(20..OFFLINE_AFTER_SECS))),
            _ => pass(Duration::seconds(rng.random_range(OFFLINE_AFTER_SECS..2400))),
        }
        let start = now();
        let mut beat = None;
        match rng.random_range(0..100) {
            // The box beats.
            0..45 => beat = Some(agent.beat(app, &mut rng).await),
            // The renter asks for something (refused when the state does not allow it).
            45..70 => {
                let action = ["stop", "start", "start", "restart", "suspend", "resume", "resume"][rng.random_range(0..7)];
                act(app, &renter, &id, action).await;
            }
            // On the box, by itself: the app crashes, or its owner starts it by hand (the market
            // hears of it with the next beat).
            70..78 => {
                agent.actual = match agent.actual {
                    Some("running") => Some("failed"),
                    Some(_) => Some("running"),
                    None => None,
                };
            }
            // The offline sweep.
            78..85 => {
                zmarket::devices::protocol::mark_offline(&app.state.devices).await.unwrap();
            }
            // The meter.
            _ => meter(app).await,
        }
        let end = now();
        seen.count(end);
        if let Some(running) = beat {
            seen.reported = running;
            seen.last_beat = Some(end);
        }
        seen.wanted = desired(app, &renter, &id).await;
        seen.since = start;
    }
    meter(app).await;
    seen.count(now());

    let row = zmarket::db::entity::installations::Entity::find_by_id(id.clone()).one(&app.state.db).await.unwrap().unwrap();
    let charged = row.rent_minutes;
    let seen_minutes = seen.total.num_milliseconds() as f64 / 60_000.0;
    assert!(
        (charged as f64) <= seen_minutes,
        "seed {seed}: charged {charged} minutes, but the app was seen running while wanted and online for only {seen_minutes:.2}"
    );
    // What the renter paid is the price of those minutes, and the books balance.
    let billed = get(app, &renter, &id).await["rental"]["billed"].as_i64().unwrap();
    assert_eq!(billed, zmarket::apps::meter::cost(price, 0, charged), "seed {seed}");
    verified(app).await;
    (charged, seen_minutes)
}

fn seeds() -> std::ops::RangeInclusive<u64> {
    match std::env::var("ZM_METER_SEEDS").ok().and_then(|s| s.split_once("..").map(|(a, b)| (a.parse().ok(), b.parse().ok()))) {
        Some((Some(a), Some(b))) => a..=b,
        _ => 1..=8,
    }
}

#[tokio::test]
async fn charged_minutes_never_exceed_the_minutes_seen_running_while_wanted_and_online() {
    let _clock = CLOCK.lock().await;
    let app = market(|c| c.devices.offline_after_secs = OFFLINE_AFTER_SECS as u64).await;
    let mut charged_runs = 0;
    for seed in seeds() {
        let (charged, seen) = run(&app, seed).await;
        eprintln!("meter property, seed {seed}: charged {charged} minutes of {seen:.2} seen");
        charged_runs += usize::from(charged > 0);
    }
    // The runs exercise the meter: some of them are charged at all.
    assert!(charged_runs > 0, "no run was charged anything");
}
