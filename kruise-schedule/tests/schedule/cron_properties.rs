//! Properties of the cron scheduler over random schedules, zones and instants: firing times move strictly
//! forward, wall times that do not exist never fire, wall times that happen twice fire twice, and the
//! missed-run count is the length of the chain.

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support::cron as cron_support;

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Timelike, Utc, Weekday};
use chrono_tz::Tz;
use kruise_schedule::cron::{Schedule, Zone};
use proptest::prelude::*;

/// The `n`-th (1-based) `weekday` of a month, or the last one for `n == 0`.
fn nth_weekday(year: i32, month: u32, weekday: Weekday, n: u32) -> NaiveDate {
    if n == 0 {
        let last = NaiveDate::from_ymd_opt(year + i32::from(month == 12), month % 12 + 1, 1)
            .unwrap()
            - Duration::days(1);
        let back = (7 + last.weekday().num_days_from_sunday() - weekday.num_days_from_sunday()) % 7;
        return last - Duration::days(i64::from(back));
    }
    NaiveDate::from_weekday_of_month_opt(year, month, weekday, n as u8).unwrap()
}

/// The firing times of `schedule` whose wall date in `tz` is `date`.
fn fires_on(schedule: &str, tz: Tz, date: NaiveDate) -> Vec<DateTime<Tz>> {
    let schedule = Schedule::parse(schedule).unwrap();
    let from = tz
        .from_local_datetime(&(date - Duration::days(1)).and_hms_opt(12, 0, 0).unwrap())
        .earliest()
        .unwrap()
        .with_timezone(&Utc);
    schedule
        .iter_after(from, Zone::UTC)
        .map(|time| time.with_timezone(&tz))
        .skip_while(|time| time.date_naive() < date)
        .take_while(|time| time.date_naive() == date)
        .collect()
}

/// (zone, spring-forward date, fall-back date, first skipped wall hour, repeated wall hour).
fn switches(year: i32) -> [(Tz, NaiveDate, NaiveDate, u32, u32); 2] {
    [
        (
            chrono_tz::America::New_York,
            nth_weekday(year, 3, Weekday::Sun, 2),
            nth_weekday(year, 11, Weekday::Sun, 1),
            2,
            1,
        ),
        (
            chrono_tz::Europe::Berlin,
            nth_weekday(year, 3, Weekday::Sun, 0),
            nth_weekday(year, 10, Weekday::Sun, 0),
            2,
            2,
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn strictly_increasing(text in cron_support::schedule(), zone in cron_support::zone(), after in cron_support::instant()) {
        let schedule = Schedule::parse(&text).unwrap();
        let mut previous = after;
        for time in schedule.iter_after(after, zone).take(25) {
            prop_assert!(time > previous, "{} in {}: {} then {}", text, zone, previous, time);
            prop_assert_eq!(time.nanosecond(), 0);
            previous = time;
        }
    }

    #[test]
    fn prefix_and_local_zone_agree(text in cron_support::dense_schedule(), zone in cron_support::zone(), after in cron_support::instant()) {
        let local = Schedule::parse(&text).unwrap();
        let prefixed = Schedule::parse(&format!("TZ={zone} {text}"));
        // Fixed offsets have no name to put in a prefix.
        if let (Zone::Named(_), Ok(prefixed)) = (zone, prefixed) {
            prop_assert_eq!(local.next_after(after, zone), prefixed.next_after(after, Zone::UTC));
        }
    }

    #[test]
    fn skipped_wall_times_never_fire(year in 2007i32..2038, minute in 0u32..60) {
        for (tz, spring, _, skipped, _) in switches(year) {
            let text = format!("TZ={tz} {minute} {skipped} * * *");
            prop_assert!(fires_on(&text, tz, spring).is_empty(), "{} on {}", text, spring);
            // The days around it fire at that wall time.
            for date in [spring - Duration::days(1), spring + Duration::days(1)] {
                let times = fires_on(&text, tz, date);
                prop_assert_eq!(times.len(), 1);
                prop_assert_eq!((times[0].hour(), times[0].minute()), (skipped, minute));
            }
        }
    }

    #[test]
    fn repeated_wall_times_fire_twice(year in 2007i32..2038, minute in 0u32..60) {
        for (tz, _, fall, _, repeated) in switches(year) {
            let text = format!("TZ={tz} {minute} {repeated} * * *");
            let times = fires_on(&text, tz, fall);
            prop_assert_eq!(times.len(), 2, "{} on {}: {:?}", text, fall, times);
            prop_assert_eq!(times[1] - times[0], Duration::hours(1));
            for time in times {
                prop_assert_eq!((time.hour(), time.minute()), (repeated, minute));
            }
        }
    }

    #[test]
    fn missed_runs_count_the_chain(
        text in cron_support::dense_schedule(),
        zone in cron_support::zone(),
        earliest in cron_support::instant(),
        span in 0i64..86_400 * 4,
    ) {
        let schedule = Schedule::parse(&text).unwrap();
        let now = earliest + Duration::seconds(span);
        let chain: Vec<DateTime<Utc>> = schedule
            .iter_after(earliest, zone)
            .take_while(|time| *time <= now)
            .take(20_000)
            .collect();
        if chain.len() < 20_000 {
            let missed = schedule.missed_runs(earliest, now, zone);
            prop_assert_eq!(missed.count, chain.len() as u64, "{} in {}", text, zone);
            prop_assert_eq!(missed.most_recent, chain.last().copied());
        }
    }
}

/// Lord Howe moves its clocks by half an hour: the skipped and repeated half hours behave the same way.
#[test]
fn half_hour_shifts() {
    let tz = chrono_tz::Australia::Lord_Howe;
    for year in 2010..2030 {
        let spring = nth_weekday(year, 10, Weekday::Sun, 1);
        let fall = nth_weekday(year, 4, Weekday::Sun, 1);
        for minute in 0..30 {
            assert!(
                fires_on(&format!("TZ={tz} {minute} 2 * * *"), tz, spring).is_empty(),
                "02:{minute:02} on {spring}"
            );
        }
        for minute in 30..60 {
            assert_eq!(
                fires_on(&format!("TZ={tz} {minute} 1 * * *"), tz, fall).len(),
                2,
                "01:{minute} on {fall}"
            );
        }
        for minute in 0..30 {
            assert_eq!(
                fires_on(&format!("TZ={tz} {minute} 1 * * *"), tz, fall).len(),
                1,
                "01:{minute:02} on {fall}"
            );
        }
    }
}
