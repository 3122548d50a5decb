//! Table tests of the cron parser: what robfig/cron v3's `ParseStandard` accepts and rejects (its own
//! parser test cases in the five-field form, and the edges of its grammar), and the errors naming the field,
//! position and value.

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use kruise_schedule::cron::{Field, FieldProblem, ParseError, Schedule};

#[test]
fn accepted_like_parse_standard() {
    for schedule in [
        "* * * * *",
        "? ? ? ? ?",
        "0 0 1 1 0",
        "59 23 31 12 6",
        "0-59 0-23 1-31 1-12 0-6",
        "*/1 */2 */3 */4 */5",
        "1,,2 * * * *",
        ", * * * *",
        "5/10 * * * *",
        "+5 007 +1 +1 +0",
        "*-5 * * * *",
        "?-x-y/2 * * * *",
        "0 0 * JAN-dec SUN-sat",
        "0 0 * jAn Fr\u{130}",
        "\t0 \u{a0}0\n*\u{2003}* *  ",
        "TZ=UTC  5 * * * *",
        "TZ= 5 * * * *",
        "TZ=Local 5 * * * *",
        "CRON_TZ=Asia/Tokyo 5 * * * *",
        "TZ=Asia/Tokyo @midnight",
        "TZ=UTC   @daily  ",
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
        "@every 5m",
        "@every 1.5h",
        "@every 300ms",
        "@every 1h2m3s4ms5us6ns",
        "@every -5s",
        "0 0 30 2 *",
    ] {
        assert!(
            Schedule::parse(schedule).is_ok(),
            "{schedule:?}: {:?}",
            Schedule::parse(schedule)
        );
    }
}

#[test]
fn rejected_like_parse_standard() {
    let field = |field, position, expression: &str, problem| ParseError::Field {
        field,
        position,
        expression: expression.into(),
        problem,
    };
    let cases: Vec<(&str, ParseError)> = vec![
        ("", ParseError::Empty),
        (
            "xyz",
            ParseError::FieldCount {
                found: 1,
                fields: vec!["xyz".into()],
            },
        ),
        (
            "* * * *",
            ParseError::FieldCount {
                found: 4,
                fields: vec!["*".into(); 4],
            },
        ),
        (
            "0 * * * * *",
            ParseError::FieldCount {
                found: 6,
                fields: vec![
                    "0".into(),
                    "*".into(),
                    "*".into(),
                    "*".into(),
                    "*".into(),
                    "*".into(),
                ],
            },
        ),
        (
            "60 0 * * *",
            field(
                Field::Minute,
                1,
                "60",
                FieldProblem::AboveMaximum { end: 60, max: 59 },
            ),
        ),
        (
            "0 24 * * *",
            field(
                Field::Hour,
                2,
                "24",
                FieldProblem::AboveMaximum { end: 24, max: 23 },
            ),
        ),
        (
            "0 0 0 * *",
            field(
                Field::DayOfMonth,
                3,
                "0",
                FieldProblem::BelowMinimum { start: 0, min: 1 },
            ),
        ),
        (
            "0 0 * 13 *",
            field(
                Field::Month,
                4,
                "13",
                FieldProblem::AboveMaximum { end: 13, max: 12 },
            ),
        ),
        (
            "0 0 * * 7",
            field(
                Field::DayOfWeek,
                5,
                "7",
                FieldProblem::AboveMaximum { end: 7, max: 6 },
            ),
        ),
        (
            "0 0 * * XYZ",
            field(
                Field::DayOfWeek,
                5,
                "XYZ",
                FieldProblem::NotANumber("XYZ".into()),
            ),
        ),
        (
            "0 0 * * monday",
            field(
                Field::DayOfWeek,
                5,
                "monday",
                FieldProblem::NotANumber("monday".into()),
            ),
        ),
        (
            "0 0 * jan-x *",
            field(
                Field::Month,
                4,
                "jan-x",
                FieldProblem::NotANumber("x".into()),
            ),
        ),
        (
            "0 0 * * jan",
            field(
                Field::DayOfWeek,
                5,
                "jan",
                FieldProblem::NotANumber("jan".into()),
            ),
        ),
        (
            "0-0-0 * * * *",
            field(Field::Minute, 1, "0-0-0", FieldProblem::TooManyHyphens),
        ),
        (
            "5--5 * * * *",
            field(Field::Minute, 1, "5--5", FieldProblem::TooManyHyphens),
        ),
        (
            "*/5/5 * * * *",
            field(Field::Minute, 1, "*/5/5", FieldProblem::TooManySlashes),
        ),
        (
            "*//2 * * * *",
            field(Field::Minute, 1, "*//2", FieldProblem::TooManySlashes),
        ),
        (
            "*/-12 * * * *",
            field(Field::Minute, 1, "*/-12", FieldProblem::Negative(-12)),
        ),
        (
            "*/0 * * * *",
            field(Field::Minute, 1, "*/0", FieldProblem::ZeroStep),
        ),
        (
            "59-2 * * * *",
            field(
                Field::Minute,
                1,
                "59-2",
                FieldProblem::Reversed { start: 59, end: 2 },
            ),
        ),
        (
            "-1 * * * *",
            field(
                Field::Minute,
                1,
                "-1",
                FieldProblem::NotANumber(String::new()),
            ),
        ),
        (
            "1/ * * * *",
            field(
                Field::Minute,
                1,
                "1/",
                FieldProblem::NotANumber(String::new()),
            ),
        ),
        (
            "99999999999999999999 * * * *",
            field(
                Field::Minute,
                1,
                "99999999999999999999",
                FieldProblem::NumberTooLarge("99999999999999999999".into()),
            ),
        ),
        (
            "* 5 j * *",
            field(
                Field::DayOfMonth,
                3,
                "j",
                FieldProblem::NotANumber("j".into()),
            ),
        ),
        (
            "@unrecognized",
            ParseError::UnknownDescriptor("@unrecognized".into()),
        ),
        ("@daily ", ParseError::UnknownDescriptor("@daily ".into())),
        ("@every", ParseError::UnknownDescriptor("@every".into())),
        (
            " @daily",
            ParseError::FieldCount {
                found: 1,
                fields: vec!["@daily".into()],
            },
        ),
        (
            "TZ=UTC",
            ParseError::TimeZoneWithoutSchedule {
                schedule: "TZ=UTC".into(),
            },
        ),
        (
            "CRON_TZ=Europe/Berlin\t*\t*\t*\t*",
            ParseError::TimeZoneWithoutSchedule {
                schedule: "CRON_TZ=Europe/Berlin\t*\t*\t*\t*".into(),
            },
        ),
        // The zone ends at the first space, not at other white space.
        (
            "CRON_TZ=Europe/Berlin\t* * * * *",
            ParseError::TimeZone(kruise_schedule::cron::UnknownTimeZone {
                name: "Europe/Berlin\t*".into(),
            }),
        ),
        (
            "0 0 -0 * *",
            field(
                Field::DayOfMonth,
                3,
                "-0",
                FieldProblem::NotANumber(String::new()),
            ),
        ),
        (
            "TZ=UTC ",
            ParseError::FieldCount {
                found: 0,
                fields: vec![],
            },
        ),
    ];
    for (schedule, expected) in cases {
        assert_eq!(Schedule::parse(schedule), Err(expected), "{schedule:?}");
    }
    for schedule in [
        "TZ=Bogus * * * * *",
        "TZ=utc * * * * *",
        "TZ=Europe/Berlin\t* * * * * *",
        "@every Xm",
        "@every 5",
        "@every 1d",
        "@every  5m",
        "@every 5m ",
        "@every 3000000h",
    ] {
        assert!(Schedule::parse(schedule).is_err(), "{schedule:?}");
    }
}

#[test]
fn error_messages_name_the_problem() {
    let message = |schedule: &str| Schedule::parse(schedule).unwrap_err().to_string();
    assert_eq!(
        message("0 0 * * 7"),
        "day-of-week field (field 5) \"7\": end of range (7) above maximum (6)"
    );
    assert_eq!(
        message("TZ=Mars/Base * * * * *"),
        "time zone prefix: unknown time zone \"Mars/Base\""
    );
    assert_eq!(
        message("@every 5"),
        "@every: missing unit in duration \"5\""
    );
}
