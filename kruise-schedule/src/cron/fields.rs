//! The five fields of a parsed schedule as bit sets, and the questions the search asks them.

use super::civil::{Civil, days_from_date, days_in_month, weekday};

/// Set in a field's bits when its expression contained `*` or `?` (without a step above 1). Only the
/// day-of-month and day-of-week fields look at it: when either has it, a day must match both; otherwise it
/// must match either.
pub(crate) const STAR: u64 = 1 << 63;

/// One bit per allowed value (bit `n` = value `n`), plus [`STAR`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Fields {
    pub(crate) minute: u64,
    pub(crate) hour: u64,
    pub(crate) day_of_month: u64,
    pub(crate) month: u64,
    pub(crate) day_of_week: u64,
}

/// The bits of `lo..=hi`.
pub(crate) const fn bit_range(lo: u32, hi: u32) -> u64 {
    (u64::MAX >> (63 - hi)) & (u64::MAX << lo)
}

impl Fields {
    /// Whether a (day of month, weekday) pair passes the day rule.
    pub(crate) fn day_matches(&self, day: u32, weekday: u32) -> bool {
        let by_date = self.day_of_month >> day & 1 == 1;
        let by_weekday = self.day_of_week >> weekday & 1 == 1;
        if (self.day_of_month | self.day_of_week) & STAR != 0 {
            by_date && by_weekday
        } else {
            by_date || by_weekday
        }
    }

    pub(crate) fn month_matches(&self, month: u32) -> bool {
        self.month >> month & 1 == 1
    }

    /// Whether a wall time is a firing time: every field matches and the second is 0.
    pub(crate) fn matches(&self, civil: &Civil) -> bool {
        civil.second == 0
            && self.minute >> civil.minute & 1 == 1
            && self.hour >> civil.hour & 1 == 1
            && self.month_matches(civil.month)
            && self.day_matches(civil.day, civil.weekday)
    }

    /// The days of a month that pass the day rule (bit `d` = day `d`), or 0 when the month does not match.
    pub(crate) fn days_of(&self, year: i64, month: u32) -> u32 {
        if !self.month_matches(month) {
            return 0;
        }
        let length = days_in_month(year, month);
        let in_month = bit_range(1, length) as u32;
        let by_date = (self.day_of_month as u32) & in_month;
        // Weekday of day 1, then the days of the month that fall on an allowed weekday.
        let first = weekday(days_from_date(year, i64::from(month), 1));
        let mut by_weekday = 0u32;
        for offset in 0..7 {
            if self.day_of_week >> ((first + offset) % 7) & 1 == 1 {
                // Days 1 + offset, 8 + offset, ...: a repeating 7-day pattern.
                by_weekday |= 0x1020_4081_u32 << (1 + offset);
            }
        }
        let by_weekday = by_weekday & in_month;
        if (self.day_of_month | self.day_of_week) & STAR != 0 {
            by_date & by_weekday
        } else {
            by_date | by_weekday
        }
    }

    /// Whether a day `day` of `month` can pass the day rule in some year (every date falls on every weekday
    /// over the 400-year cycle, Feb 29 included).
    fn date_possible(&self, month: u32, day: u32) -> bool {
        self.month_matches(month)
            && day <= days_in_month(2000, month)
            && (0..7).any(|weekday| self.day_matches(day, weekday))
    }

    /// True when no instant can ever match: an empty minute or hour set, or no possible date.
    pub(crate) fn never(&self) -> bool {
        self.minute & bit_range(0, 59) == 0
            || self.hour & bit_range(0, 23) == 0
            || !(1..=12).any(|month| (1..=31).any(|day| self.date_possible(month, day)))
    }

    /// True when every day of every year matches (then consecutive firing times are at most a day apart).
    pub(crate) fn every_day(&self) -> bool {
        self.month & bit_range(1, 12) == bit_range(1, 12)
            && (1..=31).all(|day| (0..7).all(|weekday| self.day_matches(day, weekday)))
    }

    /// True when the only date that can match is February 29, so that firing times can lie more than five
    /// years apart (2096-02-29 to 2104-02-29).
    pub(crate) fn leap_day_only(&self) -> bool {
        self.date_possible(2, 29)
            && (1..=12).all(|month| {
                (1..=31).all(|day| (month, day) == (2, 29) || !self.date_possible(month, day))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(day_of_month: u64, month: u64, day_of_week: u64) -> Fields {
        Fields {
            minute: 1,
            hour: 1,
            day_of_month,
            month,
            day_of_week,
        }
    }

    const ALL_DOM: u64 = bit_range(1, 31) | STAR;
    const ALL_MONTHS: u64 = bit_range(1, 12) | STAR;
    const ALL_DOW: u64 = bit_range(0, 6) | STAR;

    #[test]
    fn bit_ranges() {
        assert_eq!(bit_range(0, 0), 1);
        assert_eq!(bit_range(1, 3), 0b1110);
        assert_eq!(bit_range(0, 63), u64::MAX);
    }

    #[test]
    fn days_of_a_month() {
        // 2024-02: 29 days, the 1st a Thursday.
        let every = fields(ALL_DOM, ALL_MONTHS, ALL_DOW);
        assert_eq!(every.days_of(2024, 2), bit_range(1, 29) as u32);
        let mondays = fields(ALL_DOM, ALL_MONTHS, 1 << 1);
        assert_eq!(
            mondays.days_of(2024, 2),
            (1 << 5) | (1 << 12) | (1 << 19) | (1 << 26)
        );
        // Both restricted: the 13th or any Friday.
        let either = fields(1 << 13, ALL_MONTHS, 1 << 5);
        assert_eq!(
            either.days_of(2024, 2),
            (1 << 2) | (1 << 9) | (1 << 13) | (1 << 16) | (1 << 23)
        );
        assert_eq!(fields(ALL_DOM, 1 << 3, ALL_DOW).days_of(2024, 2), 0);
    }

    #[test]
    fn classification() {
        assert!(fields(ALL_DOM, ALL_MONTHS, ALL_DOW).every_day());
        assert!(!fields(ALL_DOM, ALL_MONTHS, 1).every_day());
        // Day of week 0-6 with no star still covers every day when day of month is restricted (either rule).
        assert!(fields(1 << 5, ALL_MONTHS, bit_range(0, 6)).every_day());
        assert!(fields(1 << 30, 1 << 2, ALL_DOW).never());
        assert!(fields(0, ALL_MONTHS, ALL_DOW).never());
        assert!(!fields(1 << 29, 1 << 2, ALL_DOW).never());
        assert!(fields(1 << 29, 1 << 2, ALL_DOW).leap_day_only());
        assert!(fields((1 << 29) | (1 << 30), 1 << 2, ALL_DOW).leap_day_only());
        assert!(!fields(1 << 29, 1 << 2, 1).leap_day_only());
        assert!(!fields(1 << 29, (1 << 2) | (1 << 3), ALL_DOW).leap_day_only());
    }
}
