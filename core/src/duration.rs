//! Durations as kube-apiserver's flags take them (Go's `time.ParseDuration`): a sequence
//! of decimal numbers, each with an optional fraction and a unit, such as `5m`,
//! `1h30m`, `1.5s` or `300ms`; a lone `0` needs no unit. Units: ns, us (or µs/μs), ms,
//! s, m, h. Negative durations are refused: no flag of ours has a use for one.

use std::time::Duration;

/// Why a duration did not parse; the message quotes the input, as Go's does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DurationError(pub String);

impl std::fmt::Display for DurationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DurationError {}

const UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Parse a duration such as `5m0s`.
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let invalid = || DurationError(format!("invalid duration {input:?}"));
    let mut rest = input.strip_prefix('+').unwrap_or(input);
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    // Nanoseconds, wide enough that no sum of in-range parts overflows before the check.
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let whole_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (whole, after) = rest.split_at(whole_len);
        let (fraction, after) = match after.strip_prefix('.') {
            Some(after) => {
                let len = after.bytes().take_while(u8::is_ascii_digit).count();
                after.split_at(len)
            }
            None => ("", after),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(invalid());
        }
        let unit_len = after
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit() || *c == '.')
            .map_or(after.len(), |(i, _)| i);
        let (unit, after) = after.split_at(unit_len);
        let Some(&(_, scale)) = UNITS.iter().find(|(name, _)| *name == unit) else {
            return Err(if unit.is_empty() {
                DurationError(format!("missing unit in duration {input:?}"))
            } else {
                DurationError(format!("unknown unit {unit:?} in duration {input:?}"))
            });
        };
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            // More digits than any representable duration has.
            if whole.len() > 30 {
                return Err(invalid());
            }
            whole.parse().map_err(|_| invalid())?
        };
        let mut part = whole.checked_mul(scale).ok_or_else(invalid)?;
        // The fraction's digits beyond nanosecond precision are dropped, as Go does.
        let mut unit_step = scale;
        for digit in fraction.bytes() {
            unit_step /= 10;
            if unit_step == 0 {
                break;
            }
            part += u128::from(digit - b'0') * unit_step;
        }
        total = total.checked_add(part).ok_or_else(invalid)?;
        if total > u128::from(u64::MAX) {
            return Err(invalid());
        }
        rest = after;
    }
    Ok(Duration::from_nanos(total as u64))
}

/// A duration as Go prints one (`5m0s`, `1h0m0s`, `1.5s`, `300ms`, `0s`), for help text
/// and messages.
pub fn format_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    if nanos < 1_000_000_000 {
        let (scale, unit) = match nanos {
            n if n < 1_000 => (1, "ns"),
            n if n < 1_000_000 => (1_000, "µs"),
            _ => (1_000_000, "ms"),
        };
        return format!("{}{unit}", decimal(nanos, scale));
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = nanos / 60_000_000_000 % 60;
    let seconds = decimal(nanos % 60_000_000_000, 1_000_000_000);
    match (hours, minutes) {
        (0, 0) => format!("{seconds}s"),
        (0, m) => format!("{m}m{seconds}s"),
        (h, m) => format!("{h}h{m}m{seconds}s"),
    }
}

/// `value / scale` with the fraction's trailing zeros dropped.
fn decimal(value: u128, scale: u128) -> String {
    let (whole, fraction) = (value / scale, value % scale);
    if fraction == 0 {
        return whole.to_string();
    }
    let width = scale.ilog10() as usize;
    let digits = format!("{fraction:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_go_parses() {
        let cases = [
            ("0", 0),
            ("5m", 300_000_000_000),
            ("5m0s", 300_000_000_000),
            ("1h30m", 5_400_000_000_000),
            ("1.5s", 1_500_000_000),
            (".5s", 500_000_000),
            ("300ms", 300_000_000),
            ("10us", 10_000),
            ("10µs", 10_000),
            ("7ns", 7),
            ("+2s", 2_000_000_000),
            ("1.0000000001s", 1_000_000_000),
        ];
        for (input, nanos) in cases {
            assert_eq!(
                parse_duration(input),
                Ok(Duration::from_nanos(nanos)),
                "{input}"
            );
        }
    }

    #[test]
    fn refuses_what_go_refuses_and_negatives() {
        for input in [
            "",
            "5",
            "s",
            "1x",
            ".s",
            "1.s2",
            "-1s",
            "1h-2m",
            "99999999999999999999h",
        ] {
            assert!(parse_duration(input).is_err(), "{input} parsed");
        }
        assert_eq!(
            parse_duration("5").unwrap_err().to_string(),
            "missing unit in duration \"5\""
        );
        assert_eq!(
            parse_duration("1x").unwrap_err().to_string(),
            "unknown unit \"x\" in duration \"1x\""
        );
    }

    #[test]
    fn formats_as_go_prints() {
        let cases = [
            (0, "0s"),
            (300_000_000_000, "5m0s"),
            (3_600_000_000_000, "1h0m0s"),
            (1_500_000_000, "1.5s"),
            (300_000_000, "300ms"),
            (61_000_000_000, "1m1s"),
        ];
        for (nanos, text) in cases {
            assert_eq!(format_duration(Duration::from_nanos(nanos)), text);
            assert_eq!(parse_duration(text), Ok(Duration::from_nanos(nanos)));
        }
    }
}
