//! Fuzzes the cron parser: any string either parses or returns an error that renders; a parsed schedule
//! answers `next_after` (strictly later) and `missed_runs` in a fixed, a daylight-saving and a half-hour
//! zone without panicking.

#![no_main]

use chrono::{DateTime, Duration, Utc};
use kruise_schedule::cron::{Schedule, Zone};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let schedule = match Schedule::parse(text) {
        Ok(schedule) => schedule,
        Err(error) => {
            assert!(!error.to_string().is_empty());
            return;
        }
    };
    let Some(after) = DateTime::<Utc>::from_timestamp(1_710_054_000, 0) else {
        return;
    };
    for zone in [
        Zone::UTC,
        Zone::Named(chrono_tz::America::New_York),
        Zone::Named(chrono_tz::Australia::Lord_Howe),
    ] {
        let mut previous = after;
        for next in schedule.iter_after(after, zone).take(3) {
            assert!(next > previous);
            previous = next;
        }
        let missed = schedule.missed_runs(after, after + Duration::days(2), zone);
        assert!(missed.count == 0 || missed.most_recent.is_some());
    }
});
