//! Content negotiation: which format a request body is in, and which format and shape
//! (plain object, a meta.k8s.io Table or metadata only) the client wants back.

use crate::status::ApiError;
use bytes::Bytes;
use serde_json::Value;

/// A serialization format this server reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
    /// Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`): responses
    /// only; protobuf bodies are read into JSON before they reach a handler.
    Protobuf,
}

/// The media types a resource endpoint serves, in preference order.
pub const SUPPORTED: &[&str] = &["application/json", "application/yaml", crate::protobuf::MEDIA_TYPE];

/// The media types a path without resources serves.
pub const SUPPORTED_TEXT: &[&str] = &["application/json", "application/yaml"];

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

    /// The Content-Type of a response in this encoding: the serializer's media type
    /// alone, whatever the shape, as upstream names it (a Table is `application/json`).
    pub fn content_type(&self) -> &'static str {
        match self.format {
            Format::Json => "application/json",
            Format::Yaml => "application/yaml",
            Format::Protobuf => crate::protobuf::MEDIA_TYPE,
        }
    }

    /// The Content-Type of a watch stream in this encoding: JSON frames are named as
    /// a plain JSON answer is, protobuf ones with `;stream=watch`, as upstream does.
    pub fn watch_content_type(&self) -> &'static str {
        match self.format {
            Format::Protobuf => "application/vnd.kubernetes.protobuf;stream=watch",
            Format::Json | Format::Yaml => self.content_type(),
        }
    }

    /// Encode a value in this format: JSON as Go's encoder writes it (a built-in kind
    /// in its Go type's form, [`crate::typed_json`]), compact with a trailing newline or
    /// indented without one, as kube-apiserver answers; protobuf as kube-apiserver
    /// writes the same object (an error when the value is no known kind).
    pub fn encode(&self, value: &Value) -> Result<Bytes, crate::protobuf::EncodeError> {
        let bytes = match self.format {
            Format::Protobuf => crate::protobuf::encode(value)?,
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
        Ok(Bytes::from(bytes))
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

/// What an endpoint can answer besides plain JSON and YAML.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    /// Tables and metadata only (resource endpoints).
    pub transforms: bool,
    /// Kubernetes protobuf (resource endpoints of built-in kinds and custom resources).
    pub protobuf: bool,
}

impl Offer {
    /// A resource endpoint's: everything.
    pub const RESOURCE: Offer = Offer {
        transforms: true,
        protobuf: true,
    };
    /// A path without resources: JSON and YAML as they are.
    pub const TEXT: Offer = Offer {
        transforms: false,
        protobuf: false,
    };

    fn media_types(self) -> &'static [&'static str] {
        if self.protobuf {
            SUPPORTED
        } else {
            SUPPORTED_TEXT
        }
    }
}

/// Choose the response encoding from the Accept header and the `pretty` parameter.
/// Tables and metadata only are answered where `offer.transforms` (PartialObjectMetadata
/// or PartialObjectMetadataList: upstream accepts either on every resource endpoint and
/// refuses the wrong one for the answer only when it answers, so a list asked for as
/// PartialObjectMetadata is a 406 even when a plain `application/json` follows in the
/// header). A Table is never protobuf: that range is passed over, as upstream does.
pub fn negotiate_output(accept: Option<&str>, pretty: bool, offer: Offer) -> Result<Output, ApiError> {
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
        } else if offer.protobuf && range.kind == "application" && range.subtype == "vnd.kubernetes.protobuf" {
            Format::Protobuf
        } else {
            continue;
        };
        let shape = match (range.param("as"), range.param("g"), range.param("v")) {
            (None, _, _) => Shape::Object,
            (Some("Table"), _, _) if format == Format::Protobuf => continue,
            (Some("Table"), Some("meta.k8s.io"), Some("v1")) if offer.transforms => Shape::Table("v1"),
            (Some("Table"), Some("meta.k8s.io"), Some("v1beta1")) if offer.transforms => {
                Shape::Table("v1beta1")
            }
            (Some(kind @ ("PartialObjectMetadata" | "PartialObjectMetadataList")), Some("meta.k8s.io"), Some(v @ ("v1" | "v1beta1")))
                if offer.transforms =>
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
        let pretty = format != Format::Protobuf && (pretty || matches!(range.param("pretty"), Some("1" | "true")));
        return Ok(Output {
            format,
            shape,
            pretty,
        });
    }
    Err(ApiError::not_acceptable(offer.media_types()))
}

/// go-restful's check before any handler runs: whether some range of `accept` names,
/// without its parameters, one of `produces` exactly (or is `*/*`). No quality, no
/// `application/*`: go-restful compares the bare strings.
pub fn route_produces(accept: Option<&str>, produces: &[&str]) -> bool {
    let Some(accept) = accept.filter(|a| !a.is_empty()) else {
        return true;
    };
    accept.split(',').any(|range| {
        let bare = range.split(';').next().unwrap_or("").trim_matches(' ');
        bare == "*/*" || produces.contains(&bare)
    })
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
        Format::Protobuf => crate::protobuf::decode(body).map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_get_asks_for_a_table_first() {
        let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            negotiate_output(Some(accept), false, Offer::RESOURCE).unwrap().shape,
            Shape::Table("v1")
        );
        assert_eq!(
            negotiate_output(Some(accept), false, Offer::TEXT).unwrap(),
            Output::JSON
        );
    }

    #[test]
    fn metadata_only_is_negotiated_like_a_table() {
        let pom = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
        let out = negotiate_output(Some(pom), false, Offer::RESOURCE).unwrap();
        assert_eq!(out.shape, Shape::PartialObjectMetadata("v1"));
        assert_eq!(out.content_type(), "application/json");
        let list = "application/yaml;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1";
        let out = negotiate_output(Some(list), false, Offer::RESOURCE).unwrap();
        assert_eq!(out.shape, Shape::PartialObjectMetadataList("v1beta1"));
        assert_eq!(out.content_type(), "application/yaml");
        // Not where no transform is served (non-resource paths), nor in another group
        // or version: the next range is taken.
        let fallback = format!("{pom}, application/json");
        assert_eq!(negotiate_output(Some(&fallback), false, Offer::TEXT).unwrap(), Output::JSON);
        let other = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2, application/json";
        assert_eq!(negotiate_output(Some(other), false, Offer::RESOURCE).unwrap(), Output::JSON);
        let ungrouped = "application/json;as=PartialObjectMetadata;v=v1";
        assert_eq!(negotiate_output(Some(ungrouped), false, Offer::RESOURCE).unwrap_err().code, 406);
        // Quality decides first.
        let lower = format!("{pom};q=0.1, application/json;q=0.9");
        assert_eq!(negotiate_output(Some(&lower), false, Offer::RESOURCE).unwrap(), Output::JSON);
    }

    #[test]
    fn protobuf_where_offered_and_never_for_a_table() {
        let client_go = Some("application/vnd.kubernetes.protobuf, application/json");
        let out = negotiate_output(client_go, true, Offer::RESOURCE).unwrap();
        assert_eq!((out.format, out.shape, out.pretty), (Format::Protobuf, Shape::Object, false));
        assert_eq!(out.content_type(), "application/vnd.kubernetes.protobuf");
        assert_eq!(out.watch_content_type(), "application/vnd.kubernetes.protobuf;stream=watch");
        assert_eq!(negotiate_output(client_go, false, Offer::TEXT).unwrap().format, Format::Json);
        // Quality first; `*/*` is JSON.
        let lower = Some("application/vnd.kubernetes.protobuf;q=0.5, application/json");
        assert_eq!(negotiate_output(lower, false, Offer::RESOURCE).unwrap().format, Format::Json);
        assert_eq!(negotiate_output(Some("*/*"), false, Offer::RESOURCE).unwrap().format, Format::Json);
        // A protobuf Table is passed over for what follows, or refused.
        let table = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io";
        let err = negotiate_output(Some(table), false, Offer::RESOURCE).unwrap_err();
        assert_eq!(
            err.message,
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
        let fallback = format!("{table}, application/json");
        assert_eq!(negotiate_output(Some(&fallback), false, Offer::RESOURCE).unwrap(), Output::JSON);
        // Metadata only is offered as protobuf.
        let pom = Some("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1");
        let out = negotiate_output(pom, false, Offer::RESOURCE).unwrap();
        assert_eq!((out.format, out.shape), (Format::Protobuf, Shape::PartialObjectMetadataList("v1")));
    }

    #[test]
    fn nothing_acceptable_is_406() {
        assert_eq!(
            negotiate_output(Some("application/yaml"), false, Offer::TEXT)
                .unwrap()
                .format,
            Format::Yaml
        );
        let err = negotiate_output(Some("text/html"), false, Offer::TEXT).unwrap_err();
        assert_eq!(err.code, 406);
        assert_eq!(
            err.message,
            "only the following media types are accepted: application/json, application/yaml"
        );
        assert!(negotiate_output(None, true, Offer::TEXT).unwrap().pretty);
    }

    #[test]
    fn go_restful_compares_bare_media_types() {
        let produces = SUPPORTED;
        assert!(route_produces(None, produces));
        assert!(route_produces(Some("text/html, */*;q=0.1"), produces));
        assert!(route_produces(Some("application/json;as=Table;v=v1;g=meta.k8s.io"), produces));
        assert!(!route_produces(Some("application/*"), produces));
        assert!(!route_produces(Some("application/xml"), produces));
        assert!(!route_produces(Some("Application/JSON"), produces));
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
