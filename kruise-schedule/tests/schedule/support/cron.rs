//! Generators shared by the cron property and oracle tests (`cron_properties`, `cron_oracle`).

// Test code: each test file uses some of these; a panic is a failed test.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use chrono::{DateTime, Utc};
use kruise_schedule::cron::Zone;
use proptest::prelude::*;

/// One comma-separated part of a field: `*`, `?`, `n`, `a-b`, `a-b/s`, `n/s` or `*/s`.
fn part(min: u32, max: u32, question: bool) -> impl Strategy<Value = String> {
    let value = min..=max;
    prop_oneof![
        2 => Just("*".to_owned()),
        1 => Just(if question { "?" } else { "*" }.to_owned()),
        4 => value.clone().prop_map(|n| n.to_string()),
        3 => (value.clone(), value.clone()).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
        2 => (value.clone(), value.clone(), 1..=max.max(1))
            .prop_map(|(a, b, s)| format!("{}-{}/{s}", a.min(b), a.max(b))),
        2 => (value.clone(), 1..=max.max(1)).prop_map(|(n, s)| format!("{n}/{s}")),
        2 => (1..=max.max(1)).prop_map(|s| format!("*/{s}")),
    ]
}

fn field(min: u32, max: u32) -> impl Strategy<Value = String> {
    prop::collection::vec(part(min, max, true), 1..=3).prop_map(|parts| parts.join(","))
}

/// A valid five-field schedule in robfig's grammar (any day-of-month / day-of-week combination).
pub fn schedule() -> impl Strategy<Value = String> {
    (
        field(0, 59),
        field(0, 23),
        field(1, 31),
        field(1, 12),
        field(0, 6),
    )
        .prop_map(|(m, h, dom, mon, dow)| format!("{m} {h} {dom} {mon} {dow}"))
}

/// A schedule that usually fires often (so that walks stay short), with a zone prefix or not.
pub fn dense_schedule() -> impl Strategy<Value = String> {
    (
        field(0, 59),
        prop_oneof![Just("*".to_owned()), field(0, 23)],
        prop_oneof![3 => Just("*".to_owned()), 1 => field(1, 31)],
        prop_oneof![3 => Just("*".to_owned()), 1 => field(1, 12)],
        prop_oneof![3 => Just("*".to_owned()), 1 => field(0, 6)],
    )
        .prop_map(|(m, h, dom, mon, dow)| format!("{m} {h} {dom} {mon} {dow}"))
}

const DAY_NAMES: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
const MONTH_NAMES: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];

/// A day-of-week field both grammars read the same way: names (robfig counts weekdays from 0, the `cron`
/// crate from 1), named ranges with steps, and `*` with steps.
fn oracle_day_of_week() -> impl Strategy<Value = String> {
    let name = (0..7usize).prop_map(|day| DAY_NAMES[day].to_owned());
    let range = (0..7usize, 0..7usize, prop::option::of(1..=6u32)).prop_map(|(a, b, step)| {
        let (a, b) = (a.min(b), a.max(b));
        let range = format!("{}-{}", DAY_NAMES[a], DAY_NAMES[b]);
        step.map_or(range.clone(), |step| format!("{range}/{step}"))
    });
    let part = prop_oneof![name, range, (1..=6u32).prop_map(|s| format!("*/{s}"))];
    prop::collection::vec(part, 1..=2).prop_map(|parts| parts.join(","))
}

fn oracle_part(min: u32, max: u32) -> impl Strategy<Value = String> {
    let value = min..=max;
    prop_oneof![
        1 => Just("*".to_owned()),
        4 => value.clone().prop_map(|n| n.to_string()),
        3 => (value.clone(), value.clone()).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
        2 => (value.clone(), value.clone(), 1..=max).prop_map(|(a, b, s)| format!("{}-{}/{s}", a.min(b), a.max(b))),
        2 => (value.clone(), 1..=max).prop_map(|(n, s)| format!("{n}/{s}")),
        2 => (1..=max).prop_map(|s| format!("*/{s}")),
    ]
}

fn oracle_field(min: u32, max: u32) -> impl Strategy<Value = String> {
    prop::collection::vec(oracle_part(min, max), 1..=3).prop_map(|parts| parts.join(","))
}

fn oracle_month() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => oracle_field(1, 12),
        1 => (0..12usize).prop_map(|m| MONTH_NAMES[m].to_owned()),
    ]
}

/// A schedule both robfig's grammar and the `cron` crate accept with the same meaning: day of month or day
/// of week is `*` (the `cron` crate always requires both to match), names for weekdays, steps no larger
/// than the field. Returns the robfig form and the `cron` crate form (with a seconds field).
pub fn oracle_schedule() -> impl Strategy<Value = (String, String)> {
    let days = prop_oneof![
        (oracle_field(1, 31), Just("*".to_owned())),
        (Just("*".to_owned()), oracle_day_of_week()),
        (Just("*".to_owned()), Just("*".to_owned())),
    ];
    (
        oracle_field(0, 59),
        oracle_field(0, 23),
        days,
        oracle_month(),
    )
        .prop_map(|(m, h, (dom, dow), mon)| {
            (
                format!("{m} {h} {dom} {mon} {dow}"),
                format!("0 {m} {h} {dom} {mon} {dow}"),
            )
        })
}

/// Zones with one-hour, half-hour and no daylight-saving shifts, one that once skipped midnight, and a fixed
/// offset.
pub fn zone() -> impl Strategy<Value = Zone> {
    prop_oneof![
        Just(Zone::UTC),
        Just(Zone::Named(chrono_tz::America::New_York)),
        Just(Zone::Named(chrono_tz::Europe::Berlin)),
        Just(Zone::Named(chrono_tz::Australia::Lord_Howe)),
        Just(Zone::Named(chrono_tz::America::Sao_Paulo)),
        Just(Zone::Named(chrono_tz::Asia::Shanghai)),
        Just(Zone::Named(chrono_tz::Asia::Kathmandu)),
        Just(Zone::Fixed(
            chrono::FixedOffset::west_opt(9 * 3600 + 30 * 60).unwrap()
        )),
    ]
}

/// An instant between 1995 and 2045, often within a few days of a March, April, October or November
/// weekend (where the daylight-saving switches are).
pub fn instant() -> impl Strategy<Value = DateTime<Utc>> {
    let any = (788_918_400i64..2_366_841_600).boxed();
    let near_switch = (
        1995i32..2045,
        prop::sample::select(vec![3u32, 4, 10, 11]),
        1u32..=31,
        0i64..86_400 * 3,
    )
        .prop_map(|(year, month, day, seconds)| {
            let date = chrono::NaiveDate::from_ymd_opt(year, month, day.min(28)).unwrap();
            date.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp() + seconds
        })
        .boxed();
    prop_oneof![any, near_switch].prop_map(|seconds| DateTime::from_timestamp(seconds, 0).unwrap())
}
