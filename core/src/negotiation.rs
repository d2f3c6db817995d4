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
    /// A `meta.k8s.io` PartialObjectMetadata of the given version: one object's
    /// metadata (a list asked for this way is refused, 406, as upstream refuses it).
    PartialObjectMetadata(&'static str),
    /// A `meta.k8s.io` PartialObjectMetadataList of the given version: a list's items
    /// as metadata only (a single object asked for this way is refused, 406).
    PartialObjectMetadataList(&'static str),
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
            (Format::Json, Shape::Table(v)) => {
                format!("application/json;as=Table;v={v};g=meta.k8s.io")
            }
            (Format::Yaml, Shape::Table(v)) => {
                format!("application/yaml;as=Table;v={v};g=meta.k8s.io")
            }
            // Upstream names only the serializer's media type for these (the recorded
            // v1.33 answers say `application/json`).
            (Format::Json, Shape::PartialObjectMetadata(_) | Shape::PartialObjectMetadataList(_)) => {
                "application/json".to_owned()
            }
            (Format::Yaml, Shape::PartialObjectMetadata(_) | Shape::PartialObjectMetadataList(_)) => {
                "application/yaml".to_owned()
            }
        }
    }

    /// Encode a value in this format: JSON as Go's encoder writes it (a built-in kind
    /// in its Go type's form, [`crate::typed_json`]), compact with a trailing newline or
    /// indented without one, as kube-apiserver answers.
    pub fn encode(&self, value: &Value) -> Bytes {
        let bytes = match self.format {
            Format::Json => {
                let compact = crate::typed_json::encode(value).unwrap_or_else(|| serde_json::to_vec(value).unwrap_or_default());
                if self.pretty {
                    crate::typed_json::indent(&compact)
                } else {
                    let mut compact = compact;
                    compact.push(b'\n');
                    compact
                }
            }
            Format::Yaml => serde_yaml::to_string(value)
                .unwrap_or_default()
                .into_bytes(),
        };
        Bytes::from(bytes)
    }
}

/// One media range of an `Accept` header: `kind/subtype;key=value;q=…`.
pub struct MediaRange<'a> {
    pub kind: &'a str,
    pub subtype: &'a str,
    pub quality: f64,
    pub params: Vec<(&'a str, &'a str)>,
}

impl MediaRange<'_> {
    /// A parameter's value.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }

    /// Whether this range admits `kind/subtype`.
    pub fn matches(&self, kind: &str, subtype: &str) -> bool {
        (self.kind == kind || self.kind == "*") && (self.subtype == subtype || self.subtype == "*")
    }
}

/// Parses an `Accept` header like kube's content negotiation library: comma-separated
/// ranges, `;`-separated `key=value` parameters, malformed ranges and parameters
/// dropped, `q` taken as the quality (0 when unparsable).
pub fn parse_accept(header: &str) -> Vec<MediaRange<'_>> {
    let mut ranges: Vec<MediaRange<'_>> = Vec::new();
    for part in header.split(',') {
        let part = part.trim_matches(' ');
        let mut pieces = part.split(';');
        let media = pieces.next().unwrap_or("");
        let mut halves = media.split('/');
        let kind = halves.next().unwrap_or("").trim_matches(' ');
        let subtype = match (halves.next(), halves.next()) {
            (None, _) if kind == "*" => "*",
            (Some(sub), None) => sub.trim_matches(' '),
            _ => continue,
        };
        let mut range = MediaRange {
            kind,
            subtype,
            quality: 1.0,
            params: Vec::new(),
        };
        for param in pieces {
            let Some((key, value)) = param.split_once('=') else {
                continue;
            };
            let key = key.trim_matches(' ');
            if key == "q" {
                range.quality = value.parse::<f32>().map(f64::from).unwrap_or(0.0);
            } else {
                // A later duplicate overrides an earlier one, as in a map.
                let value = value.trim_matches(' ');
                range.params.retain(|(k, _)| *k != key);
                range.params.push((key, value));
            }
        }
        ranges.push(range);
    }
    // kube's ordering: an insertion sort with this "less", which puts higher quality
    // first and otherwise only moves concrete types ahead of wildcards.
    let less = |a: &MediaRange<'_>, b: &MediaRange<'_>| {
        a.quality > b.quality
            || (a.kind != "*" && b.kind == "*")
            || (a.subtype != "*" && b.subtype == "*")
    };
    for i in 1..ranges.len() {
        let mut j = i;
        while j > 0 && less(&ranges[j], &ranges[j - 1]) {
            ranges.swap(j, j - 1);
            j -= 1;
        }
    }
    ranges
}

/// Choose the response encoding from the Accept header and the `pretty` parameter.
/// `tables` says whether this endpoint can answer with a Table or metadata only
/// (PartialObjectMetadata or PartialObjectMetadataList: upstream accepts either on
/// every resource endpoint and refuses the wrong one for the answer only when it
/// answers, so a list asked for as PartialObjectMetadata is a 406 even when a plain
/// `application/json` follows in the header).
pub fn negotiate_output(
    accept: Option<&str>,
    pretty: bool,
    tables: bool,
) -> Result<Output, ApiError> {
    let accept = accept
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .unwrap_or("application/json");
    for range in parse_accept(accept) {
        if range.quality <= 0.0 {
            continue;
        }
        let format = if range.matches("application", "json") {
            Format::Json
        } else if range.kind == "application" && range.subtype == "yaml" {
            Format::Yaml
        } else {
            continue;
        };
        let shape = match (range.param("as"), range.param("g"), range.param("v")) {
            (None, _, _) => Shape::Object,
            (Some("Table"), Some("meta.k8s.io"), Some("v1")) if tables => Shape::Table("v1"),
            (Some("Table"), Some("meta.k8s.io"), Some("v1beta1")) if tables => {
                Shape::Table("v1beta1")
            }
            (Some(kind @ ("PartialObjectMetadata" | "PartialObjectMetadataList")), Some("meta.k8s.io"), Some(v @ ("v1" | "v1beta1")))
                if tables =>
            {
                let v = if v == "v1" { "v1" } else { "v1beta1" };
                if kind == "PartialObjectMetadata" {
                    Shape::PartialObjectMetadata(v)
                } else {
                    Shape::PartialObjectMetadataList(v)
                }
            }
            _ => continue,
        };
        let pretty = pretty || matches!(range.param("pretty"), Some("1" | "true"));
        return Ok(Output {
            format,
            shape,
            pretty,
        });
    }
    Err(ApiError::not_acceptable(SUPPORTED))
}

/// The format of a request body from its Content-Type (JSON when absent).
pub fn negotiate_input(content_type: Option<&str>) -> Result<Format, ApiError> {
    let Some(ct) = content_type.map(str::trim).filter(|c| !c.is_empty()) else {
        return Ok(Format::Json);
    };
    let kind = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
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
        assert_eq!(
            negotiate_output(Some(accept), false, true).unwrap().shape,
            Shape::Table("v1")
        );
        assert_eq!(
            negotiate_output(Some(accept), false, false).unwrap(),
            Output::JSON
        );
    }

    #[test]
    fn metadata_only_is_negotiated_like_a_table() {
        let pom = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
        let out = negotiate_output(Some(pom), false, true).unwrap();
        assert_eq!(out.shape, Shape::PartialObjectMetadata("v1"));
        assert_eq!(out.content_type(), "application/json");
        let list = "application/yaml;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1";
        let out = negotiate_output(Some(list), false, true).unwrap();
        assert_eq!(out.shape, Shape::PartialObjectMetadataList("v1beta1"));
        assert_eq!(out.content_type(), "application/yaml");
        // Not where no transform is served (non-resource paths), nor in another group
        // or version: the next range is taken.
        let fallback = format!("{pom}, application/json");
        assert_eq!(negotiate_output(Some(&fallback), false, false).unwrap(), Output::JSON);
        let other = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2, application/json";
        assert_eq!(negotiate_output(Some(other), false, true).unwrap(), Output::JSON);
        let ungrouped = "application/json;as=PartialObjectMetadata;v=v1";
        assert_eq!(negotiate_output(Some(ungrouped), false, true).unwrap_err().code, 406);
        // Quality decides first.
        let lower = format!("{pom};q=0.1, application/json;q=0.9");
        assert_eq!(negotiate_output(Some(&lower), false, true).unwrap(), Output::JSON);
    }

    #[test]
    fn protobuf_falls_back_to_json_and_nothing_acceptable_is_406() {
        let out = negotiate_output(
            Some("application/vnd.kubernetes.protobuf, application/json"),
            false,
            false,
        )
        .unwrap();
        assert_eq!(out.format, Format::Json);
        assert_eq!(
            negotiate_output(Some("application/yaml"), false, false)
                .unwrap()
                .format,
            Format::Yaml
        );
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
        assert_eq!(
            negotiate_input(Some("application/yaml; charset=utf-8")).unwrap(),
            Format::Yaml
        );
        assert_eq!(negotiate_input(Some("text/plain")).unwrap_err().code, 415);
        assert_eq!(
            decode(Format::Yaml, b"a: 1\n").unwrap(),
            serde_json::json!({"a": 1})
        );
    }
}
