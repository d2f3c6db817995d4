//! Validation of what clients send, with field errors worded as kube-apiserver words them.

pub mod names;

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
    /// Something went wrong that is not the client's fault.
    Internal,
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
            Self::Internal => "Internal error",
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
            Self::Internal => "InternalError",
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

    pub fn required(field: &str, detail: impl Into<String>) -> FieldError {
        Self::without_value(field, ErrorKind::Required, detail)
    }

    pub fn too_long(field: &str, max_bytes: usize) -> FieldError {
        Self::without_value(field, ErrorKind::TooLong, format!("may not be more than {max_bytes} bytes"))
    }

    pub fn forbidden(field: &str, detail: impl Into<String>) -> FieldError {
        Self::without_value(field, ErrorKind::Forbidden, detail)
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

/// A string quoted as Go's `%q` quotes it (close enough for names and labels).
pub fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}
