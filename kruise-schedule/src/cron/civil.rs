//! Proleptic Gregorian calendar arithmetic on plain integers (no time zones, no allocation).
//!
//! Instants are Unix seconds (`i64`). A *wall* time is the same count read on a clock that runs at a fixed
//! offset: `wall = unix + offset`. Everything here is exact integer arithmetic, valid far beyond any date a
//! schedule can reach.

/// Seconds in a day.
pub(crate) const DAY: i64 = 86_400;

/// The calendar fields of a wall time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Civil {
    pub(crate) year: i64,
    /// 1–12.
    pub(crate) month: u32,
    /// 1–31.
    pub(crate) day: u32,
    /// 0–23.
    pub(crate) hour: u32,
    /// 0–59.
    pub(crate) minute: u32,
    /// 0–59.
    pub(crate) second: u32,
    /// 0 (Sunday) – 6 (Saturday).
    pub(crate) weekday: u32,
}

impl Civil {
    /// The fields of a wall time (seconds since 1970-01-01T00:00:00 on the wall clock).
    pub(crate) fn from_wall(wall: i64) -> Self {
        let days = wall.div_euclid(DAY);
        let time_of_day = wall.rem_euclid(DAY);
        let (year, month, day) = date_from_days(days);
        // `time_of_day` is in 0..86_400, so the casts below are lossless.
        let time_of_day = time_of_day as u32;
        Civil {
            year,
            month,
            day,
            hour: time_of_day / 3600,
            minute: time_of_day / 60 % 60,
            second: time_of_day % 60,
            weekday: weekday(days),
        }
    }
}

/// Days since 1970-01-01 of a date; `month` may be any value (it carries into the year like Go's
/// `time.Date`), `day` must be 1-based but may exceed the month (it carries forward).
pub(crate) fn days_from_date(year: i64, month: i64, day: i64) -> i64 {
    let month0 = month - 1;
    let year = year + month0.div_euclid(12);
    let month = month0.rem_euclid(12) + 1;
    days_from_civil(year, month) + (day - 1)
}

/// Days since 1970-01-01 of the first day of `month` (1–12) in `year`.
fn days_from_civil(year: i64, month: i64) -> i64 {
    // Howard Hinnant's algorithm, with the year starting in March so that leap days come last.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = (month + 9) % 12; // March = 0
    let day_of_year = (153 * shifted_month + 2) / 5; // first day of the month
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date (year, month 1–12, day 1–31) of a count of days since 1970-01-01.
pub(crate) fn date_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    // Both values are small and positive by construction.
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// 0 (Sunday) – 6 (Saturday) of a count of days since 1970-01-01 (a Thursday).
pub(crate) fn weekday(days: i64) -> u32 {
    // The value is in 0..7.
    (days + 4).rem_euclid(7) as u32
}

/// Whether `year` is a leap year.
pub(crate) fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Days in `month` (1–12) of `year`.
pub(crate) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The wall time of a date and time of day; like Go's `time.Date`, out-of-range months, days, hours,
/// minutes and seconds carry into the next larger unit.
pub(crate) fn wall_from_fields(
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
) -> i64 {
    days_from_date(year, month, day) * DAY + hour * 3600 + minute * 60 + second
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_day_of_four_centuries() {
        let start = days_from_date(1800, 1, 1);
        let mut expected = (1800, 1, 1);
        for days in start..start + 146_097 {
            assert_eq!(date_from_days(days), expected, "day {days}");
            let (y, m, d) = expected;
            expected = if d < days_in_month(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
        }
    }

    #[test]
    fn known_dates() {
        assert_eq!(days_from_date(1970, 1, 1), 0);
        assert_eq!(days_from_date(2000, 3, 1), 11_017);
        assert_eq!(weekday(0), 4);
        // 2024-02-29 was a Thursday.
        assert_eq!(weekday(days_from_date(2024, 2, 29)), 4);
        // Go's time.Date(2023, 14, 0, ...) is 2024-01-31.
        assert_eq!(date_from_days(days_from_date(2023, 14, 0)), (2024, 1, 31));
        assert_eq!(date_from_days(days_from_date(2023, 0, 1)), (2022, 12, 1));
        assert_eq!(date_from_days(days_from_date(-1, 1, 1)), (-1, 1, 1));
        let civil = Civil::from_wall(wall_from_fields(2022, 9, 6, 2, 0, 0));
        assert_eq!(
            (
                civil.year,
                civil.month,
                civil.day,
                civil.hour,
                civil.weekday
            ),
            (2022, 9, 6, 2, 2)
        );
        assert_eq!(Civil::from_wall(-1).second, 59);
    }
}
