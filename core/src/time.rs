//! Calendar arithmetic and the two time formats on the wire: RFC 3339 in objects
//! (metav1.Time) and HTTP dates in headers. No clock: callers pass the time in.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Days since 1970-01-01 to a proleptic Gregorian (year, month 1–12, day 1–31), by
/// Howard Hinnant's `civil_from_days`.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Far outside any year a client can send; keeps the arithmetic from overflowing.
    let z = days.clamp(-1_000_000_000, 1_000_000_000) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day) to days since 1970-01-01; days past a month's end roll over.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn unix_seconds(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// RFC 3339 in UTC with second precision, as metav1.Time serializes.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = unix_seconds(t);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Seconds since the epoch of an RFC 3339 UTC time as [`rfc3339`] writes it.
pub fn parse_rfc3339(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let days = days_from_civil(num(0..4)?, num(5..7)?, num(8..10)?);
    let secs = days * 86_400 + num(11..13)? * 3600 + num(14..16)? * 60 + num(17..19)?;
    u64::try_from(secs).ok()
}

/// The instant (seconds since the epoch, nanoseconds) of `s` read as Go's
/// `time.Parse(time.RFC3339, s)` reads it: any offset, fractional seconds, a one-digit
/// hour, fields checked against the calendar; `None` for anything else.
pub fn parse_go_rfc3339(s: &str) -> Option<(i64, u32)> {
    let b = s.as_bytes();
    let digits = |from: usize, n: usize| -> Option<i64> {
        let part = b.get(from..from + n)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0, |v, d| v * 10 + i64::from(d - b'0')))
    };
    let literal = |at: usize, c: u8| (b.get(at) == Some(&c)).then_some(());
    let year = digits(0, 4)?;
    literal(4, b'-')?;
    let month = digits(5, 2)?;
    literal(7, b'-')?;
    let day = digits(8, 2)?;
    literal(10, b'T')?;
    // Go's "15" takes one digit or two.
    let (hour, at) = match digits(11, 2) {
        Some(h) => (h, 13),
        None => (digits(11, 1)?, 12),
    };
    literal(at, b':')?;
    let minute = digits(at + 1, 2)?;
    literal(at + 3, b':')?;
    let second = digits(at + 4, 2)?;
    let mut at = at + 6;
    let mut nanos = 0u32;
    if matches!(b.get(at), Some(b'.' | b',')) && b.get(at + 1).is_some_and(u8::is_ascii_digit) {
        let end = (at + 1..b.len()).find(|&i| !b[i].is_ascii_digit()).unwrap_or(b.len());
        // Nine digits count; more are read and dropped.
        let frac = &b[at + 1..end.min(at + 10)];
        nanos = frac.iter().fold(0u32, |v, d| v * 10 + u32::from(d - b'0')) * 10u32.pow(9 - frac.len() as u32);
        at = end;
    }
    let offset = match b.get(at) {
        Some(b'Z') => {
            at += 1;
            0
        }
        Some(sign @ (b'+' | b'-')) => {
            let (hours, minutes) = (digits(at + 1, 2)?, digits(at + 4, 2)?);
            literal(at + 3, b':')?;
            if hours > 24 || minutes > 60 {
                return None;
            }
            at += 6;
            let offset = hours * 3600 + minutes * 60;
            if *sign == b'-' {
                -offset
            } else {
                offset
            }
        }
        _ => return None,
    };
    let month_days = [31, if is_leap(year) { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let valid = at == b.len()
        && (1..=12).contains(&month)
        && (1..=month_days[(month.clamp(1, 12) - 1) as usize]).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60;
    let days = days_from_civil(year, month, day);
    valid.then(|| (days * 86_400 + hour * 3600 + minute * 60 + second - offset, nanos))
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`); `zone` is the name written at the end:
/// `GMT` for IMF-fixdate headers, `UTC` where Go formats a UTC time as RFC 1123.
pub fn http_date(t: SystemTime, zone: &str) -> String {
    let secs = unix_seconds(t);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{}, {d:02} {} {y:04} {:02}:{:02}:{:02} {zone}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(m - 1) as usize],
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
    )
}

/// The `Date` header value Go's net/http adds to every response.
pub fn imf_fixdate(t: SystemTime) -> String {
    http_date(t, "GMT")
}

/// One calendar year later, as Go's `AddDate(1, 0, 0)` (29 February becomes 1 March).
pub fn a_year_after(t: SystemTime) -> SystemTime {
    let secs = unix_seconds(t);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    let next = days_from_civil(y + 1, i64::from(m), i64::from(d));
    UNIX_EPOCH + Duration::from_secs((next * 86_400 + rem).max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn rfc3339_round_trips() {
        assert_eq!(rfc3339(at(1_795_392_000 + 3_723)), "2026-11-23T01:02:03Z");
        assert_eq!(
            parse_rfc3339("2026-11-23T01:02:03Z"),
            Some(1_795_392_000 + 3_723)
        );
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00Z"), Some(951_782_400));
        assert_eq!(parse_rfc3339("nope"), None);
    }

    #[test]
    fn go_rfc3339_reads_offsets_fractions_and_rejects_the_rest() {
        let at = |s: &str| parse_go_rfc3339(s);
        assert_eq!(at("2026-11-23T01:02:03Z"), Some((1_795_392_000 + 3_723, 0)));
        assert_eq!(at("2026-11-23T03:02:03+02:00"), Some((1_795_392_000 + 3_723, 0)));
        assert_eq!(at("2026-11-22T23:02:03-02:00"), Some((1_795_392_000 + 3_723, 0)));
        assert_eq!(at("2026-11-23T1:02:03Z"), Some((1_795_392_000 + 3_723, 0)));
        assert_eq!(at("2026-11-23T01:02:03.5Z"), Some((1_795_392_000 + 3_723, 500_000_000)));
        assert_eq!(at("2026-11-23T01:02:03,1234567891Z"), Some((1_795_392_000 + 3_723, 123_456_789)));
        assert_eq!(at("2024-02-29T00:00:00Z").map(|t| t.0), Some(1_709_164_800));
        for bad in [
            "not-a-date", "", "2026-11-23", "2026-11-23T01:02:03", "2026-11-23t01:02:03Z",
            "2026-11-23T01:02:03Zx", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z",
            "2026-11-23T24:00:00Z", "2026-11-23T01:60:00Z", "2026-11-23T01:02:60Z",
            "2026-11-23T01:02:03+0200", "2026-11-23T01:02:03.Z", "26-11-23T01:02:03Z",
        ] {
            assert_eq!(at(bad), None, "{bad}");
        }
    }

    #[test]
    fn http_dates() {
        assert_eq!(imf_fixdate(at(0)), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(
            imf_fixdate(at(784_111_777)),
            "Sun, 06 Nov 1994 08:49:37 GMT"
        );
        assert_eq!(
            imf_fixdate(at(951_782_400)),
            "Tue, 29 Feb 2000 00:00:00 GMT"
        );
        assert_eq!(
            imf_fixdate(at(4_102_444_800)),
            "Fri, 01 Jan 2100 00:00:00 GMT"
        );
        assert_eq!(http_date(at(0), "UTC"), "Thu, 01 Jan 1970 00:00:00 UTC");
    }

    #[test]
    fn a_year_after_a_leap_day_is_the_first_of_march() {
        assert_eq!(
            rfc3339(a_year_after(at(951_782_400))),
            "2001-03-01T00:00:00Z"
        );
    }
}
