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

const QUALIFIED_NAME_MAX: usize = 63;
const QUALIFIED_NAME_FMT: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MAX: usize = 63;
const LABEL_VALUE_FMT: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Problems with `value` as a qualified name (`[prefix/]name`: an annotation key, a
/// finalizer), in apimachinery's `IsQualifiedName` words.
pub fn qualified_name(value: &str) -> Vec<String> {
    prefixed_name(value, "a qualified name")
}

/// Problems with `value` as a label key: a qualified name, which v1.33's label checks
/// call "a valid label key" when it has more than one '/'.
pub fn label_key(value: &str) -> Vec<String> {
    prefixed_name(value, "a valid label key")
}

/// Problems with `value` as a label value (empty is one).
pub fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX {
        errs.push(format!("must be no more than {LABEL_VALUE_MAX} characters"));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(LABEL_VALUE_FMT.to_owned());
    }
    errs
}

/// `[prefix/]name`, the prefix a DNS subdomain; `what` names the whole in the error
/// for too many slashes.
fn prefixed_name(value: &str, what: &str) -> Vec<String> {
    let parts: Vec<&str> = value.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(dns1123_subdomain(prefix).into_iter().map(|e| format!("prefix part {e}")));
            }
            *name
        }
        _ => {
            return vec![format!(
                "{what} {QUALIFIED_NAME_FMT} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )]
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!("name part must be no more than {QUALIFIED_NAME_MAX} characters"));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!("name part {QUALIFIED_NAME_FMT}"));
    }
    errs
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, anchored.
pub fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    let edge = |c: u8| c.is_ascii_alphanumeric();
    !b.is_empty()
        && edge(b[0])
        && edge(b[b.len() - 1])
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
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

/// The first problem with `value` as a fully qualified domain name (a trailing dot
/// allowed), as upstream's `IsFullyQualifiedDomainName` reports it: `None` for an
/// empty name (required), else the part it shows and why.
pub fn fully_qualified_domain_name(value: &str) -> Result<(), Option<(String, String)>> {
    if value.is_empty() {
        return Err(None);
    }
    let name = value.strip_suffix('.').unwrap_or(value);
    let errs = dns1123_subdomain(name);
    if !errs.is_empty() {
        return Err(Some((name.to_owned(), errs.join(","))));
    }
    if !name.contains('.') {
        return Err(Some((name.to_owned(), "should be a domain with at least two segments separated by dots".to_owned())));
    }
    for label in name.split('.') {
        let errs = dns1123_label(label);
        if !errs.is_empty() {
            return Err(Some((label.to_owned(), errs.join(","))));
        }
    }
    Ok(())
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
    fn qualified_names_in_apimachinerys_words() {
        assert!(qualified_name("example.com/hold").is_empty());
        assert!(qualified_name("kubernetes").is_empty());
        assert_eq!(qualified_name("/x"), ["prefix part must be non-empty"]);
        assert_eq!(qualified_name("example.com/")[0], "name part must be non-empty");
        assert_eq!(qualified_name("example.com/").len(), 2, "and the name's pattern");
        assert!(qualified_name("a/b/c")[0].starts_with("a qualified name must consist of alphanumeric characters"));
        assert!(qualified_name("-x")[0].starts_with("name part must consist of alphanumeric characters"));
        assert_eq!(qualified_name("Example.com/x")[0], format!("prefix part {SUBDOMAIN_MSG}"));
    }

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
