//! A conversion webhook's ConversionReview, as kube-apiserver v1.33's apiextensions
//! server sends and checks it (`webhook_converter.go`): the request for the objects not
//! in the desired version yet, and the answer read back with upstream's checks and
//! words. Pure: the caller sends the request through the outbound-call effect.
//!
//! What the answer may change is upstream's rule: the body of each object, and its
//! labels and annotations; kind, name, namespace and UID must stay, and every other
//! metadata field is restored from the object sent.

use crate::schema::go_quote;
use serde_json::{json, Map, Value};

/// The ConversionReview versions this server speaks, in no order of preference: the
/// CRD's `conversionReviewVersions` gives the order.
const SPOKEN: [&str; 2] = ["v1", "v1beta1"];

/// A review on its way: what checking its answer needs.
#[derive(Debug)]
pub struct Review {
    uid: String,
    /// The ConversionReview version sent (`v1` or `v1beta1`).
    review_version: &'static str,
    /// The apiVersion the objects are converted to.
    desired: String,
    /// The input's group, version and kind as Go prints them, for the errors.
    of: String,
    /// The input's objects, and which of them were sent.
    originals: Vec<Value>,
    sent: Vec<usize>,
    /// Whether the input is a list (its items are converted, and errors are worded so).
    list: bool,
    /// A list's other fields (kind, metadata), answered around the converted items.
    shell: Map<String, Value>,
}

/// What converting an object or a list takes.
#[derive(Debug)]
pub enum Conversion {
    /// Nothing to send: every object is in the desired version already (the input is
    /// returned with its apiVersion set).
    Done(Value),
    /// Send this body (a JSON ConversionReview) and give the answer to [`Review::answer`].
    Send(Review, Vec<u8>),
}

/// Start converting `input` (a custom resource, or a list of them) to `desired`
/// (`group/version`), with the review versions the CRD accepts, under request `uid`.
pub fn convert(input: Value, desired: &str, review_versions: &[String], uid: &str) -> Result<Conversion, String> {
    let list = input.get("items").is_some_and(Value::is_array) && text(&input, "kind").ends_with("List");
    let of = gvk(&input);
    let (mut shell, originals) = match input {
        Value::Object(mut map) if list => {
            let items = match map.remove("items") {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            };
            (map, items)
        }
        Value::Object(map) => (Map::new(), vec![Value::Object(map)]),
        other => return Err(format!("conversion of a {} is not possible", crate::gofmt::GoType::of(&other).name())),
    };
    let sent: Vec<usize> = (0..originals.len()).filter(|&i| text(&originals[i], "apiVersion") != desired).collect();
    if sent.is_empty() {
        return Ok(Conversion::Done(if list {
            shell.insert("apiVersion".into(), json!(desired));
            shell.insert("items".into(), Value::Array(originals));
            Value::Object(shell)
        } else {
            originals.into_iter().next().unwrap_or(Value::Null)
        }));
    }
    let review_version = review_versions
        .iter()
        .find_map(|v| SPOKEN.iter().copied().find(|s| s == v))
        .ok_or("no supported conversion review versions")?;
    let objects: Vec<&Value> = sent.iter().map(|&i| &originals[i]).collect();
    let body = json!({
        "kind": "ConversionReview",
        "apiVersion": format!("apiextensions.k8s.io/{review_version}"),
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
        "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}},
    });
    let review = Review { uid: uid.to_owned(), review_version, desired: desired.to_owned(), of, originals, sent, list, shell };
    Ok(Conversion::Send(review, serde_json::to_vec(&body).unwrap_or_default()))
}

impl Review {
    /// The input's group, version and kind as the errors name them.
    pub fn of(&self) -> &str {
        &self.of
    }

    /// The outcome of the call that sent the review, read as [`Review::answer`] reads
    /// an answer; no answer at all is upstream's "failed" too.
    pub fn outcome(self, outcome: crate::effect::CallOutcome) -> Result<Value, String> {
        match outcome {
            Ok(response) => {
                let status = response.status().as_u16();
                self.answer(status, response.body())
            }
            Err(e) => Err(format!("conversion webhook for {} failed: {e}", self.of)),
        }
    }

    /// The webhook's answer (its status code and body) made into the converted object
    /// or list, or upstream's error.
    pub fn answer(self, status: u16, body: &[u8]) -> Result<Value, String> {
        let failed = |why: String| format!("conversion webhook for {} failed: {why}", self.of);
        let converted = self.converted_objects(status, body).map_err(failed)?;
        if converted.len() != self.sent.len() {
            return Err(format!(
                "conversion webhook for {} returned {} objects, expected {}",
                self.of,
                converted.len(),
                self.sent.len()
            ));
        }
        let mut originals = self.originals;
        for (n, (&i, converted)) in self.sent.iter().zip(converted).enumerate() {
            let original = &originals[i];
            // Upstream counts the object before its checks when it names a list's item.
            let (what, at) = if self.list { ("invalid converted object", n + 1) } else { ("invalid object", 0) };
            let Value::Object(mut converted) = converted else {
                let at = if self.list { n } else { 0 };
                return Err(format!("conversion webhook for {} returned {what} at index {at}: Object 'Kind' is missing in '{converted}'", self.of));
            };
            let invalid = |why: String| format!("conversion webhook for {} returned {what} at index {at}: {why}", self.of);
            let group_version = text_of(&converted, "apiVersion");
            if group_version != self.desired {
                return Err(invalid(format!("invalid groupVersion (expected {}, received {group_version})", self.desired)));
            }
            let (kind, got) = (text(original, "kind"), text_of(&converted, "kind"));
            if kind != got {
                return Err(invalid(format!("invalid kind (expected {kind}, received {got})")));
            }
            for (field, label) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
                let (e, a) = (meta_text(original, field), meta_text_of(&converted, field));
                if e != a {
                    let what = if self.list { "invalid converted object" } else { "invalid object" };
                    let at = if self.list { format!(" at index {at}") } else { String::new() };
                    return Err(format!("conversion webhook for {} returned {what}{at}: must have the same {label}: {e} != {a}", self.of));
                }
            }
            restore_metadata(original, &mut converted).map_err(|why| {
                let at = if self.list { format!(" in object at index {at}") } else { String::new() };
                format!("conversion webhook for {} returned invalid metadata{at}: {why}", self.of)
            })?;
            originals[i] = Value::Object(converted);
        }
        if !self.list {
            return Ok(originals.into_iter().next().unwrap_or(Value::Null));
        }
        let mut shell = self.shell;
        shell.insert("apiVersion".into(), json!(self.desired));
        shell.insert("items".into(), Value::Array(originals));
        Ok(Value::Object(shell))
    }

    /// `response.convertedObjects` of a successful answer, checked as upstream checks
    /// the review around them.
    fn converted_objects(&self, status: u16, body: &[u8]) -> Result<Vec<Value>, String> {
        if !(200..300).contains(&status) {
            return Err(unsuccessful(status, body));
        }
        let answer: Value = serde_json::from_slice(body).map_err(|e| format!("json: {e}"))?;
        if self.review_version == "v1" {
            let got = format!("{}, Kind={}", text(&answer, "apiVersion"), text(&answer, "kind"));
            if got != "apiextensions.k8s.io/v1, Kind=ConversionReview" {
                return Err(format!(
                    "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {}",
                    got.trim_start_matches(", ").replace("/, ", ", ")
                ));
            }
        }
        let response = match answer.get("response") {
            Some(r @ Value::Object(_)) => r,
            _ => return Err("no response provided".into()),
        };
        // v1beta1 answers were never held to their UID.
        if self.review_version == "v1" && text(response, "uid") != self.uid {
            return Err(format!("expected response.uid={}, got {}", go_quote(&self.uid), go_quote(text(response, "uid"))));
        }
        let result = response.get("result");
        let result_status = result.map(|r| text(r, "status")).unwrap_or("");
        if result_status != "Success" {
            let message = result.map(|r| text(r, "message")).unwrap_or("");
            if !message.is_empty() {
                return Err(message.to_owned());
            }
            return Err(format!("response.result.status was '{result_status}', not 'Success'"));
        }
        match response.get("convertedObjects") {
            Some(Value::Array(objects)) => Ok(objects.clone()),
            _ => Ok(Vec::new()),
        }
    }
}

/// A webhook's non-2xx answer as client-go reports it: a Status's message, else the
/// code and the start of the body.
fn unsuccessful(status: u16, body: &[u8]) -> String {
    if let Ok(answer) = serde_json::from_slice::<Value>(body) {
        if text(&answer, "kind") == "Status" && !text(&answer, "message").is_empty() {
            return text(&answer, "message").to_owned();
        }
    }
    let shown: String = String::from_utf8_lossy(body).chars().take(1024).collect();
    if shown.trim().is_empty() {
        return format!("the server responded with the status code {status} but did not return more information");
    }
    format!("an error on the server ({}) has prevented the request from succeeding", go_quote(shown.trim()))
}

/// Upstream's `restoreObjectMeta`: the converted object gets the original's metadata,
/// with the labels and annotations the webhook answered (maps of strings).
fn restore_metadata(original: &Value, converted: &mut Map<String, Value>) -> Result<(), String> {
    let answered = match converted.get("metadata") {
        None => return Err("missing metadata in converted object".into()),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => return Err(format!("invalid metadata of type {} in converted object", go_type(other))),
    };
    let mut restored = original.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
    for field in ["labels", "annotations"] {
        match answered.get(field) {
            None | Some(Value::Null) => {
                restored.remove(field);
            }
            Some(Value::Object(values)) => {
                if let Some((key, value)) = values.iter().find(|(_, v)| !v.is_string()) {
                    return Err(format!("metadata.{field}[{key}] must be a string, but is {} in converted object", go_type(value)));
                }
                restored.insert(field.into(), Value::Object(values.clone()));
            }
            Some(other) => return Err(format!("invalid metadata.{field} of type {} in converted object", go_type(other))),
        }
    }
    converted.insert("metadata".into(), Value::Object(restored));
    Ok(())
}

/// The Go type of a decoded JSON value, as `%T` prints it.
fn go_type(value: &Value) -> &'static str {
    crate::gofmt::GoType::of(value).name()
}

/// An object's (or a list's) group, version and kind as Go's `GroupVersionKind` prints
/// them (`example.com/v1, Kind=Widget`).
fn gvk(value: &Value) -> String {
    format!("{}, Kind={}", text(value, "apiVersion"), text(value, "kind"))
}

fn text<'v>(value: &'v Value, field: &str) -> &'v str {
    value.get(field).and_then(Value::as_str).unwrap_or("")
}

fn text_of<'v>(map: &'v Map<String, Value>, field: &str) -> &'v str {
    map.get(field).and_then(Value::as_str).unwrap_or("")
}

fn meta_text<'v>(value: &'v Value, field: &str) -> &'v str {
    value.get("metadata").map_or("", |m| text(m, field))
}

fn meta_text_of<'v>(map: &'v Map<String, Value>, field: &str) -> &'v str {
    map.get("metadata").map_or("", |m| text(m, field))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widget(name: &str, version: &str) -> Value {
        json!({"apiVersion": format!("example.com/{version}"), "kind": "Widget",
               "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                            "resourceVersion": "7", "labels": {"a": "1"}},
               "spec": {"size": 3}})
    }

    fn v1() -> Vec<String> {
        vec!["v1".into()]
    }

    fn send(input: Value) -> (Review, Value) {
        match convert(input, "example.com/v2", &v1(), "u-1").unwrap() {
            Conversion::Send(review, body) => (review, serde_json::from_slice(&body).unwrap()),
            done => panic!("expected a review, got {done:?}"),
        }
    }

    /// What a webhook answers for a review: each object sent, changed by `f`.
    fn answered(request: &Value, f: impl Fn(&mut Value)) -> Vec<u8> {
        let objects: Vec<Value> = request["request"]["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                let mut o = o.clone();
                o["apiVersion"] = request["request"]["desiredAPIVersion"].clone();
                f(&mut o);
                o
            })
            .collect();
        let uid = request["request"]["uid"].clone();
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
               "response": {"uid": uid, "convertedObjects": objects, "result": {"status": "Success"}}})
        .to_string()
        .into_bytes()
    }

    #[test]
    fn an_object_in_the_desired_version_is_not_sent() {
        let input = widget("w", "v2");
        assert!(matches!(convert(input.clone(), "example.com/v2", &v1(), "u"), Ok(Conversion::Done(done)) if done == input));
    }

    #[test]
    fn the_webhook_changes_the_body_labels_and_annotations_only() {
        let (review, request) = send(widget("w", "v1"));
        assert_eq!(request["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(request["request"]["desiredAPIVersion"], "example.com/v2");
        assert_eq!(request["request"]["uid"], "u-1");
        let body = answered(&request, |o| {
            o["spec"] = json!({"sizeInches": 3});
            o["metadata"]["labels"] = json!({"b": "2"});
            o["metadata"]["resourceVersion"] = json!("999");
        });
        let converted = review.answer(200, &body).unwrap();
        assert_eq!(converted["apiVersion"], "example.com/v2");
        assert_eq!(converted["spec"], json!({"sizeInches": 3}));
        assert_eq!(converted["metadata"]["labels"], json!({"b": "2"}));
        assert_eq!(converted["metadata"]["resourceVersion"], "7", "other metadata is restored");
    }

    #[test]
    fn a_list_sends_only_the_items_in_other_versions() {
        let list = json!({"apiVersion": "example.com/v1", "kind": "WidgetList", "metadata": {"resourceVersion": "9"},
                          "items": [widget("a", "v1"), widget("b", "v2"), widget("c", "v1")]});
        let (review, request) = send(list);
        assert_eq!(request["request"]["objects"].as_array().unwrap().len(), 2);
        let converted = review.answer(200, &answered(&request, |o| o["spec"]["converted"] = json!(true))).unwrap();
        assert_eq!(converted["apiVersion"], "example.com/v2");
        assert_eq!(converted["metadata"]["resourceVersion"], "9");
        let names: Vec<(&str, bool)> = converted["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| (i["metadata"]["name"].as_str().unwrap(), i["spec"]["converted"] == true))
            .collect();
        assert_eq!(names, [("a", true), ("b", false), ("c", true)]);
    }

    #[test]
    fn wrong_answers_get_upstreams_errors() {
        let failing = |body: Vec<u8>, status: u16| {
            let (review, _) = send(widget("w", "v1"));
            review.answer(status, &body).unwrap_err()
        };
        let (_, request) = send(widget("w", "v1"));
        let mut wrong_uid: Value = serde_json::from_slice(&answered(&request, |_| {})).unwrap();
        wrong_uid["response"]["uid"] = json!("other");
        assert_eq!(
            failing(wrong_uid.to_string().into_bytes(), 200),
            r#"conversion webhook for example.com/v1, Kind=Widget failed: expected response.uid="u-1", got "other""#
        );
        let refused = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                             "response": {"uid": "u-1", "result": {"status": "Failure", "message": "no way"}}});
        assert_eq!(failing(refused.to_string().into_bytes(), 200), "conversion webhook for example.com/v1, Kind=Widget failed: no way");
        assert_eq!(
            failing(answered(&request, |o| o["apiVersion"] = json!("example.com/v3")), 200),
            "conversion webhook for example.com/v1, Kind=Widget returned invalid object at index 0: invalid groupVersion (expected example.com/v2, received example.com/v3)"
        );
        assert_eq!(
            failing(answered(&request, |o| o["metadata"]["name"] = json!("x")), 200),
            "conversion webhook for example.com/v1, Kind=Widget returned invalid object: must have the same name: w != x"
        );
        assert_eq!(
            failing(answered(&request, |o| o["metadata"]["labels"] = json!({"a": 1})), 200),
            "conversion webhook for example.com/v1, Kind=Widget returned invalid metadata: metadata.labels[a] must be a string, but is int64 in converted object"
        );
        let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "down for maintenance"});
        assert_eq!(failing(status.to_string().into_bytes(), 503), "conversion webhook for example.com/v1, Kind=Widget failed: down for maintenance");
        let none = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": {"uid": "u-1", "result": {"status": "Success"}}});
        assert_eq!(failing(none.to_string().into_bytes(), 200), "conversion webhook for example.com/v1, Kind=Widget returned 0 objects, expected 1");
    }

    #[test]
    fn a_list_item_is_named_by_upstreams_count() {
        let list = json!({"apiVersion": "example.com/v1", "kind": "WidgetList", "metadata": {},
                          "items": [widget("a", "v1"), widget("b", "v1")]});
        let (review, request) = send(list);
        let body = answered(&request, |o| {
            if o["metadata"]["name"] == "b" {
                o["kind"] = json!("Gadget");
            }
        });
        assert_eq!(
            review.answer(200, &body).unwrap_err(),
            "conversion webhook for example.com/v1, Kind=WidgetList returned invalid converted object at index 2: invalid kind (expected Widget, received Gadget)"
        );
    }

    #[test]
    fn review_versions_are_taken_in_the_crds_order() {
        let only_unknown = convert(widget("w", "v1"), "example.com/v2", &["v2".into()], "u").unwrap_err();
        assert_eq!(only_unknown, "no supported conversion review versions");
        let Conversion::Send(review, body) = convert(widget("w", "v1"), "example.com/v2", &["v1beta1".into(), "v1".into()], "u").unwrap() else {
            panic!("a review is sent");
        };
        let request: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(request["apiVersion"], "apiextensions.k8s.io/v1beta1");
        // A v1beta1 answer is not held to its UID or its kind.
        let body = json!({"response": {"convertedObjects": [widget("w", "v2")], "result": {"status": "Success"}}});
        assert_eq!(review.answer(200, body.to_string().as_bytes()).unwrap()["apiVersion"], "example.com/v2");
    }
}
