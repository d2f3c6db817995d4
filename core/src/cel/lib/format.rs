//! Kubernetes' named formats: `format.dns1123Label()` and the others, `format.named()`
//! and `validate()`, which returns the format's complaints about a string (as an
//! optional list, empty when valid). The name rules are the ones object names use.

use super::sig::list;
use super::urls::parse_request_uri;
use super::Library;
use crate::cel::types::Type as Ty;
use crate::cel::value::Value;
use crate::registry::NameRule;
use crate::selection::labels::{label_key_errors, label_value_errors};
use std::rc::Rc;

/// One named format.
#[derive(Debug)]
pub struct FormatDef {
    /// The name rules call it by (`dns1123Label`).
    pub key: &'static str,
    /// Its upstream name (`DNS1123Label`), which equality compares.
    pub name: &'static str,
    pub validate: fn(&str) -> Vec<String>,
    /// The size of upstream's regex for it, which the cost of `validate()` uses.
    pub max_regex_size: u64,
}

pub static FORMATS: &[FormatDef] = &[
    FormatDef { key: "dns1123Label", name: "DNS1123Label", validate: |s| NameRule::Dns1123Label.check(s, false), max_regex_size: 30 },
    FormatDef { key: "dns1123Subdomain", name: "DNS1123Subdomain", validate: |s| NameRule::Dns1123Subdomain.check(s, false), max_regex_size: 60 },
    FormatDef { key: "dns1035Label", name: "DNS1035Label", validate: |s| NameRule::Dns1035Label.check(s, false), max_regex_size: 30 },
    FormatDef { key: "qualifiedName", name: "QualifiedName", validate: label_key_errors, max_regex_size: 60 },
    FormatDef { key: "dns1123LabelPrefix", name: "DNS1123LabelPrefix", validate: |s| NameRule::Dns1123Label.check(s, true), max_regex_size: 30 },
    FormatDef { key: "dns1123SubdomainPrefix", name: "DNS1123SubdomainPrefix", validate: |s| NameRule::Dns1123Subdomain.check(s, true), max_regex_size: 60 },
    FormatDef { key: "dns1035LabelPrefix", name: "DNS1035LabelPrefix", validate: |s| NameRule::Dns1035Label.check(s, true), max_regex_size: 30 },
    FormatDef { key: "labelValue", name: "LabelValue", validate: label_value_errors, max_regex_size: 40 },
    FormatDef {
        key: "uri",
        name: "URI",
        validate: |s| parse_request_uri(s).err().into_iter().collect(),
        max_regex_size: 1103,
    },
    FormatDef {
        key: "uuid",
        name: "uuid",
        validate: |s| if is_uuid(s) { Vec::new() } else { vec!["does not match the UUID format".to_owned()] },
        max_regex_size: 70,
    },
    FormatDef {
        key: "byte",
        name: "byte",
        validate: |s| if super::decode_base64(s).is_some() { Vec::new() } else { vec!["invalid base64".to_owned()] },
        max_regex_size: 84,
    },
    FormatDef {
        key: "date",
        name: "date",
        validate: |s| if crate::cel::time::parse_date(s).is_some() { Vec::new() } else { vec!["invalid date".to_owned()] },
        max_regex_size: 71,
    },
    FormatDef {
        key: "datetime",
        name: "datetime",
        validate: |s| {
            if crate::cel::time::parse_date_time(s).is_some() {
                Vec::new()
            } else {
                vec!["invalid datetime".to_owned()]
            }
        },
        max_regex_size: 71,
    },
];

/// strfmt's UUID: 32 hex digits, optionally hyphenated 8-4-4-4-12.
fn is_uuid(s: &str) -> bool {
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return false;
    }
    // Hyphens, when present, only between the groups.
    let mut pos = 0;
    for (i, c) in s.chars().enumerate() {
        if c == '-' {
            if !matches!(pos, 8 | 12 | 16 | 20) {
                return false;
            }
            let _ = i;
        } else {
            pos += 1;
        }
    }
    true
}

pub(super) fn register(lib: &mut Library) {
    use Ty::*;
    let format = || Ty::object("kubernetes.NamedFormat");
    for def in FORMATS {
        let name: &'static str = Box::leak(format!("format.{}", def.key).into_boxed_str());
        lib.global(name, name, Vec::new(), format(), NAMED[FORMATS.iter().position(|f| f.key == def.key).unwrap_or(0)]);
    }
    lib.global("format.named", "format-named", vec![String], Ty::optional(format()), |v| match &v[0] {
        Value::String(s) => match FORMATS.iter().find(|f| f.key == &**s) {
            Some(f) => Value::Optional(Some(Rc::new(Value::Format(f)))),
            None => Value::Optional(None),
        },
        _ => Value::no_such_overload(),
    });
    lib.member("validate", "format-validate", vec![format(), String], Ty::optional(list(String)), |v| {
        match (&v[0], &v[1]) {
            (Value::Format(f), Value::String(s)) => {
                let problems = (f.validate)(s);
                if problems.is_empty() {
                    Value::Optional(None)
                } else {
                    Value::Optional(Some(Rc::new(Value::list(problems.into_iter().map(Value::string).collect()))))
                }
            }
            _ => Value::no_such_overload(),
        }
    });
}

/// One constant function per format (function pointers cannot capture the format).
const NAMED: [super::Imp; 13] = [
    |_| Value::Format(&FORMATS[0]),
    |_| Value::Format(&FORMATS[1]),
    |_| Value::Format(&FORMATS[2]),
    |_| Value::Format(&FORMATS[3]),
    |_| Value::Format(&FORMATS[4]),
    |_| Value::Format(&FORMATS[5]),
    |_| Value::Format(&FORMATS[6]),
    |_| Value::Format(&FORMATS[7]),
    |_| Value::Format(&FORMATS[8]),
    |_| Value::Format(&FORMATS[9]),
    |_| Value::Format(&FORMATS[10]),
    |_| Value::Format(&FORMATS[11]),
    |_| Value::Format(&FORMATS[12]),
];
