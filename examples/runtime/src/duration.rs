//! Durations on the command line, in Go's syntax (`time.ParseDuration`, as the Go OpenKruise binaries take
//! their duration flags), read by kruise-schedule's Go-exact parser: `250ms`, `2s`, `1m30s`, `1.5h`, `0`.
//! A negative duration is refused; so is a bare number other than `0` (Go wants a unit).
//!
//! ```
//! use std::time::Duration;
//! use kruise_runtime::duration::parse_duration;
//!
//! assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
//! assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
//! assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
//! assert!(parse_duration("3").is_err());
//! assert!(parse_duration("-1s").is_err());
//! assert!(parse_duration("3 parsecs").is_err());
//! ```

use std::time::Duration;

use kruise_schedule::cron::parse_go_duration;

/// Why a duration could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {text:?}: {reason} (Go syntax, e.g. 500ms, 2s, 1m30s, 1.5h)")]
pub struct DurationError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Parses a Go duration that is not negative.
///
/// # Errors
/// Text Go's `time.ParseDuration` refuses (its message is the reason), or a negative duration.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let nanos = parse_go_duration(text).map_err(|error| DurationError {
        text: text.to_owned(),
        reason: error.to_string(),
    })?;
    u64::try_from(nanos)
        .map(Duration::from_nanos)
        .map_err(|_| DurationError {
            text: text.to_owned(),
            reason: "must not be negative".to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_add_up() {
        let cases = [
            ("0", Duration::ZERO),
            ("0s", Duration::ZERO),
            ("15s", Duration::from_secs(15)),
            ("2m", Duration::from_secs(120)),
            ("1h2m3s", Duration::from_secs(3723)),
            ("1s500ms", Duration::from_millis(1500)),
            ("1.5s", Duration::from_millis(1500)),
            ("+2s", Duration::from_secs(2)),
            ("100us", Duration::from_micros(100)),
            ("7ns", Duration::from_nanos(7)),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_duration(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        for text in [
            "",
            "s",
            "5x",
            "3",
            " 4s ",
            "-1s",
            "99999999999999999999s",
            "1h1",
            "ms5",
        ] {
            assert!(parse_duration(text).is_err(), "{text}");
        }
        let error = parse_duration("5x").unwrap_err();
        assert_eq!(error.reason, "unknown unit \"x\" in duration \"5x\"");
        assert!(error.to_string().starts_with("invalid duration \"5x\": "));
        assert_eq!(
            parse_duration("-1s").unwrap_err().reason,
            "must not be negative"
        );
        assert_eq!(
            parse_duration("3").unwrap_err().reason,
            "missing unit in duration \"3\""
        );
    }

    /// The number of cases of the properties below: `KRUISE_FUZZ_CASES` (default 256).
    fn fuzz_config() -> proptest::test_runner::Config {
        let cases = std::env::var("KRUISE_FUZZ_CASES")
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(256);
        proptest::test_runner::Config {
            cases,
            ..proptest::test_runner::Config::default()
        }
    }

    proptest::proptest! {
        #![proptest_config(fuzz_config())]

        /// Any text parses or is refused with an error that quotes it.
        #[test]
        fn any_text_is_parsed_or_refused(text in proptest::prop_oneof![
            proptest::arbitrary::any::<String>(),
            "[ 0-9hms.µ-]{0,24}",
        ]) {
            if let Err(error) = parse_duration(&text) {
                proptest::prop_assert!(error.to_string().contains(&format!("{text:?}")), "{}", error);
            }
        }

        /// Whole terms add up exactly, or overflow Go's limit (2^63 - 1 nanoseconds) into an error.
        #[test]
        fn terms_add_up_or_overflow(terms in proptest::collection::vec((
            proptest::prop_oneof![0_u64..100_000, proptest::arbitrary::any::<u64>()],
            proptest::sample::select(&["ns", "us", "ms", "s", "m", "h"][..]),
        ), 1..4)) {
            let text: String = terms.iter().map(|(value, unit)| format!("{value}{unit}")).collect();
            let nanos: u128 = terms.iter().map(|(value, unit)| {
                let factor: u128 = match *unit {
                    "ns" => 1, "us" => 1_000, "ms" => 1_000_000, "s" => 1_000_000_000,
                    "m" => 60_000_000_000, _ => 3_600_000_000_000,
                };
                u128::from(*value) * factor
            }).sum();
            let expected = u64::try_from(nanos)
                .ok()
                .filter(|nanos| i64::try_from(*nanos).is_ok())
                .map(Duration::from_nanos);
            proptest::prop_assert_eq!(parse_duration(&text).ok(), expected, "{}", text);
        }
    }
}
