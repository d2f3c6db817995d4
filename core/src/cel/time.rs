//! CEL's `duration` and `timestamp` values: Go's `time.Duration` (nanoseconds in an
//! int64, so about ±292 years) and timestamps between years 1 and 9999, their text
//! forms (`"1h30m"`, RFC 3339) and calendar fields in UTC or a fixed offset.

use std::fmt;

/// A span of time in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub i64);

/// An instant: seconds since the Unix epoch and nanoseconds within the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp {
    pub secs: i64,
    pub nanos: u32,
}

/// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, CEL's timestamp range.
const MIN_SECS: i64 = -62_135_596_800;
const MAX_SECS: i64 = 253_402_300_799;

const NANOS_PER_SECOND: i64 = 1_000_000_000;

impl Duration {
    pub fn seconds(self) -> i64 {
        self.0 / NANOS_PER_SECOND
    }

    pub fn checked_add(self, other: Duration) -> Option<Duration> {
        self.0.checked_add(other.0).map(Duration)
    }

    pub fn checked_sub(self, other: Duration) -> Option<Duration> {
        self.0.checked_sub(other.0).map(Duration)
    }
}

impl fmt::Display for Duration {
    /// As cel-go's `string(duration)`: seconds with as many decimals as needed, `s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0 / NANOS_PER_SECOND;
        let frac = (self.0 % NANOS_PER_SECOND).unsigned_abs();
        let sign = if self.0 < 0 && secs == 0 { "-" } else { "" };
        if frac == 0 {
            return write!(f, "{sign}{secs}s");
        }
        let digits = format!("{frac:09}");
        write!(f, "{sign}{secs}.{}s", digits.trim_end_matches('0'))
    }
}

impl Timestamp {
    pub fn new(secs: i64, nanos: u32) -> Option<Timestamp> {
        (MIN_SECS..=MAX_SECS).contains(&secs).then_some(Timestamp { secs, nanos })
    }

    pub fn add(self, d: Duration) -> Option<Timestamp> {
        let total = (self.secs as i128) * NANOS_PER_SECOND as i128 + self.nanos as i128 + d.0 as i128;
        let secs = total.div_euclid(NANOS_PER_SECOND as i128);
        let nanos = total.rem_euclid(NANOS_PER_SECOND as i128) as u32;
        Timestamp::new(i64::try_from(secs).ok()?, nanos)
    }

    pub fn sub(self, other: Timestamp) -> Option<Duration> {
        let a = (self.secs as i128) * NANOS_PER_SECOND as i128 + self.nanos as i128;
        let b = (other.secs as i128) * NANOS_PER_SECOND as i128 + other.nanos as i128;
        i64::try_from(a - b).ok().map(Duration)
    }

    /// Calendar fields at `offset_secs` east of UTC.
    pub fn civil(self, offset_secs: i64) -> Civil {
        let local = self.secs + offset_secs;
        let days = local.div_euclid(86_400);
        let secs_of_day = local.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: (secs_of_day / 3600) as u32,
            minute: (secs_of_day % 3600 / 60) as u32,
            second: (secs_of_day % 60) as u32,
            day_of_week: (days + 4).rem_euclid(7) as u32,
            day_of_year: (days - days_from_civil(year, 1, 1)) as u32,
        }
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC with the fraction trimmed, as Go's `time.RFC3339Nano`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.civil(0);
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            c.year, c.month, c.day, c.hour, c.minute, c.second
        )?;
        if self.nanos != 0 {
            let digits = format!("{:09}", self.nanos);
            write!(f, ".{}", digits.trim_end_matches('0'))?;
        }
        f.write_str("Z")
    }
}

/// A timestamp's calendar fields.
#[derive(Debug, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// 0 is Sunday.
    pub day_of_week: u32,
    /// 0-based.
    pub day_of_year: u32,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `YYYY-MM-DD`.
pub fn parse_date(s: &str) -> Option<Timestamp> {
    let (y, rest) = s.split_once('-')?;
    let (m, d) = rest.split_once('-')?;
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (year, month, day) = (digits(y)? as i64, digits(m)?, digits(d)?);
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    Timestamp::new(days_from_civil(year, month, day) * 86_400, 0)
}

/// RFC 3339: `2006-01-02T15:04:05.999999999Z07:00` (`T`/`t`, `Z`/`z` or an offset).
pub fn parse_date_time(s: &str) -> Option<Timestamp> {
    if s.len() < 20 || !s.is_char_boundary(10) {
        return None;
    }
    let (date, rest) = s.split_at(10);
    let date = parse_date(date)?;
    let rest = rest.strip_prefix(['T', 't'])?;
    if rest.len() < 9 || !rest.is_char_boundary(8) {
        return None;
    }
    let (clock, mut zone) = rest.split_at(8);
    let parts: Vec<&str> = clock.split(':').collect();
    if parts.len() != 3 || parts.iter().any(|p| p.len() != 2) {
        return None;
    }
    let (h, mi, se) = (digits(parts[0])?, digits(parts[1])?, digits(parts[2])?);
    if h > 23 || mi > 59 || se > 59 {
        return None;
    }
    let mut nanos = 0u32;
    if let Some(frac) = zone.strip_prefix('.') {
        let end = frac.find(|c: char| !c.is_ascii_digit()).unwrap_or(frac.len());
        if end == 0 || end > 9 {
            return None;
        }
        nanos = digits(&frac[..end])? * 10u32.pow(9 - end as u32);
        zone = &frac[end..];
    }
    let offset = match zone {
        "Z" | "z" => 0,
        z if z.len() == 6 && (z.starts_with('+') || z.starts_with('-')) && &z[3..4] == ":" => {
            let secs = digits(&z[1..3])? as i64 * 3600 + digits(&z[4..6])? as i64 * 60;
            if z.starts_with('-') {
                -secs
            } else {
                secs
            }
        }
        _ => return None,
    };
    Timestamp::new(date.secs + h as i64 * 3600 + mi as i64 * 60 + se as i64 - offset, nanos)
}

/// Go's `time.ParseDuration`: `[-+]` then decimal numbers with units
/// `ns`, `us`, `µs`, `ms`, `s`, `m`, `h` (`"1h30m"`, `"1.5s"`).
pub fn parse_duration(s: &str) -> Option<Duration> {
    parse_duration_units(s, &[])
}

/// The OpenAPI `duration` format also takes days and weeks.
pub fn parse_openapi_duration(s: &str) -> Option<Duration> {
    parse_duration_units(s, &[("d", 86_400 * NANOS_PER_SECOND), ("w", 7 * 86_400 * NANOS_PER_SECOND)])
}

fn parse_duration_units(s: &str, extra: &[(&str, i64)]) -> Option<Duration> {
    let (negative, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(Duration(0));
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let int_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let int_part = &rest[..int_end];
        rest = &rest[int_end..];
        let mut frac_part = "";
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len());
            frac_part = &after[..end];
            rest = &after[end..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let unit_end = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        rest = &rest[unit_end..];
        let scale: i64 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => NANOS_PER_SECOND,
            "m" => 60 * NANOS_PER_SECOND,
            "h" => 3600 * NANOS_PER_SECOND,
            other => extra.iter().find(|(u, _)| *u == other)?.1,
        };
        let whole: i128 = if int_part.is_empty() { 0 } else { int_part.parse().ok()? };
        total = total.checked_add(whole.checked_mul(scale as i128)?)?;
        if !frac_part.is_empty() {
            let digits = &frac_part[..frac_part.len().min(18)];
            let value: i128 = digits.parse().ok()?;
            let denominator = 10i128.pow(digits.len() as u32);
            total = total.checked_add(value * scale as i128 / denominator)?;
        }
        if total > i64::MAX as i128 + 1 {
            return None;
        }
    }
    let total = if negative { -total } else { total };
    i64::try_from(total).ok().map(Duration)
}

/// A time zone argument of the calendar accessors: `UTC` or a fixed `±HH:MM` offset.
/// Named zones need a zone database the core does not carry.
pub fn parse_zone(zone: &str) -> Option<i64> {
    if zone == "UTC" || zone.is_empty() {
        return Some(0);
    }
    let (sign, rest) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':')?;
    Some(sign * (digits(h)? as i64 * 3600 + digits(m)? as i64 * 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_as_go_does() {
        assert_eq!(parse_duration("1h30m"), Some(Duration(5400 * NANOS_PER_SECOND)));
        assert_eq!(parse_duration("1.5s"), Some(Duration(1_500_000_000)));
        assert_eq!(parse_duration("-2ms"), Some(Duration(-2_000_000)));
        assert_eq!(parse_duration("1d"), None);
        assert_eq!(parse_openapi_duration("1d"), Some(Duration(86_400 * NANOS_PER_SECOND)));
        assert_eq!(parse_duration("10"), None);
        assert_eq!(Duration(5400 * NANOS_PER_SECOND).to_string(), "5400s");
        assert_eq!(Duration(1_500_000_000).to_string(), "1.5s");
    }

    #[test]
    fn timestamps_round_trip() {
        let t = parse_date_time("2023-05-17T10:20:30.5+02:00").unwrap();
        assert_eq!(t.to_string(), "2023-05-17T08:20:30.5Z");
        let c = t.civil(0);
        assert_eq!((c.year, c.month, c.day, c.hour, c.day_of_week), (2023, 5, 17, 8, 3));
        assert_eq!(parse_date("2024-02-29").unwrap().to_string(), "2024-02-29T00:00:00Z");
        assert_eq!(parse_date("2023-02-29"), None);
        assert_eq!(parse_date_time("0001-01-01T00:00:00Z").unwrap().secs, MIN_SECS);
    }
}
