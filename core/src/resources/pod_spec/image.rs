//! The tag of a container image reference, as far as defaulting reads it: a reference
//! that names no tag and no digest means `latest`, and one that does not parse has none
//! (upstream then defaults `imagePullPolicy` as for a pinned image).
//!
//! The grammar is the distribution reference's: `[domain/]path[:tag][@digest]`, the
//! path lower-case components joined by `/`, the domain a host name or IP with an
//! optional port.

/// The tag the reference names: `Some("latest")` for a bare name, `None` for a digest
/// without a tag or a reference that does not parse.
pub fn tag(image: &str) -> Option<&str> {
    let (rest, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (image, None),
    };
    if digest.is_some_and(|d| !valid_digest(d)) {
        return None;
    }
    // A tag follows the last ':' after the last '/' (a ':' before it is a port).
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_slash..].rfind(':') {
        Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
        None => (rest, None),
    };
    if !valid_name(name) || tag.is_some_and(|t| !valid_tag(t)) {
        return None;
    }
    match (tag, digest) {
        (Some(tag), _) => Some(tag),
        (None, Some(_)) => None,
        (None, None) => Some("latest"),
    }
}

/// `[domain/]path`, at most 255 characters, and not a bare 64-hex identifier.
fn valid_name(name: &str) -> bool {
    if name.is_empty() || name.len() > 255 {
        return false;
    }
    if name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return false;
    }
    let (domain, path) = match name.split_once('/') {
        Some((first, rest))
            if first.contains(['.', ':']) || first == "localhost" || first.bytes().any(|b| b.is_ascii_uppercase()) =>
        {
            (Some(first), rest)
        }
        _ => (None, name),
    };
    domain.is_none_or(valid_domain) && path.split('/').all(valid_component)
}

/// `[a-z0-9]+` runs joined by `.`, `_`, `__` or runs of `-`.
fn valid_component(c: &str) -> bool {
    let bytes = c.as_bytes();
    if bytes.is_empty() || !alnum_lower(bytes[0]) || !alnum_lower(bytes[bytes.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum_lower(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum_lower(bytes[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|b| b == b'-');
        if !ok {
            return false;
        }
    }
    true
}

fn alnum_lower(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// A host name (labels of letters, digits and inner hyphens) or a bracketed IPv6
/// address, with an optional numeric port.
fn valid_domain(d: &str) -> bool {
    let (host, port) = if let Some(rest) = d.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, after)) if !ip.is_empty() && ip.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') => {
                match after.strip_prefix(':') {
                    Some(port) => ("", Some(port)),
                    None if after.is_empty() => ("", None),
                    None => return false,
                }
            }
            _ => return false,
        }
    } else {
        match d.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (d, None),
        }
    };
    let host_ok = d.starts_with('[')
        || (!host.is_empty()
            && host.split('.').all(|label| {
                let b = label.as_bytes();
                !b.is_empty()
                    && b[0].is_ascii_alphanumeric()
                    && b[b.len() - 1].is_ascii_alphanumeric()
                    && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
            }));
    host_ok && port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn valid_tag(t: &str) -> bool {
    let b = t.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// `algorithm:hex` with a known algorithm and its length of hex digits.
fn valid_digest(d: &str) -> bool {
    let Some((algorithm, hex)) = d.split_once(':') else {
        return false;
    };
    let len = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return false,
    };
    hex.len() == len && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::tag;

    #[test]
    fn tags_as_upstream_reads_them() {
        let digest = format!("sha256:{}", "a".repeat(64));
        for (image, want) in [
            ("nginx", Some("latest")),
            ("nginx:latest", Some("latest")),
            ("nginx:1.25", Some("1.25")),
            ("registry.k8s.io/pause:3.10", Some("3.10")),
            ("localhost:5000/app", Some("latest")),
            ("localhost:5000/app:v1", Some("v1")),
            ("[::1]:5000/app:v2", Some("v2")),
            (&format!("nginx@{digest}"), None),
            (&format!("nginx:1@{digest}"), Some("1")),
            ("Nginx", None),
            ("", None),
            ("nginx:", None),
            ("nginx@sha256:abc", None),
            (&"a".repeat(64), None),
        ] {
            assert_eq!(tag(image), want, "{image}");
        }
    }
}
