//! Table tests of the cron scheduler: robfig/cron v3's documented behaviour (its parser, spec, constant-delay
//! and daylight-saving test cases, in the five-field standard form), upstream AdvancedCronJob's schedule cases,
//! and daylight saving in zones with one-hour, half-hour and no shifts.

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use chrono::{DateTime, Utc};
use kruise_schedule::cron::{Location, Schedule, Zone};

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|error| panic!("{text}: {error}"))
        .with_timezone(&Utc)
}

fn next(schedule: &str, after: &str) -> Option<DateTime<Utc>> {
    Schedule::parse(schedule)
        .unwrap_or_else(|error| panic!("{schedule}: {error}"))
        .next_after(at(after), Zone::UTC)
}

fn assert_next(cases: &[(&str, &str, Option<&str>)]) {
    for &(schedule, after, expected) in cases {
        assert_eq!(
            next(schedule, after),
            expected.map(at),
            "{schedule:?} after {after}"
        );
    }
}

#[test]
fn robfig_next() {
    assert_next(&[
        // Simple cases.
        (
            "0/15 * * * *",
            "2012-07-09T14:45:00Z",
            Some("2012-07-09T15:00:00Z"),
        ),
        (
            "0/15 * * * *",
            "2012-07-09T14:59:00Z",
            Some("2012-07-09T15:00:00Z"),
        ),
        (
            "0/15 * * * *",
            "2012-07-09T14:59:59Z",
            Some("2012-07-09T15:00:00Z"),
        ),
        // Wrap around hours.
        (
            "20-35/15 * * * *",
            "2012-07-09T15:45:00Z",
            Some("2012-07-09T16:20:00Z"),
        ),
        // Wrap around days.
        (
            "*/15 * * * *",
            "2012-07-09T23:46:00Z",
            Some("2012-07-10T00:00:00Z"),
        ),
        (
            "20-35/15 * * * *",
            "2012-07-09T23:45:00Z",
            Some("2012-07-10T00:20:00Z"),
        ),
        (
            "20-35/15 * * * *",
            "2012-07-09T23:35:51Z",
            Some("2012-07-10T00:20:00Z"),
        ),
        (
            "20-35/15 1/2 * * *",
            "2012-07-09T23:35:51Z",
            Some("2012-07-10T01:20:00Z"),
        ),
        (
            "20-35/15 10-12 * * *",
            "2012-07-09T23:35:51Z",
            Some("2012-07-10T10:20:00Z"),
        ),
        (
            "20-35/15 1/2 */2 * *",
            "2012-07-09T23:35:51Z",
            Some("2012-07-11T01:20:00Z"),
        ),
        (
            "20-35/15 * 9-20 * *",
            "2012-07-09T23:35:51Z",
            Some("2012-07-10T00:20:00Z"),
        ),
        (
            "20-35/15 * 9-20 Jul *",
            "2012-07-09T23:35:51Z",
            Some("2012-07-10T00:20:00Z"),
        ),
        // Wrap around months.
        (
            "0 0 9 Apr-Oct ?",
            "2012-07-09T23:35:00Z",
            Some("2012-08-09T00:00:00Z"),
        ),
        // `*/5` is a restriction (a step above 1 drops the star), so either day rule suffices: Aug 1.
        (
            "0 0 */5 Apr,Aug,Oct Mon",
            "2012-07-09T23:35:00Z",
            Some("2012-08-01T00:00:00Z"),
        ),
        (
            "0 0 */5 Oct Mon",
            "2012-07-09T23:35:00Z",
            Some("2012-10-01T00:00:00Z"),
        ),
        // Wrap around years.
        (
            "0 0 * Feb Mon",
            "2012-07-09T23:35:00Z",
            Some("2013-02-04T00:00:00Z"),
        ),
        (
            "0 0 * Feb Mon/2",
            "2012-07-09T23:35:00Z",
            Some("2013-02-01T00:00:00Z"),
        ),
        // Wrap around minute, hour, day, month and year.
        (
            "* * * * *",
            "2012-12-31T23:59:45Z",
            Some("2013-01-01T00:00:00Z"),
        ),
        // Leap year.
        (
            "0 0 29 Feb ?",
            "2012-07-09T23:35:00Z",
            Some("2016-02-29T00:00:00Z"),
        ),
        // Unsatisfiable.
        ("0 0 30 Feb ?", "2012-07-09T23:35:00Z", None),
        ("0 0 31 Apr ?", "2012-07-09T23:35:00Z", None),
        // Strictly after, also for a matching time, and sub-second inputs.
        (
            "0 * * * *",
            "2012-07-09T15:00:00Z",
            Some("2012-07-09T16:00:00Z"),
        ),
        (
            "0 * * * *",
            "2012-07-09T14:59:59.999Z",
            Some("2012-07-09T15:00:00Z"),
        ),
    ]);
}

#[test]
fn robfig_activation() {
    // (time, schedule, fires at that time)
    let cases = [
        ("2012-07-09T15:00:00Z", "0/15 * * * *", true),
        ("2012-07-09T15:45:00Z", "0/15 * * * *", true),
        ("2012-07-09T15:40:00Z", "0/15 * * * *", false),
        ("2012-07-09T15:05:00Z", "5/15 * * * *", true),
        ("2012-07-09T15:20:00Z", "5/15 * * * *", true),
        ("2012-07-09T15:50:00Z", "5/15 * * * *", true),
        ("2012-07-15T15:00:00Z", "0/15 * * Jul *", true),
        ("2012-07-15T15:00:00Z", "0/15 * * Jun *", false),
        ("2012-07-15T08:30:00Z", "30 08 ? Jul Sun", true),
        ("2012-07-15T08:30:00Z", "30 08 15 Jul ?", true),
        ("2012-07-16T08:30:00Z", "30 08 ? Jul Sun", false),
        ("2012-07-16T08:30:00Z", "30 08 15 Jul ?", false),
        ("2012-07-09T15:00:00Z", "@hourly", true),
        ("2012-07-09T15:04:00Z", "@hourly", false),
        ("2012-07-09T15:00:00Z", "@daily", false),
        ("2012-07-09T00:00:00Z", "@daily", true),
        ("2012-07-09T00:00:00Z", "@weekly", false),
        ("2012-07-08T00:00:00Z", "@weekly", true),
        ("2012-07-08T01:00:00Z", "@weekly", false),
        ("2012-07-08T00:00:00Z", "@monthly", false),
        ("2012-07-01T00:00:00Z", "@monthly", true),
        ("2013-01-01T00:00:00Z", "@yearly", true),
        ("2013-01-01T00:00:00Z", "@annually", true),
        ("2013-01-01T00:00:00Z", "@midnight", true),
        // Both day fields restricted: either matches.
        ("2012-07-15T00:00:00Z", "* * 1,15 * Sun", true),
        ("2012-06-15T00:00:00Z", "* * 1,15 * Sun", true),
        ("2012-08-01T00:00:00Z", "* * 1,15 * Sun", true),
        ("2012-07-15T00:00:00Z", "* * */2 * Sun", true),
        // One of them a star: both must match.
        ("2012-07-15T00:00:00Z", "* * * * Mon", false),
        ("2012-07-09T00:00:00Z", "* * 1,15 * *", false),
        ("2012-07-15T00:00:00Z", "* * 1,15 * *", true),
        ("2012-07-15T00:00:00Z", "* * ? * Mon", false),
        // `*/1` keeps the star: both must match.
        ("2012-07-15T00:00:00Z", "* * */1 * Mon", false),
        // A star with a range after it is still a star.
        ("2012-07-15T00:00:00Z", "* * *-3 * Mon", false),
    ];
    for (time, schedule, fires) in cases {
        let time = at(time);
        let fired = Schedule::parse(schedule)
            .unwrap()
            .next_after(time - chrono::Duration::seconds(1), Zone::UTC)
            == Some(time);
        assert_eq!(fired, fires, "{schedule:?} at {time}");
    }
}

#[test]
fn robfig_constant_delay() {
    assert_next(&[
        (
            "@every 15m50ns",
            "2012-07-09T14:45:00Z",
            Some("2012-07-09T15:00:00Z"),
        ),
        (
            "@every 15m",
            "2012-07-09T14:59:00Z",
            Some("2012-07-09T15:14:00Z"),
        ),
        (
            "@every 15m",
            "2012-07-09T14:59:59Z",
            Some("2012-07-09T15:14:59Z"),
        ),
        (
            "@every 35m",
            "2012-07-09T15:45:00Z",
            Some("2012-07-09T16:20:00Z"),
        ),
        (
            "@every 14m",
            "2012-07-09T23:46:00Z",
            Some("2012-07-10T00:00:00Z"),
        ),
        (
            "@every 44m24s",
            "2012-07-09T23:35:51Z",
            Some("2012-07-10T00:20:15Z"),
        ),
        (
            "@every 25h44m24s",
            "2012-07-09T23:35:51Z",
            Some("2012-07-11T01:20:15Z"),
        ),
        (
            "@every 2184h25m",
            "2012-07-09T23:35:00Z",
            Some("2012-10-09T00:00:00Z"),
        ),
        (
            "@every 15s",
            "2012-12-31T23:59:45Z",
            Some("2013-01-01T00:00:00Z"),
        ),
        // Less than a second rounds up to one; fractions of a second are dropped.
        (
            "@every 15ms",
            "2012-07-09T14:45:00Z",
            Some("2012-07-09T14:45:01Z"),
        ),
        (
            "@every 1.9s",
            "2012-07-09T14:45:00Z",
            Some("2012-07-09T14:45:01Z"),
        ),
        (
            "@every 15m",
            "2012-07-09T14:45:00.005Z",
            Some("2012-07-09T15:00:00Z"),
        ),
        (
            "@every 15m50ns",
            "2012-07-09T14:45:00.005Z",
            Some("2012-07-09T15:00:00Z"),
        ),
        // Zero and negative durations parse and mean one second, as in robfig/cron.
        (
            "@every 0",
            "2012-07-09T14:45:00Z",
            Some("2012-07-09T14:45:01Z"),
        ),
        (
            "@every -1h",
            "2012-07-09T14:45:00Z",
            Some("2012-07-09T14:45:01Z"),
        ),
        // A zone prefix is accepted and ignored.
        (
            "TZ=Asia/Tokyo @every 1h",
            "2012-07-09T14:45:00Z",
            Some("2012-07-09T15:45:00Z"),
        ),
    ]);
    assert_eq!(
        Schedule::parse("@every 1h30m").unwrap().every(),
        Some(std::time::Duration::from_secs(5400))
    );
}

/// robfig's daylight-saving cases (America/New_York, 2012).
#[test]
fn robfig_daylight_saving() {
    assert_next(&[
        // 2am EST (-5) -> 3am EDT (-4): 02:30 on March 11 does not exist, the next one is a year later.
        (
            "TZ=America/New_York 30 2 11 Mar ?",
            "2012-03-11T00:00:00-05:00",
            Some("2013-03-11T02:30:00-04:00"),
        ),
        // Hourly.
        (
            "TZ=America/New_York 0 * * * ?",
            "2012-03-11T00:00:00-05:00",
            Some("2012-03-11T01:00:00-05:00"),
        ),
        (
            "TZ=America/New_York 0 * * * ?",
            "2012-03-11T01:00:00-05:00",
            Some("2012-03-11T03:00:00-04:00"),
        ),
        (
            "TZ=America/New_York 0 * * * ?",
            "2012-03-11T03:00:00-04:00",
            Some("2012-03-11T04:00:00-04:00"),
        ),
        (
            "TZ=America/New_York 0 * * * ?",
            "2012-03-11T04:00:00-04:00",
            Some("2012-03-11T05:00:00-04:00"),
        ),
        (
            "CRON_TZ=America/New_York 0 * * * ?",
            "2012-03-11T01:00:00-05:00",
            Some("2012-03-11T03:00:00-04:00"),
        ),
        // 1am nightly.
        (
            "TZ=America/New_York 0 1 * * ?",
            "2012-03-11T00:00:00-05:00",
            Some("2012-03-11T01:00:00-05:00"),
        ),
        (
            "TZ=America/New_York 0 1 * * ?",
            "2012-03-11T01:00:00-05:00",
            Some("2012-03-12T01:00:00-04:00"),
        ),
        // 2am nightly: skipped on the day 2am does not exist.
        (
            "TZ=America/New_York 0 2 * * ?",
            "2012-03-11T00:00:00-05:00",
            Some("2012-03-12T02:00:00-04:00"),
        ),
        // 2am EDT (-4) -> 1am EST (-5).
        (
            "TZ=America/New_York 30 2 04 Nov ?",
            "2012-11-04T00:00:00-04:00",
            Some("2012-11-04T02:30:00-05:00"),
        ),
        (
            "TZ=America/New_York 30 1 04 Nov ?",
            "2012-11-04T01:45:00-04:00",
            Some("2012-11-04T01:30:00-05:00"),
        ),
        // Hourly: 1am happens twice.
        (
            "TZ=America/New_York 0 * * * ?",
            "2012-11-04T00:00:00-04:00",
            Some("2012-11-04T01:00:00-04:00"),
        ),
        (
            "TZ=America/New_York 0 * * * ?",
            "2012-11-04T01:00:00-04:00",
            Some("2012-11-04T01:00:00-05:00"),
        ),
        (
            "TZ=America/New_York 0 * * * ?",
            "2012-11-04T01:00:00-05:00",
            Some("2012-11-04T02:00:00-05:00"),
        ),
        // 1am nightly runs twice.
        (
            "TZ=America/New_York 0 1 * * ?",
            "2012-11-04T00:00:00-04:00",
            Some("2012-11-04T01:00:00-04:00"),
        ),
        (
            "TZ=America/New_York 0 1 * * ?",
            "2012-11-04T01:00:00-04:00",
            Some("2012-11-04T01:00:00-05:00"),
        ),
        (
            "TZ=America/New_York 0 1 * * ?",
            "2012-11-04T01:00:00-05:00",
            Some("2012-11-05T01:00:00-05:00"),
        ),
        // 2am and 3am nightly run once.
        (
            "TZ=America/New_York 0 2 * * ?",
            "2012-11-04T00:00:00-04:00",
            Some("2012-11-04T02:00:00-05:00"),
        ),
        (
            "TZ=America/New_York 0 2 * * ?",
            "2012-11-04T02:00:00-05:00",
            Some("2012-11-05T02:00:00-05:00"),
        ),
        (
            "TZ=America/New_York 0 3 * * ?",
            "2012-11-04T00:00:00-04:00",
            Some("2012-11-04T03:00:00-05:00"),
        ),
        (
            "TZ=America/New_York 0 3 * * ?",
            "2012-11-04T03:00:00-05:00",
            Some("2012-11-05T03:00:00-05:00"),
        ),
    ]);
}

/// Daylight saving in other zones, derived step by step from robfig's search.
#[test]
fn daylight_saving_elsewhere() {
    assert_next(&[
        // Berlin, 2024-03-31 02:00 CET -> 03:00 CEST: 02:30 is skipped that day.
        (
            "TZ=Europe/Berlin 30 2 * * *",
            "2024-03-30T12:00:00Z",
            Some("2024-04-01T02:30:00+02:00"),
        ),
        (
            "TZ=Europe/Berlin 0 * * * *",
            "2024-03-31T01:00:00+01:00",
            Some("2024-03-31T03:00:00+02:00"),
        ),
        // Berlin, 2024-10-27 03:00 CEST -> 02:00 CET: 02:30 runs twice.
        (
            "TZ=Europe/Berlin 30 2 * * *",
            "2024-10-26T12:00:00Z",
            Some("2024-10-27T02:30:00+02:00"),
        ),
        (
            "TZ=Europe/Berlin 30 2 * * *",
            "2024-10-27T02:30:00+02:00",
            Some("2024-10-27T02:30:00+01:00"),
        ),
        (
            "TZ=Europe/Berlin 30 2 * * *",
            "2024-10-27T02:30:00+01:00",
            Some("2024-10-28T02:30:00+01:00"),
        ),
        // Lord Howe, 2024-10-06 02:00 +10:30 -> 02:30 +11:00 (a half-hour shift): 02:15 is skipped.
        (
            "TZ=Australia/Lord_Howe 15 2 * * *",
            "2024-10-05T12:00:00Z",
            Some("2024-10-07T02:15:00+11:00"),
        ),
        // ... and a minute step from 01:59 lands on 02:30 without passing minute 0, so an hour-1 schedule
        // fires once at 02:30 (robfig's walk does not re-check the hour).
        (
            "TZ=Australia/Lord_Howe */10 1 * * *",
            "2024-10-06T01:50:00+10:30",
            Some("2024-10-06T02:30:00+11:00"),
        ),
        // The next search resets to 02:00, which does not exist and resolves to 02:30, so it steps whole hours
        // from :30 and fires first at 01:30 the next day.
        (
            "TZ=Australia/Lord_Howe */10 1 * * *",
            "2024-10-06T02:30:00+11:00",
            Some("2024-10-07T01:30:00+11:00"),
        ),
        (
            "TZ=Australia/Lord_Howe */10 1 * * *",
            "2024-10-07T01:50:00+11:00",
            Some("2024-10-08T01:00:00+11:00"),
        ),
        // Lord Howe, 2024-04-07 02:00 +11:00 -> 01:30 +10:30: 01:45 happens twice, 01:15 once.
        (
            "TZ=Australia/Lord_Howe 45 1 * * *",
            "2024-04-06T12:00:00Z",
            Some("2024-04-07T01:45:00+11:00"),
        ),
        (
            "TZ=Australia/Lord_Howe 45 1 * * *",
            "2024-04-07T01:45:00+11:00",
            Some("2024-04-07T01:45:00+10:30"),
        ),
        (
            "TZ=Australia/Lord_Howe 45 1 * * *",
            "2024-04-07T01:45:00+10:30",
            Some("2024-04-08T01:45:00+10:30"),
        ),
        (
            "TZ=Australia/Lord_Howe 15 1 * * *",
            "2024-04-07T01:15:00+11:00",
            Some("2024-04-08T01:15:00+10:30"),
        ),
        // Hourly across it: 01:00 (+11), then 02:00 (+10:30), an hour and a half later.
        (
            "TZ=Australia/Lord_Howe 0 * * * *",
            "2024-04-07T01:00:00+11:00",
            Some("2024-04-07T02:00:00+10:30"),
        ),
        // Shanghai has no daylight saving.
        (
            "TZ=Asia/Shanghai 0 2 * * *",
            "2024-03-10T12:00:00Z",
            Some("2024-03-11T02:00:00+08:00"),
        ),
    ]);
}

/// Upstream AdvancedCronJob's own time-zone test (`formatSchedule`).
#[test]
fn advanced_cron_job_time_zones() {
    let cases: &[(&str, Option<&str>, &str, &str)] = &[
        (
            "0 10 * * ?",
            None,
            "2022-09-05T09:01:00Z",
            "2022-09-05T10:00:00Z",
        ),
        (
            "0 10 * * ?",
            None,
            "2022-09-05T11:01:00Z",
            "2022-09-06T10:00:00Z",
        ),
        (
            "0 10 * * ?",
            Some("Asia/Shanghai"),
            "2022-09-05T09:01:00Z",
            "2022-09-06T02:00:00Z",
        ),
        (
            "0 10 * * ?",
            Some("Asia/Shanghai"),
            "2022-09-06T01:01:00Z",
            "2022-09-06T02:00:00Z",
        ),
        (
            "TZ=Asia/Shanghai 0 10 * * ?",
            None,
            "2022-09-06T01:01:00Z",
            "2022-09-06T02:00:00Z",
        ),
        // An unknown zone falls back to the controller's zone (UTC here).
        (
            "0 10 * * ?",
            Some("Asia/Nowhere"),
            "2022-09-05T09:01:00Z",
            "2022-09-05T10:00:00Z",
        ),
    ];
    for &(schedule, time_zone, after, expected) in cases {
        let resolved = Schedule::parse_with_time_zone(schedule, time_zone).unwrap();
        assert_eq!(
            resolved.schedule.next_after(at(after), Zone::UTC),
            Some(at(expected)),
            "{schedule} {time_zone:?}"
        );
    }
    // Without a prefix the controller's zone applies.
    let schedule = Schedule::parse("0 10 * * ?").unwrap();
    assert_eq!(schedule.location(), Some(Location::Local));
    assert_eq!(
        schedule.next_after(at("2022-09-05T09:01:00Z"), chrono_tz::Asia::Shanghai.into()),
        Some(at("2022-09-06T02:00:00Z"))
    );
}
