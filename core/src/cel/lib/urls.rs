//! Kubernetes' URL library: `url()`, `isURL()` and the accessors of a URL. Parsing
//! follows Go's `net/url.ParseRequestURI` (what upstream validates with): an absolute
//! URL or an absolute path, no fragment, a valid port, valid percent-escapes.

use super::sig::list;
use super::Library;
use crate::cel::types::Type as Ty;
use crate::cel::value::{Map as ValueMap, Value};
use std::rc::Rc;

/// A parsed URL: its text and parts as Go's `url.URL` holds them.
#[derive(Debug, PartialEq, Eq)]
pub struct Url {
    pub text: String,
    pub scheme: String,
    pub host: String,
    pub raw_path: String,
    pub raw_query: String,
}

impl Url {
    fn hostname(&self) -> &str {
        let host = &self.host;
        if let Some(rest) = host.strip_prefix('[') {
            return rest.split(']').next().unwrap_or(rest);
        }
        match host.rfind(':') {
            Some(i) if valid_port(&host[i + 1..]) => &host[..i],
            _ => host,
        }
    }

    fn port(&self) -> &str {
        let host = &self.host;
        let after = match host.rfind(']') {
            Some(i) => &host[i + 1..],
            None => host,
        };
        match after.rfind(':') {
            Some(i) if valid_port(&after[i + 1..]) => &after[i + 1..],
            _ => "",
        }
    }
}

fn valid_port(p: &str) -> bool {
    p.bytes().all(|b| b.is_ascii_digit())
}

/// Go's `url.ParseRequestURI`, worded as its errors are.
pub fn parse_request_uri(raw: &str) -> Result<Url, String> {
    let fail = |msg: &str| Err(format!("parse {}: {msg}", super::standard::go_quote(raw)));
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return fail("net/url: invalid control character in URL");
    }
    if raw.is_empty() {
        return fail("empty url");
    }
    let mut url = Url {
        text: raw.to_owned(),
        scheme: String::new(),
        host: String::new(),
        raw_path: String::new(),
        raw_query: String::new(),
    };
    if raw == "*" {
        url.raw_path = "*".to_owned();
        return Ok(url);
    }
    // Scheme.
    let mut rest = raw;
    for (i, c) in raw.char_indices() {
        if c.is_ascii_alphabetic() {
            continue;
        }
        if c.is_ascii_digit() || matches!(c, '+' | '-' | '.') {
            if i == 0 {
                break;
            }
            continue;
        }
        if c == ':' {
            if i == 0 {
                return fail("missing protocol scheme");
            }
            url.scheme = raw[..i].to_ascii_lowercase();
            rest = &raw[i + 1..];
        }
        break;
    }
    if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_owned();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // An opaque URL (`mailto:someone`).
            return Ok(url);
        }
        return fail("invalid URI for request");
    }
    if !url.scheme.is_empty() && rest.starts_with("//") {
        let authority_end = rest[2..].find('/').map(|i| i + 2).unwrap_or(rest.len());
        let authority = &rest[2..authority_end];
        rest = &rest[authority_end..];
        let host = match authority.rfind('@') {
            Some(i) => &authority[i + 1..],
            None => authority,
        };
        if let Err(e) = check_host(host) {
            return fail(&e);
        }
        url.host = host.to_owned();
    }
    if let Err(e) = check_escapes(rest) {
        return fail(&e);
    }
    url.raw_path = rest.to_owned();
    Ok(url)
}

fn check_host(host: &str) -> Result<(), String> {
    let port_part = if let Some(rest) = host.strip_prefix('[') {
        let Some(end) = rest.find(']') else {
            return Err("missing ']' in host".to_owned());
        };
        &rest[end + 1..]
    } else {
        match host.rfind(':') {
            Some(i) => &host[i..],
            None => "",
        }
    };
    if let Some(port) = port_part.strip_prefix(':') {
        if !valid_port(port) {
            return Err(format!("invalid port {} after host", super::standard::go_quote(port_part)));
        }
    } else if !port_part.is_empty() {
        return Err(format!("invalid port {} after host", super::standard::go_quote(port_part)));
    }
    check_escapes(host)
}

fn check_escapes(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if i + 2 >= b.len() || !b[i + 1].is_ascii_hexdigit() || !b[i + 2].is_ascii_hexdigit() {
                let end = (i + 3).min(b.len());
                let end = (end..=b.len()).find(|&e| s.is_char_boundary(e)).unwrap_or(b.len());
                return Err(format!("invalid URL escape {}", super::standard::go_quote(&s[i..end])));
            }
            i += 3;
            continue;
        }
        i += 1;
    }
    Ok(())
}

/// Percent-decoding of a query component (`+` is a space).
fn unescape_query(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

pub(super) fn register(lib: &mut Library) {
    use Ty::*;
    let url_type = || Ty::object("kubernetes.URL");
    lib.global("url", "string_to_url", vec![String], url_type(), |v| match &v[0] {
        Value::String(s) => match parse_request_uri(s) {
            Ok(u) => Value::Url(Rc::new(u)),
            Err(e) => Value::error(format!("URL parse error during conversion from string: {e}")),
        },
        _ => Value::no_such_overload(),
    });
    lib.global("isURL", "is_url_string", vec![String], Bool, |v| match &v[0] {
        Value::String(s) => Value::Bool(parse_request_uri(s).is_ok()),
        _ => Value::no_such_overload(),
    });
    lib.member("getScheme", "url_get_scheme", vec![url_type()], String, |v| part(v, |u| u.scheme.clone()));
    lib.member("getHost", "url_get_host", vec![url_type()], String, |v| part(v, |u| u.host.clone()));
    lib.member("getHostname", "url_get_hostname", vec![url_type()], String, |v| part(v, |u| u.hostname().to_owned()));
    lib.member("getPort", "url_get_port", vec![url_type()], String, |v| part(v, |u| u.port().to_owned()));
    lib.member("getEscapedPath", "url_get_escaped_path", vec![url_type()], String, |v| {
        part(v, |u| u.raw_path.clone())
    });
    lib.member("getQuery", "url_get_query", vec![url_type()], Ty::map(String, list(String)), |v| {
        let Value::Url(u) = &v[0] else { return Value::no_such_overload() };
        let mut entries: Vec<(Value, Vec<Value>)> = Vec::new();
        for pair in u.raw_query.split(['&', ';']).filter(|p| !p.is_empty()) {
            let (k, val) = pair.split_once('=').unwrap_or((pair, ""));
            let (Some(k), Some(val)) = (unescape_query(k), unescape_query(val)) else { continue };
            match entries.iter_mut().find(|(ek, _)| matches!(ek, Value::String(s) if **s == *k)) {
                Some((_, vals)) => vals.push(Value::string(val)),
                None => entries.push((Value::string(k), vec![Value::string(val)])),
            }
        }
        let entries = entries.into_iter().map(|(k, vals)| (k, Value::list(vals))).collect();
        Value::Map(ValueMap::Owned(Rc::new(entries)))
    });
}

fn part<'a>(v: &[Value<'a>], f: fn(&Url) -> String) -> Value<'a> {
    match &v[0] {
        Value::Url(u) => Value::string(f(u)),
        _ => Value::no_such_overload(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_go_parse_request_uri() {
        let u = parse_request_uri("https://user@example.com:8080/a%20b?x=1&x=2").unwrap();
        assert_eq!(u.scheme, "https");
        assert_eq!(u.host, "example.com:8080");
        assert_eq!(u.hostname(), "example.com");
        assert_eq!(u.port(), "8080");
        assert_eq!(u.raw_path, "/a%20b");
        let u = parse_request_uri("https://[::1]:80/").unwrap();
        assert_eq!((u.hostname(), u.port()), ("::1", "80"));
        assert_eq!(parse_request_uri("/path").unwrap().raw_path, "/path");
        assert_eq!(parse_request_uri("example.com").unwrap_err(), "parse \"example.com\": invalid URI for request");
        assert_eq!(
            parse_request_uri("https://a:b:c/").unwrap_err(),
            "parse \"https://a:b:c/\": invalid port \":c\" after host"
        );
        assert!(parse_request_uri("/a%zz").is_err());
    }
}
