//! Durations on the command line: `250ms`, `2s`, `1m30s`, `1h`; a bare number means seconds.
//!
//! ```
//! use std::time::Duration;
//! use kruise_runtime::duration::parse_duration;
//!
//! assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
//! assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
//! assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
//! assert!(parse_duration("3 parsecs").is_err());
//! ```

use std::time::Duration;

/// Why a duration could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {text:?}: {reason} (examples: 500ms, 2s, 1m30s, 1h)")]
pub struct DurationError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Parses a sequence of `<integer><unit>` terms (units `ms`, `s`, `m`, `h`), or a bare integer of seconds.
///
/// # Errors
/// Empty text, a missing number, an unknown unit, or an overflow.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let error = |reason| DurationError {
        text: text.to_owned(),
        reason,
    };
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(error("empty"));
    }
    if let Ok(seconds) = trimmed.parse::<u64>() {
        return Ok(Duration::from_secs(seconds));
    }
    let mut total = Duration::ZERO;
    let mut rest = trimmed;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(error("expected a number"));
        }
        let (number, after) = rest.split_at(digits);
        let value: u64 = number.parse().map_err(|_| error("number too large"))?;
        let unit_len = after.bytes().take_while(u8::is_ascii_alphabetic).count();
        let (unit, next) = after.split_at(unit_len);
        let term = match unit {
            "ms" => Duration::from_millis(value),
            "s" => Duration::from_secs(value),
            "m" => Duration::from_secs(value.checked_mul(60).ok_or_else(|| error("overflow"))?),
            "h" => Duration::from_secs(value.checked_mul(3600).ok_or_else(|| error("overflow"))?),
            "" => return Err(error("missing unit")),
            _ => return Err(error("unknown unit")),
        };
        total = total.checked_add(term).ok_or_else(|| error("overflow"))?;
        rest = next;
    }
    Ok(total)
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
            (" 4s ", Duration::from_secs(4)),
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
            "1.5s",
            "-1s",
            "99999999999999999999s",
            "1h1",
            "ms5",
        ] {
            assert!(parse_duration(text).is_err(), "{text}");
        }
        let error = parse_duration("5x").unwrap_err();
        assert_eq!(error.reason, "unknown unit");
        assert!(error.to_string().contains("\"5x\""));
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

        /// Terms from the grammar, edge numbers included, add up exactly or overflow into an error.
        #[test]
        fn terms_add_up_or_overflow(terms in proptest::collection::vec((
            proptest::prop_oneof![0_u64..100_000, proptest::arbitrary::any::<u64>()],
            proptest::sample::select(&["ms", "s", "m", "h"][..]),
        ), 1..4)) {
            let text: String = terms.iter().map(|(value, unit)| format!("{value}{unit}")).collect();
            let mut millis: Option<u128> = Some(0);
            for (value, unit) in &terms {
                let factor: u128 = match *unit { "ms" => 1, "s" => 1000, "m" => 60_000, _ => 3_600_000 };
                let seconds_fit = match *unit { "m" => value.checked_mul(60).is_some(), "h" => value.checked_mul(3600).is_some(), _ => true };
                millis = millis.filter(|_| seconds_fit).map(|total| total + u128::from(*value) * factor);
            }
            let expected = millis
                .filter(|total| total / 1000 <= u128::from(u64::MAX))
                .and_then(|total| Some(Duration::from_secs(u64::try_from(total / 1000).ok()?)
                    + Duration::from_millis(u64::try_from(total % 1000).ok()?)));
            proptest::prop_assert_eq!(parse_duration(&text).ok(), expected, "{}", text);
        }
    }
}
