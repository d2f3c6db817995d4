//! Kubernetes' quantity library: `quantity()`, `isQuantity()` and arithmetic and
//! comparison of resource quantities (`1.5Gi`, `500m`, `1e3`), exact as
//! `resource.Quantity` is: values are decimal digits times a power of ten, binary
//! suffixes multiplied out.

use super::Library;
use crate::cel::types::Type as Ty;
use crate::cel::value::Value;
use std::cmp::Ordering;
use std::fmt;
use std::rc::Rc;

/// An exact decimal: `digits` (most significant first, no leading zeros; empty for
/// zero) times ten to `exp`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantity {
    negative: bool,
    digits: Vec<u8>,
    exp: i64,
}

const FORMAT_ERROR: &str = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// Beyond this many digits of alignment an addend cannot change the other (and the
/// work stays bounded for absurd exponents).
const MAX_ALIGN: i64 = 4096;

impl Quantity {
    fn zero() -> Quantity {
        Quantity {
            negative: false,
            digits: Vec::new(),
            exp: 0,
        }
    }

    fn normalize(mut self) -> Quantity {
        let lead = self.digits.iter().take_while(|&&d| d == 0).count();
        self.digits.drain(..lead);
        while self.digits.last() == Some(&0) {
            self.digits.pop();
            self.exp += 1;
        }
        if self.digits.is_empty() {
            return Quantity::zero();
        }
        self
    }

    pub fn from_i64(v: i64) -> Quantity {
        Quantity {
            negative: v < 0,
            digits: v.unsigned_abs().to_string().bytes().map(|b| b - b'0').collect(),
            exp: 0,
        }
        .normalize()
    }

    /// `resource.ParseQuantity`.
    pub fn parse(s: &str) -> Result<Quantity, &'static str> {
        if s.is_empty() {
            return Err(FORMAT_ERROR);
        }
        let (negative, body) = match s.as_bytes()[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let number_end = body.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(body.len());
        let (number, suffix) = body.split_at(number_end);
        if number.is_empty() || number.matches('.').count() > 1 || number == "." {
            return Err(FORMAT_ERROR);
        }
        let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
        let mut digits: Vec<u8> = int_part.bytes().chain(frac_part.bytes()).map(|b| b - b'0').collect();
        let mut exp = -(frac_part.len() as i64);
        let (mul10, mul2) = suffix_scale(suffix).ok_or("unable to parse quantity's suffix")?;
        exp = exp.saturating_add(mul10);
        for _ in 0..mul2 {
            digits = multiply_small(&digits, 2);
        }
        Ok(Quantity { negative, digits, exp }.normalize())
    }

    pub fn sign(&self) -> i64 {
        if self.digits.is_empty() {
            0
        } else if self.negative {
            -1
        } else {
            1
        }
    }

    fn magnitude_cmp(&self, other: &Quantity) -> Ordering {
        let (a_order, b_order) = (self.digits.len() as i64 + self.exp, other.digits.len() as i64 + other.exp);
        if self.digits.is_empty() || other.digits.is_empty() {
            return self.digits.len().min(1).cmp(&other.digits.len().min(1));
        }
        a_order.cmp(&b_order).then_with(|| {
            let n = self.digits.len().max(other.digits.len());
            (0..n)
                .map(|i| (self.digits.get(i).copied().unwrap_or(0), other.digits.get(i).copied().unwrap_or(0)))
                .map(|(a, b)| a.cmp(&b))
                .find(|o| *o != Ordering::Equal)
                .unwrap_or(Ordering::Equal)
        })
    }

    pub fn cmp(&self, other: &Quantity) -> Ordering {
        match (self.sign(), other.sign()) {
            (a, b) if a != b => a.cmp(&b),
            (0, _) => Ordering::Equal,
            (1, _) => self.magnitude_cmp(other),
            _ => other.magnitude_cmp(self),
        }
    }

    pub fn add(&self, other: &Quantity) -> Quantity {
        if self.digits.is_empty() {
            return other.clone();
        }
        if other.digits.is_empty() {
            return self.clone();
        }
        // An addend far below the other's precision leaves it as it is.
        let (a_order, b_order) = (self.digits.len() as i64 + self.exp, other.digits.len() as i64 + other.exp);
        if self.exp - (b_order) > MAX_ALIGN {
            return self.clone();
        }
        if other.exp - a_order > MAX_ALIGN {
            return other.clone();
        }
        let exp = self.exp.min(other.exp);
        let a = shifted(&self.digits, (self.exp - exp).min(2 * MAX_ALIGN) as usize);
        let b = shifted(&other.digits, (other.exp - exp).min(2 * MAX_ALIGN) as usize);
        let (negative, digits) = if self.negative == other.negative {
            (self.negative, add_digits(&a, &b))
        } else {
            match compare_digits(&a, &b) {
                Ordering::Less => (other.negative, sub_digits(&b, &a)),
                _ => (self.negative, sub_digits(&a, &b)),
            }
        };
        Quantity { negative, digits, exp }.normalize()
    }

    pub fn neg(&self) -> Quantity {
        Quantity {
            negative: !self.negative && !self.digits.is_empty(),
            ..self.clone()
        }
    }

    /// The value as an int64, when it is a whole number in range.
    pub fn as_i64(&self) -> Option<i64> {
        if self.digits.is_empty() {
            return Some(0);
        }
        if self.exp < 0 || self.digits.len() as i64 + self.exp > 19 {
            return None;
        }
        let mut v: i128 = 0;
        for d in &self.digits {
            v = v * 10 + *d as i128;
        }
        for _ in 0..self.exp {
            v *= 10;
        }
        let v = if self.negative { -v } else { v };
        i64::try_from(v).ok()
    }

    pub fn as_f64(&self) -> f64 {
        let text: String = self.digits.iter().map(|d| (b'0' + d) as char).collect();
        let v: f64 = format!("{}{}e{}", if self.negative { "-" } else { "" }, if text.is_empty() { "0" } else { &text }, self.exp)
            .parse()
            .unwrap_or(f64::NAN);
        v
    }
}

/// The power of ten and the power of two a quantity's suffix stands for (`m` is
/// 10^-3, `Ki` 2^10, `e3` 10^3); `None` for a suffix `resource.Quantity` does not know.
pub(crate) fn suffix_scale(suffix: &str) -> Option<(i64, u32)> {
    Some(match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        other => {
            let e = other.strip_prefix(['e', 'E'])?;
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (e.parse().ok()?, 0)
        }
    })
}

fn multiply_small(digits: &[u8], m: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(digits.len() + 1);
    let mut carry = 0u16;
    for d in digits.iter().rev() {
        let v = *d as u16 * m as u16 + carry;
        out.push((v % 10) as u8);
        carry = v / 10;
    }
    while carry > 0 {
        out.push((carry % 10) as u8);
        carry /= 10;
    }
    out.reverse();
    out
}

fn shifted(digits: &[u8], zeros: usize) -> Vec<u8> {
    let mut v = digits.to_vec();
    v.extend(std::iter::repeat_n(0, zeros));
    v
}

fn compare_digits(a: &[u8], b: &[u8]) -> Ordering {
    let a = &a[a.iter().take_while(|&&d| d == 0).count()..];
    let b = &b[b.iter().take_while(|&&d| d == 0).count()..];
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn add_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len().max(b.len()) + 1);
    let (mut i, mut j, mut carry) = (a.len(), b.len(), 0u8);
    while i > 0 || j > 0 || carry > 0 {
        let x = if i > 0 { i -= 1; a[i] } else { 0 };
        let y = if j > 0 { j -= 1; b[j] } else { 0 };
        let s = x + y + carry;
        out.push(s % 10);
        carry = s / 10;
    }
    out.reverse();
    out
}

/// `a - b` for `a >= b`.
fn sub_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len());
    let (mut i, mut j, mut borrow) = (a.len(), b.len(), 0i8);
    while i > 0 {
        i -= 1;
        let y = if j > 0 { j -= 1; b[j] as i8 } else { 0 };
        let mut d = a[i] as i8 - y - borrow;
        borrow = 0;
        if d < 0 {
            d += 10;
            borrow = 1;
        }
        out.push(d as u8);
    }
    out.reverse();
    out
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.digits.is_empty() {
            return f.write_str("0");
        }
        let text: String = self.digits.iter().map(|d| (b'0' + d) as char).collect();
        let sign = if self.negative { "-" } else { "" };
        if self.exp == 0 {
            write!(f, "{sign}{text}")
        } else {
            write!(f, "{sign}{text}e{}", self.exp)
        }
    }
}

pub(super) fn register(lib: &mut Library) {
    use Ty::*;
    let q = || Ty::object("kubernetes.Quantity");
    lib.global("quantity", "string_to_quantity", vec![String], q(), |v| match &v[0] {
        Value::String(s) => match Quantity::parse(s) {
            Ok(q) => Value::Quantity(Rc::new(q)),
            Err(e) => Value::error(e),
        },
        _ => Value::no_such_overload(),
    });
    lib.global("isQuantity", "is_quantity_string", vec![String], Bool, |v| match &v[0] {
        Value::String(s) => Value::Bool(Quantity::parse(s).is_ok()),
        _ => Value::no_such_overload(),
    });
    lib.global("sign", "quantity_sign", vec![q()], Int, |v| with(v, |q| Value::Int(q.sign())));
    lib.member("isGreaterThan", "quantity_is_greater_than", vec![q(), q()], Bool, |v| {
        pair(v, |a, b| Value::Bool(a.cmp(b) == Ordering::Greater))
    });
    lib.member("isLessThan", "quantity_is_less_than", vec![q(), q()], Bool, |v| {
        pair(v, |a, b| Value::Bool(a.cmp(b) == Ordering::Less))
    });
    lib.member("compareTo", "quantity_compare_to", vec![q(), q()], Int, |v| {
        pair(v, |a, b| Value::Int(a.cmp(b) as i64))
    });
    lib.member("asApproximateFloat", "quantity_get_float", vec![q()], Double, |v| {
        with(v, |q| Value::Double(q.as_f64()))
    });
    lib.member("asInteger", "quantity_get_int", vec![q()], Int, |v| {
        with(v, |q| match q.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::error("cannot convert value to integer"),
        })
    });
    lib.member("isInteger", "quantity_is_integer", vec![q()], Bool, |v| with(v, |q| Value::Bool(q.as_i64().is_some())));
    lib.member("add", "quantity_add", vec![q(), q()], q(), |v| pair(v, |a, b| Value::Quantity(Rc::new(a.add(b)))));
    lib.member("add", "quantity_add_int", vec![q(), Int], q(), |v| match (&v[0], &v[1]) {
        (Value::Quantity(a), Value::Int(i)) => Value::Quantity(Rc::new(a.add(&Quantity::from_i64(*i)))),
        _ => Value::no_such_overload(),
    });
    lib.member("sub", "quantity_sub", vec![q(), q()], q(), |v| pair(v, |a, b| Value::Quantity(Rc::new(a.add(&b.neg())))));
    lib.member("sub", "quantity_sub_int", vec![q(), Int], q(), |v| match (&v[0], &v[1]) {
        (Value::Quantity(a), Value::Int(i)) => Value::Quantity(Rc::new(a.add(&Quantity::from_i64(*i).neg()))),
        _ => Value::no_such_overload(),
    });
}

fn with<'a>(v: &[Value<'a>], f: fn(&Quantity) -> Value<'a>) -> Value<'a> {
    match &v[0] {
        Value::Quantity(q) => f(q),
        _ => Value::no_such_overload(),
    }
}

fn pair<'a>(v: &[Value<'a>], f: fn(&Quantity, &Quantity) -> Value<'a>) -> Value<'a> {
    match (&v[0], &v[1]) {
        (Value::Quantity(a), Value::Quantity(b)) => f(a, b),
        _ => Value::no_such_overload(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_compares_exactly() {
        let q = |s: &str| Quantity::parse(s).unwrap();
        assert_eq!(q("1Ki").as_i64(), Some(1024));
        assert_eq!(q("1.5Gi").as_i64(), Some(1_610_612_736));
        assert_eq!(q("500m").as_i64(), None);
        assert_eq!(q("500m").as_f64(), 0.5);
        assert_eq!(q("1e3").as_i64(), Some(1000));
        assert_eq!(q("1k").cmp(&q("1000")), Ordering::Equal);
        assert_eq!(q("1Ki").cmp(&q("1k")), Ordering::Greater);
        assert_eq!(q("-1").cmp(&q("0")), Ordering::Less);
        assert_eq!(q("200m").add(&q("800m")).as_i64(), Some(1));
        assert_eq!(q("1").add(&q("3").neg()).as_i64(), Some(-2));
        assert_eq!(Quantity::parse("1x"), Err("unable to parse quantity's suffix"));
        assert_eq!(Quantity::parse("abc"), Err(FORMAT_ERROR));
        assert_eq!(q("1e999999999").cmp(&q("1")), Ordering::Greater);
        assert_eq!(q("1e9999").add(&q("1e-9999")).cmp(&q("1e9999")), Ordering::Equal);
    }
}
