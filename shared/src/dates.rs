//! Proleptic Gregorian dates from and to day numbers counted from 1970-01-01, without a
//! date crate: the conversion is a few lines of integer arithmetic (H. Hinnant's
//! `civil_from_days` / `days_from_civil`, on eras of 400 years = 146,097 days that start
//! on March 1st, so the leap day ends a year). Used for UTC day keys of the token budget
//! and the days of `rag report`.

/// The `(year, month, day)` of a day number (negative before 1970).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The day number of a valid `(year, month, day)`.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_days_convert_both_ways() {
        // (day number, date): the epoch, a year later, a century leap day, a day before
        // the epoch, and a day of this project.
        for (n, date) in [
            (0, (1970, 1, 1)),
            (365, (1971, 1, 1)),
            (11_016, (2000, 2, 29)),
            (-1, (1969, 12, 31)),
            (20_780, (2026, 11, 23)),
        ] {
            assert_eq!(civil_from_days(n), date, "{n}");
            assert_eq!(days_from_civil(date.0, date.1, date.2), n, "{date:?}");
        }
    }
}
