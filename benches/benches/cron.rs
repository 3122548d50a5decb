// criterion's macros generate undocumented items.
#![allow(missing_docs)]
//! Cost of the cron scheduler: parsing, `next_after` for typical and sparse schedules (in UTC and in a
//! daylight-saving zone), and the missed-run computation for a per-minute schedule last run a year ago.

use std::hint::black_box;

use chrono::{DateTime, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use kruise_schedule::cron::{Schedule, Zone};

fn instant(text: &str) -> DateTime<Utc> {
    text.parse().unwrap_or_default()
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("cron parse");
    for text in [
        "*/5 * * * *",
        "CRON_TZ=Europe/Berlin 0 9-17 * jan-jun mon-fri",
        "@every 1h30m",
    ] {
        group.bench_function(text, |b| b.iter(|| Schedule::parse(black_box(text))));
    }
    group.finish();
}

fn next_after(c: &mut Criterion) {
    let after = instant("2024-06-12T10:17:23.5Z");
    let new_york = Zone::Named(chrono_tz::America::New_York);
    let mut group = c.benchmark_group("cron next_after");
    let cases = [
        ("typical */5 * * * * UTC", "*/5 * * * *", Zone::UTC),
        ("typical 0 9 * * 1-5 UTC", "0 9 * * 1-5", Zone::UTC),
        (
            "typical */5 * * * * America/New_York",
            "*/5 * * * *",
            new_york,
        ),
        (
            "typical 30 2 * * * America/New_York",
            "30 2 * * *",
            new_york,
        ),
        ("typical @every 1h", "@every 1h", Zone::UTC),
        ("sparse 0 0 29 2 * UTC", "0 0 29 2 *", Zone::UTC),
        ("sparse 0 0 29 2 * America/New_York", "0 0 29 2 *", new_york),
    ];
    for (name, text, zone) in cases {
        let Ok(schedule) = Schedule::parse(text) else {
            continue;
        };
        group.bench_function(name, |b| {
            b.iter(|| black_box(&schedule).next_after(black_box(after), zone));
        });
    }
    // Next to a daylight-saving switch the exact walk runs.
    if let Ok(schedule) = Schedule::parse("*/5 * * * *") {
        let before_switch = instant("2024-03-10T06:58:30Z");
        group.bench_function("near a switch */5 * * * * America/New_York", |b| {
            b.iter(|| black_box(&schedule).next_after(black_box(before_switch), new_york));
        });
    }
    group.finish();
}

fn missed_runs(c: &mut Criterion) {
    let earliest = instant("2023-06-12T10:17:00Z");
    let now = instant("2024-06-12T10:17:30Z");
    let mut group = c.benchmark_group("cron missed_runs");
    if let Ok(schedule) = Schedule::parse("* * * * *") {
        for (name, zone) in [
            ("per minute, a year, UTC", Zone::UTC),
            (
                "per minute, a year, America/New_York",
                Zone::Named(chrono_tz::America::New_York),
            ),
            (
                "per minute, a year, Australia/Lord_Howe",
                Zone::Named(chrono_tz::Australia::Lord_Howe),
            ),
        ] {
            group.bench_function(name, |b| {
                b.iter(|| {
                    black_box(&schedule).missed_runs(black_box(earliest), black_box(now), zone)
                });
            });
        }
    }
    if let Ok(schedule) = Schedule::parse("*/10 9-17 * * 1-5") {
        group.bench_function("business hours, a year, Europe/Berlin", |b| {
            b.iter(|| {
                black_box(&schedule).missed_runs(
                    black_box(earliest),
                    black_box(now),
                    Zone::Named(chrono_tz::Europe::Berlin),
                )
            });
        });
    }
    group.finish();
}

criterion_group!(benches, parse, next_after, missed_runs);
criterion_main!(benches);
