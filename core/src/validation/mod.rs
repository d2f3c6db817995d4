//! Validation of what clients send, with field errors worded as kube-apiserver words them.

pub mod admission_registration;
pub mod config_data;
pub mod csr;
pub mod cron_schedule;
pub mod go_json_error;
pub mod label_selector;
pub mod names;
pub mod network;
pub mod object_meta;
pub mod time_zones;
mod path;
pub mod pod_spec;
pub mod pod_template;
pub mod pv_sources;
pub mod quantity;
pub mod resource_names;
pub mod value;

pub use path::FieldPath;

use std::fmt;

/// What is wrong with a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Invalid,
    Required,
    Forbidden,
    TooLong,
    Duplicate,
    NotSupported,
    TooMany,
    /// A value of the wrong JSON type (kube-openapi's schema validator).
    TypeInvalid,
    /// Something went wrong that is not the client's fault.
    Internal,
    /// A reference to something that does not exist (a volume mount's volume).
    NotFound,
}

impl ErrorKind {
    fn label(self) -> &'static str {
        match self {
            Self::Invalid => "Invalid value",
            Self::Required => "Required value",
            Self::Forbidden => "Forbidden",
            Self::TooLong => "Too long",
            Self::Duplicate => "Duplicate value",
            Self::NotSupported => "Unsupported value",
            Self::TooMany => "Too many",
            Self::TypeInvalid => "Invalid value",
            Self::Internal => "Internal error",
            Self::NotFound => "Not found",
        }
    }

    /// The `reason` of a Status cause for this kind of error.
    pub fn cause_type(self) -> &'static str {
        match self {
            Self::Invalid => "FieldValueInvalid",
            Self::Required => "FieldValueRequired",
            Self::Forbidden => "FieldValueForbidden",
            Self::TooLong => "FieldValueTooLong",
            Self::Duplicate => "FieldValueDuplicate",
            Self::NotSupported => "FieldValueNotSupported",
            Self::TooMany => "FieldValueTooMany",
            Self::TypeInvalid => "FieldValueTypeInvalid",
            Self::Internal => "InternalError",
            Self::NotFound => "FieldValueNotFound",
        }
    }
}

/// One invalid field: its path (`metadata.name`), what is wrong, the offending value
/// and a detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub kind: ErrorKind,
    pub value: Option<String>,
    pub detail: String,
}

impl FieldError {
    pub fn invalid(field: &str, value: &str, detail: impl Into<String>) -> FieldError {
        FieldError {
            field: field.to_owned(),
            kind: ErrorKind::Invalid,
            value: Some(value.to_owned()),
            detail: detail.into(),
        }
    }

    /// An Invalid error whose value Go prints without quotes: a number, `null`, or a
    /// struct written as JSON.
    pub fn invalid_unquoted(field: &str, value: &str, detail: &str) -> FieldError {
        Self::without_value(field, ErrorKind::Invalid, format!("{value}: {detail}"))
    }

    /// An Invalid error about any JSON value, printed as upstream prints it: a string
    /// quoted, anything else as Go's JSON.
    pub fn invalid_json(field: &str, value: &serde_json::Value, detail: impl Into<String>) -> FieldError {
        match value {
            serde_json::Value::String(s) => Self::invalid(field, s, detail),
            other => Self::invalid_unquoted(field, &go_json(other), &detail.into()),
        }
    }

    /// A value an update may not change (upstream's `ValidateImmutableField`).
    pub fn immutable(field: &str, new: &serde_json::Value) -> FieldError {
        Self::invalid_json(field, new, "field is immutable")
    }

    pub fn required(field: &str, detail: impl Into<String>) -> FieldError {
        Self::without_value(field, ErrorKind::Required, detail)
    }

    pub fn too_long(field: &str, max_bytes: usize) -> FieldError {
        Self::without_value(field, ErrorKind::TooLong, format!("may not be more than {max_bytes} bytes"))
    }

    pub fn forbidden(field: &str, detail: impl Into<String>) -> FieldError {
        Self::without_value(field, ErrorKind::Forbidden, detail)
    }

    /// An error whose bad value is printed already, as Go's field errors print it
    /// (`"text"`, `5`, `map[string]interface {}{…}`); `None` for none shown.
    pub fn shown(field: &str, kind: ErrorKind, value: Option<&str>, detail: &str) -> FieldError {
        let detail = match (value, detail) {
            (Some(value), "") => value.to_owned(),
            (Some(value), detail) => format!("{value}: {detail}"),
            (None, detail) => detail.to_owned(),
        };
        Self::without_value(field, kind, detail)
    }

    /// A value outside a fixed set, listing the set as Go's `field.NotSupported` does.
    pub fn not_supported(field: &str, value: &str, supported: &[&str]) -> FieldError {
        let listed: Vec<String> = supported.iter().map(|s| quoted(s)).collect();
        FieldError {
            field: field.to_owned(),
            kind: ErrorKind::NotSupported,
            value: Some(value.to_owned()),
            detail: format!("supported values: {}", listed.join(", ")),
        }
    }

    /// A reference to something missing, the missing name shown quoted.
    pub fn not_found(field: &str, value: &str) -> FieldError {
        FieldError {
            field: field.to_owned(),
            kind: ErrorKind::NotFound,
            value: Some(value.to_owned()),
            detail: String::new(),
        }
    }

    /// A value given twice.
    pub fn duplicate(field: &str, value: &str) -> FieldError {
        FieldError {
            field: field.to_owned(),
            kind: ErrorKind::Duplicate,
            value: Some(value.to_owned()),
            detail: String::new(),
        }
    }

    /// A list with more than `max` items (`actual` of them).
    pub fn too_many(field: &str, actual: usize, max: usize) -> FieldError {
        Self::without_value(field, ErrorKind::TooMany, format!("{actual}: must have at most {max} items"))
    }

    fn without_value(field: &str, kind: ErrorKind, detail: impl Into<String>) -> FieldError {
        FieldError {
            field: field.to_owned(),
            kind,
            value: None,
            detail: detail.into(),
        }
    }

    /// The error without its field path, as in a Status cause's message.
    pub fn body(&self) -> String {
        let mut s = match &self.value {
            Some(v) => format!("{}: {}", self.kind.label(), quoted(v)),
            None => self.kind.label().to_owned(),
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// Field errors as apimachinery's aggregate error prints them: one alone, several in
/// brackets, each message once.
pub fn aggregate(errors: &[FieldError]) -> String {
    let mut seen = std::collections::HashSet::new();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).filter(|m| seen.insert(m.clone())).collect();
    match messages.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// A string quoted as Go's `%q` quotes it (close enough for names and labels).
pub fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// A JSON value as Go's `json.Marshal` writes the `interface{}` apimachinery decoded
/// it into: keys sorted, `<`, `>` and `&` escaped, whole numbers without a fraction.
/// Upstream prints invalid values that are not strings this way.
pub fn go_json(v: &serde_json::Value) -> String {
    let mut out = String::new();
    write_go_json(&mut out, v);
    out
}

fn write_go_json(out: &mut String, v: &serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e18 => out.push_str(&format!("{}", f as i64)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => out.push_str(&go_json_string(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&go_json_string(k));
                out.push(':');
                write_go_json(out, &map[k]);
            }
            out.push('}');
        }
    }
}

/// A string as Go's `json.Marshal` quotes it (HTML-safe).
pub fn go_json_string(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}
