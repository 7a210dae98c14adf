//! The rental meter's property (issues 29 and 39). For random sequences of the renter's wishes
//! (stop, start, restart, suspend, resume), the box's reports and acknowledgements (done, failed,
//! not yet), the app crashing or being started by hand on the box, silences longer than
//! `offline_after_secs`, offline sweeps and meter runs, the seconds charged never exceed the
//! seconds in which the renter wanted the app running (`desired = running`), the box's last
//! report said it was running, and the box was online (heard from within `offline_after_secs`);
//! and they fall short of the seconds in which, besides, the market showed it `running` within
//! its paid time by at most one heartbeat interval per transition: where such a stretch ends the
//! charge stops at the box's last report before it, so what it may lose is the time from that
//! report to the stretch's end (itself at most `offline_after_secs`), and two seconds for the
//! requests' own time and the meter's rounding down. What the renter paid is the price of the
//! seconds charged, to the cent (the fraction carried), and the books balance.
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
    /// The market shows the installation `running`.
    shown: bool,
    /// The rental's paid time ends.
    ends: DateTime<Utc>,
    /// The time the three held with `shown`, within the paid time.
    sure: Duration,
    /// How many stretches of `sure` time ended.
    stretches: i64,
    /// What those ends may lose: from the box's last report before each to the end, and 2 s.
    slack: Duration,
}

impl Seen {
    /// Counts the time from the last event up to `until` under the state the event left.
    fn count(&mut self, until: DateTime<Utc>) {
        if let (true, true, Some(beat)) = (self.wanted, self.reported, self.last_beat) {
            let online_until = beat + Duration::seconds(OFFLINE_AFTER_SECS);
            let end = until.min(online_until);
            if end > self.since {
                self.total += end - self.since;
            }
            let end = end.min(self.ends);
            if self.shown && end > self.since {
                self.sure += end - self.since;
                // The box fell silent or the paid time ran out before the next event.
                if until > online_until || until > self.ends {
                    self.end_stretch(until);
                }
            }
        }
    }

    /// A stretch of `sure` time ends at `at`: the time since the box's last report (counted at
    /// most to the box's going silent and the paid time's end) may go uncharged.
    fn end_stretch(&mut self, at: DateTime<Utc>) {
        if let Some(beat) = self.last_beat {
            let end = at.min(beat + Duration::seconds(OFFLINE_AFTER_SECS)).min(self.ends);
            self.slack += (end - beat).max(Duration::zero()) + Duration::seconds(2);
            self.stretches += 1;
        }
    }

    /// Whether `sure` time is counted now.
    fn sure_now(&self) -> bool {
        self.wanted && self.reported && self.shown
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

/// Whether the renter wants it running, whether the market shows it running, and the end of its
/// paid time.
async fn state(app: &TestApp, token: &str, id: &str) -> (bool, bool, DateTime<Utc>) {
    let d = get(app, token, id).await;
    let ends = d["rental"]["ends_at"].as_str().and_then(|e| DateTime::parse_from_rfc3339(e).ok()).map(|e| e.with_timezone(&Utc)).expect("ends_at");
    (d["desired"] == "running", d["status"] == "running", ends)
}

/// One random run; returns (charged seconds, seconds seen running while wanted and online).
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
    let (wanted, shown, ends) = state(app, &renter, &id).await;
    let mut seen =
        Seen { wanted, reported: false, last_beat: Some(before), since: before, total: Duration::zero(), shown, ends, sure: Duration::zero(), stretches: 0, slack: Duration::zero() };

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
                zmarket::devices::agent_api::mark_offline(&app.state.devices).await.unwrap();
            }
            // The meter.
            _ => meter(app).await,
        }
        let end = now();
        seen.count(end);
        let was_sure = seen.sure_now();
        let before = (seen.last_beat, seen.ends);
        if let Some(running) = beat {
            seen.reported = running;
            seen.last_beat = Some(end);
        }
        (seen.wanted, seen.shown, seen.ends) = state(app, &renter, &id).await;
        seen.since = start;
        if was_sure && !seen.sure_now() {
            // Ended by this event: measured from the report before it.
            let after = (seen.last_beat, seen.ends);
            (seen.last_beat, seen.ends) = before;
            seen.end_stretch(end);
            (seen.last_beat, seen.ends) = after;
        }
    }
    meter(app).await;
    // The last stretch ends here: charged up to the box's last report.
    let at = now();
    seen.count(at);
    if seen.sure_now() {
        seen.end_stretch(at);
    }

    let row = zmarket::db::entity::installations::Entity::find_by_id(id.clone()).one(&app.state.db).await.unwrap().unwrap();
    let charged = row.rent_seconds;
    let seen_secs = seen.total.num_milliseconds() as f64 / 1000.0;
    assert!(
        (charged as f64) <= seen_secs,
        "seed {seed}: charged {charged} seconds, but the app was seen running while wanted and online for only {seen_secs:.2}"
    );
    // At most one heartbeat interval per transition.
    let sure_secs = seen.sure.num_milliseconds() as f64 / 1000.0;
    let slack = seen.slack.num_milliseconds() as f64 / 1000.0;
    assert!(
        charged as f64 >= sure_secs - slack,
        "seed {seed}: charged {charged} seconds, but the market showed it running while wanted, reported and online for {sure_secs:.2} \
         in {} stretches, whose ends may lose {slack:.2}",
        seen.stretches
    );
    // What the renter paid is the price of those seconds to the cent, and the books balance.
    let billed = get(app, &renter, &id).await["rental"]["billed"].as_i64().unwrap();
    assert_eq!(billed, zmarket::apps::meter::cents(price, 0, charged), "seed {seed}");
    verified(app).await;
    (charged, seen_secs)
}

fn seeds() -> std::ops::RangeInclusive<u64> {
    match std::env::var("ZM_METER_SEEDS").ok().and_then(|s| s.split_once("..").map(|(a, b)| (a.parse().ok(), b.parse().ok()))) {
        Some((Some(a), Some(b))) => a..=b,
        _ => 1..=8,
    }
}

#[tokio::test]
async fn charged_seconds_stay_within_one_beat_per_transition_of_the_seconds_seen_running() {
    let _clock = CLOCK.lock().await;
    let app = market(|c| c.devices.offline_after_secs = OFFLINE_AFTER_SECS as u64).await;
    let mut charged_runs = 0;
    for seed in seeds() {
        let (charged, seen) = run(&app, seed).await;
        eprintln!("meter property, seed {seed}: charged {charged} seconds of {seen:.2} seen");
        charged_runs += usize::from(charged > 0);
    }
    // The runs exercise the meter: some of them are charged at all.
    assert!(charged_runs > 0, "no run was charged anything");
}
