//! String formats, as kube-apiserver checks them for custom resources.
//!
//! kube-apiserver keeps only the formats of its supported list (`bsonobjectid`, `uri`,
//! `email`, `hostname`, `ipv4`, `ipv6`, `cidr`, `mac`, `uuid`, `uuid3`, `uuid4`, `uuid5`,
//! `isbn`, `isbn10`, `isbn13`, `creditcard`, `ssn`, `hexcolor`, `rgbcolor`, `byte`,
//! `password`, `date`, `duration`, `datetime`; a name is compared without its dashes, so
//! `date-time` is `datetime`) and drops every other (`int32`, `int64`, `float`, `double`,
//! …), which then checks nothing. Each check follows the one kube-openapi's `strfmt`
//! registers: Go's `net` and `net/url` parsers for addresses and URIs, `time.Parse` for
//! dates, go-openapi's patterns for the rest. Two are approximations of Go's parsers
//! rather than ports: `email` (`net/mail.ParseAddress`: a display name and an address
//! in angle brackets, or a bare address, of dot-atoms, quoted strings and domain
//! literals; comments are not read) and `uri` (`url.ParseRequestURI`: scheme, opaque
//! or rooted path, authority with user info, host and numeric port, percent escapes).

use regex::Regex;
use std::net::Ipv6Addr;
use std::sync::OnceLock;

/// A format kube-apiserver checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    BsonObjectId,
    Uri,
    Email,
    Hostname,
    Ipv4,
    Ipv6,
    Cidr,
    Mac,
    Uuid,
    Uuid3,
    Uuid4,
    Uuid5,
    Isbn,
    Isbn10,
    Isbn13,
    CreditCard,
    Ssn,
    HexColor,
    RgbColor,
    Byte,
    Password,
    Date,
    Duration,
    DateTime,
}

impl Format {
    /// The format a schema's `format` names, when kube-apiserver checks it.
    pub fn named(name: &str) -> Option<Format> {
        Some(match name.replace('-', "").as_str() {
            "bsonobjectid" => Format::BsonObjectId,
            "uri" => Format::Uri,
            "email" => Format::Email,
            "hostname" => Format::Hostname,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "cidr" => Format::Cidr,
            "mac" => Format::Mac,
            "uuid" => Format::Uuid,
            "uuid3" => Format::Uuid3,
            "uuid4" => Format::Uuid4,
            "uuid5" => Format::Uuid5,
            "isbn" => Format::Isbn,
            "isbn10" => Format::Isbn10,
            "isbn13" => Format::Isbn13,
            "creditcard" => Format::CreditCard,
            "ssn" => Format::Ssn,
            "hexcolor" => Format::HexColor,
            "rgbcolor" => Format::RgbColor,
            "byte" => Format::Byte,
            "password" => Format::Password,
            "date" => Format::Date,
            "duration" => Format::Duration,
            "datetime" => Format::DateTime,
            _ => return None,
        })
    }

    /// Whether `s` is a valid value of this format.
    pub fn accepts(self, s: &str) -> bool {
        match self {
            Format::BsonObjectId => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
            Format::Uri => request_uri(s),
            Format::Email => email(s),
            Format::Hostname => hostname(s),
            Format::Ipv4 => ipv4_sloppy(s).is_some() || (s.contains('.') && ipv6(s, true).is_some()),
            Format::Ipv6 => s.contains(':') && ip(s).is_some(),
            Format::Cidr => cidr(s),
            Format::Mac => mac(s),
            Format::Uuid => uuid(s, None),
            Format::Uuid3 => uuid(s, Some(b'3')),
            Format::Uuid4 => uuid(s, Some(b'4')),
            Format::Uuid5 => uuid(s, Some(b'5')),
            Format::Isbn => isbn10(s) || isbn13(s),
            Format::Isbn10 => isbn10(s),
            Format::Isbn13 => isbn13(s),
            Format::CreditCard => credit_card(s),
            Format::Ssn => s.len() == 11 && matches(&SSN, r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$", s),
            Format::HexColor => matches(&HEX_COLOR, "^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$", s),
            Format::RgbColor => matches(&RGB_COLOR, RGB_COLOR_PATTERN, s),
            Format::Byte => matches(&BASE64, BASE64_PATTERN, s),
            Format::Password => true,
            Format::Date => date(s),
            Format::Duration => duration(s),
            Format::DateTime => date_time(s),
        }
    }
}

static SSN: OnceLock<Regex> = OnceLock::new();
static HEX_COLOR: OnceLock<Regex> = OnceLock::new();
static RGB_COLOR: OnceLock<Regex> = OnceLock::new();
static BASE64: OnceLock<Regex> = OnceLock::new();
static HOSTNAME: OnceLock<Regex> = OnceLock::new();
static CREDIT_CARD: OnceLock<Regex> = OnceLock::new();

const RGB_COLOR_PATTERN: &str = r"^rgb\([\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*,[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*,[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*\)$";
const BASE64_PATTERN: &str = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$";
/// go-openapi's hostname pattern (RFC 1034 names, letters and symbols of any script).
const HOSTNAME_PATTERN: &str = r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$";
const CREDIT_CARD_PATTERN: &str = "^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$";

fn matches(cell: &'static OnceLock<Regex>, pattern: &str, s: &str) -> bool {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid built-in pattern")).is_match(s)
}

fn hostname(s: &str) -> bool {
    matches(&HOSTNAME, HOSTNAME_PATTERN, s) && s.len() <= 255 && s.split('.').all(|part| part.len() <= 63)
}

/// go-openapi's UUID patterns: hex groups 8-4-4-4-12, dashes optional, any case; the
/// version digit (and the variant for 4 and 5) when one is named.
fn uuid(s: &str, version: Option<u8>) -> bool {
    let mut hex: Vec<u8> = Vec::with_capacity(32);
    let bytes = s.as_bytes();
    let mut i = 0;
    for (group, len) in [8usize, 4, 4, 4, 12].into_iter().enumerate() {
        if group > 0 && bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        for _ in 0..len {
            match bytes.get(i) {
                Some(b) if b.is_ascii_hexdigit() => hex.push(b.to_ascii_lowercase()),
                _ => return false,
            }
            i += 1;
        }
    }
    if i != bytes.len() {
        return false;
    }
    match version {
        None => true,
        Some(b'3') => hex[12] == b'3',
        Some(v) => hex[12] == v && matches!(hex[16], b'8' | b'9' | b'a' | b'b'),
    }
}

fn isbn_digits(s: &str) -> String {
    s.chars().filter(|c| !(c.is_whitespace() || *c == '-')).collect()
}

fn isbn10(s: &str) -> bool {
    let d = isbn_digits(s);
    let b = d.as_bytes();
    let shape = b.len() == 10 && b[..9].iter().all(u8::is_ascii_digit) && (b[9].is_ascii_digit() || b[9] == b'X');
    if !shape {
        return false;
    }
    let mut sum: u32 = (0..9).map(|i| (i as u32 + 1) * u32::from(b[i] - b'0')).sum();
    sum += if b[9] == b'X' { 100 } else { 10 * u32::from(b[9] - b'0') };
    sum % 11 == 0
}

fn isbn13(s: &str) -> bool {
    let d = isbn_digits(s);
    let b = d.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = (0..12).map(|i| [1, 3][i % 2] * u32::from(b[i] - b'0')).sum();
    u32::from(b[12] - b'0') == (10 - sum % 10) % 10
}

fn credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !matches(&CREDIT_CARD, CREDIT_CARD_PATTERN, &digits) {
        return false;
    }
    let mut sum = 0;
    for (i, b) in digits.bytes().rev().enumerate() {
        let mut d = u32::from(b - b'0');
        if i % 2 == 1 {
            d *= 2;
            if d >= 10 {
                d = d % 10 + 1;
            }
        }
        sum += d;
    }
    sum % 10 == 0
}

/// An IPv4 address as k8s.io/utils' `ParseIPSloppy` reads one: four decimal parts up to
/// 255, leading zeros allowed.
fn ipv4_sloppy(s: &str) -> Option<[u8; 4]> {
    let mut out = [0u8; 4];
    let mut parts = s.split('.');
    for slot in &mut out {
        let part = parts.next()?;
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let trimmed = part.trim_start_matches('0');
        if trimmed.len() > 3 {
            return None;
        }
        let n: u32 = if trimmed.is_empty() { 0 } else { trimmed.parse().ok()? };
        *slot = u8::try_from(n).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// An IPv4 address as Go's `net.ParseIP` reads one: no leading zeros.
fn ipv4_strict(s: &str) -> bool {
    s.split('.').count() == 4
        && s.split('.').all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()) && !(p.len() > 1 && p.starts_with('0')) && p.parse::<u16>().is_ok_and(|n| n <= 255))
}

/// An IPv6 address; `sloppy`: its embedded IPv4 part may have leading zeros.
fn ipv6(s: &str, sloppy: bool) -> Option<Ipv6Addr> {
    if let Ok(addr) = s.parse::<Ipv6Addr>() {
        return Some(addr);
    }
    // Rust refuses leading zeros in an embedded IPv4 part; the sloppy parser does not.
    let (head, tail) = s.rsplit_once(':')?;
    if !sloppy || !tail.contains('.') {
        return None;
    }
    let [a, b, c, d] = ipv4_sloppy(tail)?;
    format!("{head}:{a}.{b}.{c}.{d}").parse().ok()
}

/// Go's `net.ParseIP`: either family.
fn ip(s: &str) -> Option<()> {
    if s.contains(':') {
        ipv6(s, false).map(|_| ())
    } else {
        ipv4_strict(s).then_some(())
    }
}

/// k8s.io/utils' `ParseCIDRSloppy`: an address, `/`, a prefix length within its size.
fn cidr(s: &str) -> bool {
    let Some((addr, prefix)) = s.split_once('/') else {
        return false;
    };
    let bits = if addr.contains(':') {
        if ipv6(addr, true).is_none() {
            return false;
        }
        128
    } else {
        if ipv4_sloppy(addr).is_none() {
            return false;
        }
        32
    };
    !prefix.is_empty()
        && prefix.bytes().all(|b| b.is_ascii_digit())
        && prefix.trim_start_matches('0').len() <= 3
        && prefix.parse::<u32>().is_ok_and(|n| n <= bits)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 bytes as `xx:xx:…`, `xx-xx-…` or `xxxx.xxxx.…`.
fn mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let sizes = [6, 8, 20];
    if b[2] == b':' || b[2] == b'-' {
        if (b.len() + 1) % 3 != 0 || !sizes.contains(&((b.len() + 1) / 3)) {
            return false;
        }
        let sep = b[2];
        b.chunks(3).all(|c| c[0].is_ascii_hexdigit() && c[1].is_ascii_hexdigit() && (c.len() == 2 || c[2] == sep))
    } else if b[4] == b'.' {
        if (b.len() + 1) % 5 != 0 || !sizes.contains(&(2 * (b.len() + 1) / 5)) {
            return false;
        }
        b.chunks(5).all(|c| c[..4].iter().all(u8::is_ascii_hexdigit) && (c.len() == 4 || c[4] == b'.'))
    } else {
        false
    }
}

/// `time.Parse("2006-01-02", s)`: a real calendar day.
pub(crate) fn date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| {
        b[r.clone()].iter().all(u8::is_ascii_digit).then(|| s[r].parse::<u32>().unwrap_or(0))
    };
    let (Some(year), Some(month), Some(day)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// strfmt's `IsDateTime`: a date, a `t` (any case), and a time of day with an optional
/// fraction and a `z` or numeric offset.
fn date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(day), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !date(day) {
        return false;
    }
    // ^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$
    let chars: Vec<char> = time.chars().collect();
    let two = |i: usize| chars.get(i..i + 2).filter(|d| d.iter().all(char::is_ascii_digit)).map(|d| d.iter().collect::<String>());
    let (Some(h), Some(m), Some(sec)) = (two(0), two(3), two(6)) else {
        return false;
    };
    if chars.get(2) != Some(&':') || chars.get(5) != Some(&':') {
        return false;
    }
    let mut i = 8;
    if chars.len() > i + 1 && chars[i + 1].is_ascii_digit() && chars[i] != 'z' && chars[i] != '+' && chars[i] != '-' {
        i += 1;
        while chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
    }
    let zone: String = chars[i.min(chars.len())..].iter().collect();
    let zone_ok = zone == "z"
        || (zone.len() == 6
            && matches!(zone.as_bytes()[0], b'+' | b'-')
            && zone.as_bytes()[3] == b':'
            && [1, 2, 4, 5].iter().all(|&j| zone.as_bytes()[j].is_ascii_digit()));
    zone_ok && h.as_str() <= "23" && m.as_str() <= "59" && sec.as_str() <= "59"
}

/// strfmt's `ParseDuration`: Go's `time.ParseDuration`, or else any `<digits> <unit>`
/// found in the text (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`, `d`, `w` and their longer
/// names).
fn duration(s: &str) -> bool {
    go_duration(s) || loose_duration(s)
}

/// Go's `time.ParseDuration` (overflow aside).
fn go_duration(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let mut rest = s;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let mut digits = int_len;
        rest = &rest[int_len..];
        if let Some(after) = rest.strip_prefix('.') {
            let frac = after.bytes().take_while(u8::is_ascii_digit).count();
            digits += frac;
            rest = &after[frac..];
        }
        if digits == 0 {
            return false;
        }
        let unit_len = rest.find(|c: char| c == '.' || c.is_ascii_digit()).unwrap_or(rest.len());
        if !matches!(&rest[..unit_len], "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h") {
            return false;
        }
        rest = &rest[unit_len..];
    }
    true
}

/// strfmt's fallback: every `(\d+)\s*([A-Za-zµ]+)` in the text, any one naming a unit.
fn loose_duration(s: &str) -> bool {
    const UNITS: [&[&str]; 8] =
        [&["ns", "nano"], &["us", "µs", "micro"], &["ms", "milli"], &["s", "sec"], &["m", "min"], &["h", "hr", "hour"], &["d", "day"], &["w", "wk", "week"]];
    let chars: Vec<char> = s.chars().collect();
    let mut ok = false;
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let number: String = chars[start..i].iter().collect();
        let mut j = i;
        while j < chars.len() && matches!(chars[j], ' ' | '\t' | '\n' | '\r' | '\u{c}') {
            j += 1;
        }
        let unit_start = j;
        while j < chars.len() && (chars[j].is_ascii_alphabetic() || chars[j] == 'µ') {
            j += 1;
        }
        if j == unit_start {
            continue;
        }
        if number.parse::<i64>().is_err() {
            // Go's Atoi fails on an out-of-range factor, and the whole parse with it.
            return false;
        }
        let unit: String = chars[unit_start..j].iter().collect::<String>().to_lowercase();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (k, variant) in variants.iter().enumerate() {
                if (k == last && unit.starts_with(variant)) || variant.eq_ignore_ascii_case(&unit) {
                    ok = true;
                }
            }
        }
        i = j;
    }
    ok
}

/// `net/mail.ParseAddress`, approximately: `local@domain`, alone or in angle brackets
/// after a display name.
fn email(s: &str) -> bool {
    let s = s.trim_matches([' ', '\t']);
    let addr = if let Some(open) = s.rfind('<') {
        let Some(inner) = s[open + 1..].strip_suffix('>') else {
            return false;
        };
        if !display_name(s[..open].trim_end()) {
            return false;
        }
        inner
    } else {
        s
    };
    let Some(at) = addr.rfind('@') else {
        return false;
    };
    let (local, domain) = (&addr[..at], &addr[at + 1..]);
    let local_ok = if local.len() >= 2 && local.starts_with('"') && local.ends_with('"') {
        quoted_text(&local[1..local.len() - 1])
    } else {
        dot_atom(local)
    };
    let domain_ok = if domain.starts_with('[') && domain.ends_with(']') {
        domain[1..domain.len() - 1].chars().all(|c| c.is_ascii_graphic() && !matches!(c, '[' | ']' | '\\'))
    } else {
        dot_atom(domain)
    };
    local_ok && domain_ok
}

fn atext(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || !c.is_ascii()
}

fn dot_atom(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(|atom| !atom.is_empty() && atom.chars().all(atext))
}

fn quoted_text(s: &str) -> bool {
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '"' || (c.is_ascii_control() && c != '\t') {
            return false;
        }
    }
    !escaped
}

fn display_name(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        return quoted_text(&s[1..s.len() - 1]);
    }
    s.split([' ', '\t']).filter(|w| !w.is_empty()).all(|w| w.chars().all(|c| atext(c) || c == '.'))
}

/// `url.ParseRequestURI`: an absolute URI or an absolute path.
fn request_uri(s: &str) -> bool {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if s == "*" {
        return true;
    }
    let (scheme, rest) = match scheme(s) {
        Ok(split) => split,
        Err(()) => return false,
    };
    let rest = match rest.split_once('?') {
        Some((before, _query)) => before,
        None => rest,
    };
    if !rest.starts_with('/') {
        // A rootless path after a scheme is opaque; without one it is no request URI.
        return scheme.is_some();
    }
    let mut path = rest;
    if scheme.is_some() {
        if let Some(after) = rest.strip_prefix("//") {
            let end = after.find('/').unwrap_or(after.len());
            if !authority(&after[..end]) {
                return false;
            }
            path = &after[end..];
        }
    }
    escapes_valid(path, false)
}

/// The scheme of `s` and what follows its colon; no scheme when `s` does not start
/// with one; an error for a colon first.
fn scheme(s: &str) -> Result<(Option<&str>, &str), ()> {
    for (i, c) in s.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return Err(()),
            ':' => return Ok((Some(&s[..i]), &s[i + 1..])),
            _ => return Ok((None, s)),
        }
    }
    Ok((None, s))
}

fn authority(a: &str) -> bool {
    let (user, host) = match a.rfind('@') {
        Some(i) => (Some(&a[..i]), &a[i + 1..]),
        None => (None, a),
    };
    if let Some(user) = user {
        let ok = user.chars().all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c) || !c.is_ascii());
        if !ok || !escapes_valid(user, false) {
            return false;
        }
    }
    let (name, port) = if let Some(literal) = host.strip_prefix('[') {
        let Some(close) = literal.find(']') else {
            return false;
        };
        (&literal[..close], &literal[close + 1..])
    } else {
        match host.rfind(':') {
            Some(i) => (&host[..i], &host[i..]),
            None => (host, ""),
        }
    };
    let port_ok = port.is_empty() || port.strip_prefix(':').is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()));
    let name_ok = name.chars().all(|c| {
        c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:[]<>\"%".contains(c) || !c.is_ascii()
    });
    port_ok && name_ok && escapes_valid(name, true)
}

/// Every `%` starts two hex digits; in a host, an escape must be one of the few Go
/// allows there (`%25` before a zone, or non-ASCII bytes).
fn escapes_valid(s: &str, host: bool) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let (Some(h), Some(l)) = (b.get(i + 1), b.get(i + 2)) else {
                return false;
            };
            if !h.is_ascii_hexdigit() || !l.is_ascii_hexdigit() {
                return false;
            }
            if host && &s[i..i + 3] != "%25" && *h < b'8' {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_supported_formats_are_known() {
        assert_eq!(Format::named("date-time"), Some(Format::DateTime));
        assert_eq!(Format::named("datetime"), Some(Format::DateTime));
        assert_eq!(Format::named("int32"), None);
        assert_eq!(Format::named("int-or-string"), None);
        assert_eq!(Format::named("Date"), None);
    }

    #[test]
    fn formats_accept_and_refuse_as_strfmt() {
        let cases: &[(Format, &str, bool)] = &[
            (Format::DateTime, "2024-02-29T12:00:00Z", true),
            (Format::DateTime, "2024-02-29T12:00:00.123+02:00", true),
            (Format::DateTime, "2023-02-29T12:00:00Z", false),
            (Format::DateTime, "2024-01-01T24:00:00Z", false),
            (Format::DateTime, "2024-01-01", false),
            (Format::DateTime, "x", false),
            (Format::Date, "2024-12-31", true),
            (Format::Date, "2024-13-01", false),
            (Format::Date, "24-01-01", false),
            (Format::Duration, "1h30m", true),
            (Format::Duration, "1.5s", true),
            (Format::Duration, "3 days", true),
            (Format::Duration, "forever", false),
            (Format::Uuid, "8d3f1c2e-0b3a-4f5e-9a6b-1c2d3e4f5a6b", true),
            (Format::Uuid, "8D3F1C2E0B3A4F5E9A6B1C2D3E4F5A6B", true),
            (Format::Uuid, "8d3f1c2e-0b3a-4f5e-9a6b", false),
            (Format::Uuid4, "8d3f1c2e-0b3a-4f5e-9a6b-1c2d3e4f5a6b", true),
            (Format::Uuid4, "8d3f1c2e-0b3a-3f5e-9a6b-1c2d3e4f5a6b", false),
            (Format::Uuid3, "8d3f1c2e-0b3a-3f5e-1a6b-1c2d3e4f5a6b", true),
            (Format::Ipv4, "10.0.0.1", true),
            (Format::Ipv4, "010.0.0.1", true),
            (Format::Ipv4, "10.0.0.256", false),
            (Format::Ipv4, "::1", false),
            (Format::Ipv6, "::1", true),
            (Format::Ipv6, "fe80::1%eth0", false),
            (Format::Ipv6, "10.0.0.1", false),
            (Format::Cidr, "10.0.0.0/8", true),
            (Format::Cidr, "fd00::/64", true),
            (Format::Cidr, "10.0.0.0/33", false),
            (Format::Cidr, "10.0.0.0", false),
            (Format::Mac, "00:1a:2b:3c:4d:5e", true),
            (Format::Mac, "00-1a-2b-3c-4d-5e", true),
            (Format::Mac, "001a.2b3c.4d5e", true),
            (Format::Mac, "00:1a:2b:3c:4d", false),
            (Format::Hostname, "example.com", true),
            (Format::Hostname, "a", true),
            (Format::Hostname, "-a.com", false),
            (Format::Hostname, "a..com", false),
            (Format::Email, "someone@example.com", true),
            (Format::Email, "Some One <someone@example.com>", true),
            (Format::Email, "someone", false),
            (Format::Email, "a@b@", false),
            (Format::Uri, "https://example.com/a?b=c", true),
            (Format::Uri, "/relative/path", true),
            (Format::Uri, "mailto:someone", true),
            (Format::Uri, "relative/path", false),
            (Format::Uri, "http://host:port/", false),
            (Format::Uri, "", false),
            (Format::Byte, "aGVsbG8=", true),
            (Format::Byte, "aGVsbG8", false),
            (Format::Isbn10, "0321751043", true),
            (Format::Isbn13, "978-0321751041", true),
            (Format::Isbn, "0321751044", false),
            (Format::CreditCard, "4111 1111 1111 1111", true),
            (Format::CreditCard, "4111 1111 1111 1112", false),
            (Format::Ssn, "123-45-6789", true),
            (Format::Ssn, "123456789", false),
            (Format::HexColor, "#fff", true),
            (Format::HexColor, "#ffff", false),
            (Format::RgbColor, "rgb(255, 0, 10)", true),
            (Format::RgbColor, "rgb(256,0,0)", false),
            (Format::BsonObjectId, "507f1f77bcf86cd799439011", true),
            (Format::BsonObjectId, "507f1f77bcf86cd79943901", false),
            (Format::Password, "", true),
        ];
        for (format, value, valid) in cases {
            assert_eq!(format.accepts(value), *valid, "{format:?} {value:?}");
        }
    }
}
