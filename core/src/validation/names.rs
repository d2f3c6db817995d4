//! Object name rules: DNS-1123 subdomains and labels, DNS-1035 labels, path segments.

use super::FieldError;
use crate::registry::NameRule;

const SUBDOMAIN_MAX: usize = 253;
const LABEL_MAX: usize = 63;

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

fn alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && alnum(b[0])
        && alnum(b[b.len() - 1])
        && b.iter().all(|&c| alnum(c) || c == b'-')
}

fn too_long(max: usize) -> String {
    format!("must be no more than {max} characters")
}

/// Problems with `value` as a DNS-1123 subdomain (empty when valid).
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > SUBDOMAIN_MAX {
        errs.push(too_long(SUBDOMAIN_MAX));
    }
    if !value.split('.').all(is_label) {
        errs.push(SUBDOMAIN_MSG.to_owned());
    }
    errs
}

/// Problems with `value` as a DNS-1123 label.
pub fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_MAX {
        errs.push(too_long(LABEL_MAX));
    }
    if !is_label(value) {
        // A valid subdomain fails only for its dots, and kube says just that.
        if !value.is_empty() && value.split('.').all(is_label) {
            errs.push("must not contain dots".to_owned());
        } else {
            errs.push(LABEL_MSG.to_owned());
        }
    }
    errs
}

/// Problems with `value` as a DNS-1035 label (starts with a letter).
pub fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_MAX {
        errs.push(too_long(LABEL_MAX));
    }
    if !(is_label(value) && value.as_bytes()[0].is_ascii_lowercase()) {
        errs.push(DNS1035_MSG.to_owned());
    }
    errs
}

/// Problems with `value` as one segment of a URL path.
pub fn path_segment(value: &str) -> Vec<String> {
    if value == "." || value == ".." {
        return vec![format!("may not be '{value}'")];
    }
    let mut errs = Vec::new();
    for bad in ["/", "%"] {
        if value.contains(bad) {
            errs.push(format!("may not contain '{bad}'"));
        }
    }
    errs
}

impl NameRule {
    /// Problems with `value` under this rule. A `prefix` (generateName) may end in '-'.
    pub fn check(self, value: &str, prefix: bool) -> Vec<String> {
        let masked;
        // Like kube's maskTrailingDash: the last two bytes become one 'a'.
        let value = if prefix && value.len() > 1 && value.ends_with('-') && value.is_char_boundary(value.len() - 2) {
            masked = format!("{}a", &value[..value.len() - 2]);
            masked.as_str()
        } else {
            value
        };
        match self {
            NameRule::Dns1123Subdomain => dns1123_subdomain(value),
            NameRule::Dns1123Label => dns1123_label(value),
            NameRule::Dns1035Label => dns1035_label(value),
            NameRule::PathSegment => path_segment(value),
        }
    }
}

/// Field errors for `metadata.name`/`generateName`/`namespace` of an object being
/// created or updated.
pub fn validate_object_meta(
    rule: NameRule,
    name: &str,
    generate_name: &str,
    namespace: Option<&str>,
    namespaced: bool,
) -> Vec<FieldError> {
    validate_object_meta_at("metadata", rule, name, generate_name, namespace, namespaced)
}

/// [`validate_object_meta`] of the metadata at `path` (an embedded resource's,
/// `spec.template.metadata`).
pub fn validate_object_meta_at(
    path: &str,
    rule: NameRule,
    name: &str,
    generate_name: &str,
    namespace: Option<&str>,
    namespaced: bool,
) -> Vec<FieldError> {
    let field = |child: &str| format!("{path}.{child}");
    let mut errs = Vec::new();
    if !generate_name.is_empty() {
        for msg in rule.check(generate_name, true) {
            errs.push(FieldError::invalid(&field("generateName"), generate_name, msg));
        }
    }
    if name.is_empty() {
        errs.push(FieldError::required(&field("name"), "name or generateName is required"));
    } else {
        for msg in rule.check(name, false) {
            errs.push(FieldError::invalid(&field("name"), name, msg));
        }
    }
    match (namespaced, namespace.unwrap_or("")) {
        (true, "") => errs.push(FieldError::required(&field("namespace"), "")),
        (true, ns) => {
            for msg in dns1123_label(ns) {
                errs.push(FieldError::invalid(&field("namespace"), ns, msg));
            }
        }
        (false, "") => {}
        (false, _) => errs.push(FieldError::forbidden(&field("namespace"), "not allowed on this type")),
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomains() {
        assert!(dns1123_subdomain("example.com").is_empty());
        assert!(dns1123_subdomain("a").is_empty());
        assert_eq!(dns1123_subdomain("A"), vec![SUBDOMAIN_MSG.to_owned()]);
        assert_eq!(dns1123_subdomain("a..b").len(), 1);
        assert_eq!(dns1123_subdomain("-a").len(), 1);
        assert_eq!(dns1123_subdomain(""), vec![SUBDOMAIN_MSG.to_owned()]);
        let long = "a".repeat(254);
        assert_eq!(dns1123_subdomain(&long), vec![too_long(253)]);
    }

    #[test]
    fn labels() {
        assert!(dns1123_label("123-abc").is_empty());
        assert_eq!(dns1123_label("a.b"), vec!["must not contain dots".to_owned()]);
        assert_eq!(dns1123_label("A"), vec![LABEL_MSG.to_owned()]);
        assert_eq!(dns1123_label(&"a".repeat(64)), vec![too_long(63)]);
        assert!(dns1035_label("abc-123").is_empty());
        assert_eq!(dns1035_label("1abc"), vec![DNS1035_MSG.to_owned()]);
    }

    #[test]
    fn path_segments() {
        assert!(path_segment("system:admin").is_empty());
        assert_eq!(path_segment(".."), vec!["may not be '..'".to_owned()]);
        assert_eq!(
            path_segment("a/b%"),
            vec!["may not contain '/'".to_owned(), "may not contain '%'".to_owned()]
        );
    }

    #[test]
    fn generate_name_may_end_in_a_dash() {
        assert!(NameRule::Dns1123Subdomain.check("web-", true).is_empty());
        assert!(!NameRule::Dns1123Subdomain.check("web-", false).is_empty());
    }

    #[test]
    fn object_meta_errors_read_like_upstream() {
        let errs = validate_object_meta(NameRule::Dns1123Subdomain, "A", "", Some("x"), true);
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            format!("metadata.name: Invalid value: \"A\": {SUBDOMAIN_MSG}")
        );
        let errs = validate_object_meta(NameRule::Dns1123Subdomain, "", "", Some("x"), true);
        assert_eq!(errs[0].to_string(), "metadata.name: Required value: name or generateName is required");
        let errs = validate_object_meta(NameRule::Dns1123Label, "n", "", Some("x"), false);
        assert_eq!(errs[0].to_string(), "metadata.namespace: Forbidden: not allowed on this type");
    }
}
