//! When an AdvancedCronJob runs across a daylight-saving change: the next runs of a schedule in a time zone
//! (the AdvancedCronJob's `spec.schedule` and `spec.timeZone`), in local and UTC time, with the wall time that
//! happens twice (fall back) and the one that does not happen at all (spring forward).
//!
//! ```text
//! cargo run -p kruise-schedule --example cron_dst
//! cargo run -p kruise-schedule --example cron_dst -- '30 2 * * *' Europe/Berlin 2024-10-25T00:00:00Z 4
//! ```
//!
//! Arguments: `SCHEDULE TIME_ZONE AFTER [COUNT]` (AFTER in RFC 3339, COUNT 4 by default; the samples show 5). Without arguments it
//! shows `30 2 * * *` in `Europe/Berlin` around 2024-10-27 (02:30 happens twice) and in `America/New_York`
//! around 2024-03-10 (02:30 does not exist). An invalid argument ends it with exit code 1 and a one-line
//! `error: ...` naming the argument.

use std::error::Error;
use std::process::ExitCode;

use chrono::{DateTime, Days, FixedOffset, Utc};
use kruise_schedule::cron::{Schedule, Zone};

/// One preview: a schedule, its time zone, where to start and how many runs to show.
struct Preview {
    schedule: String,
    time_zone: String,
    after: DateTime<Utc>,
    count: usize,
}

/// Runs the example; invalid input ends it with exit code 1 and a one-line message on standard error.
fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let previews = match arguments.as_slice() {
        [] => vec![
            Preview::new("30 2 * * *", "Europe/Berlin", "2024-10-25T00:00:00Z", 5)?,
            Preview::new("30 2 * * *", "America/New_York", "2024-03-08T00:00:00Z", 5)?,
        ],
        [schedule, time_zone, after] => vec![Preview::new(schedule, time_zone, after, 4)?],
        [schedule, time_zone, after, count] => {
            let count = count
                .parse()
                .map_err(|error| format!("COUNT {count:?}: {error}"))?;
            vec![Preview::new(schedule, time_zone, after, count)?]
        }
        _ => return Err("usage: cron_dst [SCHEDULE TIME_ZONE AFTER [COUNT]]".into()),
    };
    for (index, preview) in previews.iter().enumerate() {
        if index > 0 {
            println!();
        }
        preview.print()?;
    }
    Ok(())
}

impl Preview {
    fn new(
        schedule: &str,
        time_zone: &str,
        after: &str,
        count: usize,
    ) -> Result<Self, Box<dyn Error>> {
        let after = after
            .parse()
            .map_err(|error| format!("AFTER {after:?} is not an RFC 3339 time: {error}"))?;
        Ok(Self {
            schedule: schedule.to_owned(),
            time_zone: time_zone.to_owned(),
            after,
            count,
        })
    }

    fn print(&self) -> Result<(), Box<dyn Error>> {
        // The AdvancedCronJob controller reads `spec.schedule` with `spec.timeZone` like this: the zone
        // becomes a `TZ=` prefix unless the schedule names one itself. Upstream only logs a zone that does not
        // load; this preview refuses it.
        let resolved = Schedule::parse_with_time_zone(&self.schedule, Some(&self.time_zone))
            .map_err(|error| format!("SCHEDULE {:?}: {error}", self.schedule))?;
        if let Some(unknown) = resolved.ignored_time_zone {
            return Err(format!("TIME_ZONE: {unknown}").into());
        }
        // `local` is the controller's own zone (Go's `time.Local`), used only by schedules without a zone.
        let local = Zone::UTC;
        let zone = resolved.schedule.zone(local);
        println!(
            "{:?} in {zone}, the next {} runs after {}:",
            self.schedule,
            self.count,
            self.after.to_rfc3339()
        );
        let mut previous: Option<DateTime<FixedOffset>> = None;
        let mut previous_day_gap: Option<i64> = None;
        for run in resolved
            .schedule
            .iter_after(self.after, local)
            .take(self.count)
        {
            let wall = wall_clock(zone, run);
            let note = match previous {
                None => String::new(),
                Some(before) => {
                    let day_gap = (wall.date_naive() - before.date_naive()).num_days();
                    let note = explain(before, wall, day_gap, previous_day_gap);
                    previous_day_gap = Some(day_gap);
                    note
                }
            };
            println!(
                "  {}  =  {} UTC{note}",
                wall.format("%Y-%m-%d %H:%M:%S %:z"),
                run.format("%Y-%m-%d %H:%M:%S")
            );
            previous = Some(wall);
        }
        Ok(())
    }
}

/// What is unusual about a run at `wall` after one at `before`, `day_gap` local days later, when the two runs
/// before were `previous_day_gap` days apart.
fn explain(
    before: DateTime<FixedOffset>,
    wall: DateTime<FixedOffset>,
    day_gap: i64,
    previous_day_gap: Option<i64>,
) -> String {
    if wall.naive_local() == before.naive_local() {
        return "  <- the same wall time again: the clocks went back, this hour happens twice"
            .to_owned();
    }
    // A schedule that ran every N days and now waits N + 1 days lost a run to a wall time that did not exist.
    if let Some(usual) = previous_day_gap.filter(|&usual| usual > 0 && day_gap == usual + 1) {
        let expected = u64::try_from(usual)
            .ok()
            .and_then(|days| before.date_naive().checked_add_days(Days::new(days)));
        if let Some(expected) = expected {
            return format!(
                "  <- no run on {expected}: the clocks went forward over this wall time"
            );
        }
    }
    if wall.offset() != before.offset() {
        return format!("  <- UTC offset {} -> {}", before.offset(), wall.offset());
    }
    String::new()
}

/// `instant` on the clocks of `zone`.
fn wall_clock(zone: Zone, instant: DateTime<Utc>) -> DateTime<FixedOffset> {
    match zone {
        Zone::Named(tz) => instant.with_timezone(&tz).fixed_offset(),
        Zone::Fixed(offset) => instant.with_timezone(&offset),
    }
}
