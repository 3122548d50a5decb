//! The two time formats the lifecycle machinery writes (upstream `apis/apps/pub/lifecycle.go` and
//! `metav1.Time`).
//!
//! * The `lifecycle.apps.kruise.io/timestamp` annotation is Go's `time.Now().Format(time.RFC3339)` in the
//!   controller's **local** time zone: whole seconds, the offset as `+08:00`, and `Z` when the offset is zero.
//!   [`lifecycle_timestamp`] renders a caller-supplied [`Zoned`] that way.
//! * Pod condition times are `metav1.Time`: UTC, whole seconds. [`condition_time`] truncates a timestamp so that
//!   a condition built in memory equals the one read back from the API server.
//!
//! ```
//! use k8s_openapi::jiff::{Timestamp, tz::{Offset, TimeZone}};
//! use kruise_lifecycle::timestamp::lifecycle_timestamp;
//!
//! let instant: Timestamp = "2024-05-01T02:00:00.75Z".parse().unwrap();
//! let shanghai = TimeZone::fixed(Offset::constant(8));
//! assert_eq!(lifecycle_timestamp(&instant.to_zoned(shanghai)), "2024-05-01T10:00:00+08:00");
//! assert_eq!(lifecycle_timestamp(&instant.to_zoned(TimeZone::UTC)), "2024-05-01T02:00:00Z");
//! ```

use k8s_openapi::jiff::Zoned;

/// Formats `now` like Go's `Time.Format(time.RFC3339)`: `YYYY-MM-DDTHH:MM:SS` in the zoned value's own
/// civil time, fractional seconds dropped (not rounded), then `Z` for a zero offset or `±hh:mm` (an
/// offset's leftover seconds are dropped, as Go does).
#[must_use]
pub fn lifecycle_timestamp(now: &Zoned) -> String {
    let mut out = String::with_capacity(25);
    let year = i32::from(now.year());
    if year < 0 {
        out.push('-');
    }
    push_padded(&mut out, year.unsigned_abs(), 4);
    for (separator, value) in [
        ('-', now.month()),
        ('-', now.day()),
        ('T', now.hour()),
        (':', now.minute()),
        (':', now.second()),
    ] {
        out.push(separator);
        push_padded(&mut out, u32::from(value.unsigned_abs()), 2);
    }
    let offset_seconds = now.offset().seconds();
    if offset_seconds == 0 {
        out.push('Z');
        return out;
    }
    // Go converts the offset to whole minutes first (truncating), and only a negative minute count gets `-`.
    let minutes = offset_seconds / 60;
    out.push(if minutes < 0 { '-' } else { '+' });
    let minutes = minutes.unsigned_abs();
    push_padded(&mut out, minutes / 60, 2);
    out.push(':');
    push_padded(&mut out, minutes % 60, 2);
    out
}

/// Appends `value` in decimal, zero-padded to `width` digits (as `{:0width$}`; called once per field of
/// every lifecycle write, so it avoids the formatting machinery).
fn push_padded(out: &mut String, value: u32, width: usize) {
    let mut digits = [0u8; 10];
    let mut len = 0;
    let mut rest = value;
    for slot in &mut digits {
        // A digit is below 10, so the cast cannot truncate.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (rest % 10) as u8;
        *slot = b'0' + digit;
        len += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for _ in len..width {
        out.push('0');
    }
    for &digit in digits.iter().take(len).rev() {
        out.push(char::from(digit));
    }
}

pub use kruise_api::pod_condition::condition_time;

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::Timestamp;
    use k8s_openapi::jiff::tz::{Offset, TimeZone};

    fn at(instant: &str, offset_seconds: i32) -> Zoned {
        let instant: Timestamp = instant.parse().unwrap();
        instant.to_zoned(TimeZone::fixed(
            Offset::from_seconds(offset_seconds).unwrap(),
        ))
    }

    #[test]
    fn go_rfc3339_layout() {
        let cases = [
            (
                "2024-05-01T02:00:00Z",
                8 * 3600,
                "2024-05-01T10:00:00+08:00",
            ),
            ("2024-05-01T02:00:00.999999999Z", 0, "2024-05-01T02:00:00Z"),
            (
                "2024-05-01T02:00:00Z",
                -5 * 3600,
                "2024-04-30T21:00:00-05:00",
            ),
            (
                "2024-05-01T02:00:00Z",
                5 * 3600 + 1800,
                "2024-05-01T07:30:00+05:30",
            ),
            (
                "2024-05-01T02:00:00Z",
                -(3600 + 45 * 60),
                "2024-05-01T00:15:00-01:45",
            ),
            // Go drops an offset's seconds and prints -00:00 as +00:00.
            ("2024-05-01T02:00:00Z", -30, "2024-05-01T01:59:30+00:00"),
            (
                "2024-05-01T02:00:00Z",
                3600 + 59,
                "2024-05-01T03:00:59+01:00",
            ),
            ("0009-01-02T03:04:05Z", 0, "0009-01-02T03:04:05Z"),
        ];
        for (instant, offset, expected) in cases {
            assert_eq!(
                lifecycle_timestamp(&at(instant, offset)),
                expected,
                "{instant} {offset}"
            );
        }
    }
}
