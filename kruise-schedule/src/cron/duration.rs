//! Go's `time.ParseDuration`, for `@every <duration>`.
//!
//! Grammar: an optional sign, then one or more `<number><unit>` terms; a number is digits with an optional
//! fraction (`1`, `1.5`, `.5`, `1.`), a unit is `ns`, `us`, `µs` (U+00B5), `μs` (U+03BC), `ms`, `s`, `m` or
//! `h`. A lone `0` needs no unit. The total must fit in a signed 64-bit count of nanoseconds; fractions are
//! scaled with `f64` arithmetic exactly as Go does, so `1.0000000001h` rounds the same way.

/// Why a duration did not parse, in Go's words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DurationError {
    /// Not a duration at all (empty, a term without digits, a stray character) or too large.
    #[error("invalid duration {0:?}")]
    Invalid(String),
    /// A term with digits but no unit (`10`).
    #[error("missing unit in duration {0:?}")]
    MissingUnit(String),
    /// A unit that is not one of `ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`.
    #[error("unknown unit {unit:?} in duration {duration:?}")]
    UnknownUnit {
        /// The unit as written.
        unit: String,
        /// The whole duration.
        duration: String,
    },
}

const LIMIT: u64 = 1 << 63;

/// Parses a duration as Go's `time.ParseDuration` does, into nanoseconds (negative for `-1s`): the syntax of
/// `@every` and of every duration flag of the Go OpenKruise binaries.
///
/// ```
/// use kruise_schedule::cron::{DurationError, parse_go_duration};
///
/// assert_eq!(parse_go_duration("1m30s"), Ok(90_000_000_000));
/// assert_eq!(parse_go_duration("1.5h"), Ok(5_400_000_000_000));
/// assert_eq!(parse_go_duration("-250ms"), Ok(-250_000_000));
/// assert_eq!(parse_go_duration("0"), Ok(0));
/// assert_eq!(parse_go_duration("3"), Err(DurationError::MissingUnit("3".into())));
/// ```
///
/// # Errors
/// Text that Go refuses, with Go's message.
pub fn parse_go_duration(text: &str) -> Result<i64, DurationError> {
    let invalid = || DurationError::Invalid(text.into());
    let mut rest = text.as_bytes();
    let mut negative = false;
    if let Some((&sign @ (b'-' | b'+'), tail)) = rest.split_first() {
        negative = sign == b'-';
        rest = tail;
    }
    if rest == b"0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while let Some(&first) = rest.first() {
        if first != b'.' && !first.is_ascii_digit() {
            return Err(invalid());
        }
        let (whole, after_whole) = leading_int(rest).ok_or_else(invalid)?;
        let has_whole = after_whole.len() != rest.len();
        rest = after_whole;
        let (mut fraction, mut scale, mut has_fraction) = (0u64, 1f64, false);
        if let Some((b'.', after_point)) = rest.split_first() {
            let (digits, digits_scale, after_fraction) = leading_fraction(after_point);
            has_fraction = after_fraction.len() != after_point.len();
            (fraction, scale) = (digits, digits_scale);
            rest = after_fraction;
        }
        if !has_whole && !has_fraction {
            return Err(invalid());
        }
        let unit_length = rest
            .iter()
            .position(|&byte| byte == b'.' || byte.is_ascii_digit())
            .unwrap_or(rest.len());
        if unit_length == 0 {
            return Err(DurationError::MissingUnit(text.into()));
        }
        let (unit_bytes, after_unit) = rest.split_at(unit_length);
        rest = after_unit;
        let unit = unit_nanos(unit_bytes).ok_or_else(|| DurationError::UnknownUnit {
            unit: String::from_utf8_lossy(unit_bytes).into_owned(),
            duration: text.into(),
        })?;
        if whole > LIMIT / unit {
            return Err(invalid());
        }
        let mut value = whole * unit;
        if fraction > 0 {
            // Go converts with a float and truncates toward zero, as `as` does for these positive values.
            value += (fraction as f64 * (unit as f64 / scale)) as u64;
            if value > LIMIT {
                return Err(invalid());
            }
        }
        // Two terms of 2^63 each would pass u64 itself, not only the limit.
        total = total
            .checked_add(value)
            .filter(|sum| *sum <= LIMIT)
            .ok_or_else(invalid)?;
    }
    if negative {
        // `total` is at most 2^63, whose negation is i64::MIN.
        return Ok(0i64.wrapping_sub_unsigned(total));
    }
    i64::try_from(total).map_err(|_| invalid())
}

/// Consumes leading ASCII digits; `None` when the value passes 2^63.
fn leading_int(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut value: u64 = 0;
    let mut used = 0;
    for &byte in bytes {
        if !byte.is_ascii_digit() {
            break;
        }
        if value > LIMIT / 10 {
            return None;
        }
        value = value * 10 + u64::from(byte - b'0');
        if value > LIMIT {
            return None;
        }
        used += 1;
    }
    Some((value, bytes.get(used..).unwrap_or_default()))
}

/// Consumes leading ASCII digits of a fraction: the digits kept (precision stops growing near 2^63), the
/// power of ten they are scaled by, and the rest.
fn leading_fraction(bytes: &[u8]) -> (u64, f64, &[u8]) {
    let (mut value, mut scale, mut overflow) = (0u64, 1f64, false);
    let mut used = 0;
    for &byte in bytes {
        if !byte.is_ascii_digit() {
            break;
        }
        used += 1;
        if overflow {
            continue;
        }
        if value > (LIMIT - 1) / 10 {
            overflow = true;
            continue;
        }
        let next = value * 10 + u64::from(byte - b'0');
        if next > LIMIT {
            overflow = true;
            continue;
        }
        value = next;
        scale *= 10.0;
    }
    (value, scale, bytes.get(used..).unwrap_or_default())
}

fn unit_nanos(unit: &[u8]) -> Option<u64> {
    Some(match unit {
        b"ns" => 1,
        // "µs" (U+00B5 micro sign) and "μs" (U+03BC Greek mu) in UTF-8.
        b"us" | b"\xc2\xb5s" | b"\xce\xbcs" => 1_000,
        b"ms" => 1_000_000,
        b"s" => 1_000_000_000,
        b"m" => 60_000_000_000,
        b"h" => 3_600_000_000_000,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_terms_at_the_limit_are_invalid_not_an_overflow() {
        let text = "9223372036854775808ns9223372036854775808ns";
        assert!(matches!(
            parse_go_duration(text),
            Err(DurationError::Invalid(_))
        ));
        assert_eq!(
            parse_go_duration("-9223372036854775808ns"),
            Ok(i64::MIN),
            "one term at the limit is still i64::MIN when negative"
        );
    }

    #[test]
    fn go_examples() {
        let cases: &[(&str, i64)] = &[
            ("0", 0),
            ("5s", 5_000_000_000),
            ("30s", 30_000_000_000),
            ("1478s", 1_478_000_000_000),
            ("-5s", -5_000_000_000),
            ("+5s", 5_000_000_000),
            ("-0", 0),
            ("+0", 0),
            ("5.0s", 5_000_000_000),
            ("5.6s", 5_600_000_000),
            ("5.s", 5_000_000_000),
            (".5s", 500_000_000),
            ("1.0s", 1_000_000_000),
            ("1.00s", 1_000_000_000),
            ("1.004s", 1_004_000_000),
            ("1.0040s", 1_004_000_000),
            ("100.00100s", 100_001_000_000),
            ("10ns", 10),
            ("11us", 11_000),
            ("12µs", 12_000),
            ("12μs", 12_000),
            ("13ms", 13_000_000),
            ("14s", 14_000_000_000),
            ("15m", 900_000_000_000),
            ("16h", 57_600_000_000_000),
            ("3h30m", 12_600_000_000_000),
            ("10.5s4m", 250_500_000_000),
            ("-2m3.4s", -123_400_000_000),
            ("1h2m3s4ms5us6ns", 3_723_004_005_006),
            ("39h9m14.425s", 140_954_425_000_000),
            ("52763797000ns", 52_763_797_000),
            ("0.3333333333333333333h", 1_200_000_000_000),
            ("9007199254740993ns", 9_007_199_254_740_993),
            ("9223372036854775807ns", i64::MAX),
            ("9223372036854775.807us", i64::MAX),
            ("9223372036s854ms775us807ns", i64::MAX),
            ("-9223372036854775808ns", i64::MIN),
            ("-9223372036854775.808us", i64::MIN),
            ("-9223372036s854ms775us808ns", i64::MIN),
            ("-2562047h47m16.854775808s", i64::MIN),
            ("0.100000000000000000000h", 360_000_000_000),
            ("0.830103483285477580700h", 2_988_372_539_827),
        ];
        for &(text, nanos) in cases {
            assert_eq!(parse_go_duration(text), Ok(nanos), "{text}");
        }
    }

    #[test]
    fn go_failures() {
        for text in [
            "",
            "3",
            "-",
            "s",
            ".",
            "-.",
            ".s",
            "+.s",
            "1d",
            "\u{0085}5s",
            "5s ",
            " 5s",
            "1.5.5s",
            "3000000h",
            "9223372036854775808ns",
            "9223372036854775.808us",
            "9223372036854ms775us808ns",
            "-9223372036854775809ns",
        ] {
            assert!(parse_go_duration(text).is_err(), "{text:?}");
        }
        assert_eq!(
            parse_go_duration("3"),
            Err(DurationError::MissingUnit("3".into()))
        );
        assert_eq!(
            parse_go_duration("1d"),
            Err(DurationError::UnknownUnit {
                unit: "d".into(),
                duration: "1d".into()
            })
        );
    }
}
