//! The `cron` crate as an oracle, for the schedules where it and robfig/cron agree: UTC, day of month or day
//! of week a `*`, weekdays by name. README lists where the two differ; `differences` pins each one.

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support::cron as cron_support;

use std::str::FromStr;

use chrono::{DateTime, Datelike, Utc};
use kruise_schedule::cron::{Schedule, Zone};
use proptest::prelude::*;

fn oracle(expression: &str) -> cron::Schedule {
    cron::Schedule::from_str(expression).unwrap_or_else(|error| panic!("{expression}: {error}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn same_firing_times_as_the_cron_crate(
        (ours, theirs) in cron_support::oracle_schedule(),
        after in cron_support::instant(),
    ) {
        let schedule = Schedule::parse(&ours).unwrap();
        let oracle = oracle(&theirs);
        let mine: Vec<DateTime<Utc>> = schedule.iter_after(after, Zone::UTC).take(12).collect();
        let expected: Vec<DateTime<Utc>> = oracle.after(&after).take(mine.len()).collect();
        prop_assert_eq!(&mine, &expected, "{} after {}", ours, after);
        if mine.len() < 12 {
            // robfig gives up five years on; the cron crate keeps looking (until 2100).
            let last = mine.last().copied().unwrap_or(after);
            if let Some(beyond) = oracle.after(&last).next() {
                prop_assert!(beyond.year() > last.year() + 5, "{} after {}: {}", ours, last, beyond);
            }
        }
    }
}

/// Each semantic difference between robfig/cron (and so this crate) and the `cron` crate, pinned.
#[test]
fn differences() {
    let after: DateTime<Utc> = "2024-06-03T10:00:00Z".parse().unwrap();
    let ours = |text: &str| Schedule::parse(text).map(|s| s.next_after(after, Zone::UTC));
    let theirs = |text: &str| cron::Schedule::from_str(text).map(|s| s.after(&after).next());

    // Five fields here; the cron crate needs seconds first (six or seven fields).
    assert!(ours("0 12 * * *").is_ok());
    assert!(theirs("0 12 * * *").is_err());

    // Weekday numbers: 0-6 from Sunday here (7 rejected), 1-7 from Sunday there.
    assert!(ours("0 12 * * 7").is_err());
    assert_eq!(ours("0 12 * * 1").unwrap(), theirs("0 0 12 * * 2").unwrap());

    // Day of month and day of week both restricted: either here, both there.
    let either = ours("0 12 13 * 5").unwrap().unwrap(); // the 13th or a Friday
    assert_eq!(either.to_rfc3339(), "2024-06-07T12:00:00+00:00"); // Friday the 7th
    let both = theirs("0 0 12 13 * 6").unwrap().unwrap(); // Friday the 13th
    assert_eq!(both.to_rfc3339(), "2024-09-13T12:00:00+00:00");

    // `*/1` keeps the star here (both day rules must match), and `*-5` is `*`; the cron crate rejects the
    // second.
    assert!(ours("*-5 * * * *").is_ok());
    assert!(theirs("0 *-5 * * * *").is_err());

    // Empty list items are dropped here and rejected there.
    assert!(ours("1,,2 * * * *").is_ok());
    assert!(theirs("0 1,,2 * * * *").is_err());

    // Steps larger than the field are fine here (`0/100` is `0`), rejected there.
    assert!(ours("0/100 * * * *").is_ok());
    assert!(theirs("0 0/100 * * * *").is_err());

    // `?` is allowed in every field here, only in the day fields there.
    assert!(ours("? ? ? ? ?").is_ok());
    assert!(theirs("0 ? * * * *").is_err());

    // Names: three letters only here; the cron crate also takes full names.
    assert!(ours("0 0 * * monday").is_err());
    assert!(theirs("0 0 0 * * monday").is_ok());
    // A named weekday with a step: fine here (`MON/2` is MON-SAT/2), rejected there.
    assert!(ours("0 0 * * MON/2").is_ok());
    assert!(theirs("0 0 0 * * MON/2").is_err());

    // Go number syntax: `+5` is 5 here.
    assert!(ours("+5 * * * *").is_ok());
    assert!(theirs("0 +5 * * * *").is_err());

    // Descriptors: @annually, @midnight and @every exist only here.
    for descriptor in ["@annually", "@midnight", "@every 1h"] {
        assert!(ours(descriptor).is_ok(), "{descriptor}");
        assert!(theirs(descriptor).is_err(), "{descriptor}");
    }

    // Zone prefixes exist only here.
    assert!(ours("TZ=UTC 0 12 * * *").is_ok());
    assert!(theirs("TZ=UTC 0 0 12 * * *").is_err());

    // The cron crate stops at 2100; robfig has no year limit, only a five-year search horizon.
    let late: DateTime<Utc> = "2100-12-31T12:00:00Z".parse().unwrap();
    assert_eq!(
        Schedule::parse("0 0 * * *")
            .unwrap()
            .next_after(late, Zone::UTC),
        Some("2101-01-01T00:00:00Z".parse().unwrap())
    );
    assert_eq!(oracle("0 0 0 * * *").after(&late).next(), None);
    // ... and the horizon: nothing within five years is `None` here, the cron crate looks further.
    let leap: DateTime<Utc> = "2096-03-01T00:00:00Z".parse().unwrap();
    assert_eq!(
        Schedule::parse("0 0 29 2 *")
            .unwrap()
            .next_after(leap, Zone::UTC),
        None
    );

    // Across a fall-back the cron crate can answer an instant before the one asked about; robfig never does.
    let new_york = chrono_tz::America::New_York;
    let second_one_thirty: DateTime<Utc> = "2023-11-05T06:30:00Z".parse().unwrap(); // 01:30 EST
    let theirs = oracle("0 45 1 * * *")
        .after(&second_one_thirty.with_timezone(&new_york))
        .next()
        .unwrap();
    assert!(theirs.with_timezone(&Utc) < second_one_thirty, "{theirs}");
    let ours = Schedule::parse("TZ=America/New_York 45 1 * * *")
        .unwrap()
        .next_after(second_one_thirty, Zone::UTC)
        .unwrap();
    assert_eq!(ours.to_rfc3339(), "2023-11-05T06:45:00+00:00"); // 01:45 EST
}
