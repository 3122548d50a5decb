//! The grammar of robfig/cron v3.0.1's `ParseStandard`, rule for rule.
//!
//! * An empty schedule is an error.
//! * `TZ=<zone> ` or `CRON_TZ=<zone> `: the zone is everything between the first `=` and the first space
//!   (U+0020); it loads like Go's `time.LoadLocation`; the rest is trimmed of Unicode white space.
//! * Then `@...` must be a descriptor, spelled exactly (no surrounding space unless a prefix was trimmed).
//! * Otherwise the schedule splits on Unicode white space into exactly five fields. Each field splits on `,`
//!   (empty parts are dropped, so `1,,2` is `1,2` and `,` allows nothing); each part is `*`, `?`, a number or
//!   name, or `lo-hi`, optionally followed by `/step`. `N/step` means `N-max/step`. After `*` or `?` anything
//!   after a `-` is ignored (`*-5` is `*`). Numbers are Go `strconv.Atoi` numbers (`+5` and `007` are fine).
//!   Names are the three-letter month and weekday names, compared after Go's `strings.ToLower`.

use super::civil::DAY;
use super::duration::parse_go_duration;
use super::error::{Field, FieldProblem, ParseError};
use super::fields::{Fields, STAR, bit_range};
use super::schedule::{Kind, Location};
use super::zone::Zone;

/// The allowed values of one field and its names.
struct Bounds {
    field: Field,
    min: u64,
    max: u64,
    names: &'static [&'static str],
}

const MINUTES: Bounds = Bounds {
    field: Field::Minute,
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    field: Field::Hour,
    min: 0,
    max: 23,
    names: &[],
};
const DAYS_OF_MONTH: Bounds = Bounds {
    field: Field::DayOfMonth,
    min: 1,
    max: 31,
    names: &[],
};
/// Month names; index + 1 is the month.
const MONTHS: Bounds = Bounds {
    field: Field::Month,
    min: 1,
    max: 12,
    names: &[
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ],
};
/// Weekday names; the index is the weekday.
const DAYS_OF_WEEK: Bounds = Bounds {
    field: Field::DayOfWeek,
    min: 0,
    max: 6,
    names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
};

/// Parses a schedule exactly as `cron.ParseStandard` does.
pub(crate) fn parse_standard(text: &str) -> Result<Kind, ParseError> {
    if text.is_empty() {
        return Err(ParseError::Empty);
    }
    let mut rest = text;
    let mut location = Location::Local;
    if text.starts_with("TZ=") || text.starts_with("CRON_TZ=") {
        let space = text
            .find(' ')
            .ok_or_else(|| ParseError::TimeZoneWithoutSchedule {
                schedule: text.into(),
            })?;
        // The first `=` is the one of the prefix, before any space.
        let equals = text.find('=').unwrap_or(0);
        let name = text.get(equals + 1..space).unwrap_or_default();
        location = match Zone::load(name, Zone::UTC)? {
            // `TZ=Local` is Go's `time.Local` itself: the zone of the time passed to `Next`.
            _ if name == "Local" => Location::Local,
            zone => Location::Zone(zone),
        };
        rest = text.get(space..).unwrap_or_default().trim();
    }
    if rest.starts_with('@') {
        return parse_descriptor(rest, location);
    }
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let [minute, hour, day_of_month, month, day_of_week] = fields[..] else {
        return Err(ParseError::FieldCount {
            found: fields.len(),
            fields: fields.iter().map(|&field| field.to_owned()).collect(),
        });
    };
    Ok(Kind::Spec {
        fields: Fields {
            minute: parse_field(minute, 1, &MINUTES)?,
            hour: parse_field(hour, 2, &HOURS)?,
            day_of_month: parse_field(day_of_month, 3, &DAYS_OF_MONTH)?,
            month: parse_field(month, 4, &MONTHS)?,
            day_of_week: parse_field(day_of_week, 5, &DAYS_OF_WEEK)?,
        },
        location,
    })
}

fn parse_descriptor(descriptor: &str, location: Location) -> Result<Kind, ParseError> {
    // minute, hour, day of month, month, day of week; `None` means every value plus the star bit.
    let at = |minute: u32, hour: Option<u32>, day: Option<u32>, month: Option<u32>, weekday| {
        let single_or_all = |value: Option<u32>, lo, hi| match value {
            Some(value) => 1u64 << value,
            None => bit_range(lo, hi) | STAR,
        };
        Kind::Spec {
            fields: Fields {
                minute: 1 << minute,
                hour: single_or_all(hour, 0, 23),
                day_of_month: single_or_all(day, 1, 31),
                month: single_or_all(month, 1, 12),
                day_of_week: single_or_all(weekday, 0, 6),
            },
            location,
        }
    };
    Ok(match descriptor {
        "@yearly" | "@annually" => at(0, Some(0), Some(1), Some(1), None),
        "@monthly" => at(0, Some(0), Some(1), None, None),
        "@weekly" => at(0, Some(0), None, None, Some(0)),
        "@daily" | "@midnight" => at(0, Some(0), None, None, None),
        "@hourly" => at(0, None, None, None, None),
        _ => {
            let Some(duration) = descriptor.strip_prefix("@every ") else {
                return Err(ParseError::UnknownDescriptor(descriptor.into()));
            };
            let nanos = parse_go_duration(duration).map_err(ParseError::Every)?;
            // robfig's `Every`: at least a second, whole seconds only.
            let seconds = (nanos / 1_000_000_000).max(1);
            Kind::Every {
                delay: seconds.min(i64::MAX / DAY),
            }
        }
    })
}

/// The bits of a comma-separated list of ranges.
fn parse_field(text: &str, position: usize, bounds: &Bounds) -> Result<u64, ParseError> {
    let mut bits = 0;
    for expression in text.split(',').filter(|part| !part.is_empty()) {
        bits |= parse_range(expression, bounds).map_err(|problem| ParseError::Field {
            field: bounds.field,
            position,
            expression: expression.into(),
            problem,
        })?;
    }
    Ok(bits)
}

/// The bits of `*`, `?`, `n`, `lo-hi`, each optionally followed by `/step`.
fn parse_range(expression: &str, bounds: &Bounds) -> Result<u64, FieldProblem> {
    let mut range_and_step = expression.split('/');
    let range = range_and_step.next().unwrap_or_default();
    let mut low_and_high = range.split('-');
    let low = low_and_high.next().unwrap_or_default();
    let high = low_and_high.next();
    let single = high.is_none();
    let (start, mut end, mut star) = if low == "*" || low == "?" {
        (bounds.min, bounds.max, STAR)
    } else {
        let start = number_or_name(low, bounds)?;
        let end = match high {
            None => start,
            Some(high) if low_and_high.next().is_none() => number_or_name(high, bounds)?,
            Some(_) => return Err(FieldProblem::TooManyHyphens),
        };
        (start, end, 0)
    };
    let step = match (range_and_step.next(), range_and_step.next()) {
        (None, _) => 1,
        (Some(step), None) => {
            let step = number(step)?;
            if single {
                end = bounds.max;
            }
            if step > 1 {
                star = 0;
            }
            step
        }
        (Some(_), Some(_)) => return Err(FieldProblem::TooManySlashes),
    };
    if start < bounds.min {
        return Err(FieldProblem::BelowMinimum {
            start,
            min: bounds.min,
        });
    }
    if end > bounds.max {
        return Err(FieldProblem::AboveMaximum {
            end,
            max: bounds.max,
        });
    }
    if start > end {
        return Err(FieldProblem::Reversed { start, end });
    }
    if step == 0 {
        return Err(FieldProblem::ZeroStep);
    }
    // All values are at most 59 here.
    let mut bits = 0u64;
    let mut value = start;
    while value <= end {
        bits |= 1 << value;
        value = value.saturating_add(step);
    }
    Ok(bits | star)
}

fn number_or_name(text: &str, bounds: &Bounds) -> Result<u64, FieldProblem> {
    if let Some(lower) = go_lowercase_ascii(text)
        && let Some(index) = bounds
            .names
            .iter()
            .position(|name| name.as_bytes() == lower)
    {
        // Months are named from 1, weekdays from 0.
        return Ok(index as u64 + bounds.min);
    }
    number(text)
}

/// Go's `strconv.Atoi`, then the check that the number is not negative.
fn number(text: &str) -> Result<u64, FieldProblem> {
    let (negative, digits) = match text.as_bytes().split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text.as_bytes()),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(FieldProblem::NotANumber(text.into()));
    }
    // Accumulate negatively so that i64::MIN fits, as Go's ParseInt does.
    let mut value: i64 = 0;
    for &digit in digits {
        value = value
            .checked_mul(10)
            .and_then(|value| value.checked_sub(i64::from(digit - b'0')))
            .ok_or_else(|| FieldProblem::NumberTooLarge(text.into()))?;
    }
    if negative {
        return if value == 0 {
            Ok(0)
        } else {
            Err(FieldProblem::Negative(value))
        };
    }
    value
        .checked_neg()
        .map(i64::unsigned_abs)
        .ok_or_else(|| FieldProblem::NumberTooLarge(text.into()))
}

/// The text lower-cased like Go's `strings.ToLower`, when the result is three ASCII letters long (the only
/// length a name can have). Besides ASCII, only `İ` (U+0130) and the Kelvin sign (U+212A) lower-case to ASCII
/// letters in Go.
fn go_lowercase_ascii(text: &str) -> Option<[u8; 3]> {
    let mut lower = [0u8; 3];
    let mut chars = text.chars();
    for slot in &mut lower {
        *slot = match chars.next()? {
            c if c.is_ascii() => c.to_ascii_lowercase() as u8,
            '\u{130}' => b'i',
            '\u{212A}' => b'k',
            _ => return None,
        };
    }
    chars.next().is_none().then_some(lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_rules() {
        assert_eq!(number("5"), Ok(5));
        assert_eq!(number("+5"), Ok(5));
        assert_eq!(number("007"), Ok(7));
        assert_eq!(number("-0"), Ok(0));
        assert_eq!(number("9223372036854775807"), Ok(i64::MAX as u64));
        assert_eq!(
            number("9223372036854775808"),
            Err(FieldProblem::NumberTooLarge("9223372036854775808".into()))
        );
        assert_eq!(
            number("-9223372036854775808"),
            Err(FieldProblem::Negative(i64::MIN))
        );
        assert_eq!(
            number("-9223372036854775809"),
            Err(FieldProblem::NumberTooLarge("-9223372036854775809".into()))
        );
        assert_eq!(number("-3"), Err(FieldProblem::Negative(-3)));
        for bad in ["", "+", "-", "1_000", " 1", "1 ", "0x10", "١"] {
            assert_eq!(
                number(bad),
                Err(FieldProblem::NotANumber(bad.into())),
                "{bad}"
            );
        }
    }

    #[test]
    fn names_lower_case_like_go() {
        assert_eq!(go_lowercase_ascii("MON"), Some(*b"mon"));
        assert_eq!(go_lowercase_ascii("FR\u{130}"), Some(*b"fri"));
        assert_eq!(go_lowercase_ascii("mond"), None);
        assert_eq!(go_lowercase_ascii("mo"), None);
        assert_eq!(go_lowercase_ascii("mÖn"), None);
    }
}
