//! The parser over a corpus of tricky and garbage schedules, as the fuzz target (`fuzz/`) does but
//! deterministically, so that the normal test run covers it: no input panics, every error renders, and every
//! accepted schedule answers `next_after` and `missed_runs` in a few zones without panicking and moving
//! strictly forward.

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use chrono::{DateTime, Utc};
use kruise_schedule::cron::{Schedule, Zone};

const TRICKY: &[&str] = &[
    "",
    " ",
    "\t\n",
    "@",
    "@@daily",
    "@every",
    "@every ",
    "@every 0",
    "@every -0",
    "@every +1s",
    "@every 1.",
    "@every .1",
    "@every .",
    "@every 1e9s",
    "@every 9223372036854775807ns",
    "@every 9223372036854775808ns",
    "@every 2562047h47m16.854775807s",
    "@every 1µs",
    "@every 1μs",
    "@every 1\u{b5}",
    "@every 1h\u{0}",
    "TZ=",
    "TZ= ",
    "TZ==UTC * * * * *",
    "TZ=UTC=UTC * * * * *",
    "CRON_TZ=",
    "CRON_TZ= @hourly",
    "TZ=../../etc/passwd * * * * *",
    "TZ=/UTC * * * * *",
    "TZ=Local @every 1h",
    "TZ=UTC TZ=UTC * * * * *",
    "tz=UTC * * * * *",
    "* * * * * *",
    "* * * *",
    "*****",
    "* * * * *\u{0}",
    "\u{feff}* * * * *",
    "* * * * \u{85}",
    "-",
    "- - - - -",
    "/ / / / /",
    ", , , , ,",
    ",,,,, * * * *",
    "*/ * * * *",
    "/* * * * *",
    "*-* * * * *",
    "*-/ * * * *",
    "*/*/* * * * *",
    "1-2-3 * * * *",
    "1--2 * * * *",
    "--1 * * * *",
    "1- * * * *",
    "-1- * * * *",
    "59-0/1 * * * *",
    "0-59/59 * * * *",
    "0-59/60 * * * *",
    "0/9223372036854775807 * * * *",
    "0/9223372036854775808 * * * *",
    "*/-0 * * * *",
    "*/+0 * * * *",
    "*/+1 * * * *",
    "+-1 * * * *",
    "-+1 * * * *",
    "1/1/1 * * * *",
    "? ?/2 ? ? ?",
    "0 0 31 2,4,6,9,11 *",
    "0 0 30 2 *",
    "0 0 29 2 *",
    "0 0 29 2 1",
    "0 0 * * 0-6/7",
    "0 0 1-31/31 * *",
    "0 0 * jan-dec/12 *",
    "0 0 * dec-jan *",
    "0 0 * * sat-sun",
    "0 0 * * SUNDAY",
    "0 0 * * s\u{e4}t",
    "0 0 * * \u{212a}",
    "0 0 * J\u{130}N *",
    "0 0 * * fr\u{130}",
    "0 0 * * \u{ff10}",
    "\u{661} * * * *",
    "0\u{3000}0\u{2028}*\u{2029}*\u{a0}*",
    "99999999999999999999999999 * * * *",
    "0x1 * * * *",
    "1_0 * * * *",
    "1.5 * * * *",
    "1e1 * * * *",
];

/// A deterministic stream of pseudo-random numbers (xorshift64*).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// Schedules assembled from grammar fragments, valid or not: an optional prefix, then four to six fields of
/// one to four tokens (or, two times in three, a field valid everywhere).
fn assembled(noise: &mut Noise) -> String {
    const PREFIXES: &[&str] = &[
        "",
        "",
        "",
        "TZ=UTC ",
        "CRON_TZ=Asia/Tokyo ",
        "TZ=Local ",
        "TZ=",
        "@every ",
        "@",
    ];
    const TOKENS: &[&str] = &[
        "*", "*", "?", "0", "1", "2", "5", "7", "12", "23", "24", "29", "31", "59", "60", "-", "-",
        "/", "/", ",", "+", "jan", "DEC", "sun", "Sat", "mon", "x", "\u{130}", "h", "m", "s", ".",
    ];
    let mut text = noise.pick(PREFIXES).to_owned();
    let fields = 4 + noise.next() % 3;
    for field in 0..fields {
        if field > 0 {
            text.push_str(noise.pick(&[" ", " ", "  ", "\t", "\u{3000}"]));
        }
        if noise.next().is_multiple_of(3) {
            for _ in 0..1 + noise.next() % 4 {
                text.push_str(noise.pick(TOKENS));
            }
        } else {
            text.push_str(noise.pick(&["*", "?", "1", "2-5", "*/3", "1,3", "3/2", "*-9", "1,,2"]));
        }
    }
    text
}

/// Arbitrary strings of bytes from a small alphabet (kept valid UTF-8).
fn garbage(noise: &mut Noise) -> String {
    const ALPHABET: &[&str] = &[
        "0", "1", "9", "*", "?", "-", "/", ",", " ", "@", "=", "T", "Z", "\u{0}", "\u{7f}", "é",
        "µ", "\u{202f}",
    ];
    let length = noise.next() % 40;
    (0..length).map(|_| noise.pick(ALPHABET)).collect()
}

fn exercise(text: &str) -> bool {
    let Ok(schedule) = Schedule::parse(text) else {
        let error = Schedule::parse(text).unwrap_err();
        assert!(!error.to_string().is_empty());
        return false;
    };
    let instants: [DateTime<Utc>; 3] = [
        "2024-03-10T06:59:30Z".parse().unwrap(),
        "2024-10-27T00:30:00.5Z".parse().unwrap(),
        "1970-01-01T00:00:00Z".parse().unwrap(),
    ];
    let zones = [
        Zone::UTC,
        Zone::Named(chrono_tz::America::New_York),
        Zone::Named(chrono_tz::Australia::Lord_Howe),
    ];
    for zone in zones {
        for after in instants {
            let mut previous = after;
            for next in schedule.iter_after(after, zone).take(3) {
                assert!(
                    next > previous,
                    "{text:?} in {zone}: {previous} then {next}"
                );
                previous = next;
            }
            let missed = schedule.missed_runs(after, after + chrono::Duration::days(3), zone);
            assert!(
                missed.count == 0 || missed.most_recent.is_some(),
                "{text:?}"
            );
        }
    }
    true
}

#[test]
fn tricky_inputs() {
    let accepted = TRICKY.iter().filter(|text| exercise(text)).count();
    // A sanity check that the corpus covers both sides.
    assert!(accepted > 10 && accepted < TRICKY.len() - 10, "{accepted}");
}

#[test]
fn generated_inputs() {
    let mut noise = Noise(0x5eed_cafe_f00d_d00d);
    let mut accepted = 0;
    for _ in 0..4000 {
        accepted += usize::from(exercise(&assembled(&mut noise)));
        accepted += usize::from(exercise(&garbage(&mut noise)));
    }
    // A sanity check that many generated schedules parse.
    assert!(accepted > 100, "{accepted}");
}
