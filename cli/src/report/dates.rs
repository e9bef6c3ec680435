//! Calendar days in UTC for `rag report`: `YYYY-MM-DD` to and from days since 1970-01-01,
//! with the conversion in [`shared::dates`].

use shared::dates::{civil_from_days, days_from_civil};

/// Milliseconds in a day.
pub(crate) const DAY_MS: u64 = 86_400_000;

/// The day (since 1970-01-01, UTC) of an epoch-millisecond time.
pub(crate) fn day_of(at_ms: u64) -> i64 {
    i64::try_from(at_ms / DAY_MS).unwrap_or(i64::MAX)
}

/// The first millisecond of a day (0 for days before 1970).
pub(crate) fn start_ms(day: i64) -> u64 {
    u64::try_from(day).unwrap_or(0).saturating_mul(DAY_MS)
}

/// Days since 1970-01-01 of `YYYY-MM-DD`; an error says what is wrong.
pub(crate) fn parse_day(text: &str) -> Result<i64, String> {
    let bad = || format!("{text:?} is not a date like 2026-11-23");
    let mut parts = text.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return Err(bad());
    }
    let (y, m, d): (i64, i64, i64) = (
        y.parse().map_err(|_| bad())?,
        m.parse().map_err(|_| bad())?,
        d.parse().map_err(|_| bad())?,
    );
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return Err(bad());
    }
    Ok(days_from_civil(y, m, d))
}

/// `YYYY-MM-DD` of a day since 1970-01-01.
pub(crate) fn format_day(day: i64) -> String {
    let (y, m, d) = civil_from_days(day);
    format!("{y:04}-{m:02}-{d:02}")
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_days_convert_both_ways() {
        // 1970-01-01 is day 0; 2000-03-01 is day 11017; 2026-11-23 is day 20780
        // (`date -u -d 2026-11-23 +%s` / 86400).
        for (text, day) in [
            ("1970-01-01", 0),
            ("2000-02-29", 11_016),
            ("2000-03-01", 11_017),
            ("2026-11-23", 20_780),
            ("1969-12-31", -1),
        ] {
            assert_eq!(parse_day(text), Ok(day), "{text}");
            assert_eq!(format_day(day), text);
        }
        assert_eq!(day_of(20_780 * DAY_MS + DAY_MS - 1), 20_780);
    }

    #[test]
    fn bad_dates_are_refused() {
        for bad in [
            "2026-2-01",
            "2026-02-30",
            "2025-02-29",
            "2026-13-01",
            "today",
            "2026-11-23-1",
            "",
        ] {
            assert!(parse_day(bad).is_err(), "{bad}");
        }
        assert!(parse_day("2024-02-29").is_ok());
    }
}
