//! The `apps.kruise.io/scheduled-at` annotation: Go's `time.Format(time.RFC3339)` and `time.Parse`, including
//! the zone the parsed time carries (which is where the next schedule is computed for a schedule without a
//! zone prefix).

use chrono::{DateTime, FixedOffset, Utc};

use crate::cron::Zone;

/// Formats an instant as Go's `t.In(zone).Format(time.RFC3339)`: seconds precision, `Z` for a zero
/// offset, else `+hh:mm` (seconds of the offset dropped).
pub(crate) fn format(instant: DateTime<Utc>, zone: Zone) -> String {
    let offset = zone.offset_at(instant.timestamp());
    let wall = instant.naive_utc() + chrono::Duration::seconds(i64::from(offset));
    let date_time = wall.format("%Y-%m-%dT%H:%M:%S");
    if offset == 0 {
        return format!("{date_time}Z");
    }
    let minutes = offset / 60;
    let sign = if minutes < 0 { '-' } else { '+' };
    let minutes = minutes.abs();
    format!("{date_time}{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// Parses an RFC 3339 time as Go's `time.Parse(time.RFC3339, ...)` does for the controller's own output:
/// `YYYY-MM-DDTHH:MM:SS`, an optional fraction, then `Z` or `±hh:mm`. The zone of the result is UTC for `Z`,
/// `local` when the offset is the one `local` has at that instant, else that fixed offset.
pub(crate) fn parse(text: &str, local: Zone) -> Option<(DateTime<Utc>, Zone)> {
    let bytes = text.as_bytes();
    let number = |range: std::ops::Range<usize>, max: u32| -> Option<u32> {
        let digits = bytes.get(range)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let value = digits
            .iter()
            .fold(0u32, |value, digit| value * 10 + u32::from(digit - b'0'));
        (value <= max).then_some(value)
    };
    let separators_ok = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')]
        .iter()
        .all(|&(index, separator)| bytes.get(index) == Some(&separator));
    if !separators_ok {
        return None;
    }
    let year = number(0..4, 9999)?;
    let month = number(5..7, 12)?;
    let hour = number(11..13, 23)?;
    let minute = number(14..16, 59)?;
    let second = number(17..19, 59)?;
    let date =
        chrono::NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, number(8..10, 31)?)?;
    let mut rest = bytes.get(19..)?;
    let mut nanos = 0u32;
    if let [b'.', first, ..] = rest
        && first.is_ascii_digit()
    {
        let digits = rest
            .iter()
            .skip(1)
            .take_while(|byte| byte.is_ascii_digit())
            .count();
        // Go keeps nine digits and ignores the rest.
        for (index, digit) in rest
            .iter()
            .skip(1)
            .take(9)
            .take_while(|byte| byte.is_ascii_digit())
            .enumerate()
        {
            nanos += u32::from(digit - b'0') * 10u32.pow(8 - index as u32);
        }
        rest = rest.get(1 + digits..)?;
    }
    let naive = date.and_hms_nano_opt(hour, minute, second, nanos)?;
    if rest == b"Z" {
        return Some((naive.and_utc(), Zone::UTC));
    }
    let [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] = *rest else {
        return None;
    };
    let digit = |byte: u8| byte.is_ascii_digit().then(|| i32::from(byte - b'0'));
    let (hours, minutes) = (digit(h1)? * 10 + digit(h2)?, digit(m1)? * 10 + digit(m2)?);
    if hours > 23 || minutes > 59 {
        return None;
    }
    let offset = (hours * 60 + minutes) * 60 * if sign == b'-' { -1 } else { 1 };
    let instant = naive.and_utc() - chrono::Duration::seconds(i64::from(offset));
    let zone = if local.offset_at(instant.timestamp()) == offset {
        local
    } else {
        Zone::Fixed(FixedOffset::east_opt(offset)?)
    };
    Some((instant, zone))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn formats_like_go() {
        let instant = utc("2022-09-06T02:00:00Z");
        assert_eq!(format(instant, Zone::UTC), "2022-09-06T02:00:00Z");
        assert_eq!(
            format(instant, chrono_tz::Asia::Shanghai.into()),
            "2022-09-06T10:00:00+08:00"
        );
        assert_eq!(
            format(instant, chrono_tz::America::St_Johns.into()),
            "2022-09-05T23:30:00-02:30"
        );
        // London in winter has offset 0: Go writes `Z`.
        assert_eq!(
            format(
                utc("2022-01-06T02:00:00Z"),
                chrono_tz::Europe::London.into()
            ),
            "2022-01-06T02:00:00Z"
        );
        // Seconds of an offset are dropped (Monrovia, 1920: -00:44:30).
        assert_eq!(
            format(
                utc("1920-01-01T00:00:00Z"),
                chrono_tz::Africa::Monrovia.into()
            ),
            "1919-12-31T23:15:30-00:44"
        );
    }

    #[test]
    fn parses_like_go() {
        let shanghai: Zone = chrono_tz::Asia::Shanghai.into();
        assert_eq!(
            parse("2022-09-06T10:00:00+08:00", shanghai),
            Some((utc("2022-09-06T02:00:00Z"), shanghai))
        );
        // An offset the local zone does not have at that time: a fixed zone.
        assert_eq!(
            parse("2022-09-06T10:00:00+09:00", shanghai),
            Some((
                utc("2022-09-06T01:00:00Z"),
                Zone::Fixed(FixedOffset::east_opt(9 * 3600).unwrap())
            ))
        );
        assert_eq!(
            parse("2022-09-06T02:00:00Z", shanghai),
            Some((utc("2022-09-06T02:00:00Z"), Zone::UTC))
        );
        assert_eq!(
            parse("2022-09-06T02:00:00.123456789123Z", Zone::UTC).map(|(t, _)| t),
            Some(utc("2022-09-06T02:00:00.123456789Z"))
        );
        for bad in [
            "",
            "2022-09-06",
            "2022-09-06 02:00:00Z",
            "2022-09-06t02:00:00Z",
            "2022-09-06T02:00:00z",
            "2022-09-06T02:00:00",
            "2022-09-06T24:00:00Z",
            "2022-02-30T02:00:00Z",
            "2022-09-06T02:00:60Z",
            "2022-09-06T02:00:00+0800",
            "2022-09-06T02:00:00+24:00",
            "2022-09-06T02:00:00.Z",
            "+2022-09-06T02:00:00Z",
            "2022-09-06T02:00:00Z ",
        ] {
            assert_eq!(parse(bad, Zone::UTC), None, "{bad:?}");
        }
    }
}
