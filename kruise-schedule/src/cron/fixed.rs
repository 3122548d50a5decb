//! Firing times on a clock with a fixed offset, by arithmetic on wall times.
//!
//! With a constant offset (and one that is a whole number of minutes) robfig's walk is a plain search: the
//! next firing time after `t` is the first wall time at or after `floor(t) + 1 s` whose second is 0 and whose
//! minute, hour, day and month match, unless that lies past the end of the year five years on. These
//! functions answer that, its mirror image and counts over a span, without stepping through time.

use super::civil::{Civil, DAY, days_from_date, days_in_month, wall_from_fields};
use super::fields::{Fields, bit_range};

/// The lowest set bit of `bits` at or above `from`, if any.
fn next_bit(bits: u64, from: u32) -> Option<u32> {
    if from > 63 {
        return None;
    }
    let above = bits & (u64::MAX << from);
    (above != 0).then(|| above.trailing_zeros())
}

/// The highest set bit of `bits` at or below `to`, if any.
fn previous_bit(bits: u64, to: u32) -> Option<u32> {
    let below = bits & bit_range(0, to.min(63));
    (below != 0).then(|| 63 - below.leading_zeros())
}

/// The minute and hour sets without the star bit.
fn minutes(fields: &Fields) -> u64 {
    fields.minute & bit_range(0, 59)
}

fn hours(fields: &Fields) -> u64 {
    fields.hour & bit_range(0, 23)
}

/// The first firing wall time at or after `from`, in a year no later than `last_year`.
pub(crate) fn next_at_or_after(fields: &Fields, from: i64, last_year: i64) -> Option<i64> {
    if fields.never() {
        return None;
    }
    // Round up to a whole minute.
    let from = from + (60 - from.rem_euclid(60)) % 60;
    let start = Civil::from_wall(from);
    let (mut year, mut month, mut day) = (start.year, start.month, start.day);
    let (mut hour, mut minute) = (start.hour, start.minute);
    loop {
        if year > last_year {
            return None;
        }
        let Some(next_month) = next_bit(fields.month & bit_range(1, 12), month) else {
            (year, month, day, hour, minute) = (year + 1, 1, 1, 0, 0);
            continue;
        };
        if next_month != month {
            (month, day, hour, minute) = (next_month, 1, 0, 0);
        }
        let Some(next_day) = next_bit(u64::from(fields.days_of(year, month)), day) else {
            (day, hour, minute) = (1, 0, 0);
            if month == 12 {
                (year, month) = (year + 1, 1);
            } else {
                month += 1;
            }
            continue;
        };
        if next_day != day {
            (day, hour, minute) = (next_day, 0, 0);
        }
        let Some(next_hour) = next_bit(hours(fields), hour) else {
            // Past the last hour of the day: the next day (possibly in the next month).
            (day, hour, minute) = (day + 1, 0, 0);
            if day > days_in_month(year, month) {
                day = 1;
                if month == 12 {
                    (year, month) = (year + 1, 1);
                } else {
                    month += 1;
                }
            }
            continue;
        };
        if next_hour != hour {
            (hour, minute) = (next_hour, 0);
        }
        let Some(next_minute) = next_bit(minutes(fields), minute) else {
            (hour, minute) = (hour + 1, 0);
            if hour == 24 {
                (day, hour) = (day + 1, 0);
                if day > days_in_month(year, month) {
                    day = 1;
                    if month == 12 {
                        (year, month) = (year + 1, 1);
                    } else {
                        month += 1;
                    }
                }
            }
            continue;
        };
        return Some(wall_from_fields(
            year,
            i64::from(month),
            i64::from(day),
            i64::from(next_hour),
            i64::from(next_minute),
            0,
        ));
    }
}

/// The last firing wall time at or before `to` and after `after`, if any.
pub(crate) fn last_at_or_before(fields: &Fields, to: i64, after: i64) -> Option<i64> {
    if fields.never() || to <= after {
        return None;
    }
    let to = to - to.rem_euclid(60);
    let end = Civil::from_wall(to);
    let first_year = Civil::from_wall(after).year;
    let (mut year, mut month, mut day) = (end.year, end.month, end.day);
    let (mut hour, mut minute) = (end.hour, end.minute);
    loop {
        if year < first_year {
            return None;
        }
        let Some(previous_month) = previous_bit(fields.month & bit_range(1, 12), month) else {
            (year, month, day, hour, minute) = (year - 1, 12, 31, 23, 59);
            continue;
        };
        if previous_month != month {
            month = previous_month;
            (day, hour, minute) = (days_in_month(year, month), 23, 59);
        }
        let Some(previous_day) = previous_bit(u64::from(fields.days_of(year, month)), day) else {
            (hour, minute) = (23, 59);
            if month == 1 {
                (year, month) = (year - 1, 12);
            } else {
                month -= 1;
            }
            day = days_in_month(year, month);
            continue;
        };
        if previous_day != day {
            (day, hour, minute) = (previous_day, 23, 59);
        }
        let Some(previous_hour) = previous_bit(hours(fields), hour) else {
            (hour, minute) = (23, 59);
            if day == 1 {
                if month == 1 {
                    (year, month) = (year - 1, 12);
                } else {
                    month -= 1;
                }
                day = days_in_month(year, month);
            } else {
                day -= 1;
            }
            continue;
        };
        if previous_hour != hour {
            (hour, minute) = (previous_hour, 59);
        }
        let Some(previous_minute) = previous_bit(minutes(fields), minute) else {
            if hour == 0 {
                (hour, minute) = (23, 59);
                if day == 1 {
                    if month == 1 {
                        (year, month) = (year - 1, 12);
                    } else {
                        month -= 1;
                    }
                    day = days_in_month(year, month);
                } else {
                    day -= 1;
                }
            } else {
                (hour, minute) = (hour - 1, 59);
            }
            continue;
        };
        let wall = wall_from_fields(
            year,
            i64::from(month),
            i64::from(day),
            i64::from(previous_hour),
            i64::from(previous_minute),
            0,
        );
        return (wall > after).then_some(wall);
    }
}

/// How many firing wall times lie in `(after, to]`.
pub(crate) fn count_between(fields: &Fields, after: i64, to: i64) -> u64 {
    if to <= after || fields.never() {
        return 0;
    }
    let first_day = after.div_euclid(DAY);
    let last_day = to.div_euclid(DAY);
    let day_matches = |day: i64| {
        let civil = Civil::from_wall(day * DAY);
        fields.month_matches(civil.month) && fields.day_matches(civil.day, civil.weekday)
    };
    // Times of day (minutes since midnight) that fire, in [lo, hi].
    let times_between = |lo: i64, hi: i64| -> u64 {
        if lo > hi {
            return 0;
        }
        (lo / 60..=hi / 60)
            .map(|hour| {
                if hours(fields) >> hour & 1 == 0 {
                    return 0;
                }
                // Minutes of this hour inside [lo, hi].
                let from = (lo - hour * 60).clamp(0, 59) as u32;
                let to = (hi - hour * 60).clamp(0, 59) as u32;
                u64::from((minutes(fields) & bit_range(from, to)).count_ones())
            })
            .sum()
    };
    // Minutes of day in (after, ...] and [..., to], as inclusive minute ranges.
    let after_minute = (after.rem_euclid(DAY) + 60) / 60; // first whole minute strictly after `after`
    let to_minute = to.rem_euclid(DAY) / 60;
    if first_day == last_day {
        return if day_matches(first_day) {
            times_between(after_minute, to_minute)
        } else {
            0
        };
    }
    let mut total = 0;
    if day_matches(first_day) {
        total += times_between(after_minute, 24 * 60 - 1);
    }
    if day_matches(last_day) {
        total += times_between(0, to_minute);
    }
    // Whole days strictly between, a month at a time.
    let per_day = u64::from(minutes(fields).count_ones()) * u64::from(hours(fields).count_ones());
    let mut day = first_day + 1;
    while day < last_day {
        let civil = Civil::from_wall(day * DAY);
        let month_start = days_from_date(civil.year, i64::from(civil.month), 1);
        let month_length = days_in_month(civil.year, civil.month);
        let through = (month_start + i64::from(month_length) - 1).min(last_day - 1);
        // Days `day..=through` of this month, as day-of-month numbers.
        let (from_dom, to_dom) = (day - month_start + 1, through - month_start + 1);
        let days = fields.days_of(civil.year, civil.month)
            & (bit_range(from_dom as u32, to_dom as u32) as u32);
        total += u64::from(days.count_ones()) * per_day;
        day = through + 1;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cron::schedule::{Kind, Schedule};

    fn fields(text: &str) -> Fields {
        match Schedule::parse(text).unwrap().kind() {
            Kind::Spec { fields, .. } => fields,
            Kind::Every { .. } => panic!("not a spec"),
        }
    }

    fn wall(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> i64 {
        wall_from_fields(y, mo, d, h, mi, s)
    }

    #[test]
    fn next_and_last() {
        let leap = fields("0 0 29 2 *");
        assert_eq!(
            next_at_or_after(&leap, wall(2023, 3, 1, 0, 0, 0), 2030),
            Some(wall(2024, 2, 29, 0, 0, 0))
        );
        assert_eq!(
            next_at_or_after(&leap, wall(2097, 3, 1, 0, 0, 0), 2102),
            None
        );
        assert_eq!(
            last_at_or_before(&leap, wall(2027, 3, 1, 0, 0, 0), wall(2000, 1, 1, 0, 0, 0)),
            Some(wall(2024, 2, 29, 0, 0, 0))
        );
        let quarter = fields("*/15 9-17 * * mon-fri");
        // Saturday 2024-06-01 10:07:30 -> Monday 09:00.
        assert_eq!(
            next_at_or_after(&quarter, wall(2024, 6, 1, 10, 7, 30), 2030),
            Some(wall(2024, 6, 3, 9, 0, 0))
        );
        assert_eq!(
            next_at_or_after(&quarter, wall(2024, 6, 3, 9, 0, 0), 2030),
            Some(wall(2024, 6, 3, 9, 0, 0))
        );
        assert_eq!(
            next_at_or_after(&quarter, wall(2024, 6, 3, 17, 45, 1), 2030),
            Some(wall(2024, 6, 4, 9, 0, 0))
        );
        assert_eq!(
            last_at_or_before(&quarter, wall(2024, 6, 3, 9, 14, 59), 0),
            Some(wall(2024, 6, 3, 9, 0, 0))
        );
        assert_eq!(
            last_at_or_before(&quarter, wall(2024, 6, 3, 8, 59, 59), 0),
            Some(wall(2024, 5, 31, 17, 45, 0))
        );
        assert_eq!(
            last_at_or_before(
                &quarter,
                wall(2024, 6, 3, 8, 59, 59),
                wall(2024, 5, 31, 17, 45, 0)
            ),
            None
        );
    }

    #[test]
    fn counts_agree_with_stepping() {
        for text in [
            "* * * * *",
            "*/7 3,5-9 * * *",
            "0 0 13 * 5",
            "30 2 * 2 *",
            "0 0 29 2 *",
            "5 4 * * sun",
            "0 12 1,15 jan-jun *",
        ] {
            let fields = fields(text);
            for (after, to) in [
                (wall(2024, 1, 30, 23, 59, 30), wall(2024, 3, 2, 0, 1, 0)),
                (wall(2023, 12, 31, 0, 0, 0), wall(2024, 1, 1, 0, 0, 0)),
                (wall(2024, 2, 29, 2, 30, 0), wall(2024, 2, 29, 2, 30, 0)),
                (wall(2024, 2, 29, 2, 29, 59), wall(2024, 2, 29, 2, 30, 0)),
                (wall(2020, 2, 28, 0, 0, 0), wall(2024, 3, 1, 0, 0, 0)),
            ] {
                let mut stepped = 0;
                let mut last = None;
                let mut at = after + 1;
                while let Some(next) = next_at_or_after(&fields, at, 3000) {
                    if next > to {
                        break;
                    }
                    stepped += 1;
                    last = Some(next);
                    at = next + 1;
                }
                assert_eq!(
                    count_between(&fields, after, to),
                    stepped,
                    "{text} {after} {to}"
                );
                assert_eq!(
                    last_at_or_before(&fields, to, after),
                    last,
                    "{text} {after} {to}"
                );
            }
        }
    }
}
