//! The fast paths against the literal ones, and firing times against the fields: `next_after` (arithmetic
//! with a fallback) against robfig's walk step for step, firing times in fixed-offset zones against a
//! minute-by-minute scan of the fields, the fixed-offset arithmetic against such a scan, and the missed-run
//! count against following the chain with the walk.

// Test code: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use proptest::prelude::*;

use super::civil::{Civil, DAY};
use super::fields::Fields;
use super::missed::missed_seconds;
use super::schedule::{Kind, Schedule, next_spec};
use super::zone::Zone;
use super::{fixed, walk};

fn part(min: u32, max: u32) -> impl Strategy<Value = String> {
    prop_oneof![
        2 => Just("*".to_owned()),
        4 => (min..=max).prop_map(|n| n.to_string()),
        3 => (min..=max, min..=max).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
        2 => (min..=max, 1..=max).prop_map(|(n, s)| format!("{n}/{s}")),
        2 => (1..=max).prop_map(|s| format!("*/{s}")),
    ]
}

fn field(min: u32, max: u32) -> impl Strategy<Value = String> {
    prop::collection::vec(part(min, max), 1..=3).prop_map(|parts| parts.join(","))
}

fn schedule() -> impl Strategy<Value = String> {
    (
        field(0, 59),
        field(0, 23),
        prop_oneof![2 => Just("*".to_owned()), 1 => field(1, 31)],
        prop_oneof![2 => Just("*".to_owned()), 1 => field(1, 12)],
        prop_oneof![2 => Just("*".to_owned()), 1 => field(0, 6)],
    )
        .prop_map(|(m, h, dom, mon, dow)| format!("{m} {h} {dom} {mon} {dow}"))
}

fn zone() -> impl Strategy<Value = Zone> {
    prop::sample::select(vec![
        Zone::UTC,
        Zone::Named(chrono_tz::America::New_York),
        Zone::Named(chrono_tz::Europe::Berlin),
        Zone::Named(chrono_tz::Australia::Lord_Howe),
        Zone::Named(chrono_tz::America::Sao_Paulo),
        Zone::Named(chrono_tz::America::Santiago),
        Zone::Named(chrono_tz::Asia::Gaza),
        // An offset with seconds (-00:44:30) until 1972.
        Zone::Named(chrono_tz::Africa::Monrovia),
        Zone::Fixed(chrono::FixedOffset::east_opt(5 * 3600 + 45 * 60).unwrap()),
    ])
}

/// Instants from 1900 to 2100, half of them within two days of a daylight-saving switch month boundary.
fn instant() -> impl Strategy<Value = i64> {
    prop_oneof![
        -2_208_988_800i64..4_102_444_800,
        (
            1900i64..2100,
            prop::sample::select(vec![3i64, 4, 9, 10, 11]),
            0i64..40 * DAY
        )
            .prop_map(|(year, month, offset)| super::civil::wall_from_fields(
                year, month, 1, 0, 0, 0
            ) + offset),
    ]
}

fn fields(text: &str) -> Fields {
    match Schedule::parse(text).unwrap().kind() {
        Kind::Spec { fields, .. } => fields,
        Kind::Every { .. } => panic!("{text} is not five fields"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn next_after_is_the_walk(text in schedule(), zone in zone(), after in instant()) {
        let fields = fields(&text);
        prop_assert_eq!(
            next_spec(&fields, zone, after),
            walk::next_after(&fields, zone, after),
            "{} in {} after {}", text, zone, after
        );
    }

    /// Where the offset does not change, every firing time matches the fields and nothing between two
    /// firing times does.
    #[test]
    fn consistent_with_matching(
        text in schedule(),
        zone in prop::sample::select(vec![
            Zone::UTC,
            Zone::Named(chrono_tz::Asia::Shanghai),
            Zone::Fixed(chrono::FixedOffset::west_opt(9 * 3600 + 30 * 60).unwrap()),
        ]),
        after in 0i64..4_102_444_800,
    ) {
        let fields = fields(&text);
        let mut previous = after;
        for _ in 0..5 {
            let Some(next) = next_spec(&fields, zone, previous) else { break };
            prop_assert!(next > previous);
            prop_assert!(fields.matches(&zone.civil(next)), "{} in {}: {}", text, zone, next);
            // No whole minute strictly between matches (checked up to two days).
            let first_minute = previous + 1 + (60 - (previous + 1).rem_euclid(60)) % 60;
            let skipped = (0..2 * 1440)
                .map(|minute| first_minute + minute * 60)
                .take_while(|&minute| minute < next)
                .find(|&minute| fields.matches(&zone.civil(minute)));
            prop_assert_eq!(skipped, None, "{} in {}", text, zone);
            previous = next;
        }
    }

    #[test]
    fn arithmetic_is_a_scan(text in schedule(), from in instant()) {
        let fields = fields(&text);
        let year = Civil::from_wall(from).year;
        let found = fixed::next_at_or_after(&fields, from, year + 5);
        // Scan three days minute by minute.
        let first = from + (60 - from.rem_euclid(60)) % 60;
        let scanned = (0..3 * 1440)
            .map(|minute| first + minute * 60)
            .find(|&wall| fields.matches(&Civil::from_wall(wall)));
        match scanned {
            Some(wall) => prop_assert_eq!(found, Some(wall), "{}", text),
            None => prop_assert!(found.is_none_or(|wall| wall >= first + 3 * DAY), "{}", text),
        }
        let to = from + 3 * DAY;
        let count = (0..=3 * 1440)
            .map(|minute| first + minute * 60)
            .filter(|&wall| wall <= to && fields.matches(&Civil::from_wall(wall)))
            .count() as u64;
        prop_assert_eq!(fixed::count_between(&fields, from - 1, to), count, "{}", text);
    }

    #[test]
    fn missed_runs_follow_the_walk(
        text in schedule(),
        zone in zone(),
        earliest in instant(),
        span in 0i64..6 * DAY,
    ) {
        let fields = fields(&text);
        let schedule = Schedule::parse(&text).unwrap();
        let now = earliest + span;
        let (mut at, mut last, mut count) = (earliest, None, 0u64);
        while let Some(run) = walk::next_after(&fields, zone, at) {
            if run > now || count > 10_000 {
                break;
            }
            (at, last, count) = (run, Some(run), count + 1);
        }
        if count <= 10_000 {
            prop_assert_eq!(missed_seconds(&schedule, earliest, now, zone), (last, count), "{} in {}", text, zone);
        }
    }
}
