//! Content negotiation: which format a request body is in, and which format and shape
//! (plain object or a meta.k8s.io Table) the client wants back.

use crate::status::ApiError;
use bytes::Bytes;
use serde_json::Value;

/// A serialization format this server reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

/// The media types this server serves, in preference order.
pub const SUPPORTED: &[&str] = &["application/json", "application/yaml"];

/// What shape of response the client asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The object or list itself.
    Object,
    /// A `meta.k8s.io` Table of the given version (`v1` or `v1beta1`).
    Table(&'static str),
}

/// The negotiated response encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Output {
    pub format: Format,
    pub shape: Shape,
    pub pretty: bool,
}

impl Output {
    pub const JSON: Output = Output {
        format: Format::Json,
        shape: Shape::Object,
        pretty: false,
    };

    /// The Content-Type of a response in this encoding.
    pub fn content_type(&self) -> String {
        match (self.format, self.shape) {
            (Format::Json, Shape::Object) => "application/json".to_owned(),
            (Format::Yaml, Shape::Object) => "application/yaml".to_owned(),
            (Format::Json, Shape::Table(v)) => format!("application/json;as=Table;v={v};g=meta.k8s.io"),
            (Format::Yaml, Shape::Table(v)) => format!("application/yaml;as=Table;v={v};g=meta.k8s.io"),
        }
    }

    /// Encode a value in this format.
    pub fn encode(&self, value: &Value) -> Bytes {
        let bytes = match self.format {
            Format::Json if self.pretty => {
                let mut v = serde_json::to_vec_pretty(value).unwrap_or_default();
                v.push(b'\n');
                v
            }
            Format::Json => serde_json::to_vec(value).unwrap_or_default(),
            Format::Yaml => serde_yaml::to_string(value).unwrap_or_default().into_bytes(),
        };
        Bytes::from(bytes)
    }
}

/// One entry of an Accept header.
struct Accepted<'a> {
    kind: &'a str,
    q: f32,
    params: Vec<(&'a str, &'a str)>,
}

fn parse_accept(accept: &str) -> Vec<Accepted<'_>> {
    let mut entries: Vec<Accepted<'_>> = accept
        .split(',')
        .filter_map(|item| {
            let mut pieces = item.split(';').map(str::trim);
            let kind = pieces.next().filter(|k| !k.is_empty())?;
            let mut q = 1.0;
            let mut params = Vec::new();
            for p in pieces {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                let (k, v) = (k.trim(), v.trim().trim_matches('"'));
                if k == "q" {
                    q = v.parse().unwrap_or(0.0);
                } else {
                    params.push((k, v));
                }
            }
            Some(Accepted { kind, q, params })
        })
        .collect();
    entries.sort_by(|a, b| b.q.partial_cmp(&a.q).unwrap_or(std::cmp::Ordering::Equal));
    entries
}

/// Choose the response encoding from the Accept header and the `pretty` parameter.
/// `tables` says whether this endpoint can answer with a Table.
pub fn negotiate_output(accept: Option<&str>, pretty: bool, tables: bool) -> Result<Output, ApiError> {
    let accept = accept.map(str::trim).filter(|a| !a.is_empty()).unwrap_or("application/json");
    for entry in parse_accept(accept) {
        if entry.q <= 0.0 {
            continue;
        }
        let format = match entry.kind.to_ascii_lowercase().as_str() {
            "application/json" | "application/*" | "*/*" => Format::Json,
            "application/yaml" => Format::Yaml,
            _ => continue,
        };
        let param = |name: &str| entry.params.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        let shape = match (param("as"), param("g"), param("v")) {
            (None, _, _) => Shape::Object,
            (Some("Table"), Some("meta.k8s.io"), Some("v1")) if tables => Shape::Table("v1"),
            (Some("Table"), Some("meta.k8s.io"), Some("v1beta1")) if tables => Shape::Table("v1beta1"),
            _ => continue,
        };
        let pretty = pretty || param("pretty") == Some("1") || param("pretty") == Some("true");
        return Ok(Output { format, shape, pretty });
    }
    Err(ApiError::not_acceptable(SUPPORTED))
}

/// The format of a request body from its Content-Type (JSON when absent).
pub fn negotiate_input(content_type: Option<&str>) -> Result<Format, ApiError> {
    let Some(ct) = content_type.map(str::trim).filter(|c| !c.is_empty()) else {
        return Ok(Format::Json);
    };
    let kind = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match kind.as_str() {
        "application/json" => Ok(Format::Json),
        "application/yaml" => Ok(Format::Yaml),
        // Protobuf bodies are transcoded to JSON before they get here.
        _ => Err(ApiError::unsupported_media_type(&[
            "application/json",
            "application/yaml",
            crate::protobuf::MEDIA_TYPE,
        ])),
    }
}

/// Decode a request body into a JSON value.
pub fn decode(format: Format, body: &[u8]) -> Result<Value, String> {
    match format {
        Format::Json => serde_json::from_slice(body).map_err(|e| e.to_string()),
        Format::Yaml => serde_yaml::from_slice::<Value>(body).map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_get_asks_for_a_table_first() {
        let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(negotiate_output(Some(accept), false, true).unwrap().shape, Shape::Table("v1"));
        assert_eq!(negotiate_output(Some(accept), false, false).unwrap(), Output::JSON);
    }

    #[test]
    fn protobuf_falls_back_to_json_and_nothing_acceptable_is_406() {
        let out = negotiate_output(Some("application/vnd.kubernetes.protobuf, application/json"), false, false).unwrap();
        assert_eq!(out.format, Format::Json);
        assert_eq!(negotiate_output(Some("application/yaml"), false, false).unwrap().format, Format::Yaml);
        let err = negotiate_output(Some("text/html"), false, false).unwrap_err();
        assert_eq!(err.code, 406);
        assert_eq!(
            err.message,
            "only the following media types are accepted: application/json, application/yaml"
        );
        assert!(negotiate_output(None, true, false).unwrap().pretty);
    }

    #[test]
    fn body_formats() {
        assert_eq!(negotiate_input(None).unwrap(), Format::Json);
        assert_eq!(negotiate_input(Some("application/yaml; charset=utf-8")).unwrap(), Format::Yaml);
        assert_eq!(negotiate_input(Some("text/plain")).unwrap_err().code, 415);
        assert_eq!(decode(Format::Yaml, b"a: 1\n").unwrap(), serde_json::json!({"a": 1}));
    }
}
