//! The schemas of the built-in kinds and the decoding of request bodies against them.
//!
//! `definitions.json` holds the OpenAPI v2 definitions of every kind the registry serves
//! (their List kinds, the meta/v1 types, `Scale`, `Eviction`, ...), generated from the
//! Kubernetes v1.33 types by `tools/openapi-gen` and carrying the list, map and patch
//! extensions of [`list_extensions`]. The OpenAPI documents serve them
//! ([`definitions`]); writes decode their bodies against a compact form of them
//! ([`decode`]).
//!
//! Nothing here runs until it is needed: the JSON text is static data, and each form is
//! built on first use (`OnceLock`), so startup and reads never pay for it.
//!
//! Decoding follows kube-apiserver's create and update handlers: a value of the wrong
//! type fails the request with Go's decoding error; unknown fields are dropped from what
//! is stored; unknown and duplicate fields are errors under `fieldValidation=Strict`,
//! warnings under `Warn` (the default) and ignored under `Ignore`.

mod custom;
mod custom_node;
mod decode;
pub mod enums;
pub mod list_extensions;
mod node;
pub(crate) mod object_meta;
pub mod compiled;
mod structure;
pub(crate) mod structural;
mod yaml;

#[cfg(test)]
mod tests;

use crate::negotiation::Format;
use crate::validation::FieldError;
use serde_json::{Map, Value};
use std::sync::OnceLock;

pub use custom::{CustomSchema, ResourceSchema};
#[cfg(test)]
pub(crate) use custom_node::tests::widget as example_custom_schema;
pub use decode::go_quote;
pub use node::{ListType, MapKeys, NodeKind, SchemaNode};

/// The OpenAPI v2 `definitions` object, as generated (pretty-printed JSON, sorted keys).
pub const DEFINITIONS_JSON: &str = include_str!("definitions.json");

/// What decoding needs of the definitions (types, properties, refs, kinds), one line per
/// definition: generated with `definitions.json`, read on the first write.
pub(crate) const STRUCTURE: &str = include_str!("structure.txt");

/// The OpenAPI v2 `definitions`, parsed on first use: definition name → schema.
pub fn definitions() -> &'static Map<String, Value> {
    static DEFINITIONS: OnceLock<Map<String, Value>> = OnceLock::new();
    DEFINITIONS
        .get_or_init(|| serde_json::from_str(DEFINITIONS_JSON).expect("definitions.json is valid"))
}

/// Build what decoding needs now rather than on the first write (an adapter may call it
/// off the request path, once the server is ready).
pub fn warm() {
    structure::Schemas::get();
}

/// The name of the definition of `kind` in `group`/`version` (`""` for the core group),
/// if there is one: `io.k8s.api.apps.v1.Deployment`.
pub fn definition_name(group: &str, version: &str, kind: &str) -> Option<&'static str> {
    let schemas = structure::Schemas::get();
    schemas
        .kind(group, version, kind)
        .map(|id| schemas.ty(id).name)
}

/// Decode a JSON value as the built-in definition `name` (`io.k8s.apimachinery.pkg.apis.
/// meta.v1.ObjectMeta`), as Go's JSON decoding into that type does: unknown fields are
/// dropped, and a value of the wrong type fails with Go's words.
pub(crate) fn decode_as(name: &str, value: &Value) -> Result<Value, String> {
    let schemas = structure::Schemas::get();
    let Some(id) = schemas.types.iter().position(|t| t.name == name) else {
        return Ok(value.clone());
    };
    let mut cx = decode::Cx::new(schemas, false);
    let decoded = cx.decode(id as structure::TypeId, value);
    if let Some(error) = cx.fatal.take().or(cx.error.take()) {
        return Err(error);
    }
    decoded.map_err(|e| e.to_string())
}

/// The `fieldValidation` query parameter of create, update and patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Unknown and duplicate fields are dropped silently.
    Ignore,
    /// Dropped, and each reported in a `Warning` header (the default).
    #[default]
    Warn,
    /// The request fails, listing every one.
    Strict,
}

impl FieldValidation {
    /// The directive a request asks for; absent or empty is `Warn`. Any other value is the
    /// field error kube-apiserver's options validation reports.
    pub fn from_query(value: Option<&str>) -> Result<FieldValidation, FieldError> {
        match value.unwrap_or("") {
            "" | "Warn" => Ok(FieldValidation::Warn),
            "Ignore" => Ok(FieldValidation::Ignore),
            "Strict" => Ok(FieldValidation::Strict),
            other => Err(FieldError::not_supported("fieldValidation", other, &["", "Ignore", "Strict", "Warn"])),
        }
    }
}

/// A body decoded as an object of its kind.
#[derive(Debug)]
pub struct Decoded {
    /// The object, without unknown fields.
    pub object: Map<String, Value>,
    /// Under `Warn`: the text of each warning, in order.
    pub warnings: Vec<String>,
}

/// Why a body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Not JSON (or YAML) at all: the parser's message.
    Syntax(String),
    /// Valid JSON, but not an object.
    NotAnObject,
    /// A value of the wrong type: Go's decoding error (`json: cannot unmarshal ...`).
    Type(String),
    /// Under `Strict`: every unknown and duplicate field.
    Strict(Vec<String>),
}

impl DecodeError {
    /// The reason kube-apiserver gives after `<Kind> in version "<v>" cannot be handled as
    /// a <Kind>: `.
    pub fn reason(&self) -> String {
        match self {
            DecodeError::Syntax(e) => e.clone(),
            DecodeError::NotAnObject => "expected an object".to_owned(),
            DecodeError::Type(e) => e.clone(),
            DecodeError::Strict(errors) => format!("strict decoding error: {}", errors.join(", ")),
        }
    }
}

/// Decode a JSON or YAML body as an object of `group`/`version`/`kind`, as
/// kube-apiserver decodes it for a create or update under `validation`. A kind without a
/// schema decodes as plain JSON.
pub fn decode(
    format: Format,
    body: &[u8],
    (group, version, kind): (&str, &str, &str),
    validation: FieldValidation,
) -> Result<Decoded, DecodeError> {
    if format == Format::Protobuf {
        // Read into the JSON it stands for, then decoded as that JSON is (no unknown
        // fields can come of it).
        let json = crate::negotiation::decode(format, body).map_err(DecodeError::Syntax)?;
        let json = serde_json::to_vec(&json).map_err(|e| DecodeError::Syntax(e.to_string()))?;
        return decode(Format::Json, &json, (group, version, kind), validation);
    }
    let schemas = structure::Schemas::get();
    let Some(root) = schemas.kind(group, version, kind) else {
        return match crate::negotiation::decode(format, body).map_err(DecodeError::Syntax)? {
            Value::Object(object) => Ok(Decoded {
                object,
                warnings: Vec::new(),
            }),
            _ => Err(DecodeError::NotAnObject),
        };
    };
    let collect = validation != FieldValidation::Ignore;
    let mut cx = decode::Cx::new(schemas, collect);
    // go-yaml's strict pass: duplicate keys, one error for them all.
    let mut yaml_duplicates = Vec::new();
    let value = match format {
        Format::Json => {
            let first = body.iter().find(|b| !b.is_ascii_whitespace());
            if first.is_some_and(|b| *b != b'{') {
                // Syntax first, as Go checks the whole body before decoding.
                serde_json::from_slice::<serde::de::IgnoredAny>(body)
                    .map_err(|e| DecodeError::Syntax(e.to_string()))?;
                return Err(DecodeError::NotAnObject);
            }
            let mut de = serde_json::Deserializer::from_slice(body);
            let decoded = cx.decode(root, &mut de).and_then(|v| de.end().map(|()| v));
            match decoded {
                Ok(v) => v,
                Err(e) => {
                    return Err(match cx.fatal.take() {
                        // A syntax error later in the body would have come first in Go.
                        Some(fatal) => {
                            match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
                                Err(syntax) => DecodeError::Syntax(syntax.to_string()),
                                Ok(_) => DecodeError::Type(fatal),
                            }
                        }
                        None => DecodeError::Syntax(e.to_string()),
                    });
                }
            }
        }
        Format::Protobuf => unreachable!("protobuf bodies are read as JSON above"),
        Format::Yaml => {
            let plain: Value =
                serde_yaml::from_slice(body).map_err(|e| DecodeError::Syntax(e.to_string()))?;
            if !plain.is_object() {
                return Err(DecodeError::NotAnObject);
            }
            if collect {
                if let Ok(text) = std::str::from_utf8(body) {
                    yaml_duplicates = yaml::duplicate_keys(text)
                        .into_iter()
                        .map(|(line, key)| {
                            format!("line {line}: key {} already set in map", go_quote(&key))
                        })
                        .collect();
                }
            }
            // Decoded from the converted JSON, as upstream does: keys in sorted order.
            match cx.decode(root, &plain) {
                Ok(v) => v,
                Err(e) => {
                    return Err(DecodeError::Type(
                        cx.fatal.take().unwrap_or_else(|| e.to_string()),
                    ))
                }
            }
        }
    };
    if let Some(error) = cx.error.take() {
        return Err(DecodeError::Type(error));
    }
    let Value::Object(object) = value else {
        return Err(DecodeError::NotAnObject);
    };
    match validation {
        FieldValidation::Ignore => Ok(Decoded {
            object,
            warnings: Vec::new(),
        }),
        FieldValidation::Strict => {
            let mut errors = Vec::new();
            if !yaml_duplicates.is_empty() {
                errors.push(format!(
                    "yaml: unmarshal errors:\n  {}",
                    yaml_duplicates.join("\n  ")
                ));
            }
            errors.extend(cx.strict);
            if errors.is_empty() {
                Ok(Decoded {
                    object,
                    warnings: Vec::new(),
                })
            } else {
                Err(DecodeError::Strict(errors))
            }
        }
        FieldValidation::Warn => {
            let mut warnings = yaml_duplicates;
            warnings.extend(cx.strict);
            Ok(Decoded { object, warnings })
        }
    }
}

/// The `Warning` header values for `texts`, as kube-apiserver's warning recorder writes
/// them: `299 - "<text>"` with `"` and `\` escaped, each text once, texts with control
/// characters dropped, and every text cut to 256 characters once they add up to more
/// than 4096.
pub fn warning_headers(texts: &[String]) -> Vec<String> {
    const TOTAL: usize = 4 * 1024;
    const ITEM: usize = 256;
    let mut unique: Vec<&str> = Vec::new();
    for t in texts {
        if !t.is_empty() && !unique.contains(&t.as_str()) {
            unique.push(t);
        }
    }
    let total: usize = unique
        .iter()
        .filter(|t| !t.chars().any(char::is_control))
        .map(|t| t.chars().count())
        .sum();
    let truncating = total > TOTAL;
    let mut written = 0;
    let mut headers = Vec::new();
    for t in unique {
        if t.chars().any(char::is_control) {
            continue;
        }
        let text: String = if truncating {
            t.chars().take(ITEM).collect()
        } else {
            t.to_owned()
        };
        let len = text.chars().count();
        if truncating && written >= TOTAL {
            break;
        }
        written += len;
        let mut header = String::with_capacity(text.len() + 8);
        header.push_str("299 - \"");
        for c in text.chars() {
            if c == '"' || c == '\\' {
                header.push('\\');
            }
            header.push(c);
        }
        header.push('"');
        headers.push(header);
    }
    headers
}
