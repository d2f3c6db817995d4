//! Resource quantities (`500m`, `2Mi`, `1e3`) as apimachinery's `resource.Quantity`
//! reads, compares and prints them, for the checks that need their value: requests
//! against limits, negative amounts, integer-only resources.

use std::cmp::Ordering;

const NANOS_PER_UNIT: i128 = 1_000_000_000;

/// How a quantity was written, which decides how it is printed back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

/// A parsed quantity: its value in billionths (rounded up, as upstream rounds to
/// nano precision) and the format it was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    nanos: i128,
    format: Format,
}

impl Quantity {
    pub const ZERO: Quantity = Quantity { nanos: 0, format: Format::DecimalSi };

    /// Read a quantity written as a string or a JSON number; `None` when it is not one
    /// (or too large to hold here).
    pub fn from_json(v: &serde_json::Value) -> Option<Quantity> {
        match v {
            serde_json::Value::String(s) => Quantity::parse(s),
            serde_json::Value::Number(n) => Quantity::parse(&n.to_string()),
            _ => None,
        }
    }

    pub fn parse(text: &str) -> Option<Quantity> {
        let (negative, rest) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(number_end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
            return None;
        }
        let digits = format!("{whole}{fraction}");
        let significant = digits.trim_start_matches('0');
        let mantissa: i128 = if significant.is_empty() { 0 } else { significant.parse().ok()? };
        let scale = fraction.len() as i32;
        let (format, base, exponent) = suffix_value(suffix)?;
        // value = mantissa * base^exponent / 10^scale, in nanos.
        let nanos = if base == 1024 {
            let factor = 1024i128.checked_pow(exponent as u32)?;
            div_ceil(mantissa.checked_mul(factor)?.checked_mul(NANOS_PER_UNIT)?, 10i128.checked_pow(scale as u32)?)
        } else {
            let power = exponent + 9 - scale;
            if power >= 0 {
                mantissa.checked_mul(10i128.checked_pow(power as u32)?)?
            } else {
                div_ceil(mantissa, 10i128.checked_pow((-power) as u32)?)
            }
        };
        // A value past what Go keeps in an int64 of nanos is out of what this reads.
        if nanos > i128::from(i64::MAX) * NANOS_PER_UNIT {
            return None;
        }
        Some(Quantity { nanos: if negative { -nanos } else { nanos }, format })
    }

    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// Whether the value is a whole number (upstream: its milli-value divides by 1000).
    pub fn is_integer(&self) -> bool {
        div_ceil(self.nanos, 1_000_000) % 1000 == 0
    }

    /// The value in thousandths, rounded up (upstream's `MilliValue`).
    pub fn milli(&self) -> i128 {
        div_ceil(self.nanos, 1_000_000)
    }

    /// The value in units, rounded up (upstream's `Value`).
    pub fn units(&self) -> i128 {
        div_ceil(self.nanos, NANOS_PER_UNIT)
    }

    /// The value as a whole number, when it is one.
    pub fn whole(&self) -> Option<i128> {
        (self.nanos % NANOS_PER_UNIT == 0).then_some(self.nanos / NANOS_PER_UNIT)
    }

    /// Whether this quantity, as bytes, is a multiple of `unit` bytes.
    pub fn is_multiple_of(&self, unit: &Quantity) -> bool {
        unit.nanos != 0 && self.nanos % unit.nanos == 0
    }

    /// A whole count, as upstream's `NewQuantity(n, DecimalSI)` (object counts in quota).
    pub fn from_units(n: i64) -> Quantity {
        Quantity { nanos: i128::from(n) * NANOS_PER_UNIT, format: Format::DecimalSi }
    }

    /// Thousandths, as upstream's `NewMilliQuantity(n, DecimalSI)`.
    pub fn from_milli(n: i128) -> Quantity {
        Quantity { nanos: n.saturating_mul(1_000_000), format: Format::DecimalSi }
    }

    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// The sum, printed in this quantity's format (or the other's when this one is
    /// zero), as upstream's `Quantity.Add` keeps it; `None` past what is held here.
    pub fn checked_add(&self, other: &Quantity) -> Option<Quantity> {
        let format = if self.nanos == 0 { other.format } else { self.format };
        Some(Quantity { nanos: self.nanos.checked_add(other.nanos)?, format })
    }

    /// The difference, in this quantity's format (upstream's `Quantity.Sub`).
    pub fn checked_sub(&self, other: &Quantity) -> Option<Quantity> {
        let format = if self.nanos == 0 { other.format } else { self.format };
        Some(Quantity { nanos: self.nanos.checked_sub(other.nanos)?, format })
    }

    /// Rounded up to a whole number (upstream's `RoundUp(0)`, as storage is charged).
    pub fn rounded_up(&self) -> Quantity {
        Quantity { nanos: self.units() * NANOS_PER_UNIT, format: self.format }
    }

    /// The canonical text upstream prints (`1500m` for `1.5`, `2Mi` stays `2Mi`).
    pub fn canonical(&self) -> String {
        if self.nanos == 0 {
            return "0".to_owned();
        }
        if self.format == Format::BinarySi {
            if let Some(whole) = self.whole().filter(|w| w.abs() >= 1024) {
                let (mut n, mut k) = (whole, 0);
                while k < 6 && n % 1024 == 0 {
                    n /= 1024;
                    k += 1;
                }
                return format!("{n}{}", ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][k]);
            }
        }
        let (mut m, mut e) = (self.nanos, -9i32);
        while e < 18 && m % 1000 == 0 {
            m /= 1000;
            e += 3;
        }
        let suffix = match (self.format, e) {
            (Format::DecimalExponent, 0) => String::new(),
            (Format::DecimalExponent, e) => format!("e{e}"),
            (_, -9) => "n".into(),
            (_, -6) => "u".into(),
            (_, -3) => "m".into(),
            (_, 0) => String::new(),
            (_, 3) => "k".into(),
            (_, 6) => "M".into(),
            (_, 9) => "G".into(),
            (_, 12) => "T".into(),
            (_, 15) => "P".into(),
            (_, _) => "E".into(),
        };
        format!("{m}{suffix}")
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.nanos.cmp(&other.nanos))
    }
}

fn div_ceil(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b != 0 && (a > 0) == (b > 0) {
        q + 1
    } else {
        q
    }
}

/// The format, base and power a suffix stands for.
fn suffix_value(suffix: &str) -> Option<(Format, i128, i32)> {
    let decimal = |e| Some((Format::DecimalSi, 10, e));
    let binary = |e| Some((Format::BinarySi, 1024, e));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(1),
        "Mi" => binary(2),
        "Gi" => binary(3),
        "Ti" => binary(4),
        "Pi" => binary(5),
        "Ei" => binary(6),
        _ => {
            let exponent = suffix.strip_prefix(['e', 'E'])?;
            let e: i32 = exponent.parse().ok()?;
            (-40..=40).contains(&e).then_some((Format::DecimalExponent, 10, e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        Quantity::parse(s).unwrap_or_else(|| panic!("{s}")).canonical()
    }

    #[test]
    fn prints_as_upstream_canonicalizes() {
        assert_eq!(canon("1.5"), "1500m");
        assert_eq!(canon("-1"), "-1");
        assert_eq!(canon("100m"), "100m");
        assert_eq!(canon("2Mi"), "2Mi");
        assert_eq!(canon("1536Ki"), "1536Ki");
        assert_eq!(canon("2048Ki"), "2Mi");
        assert_eq!(canon("1000"), "1k");
        assert_eq!(canon("0.5Ki"), "512");
        assert_eq!(canon("1e3"), "1e3");
        assert_eq!(canon("0"), "0");
    }

    #[test]
    fn compares_by_value_and_refuses_what_is_not_a_quantity() {
        let q = |s| Quantity::parse(s).unwrap();
        assert!(q("200m") > q("100m"));
        assert!(q("1Mi") < q("2M"));
        assert!(q("1") == q("1000m"));
        assert!(q("1.5").is_integer() == false && q("2k").is_integer());
        for bad in ["", "abc", "1.2.3", "1Zi", "--1", "1e999", "99999999999999999999999E"] {
            assert_eq!(Quantity::parse(bad), None, "{bad}");
        }
    }
}
