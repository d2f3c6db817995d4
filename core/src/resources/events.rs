//! Events, in core/v1 and in events.k8s.io/v1: one kind, selectable by the fields of
//! its involved object, each version by its own names of them (events.k8s.io's
//! `regarding.*` select what core/v1's `involvedObject.*` do). Both versions are
//! checked as upstream's `legacyValidateEvent` checks them; events.k8s.io/v1 also by
//! its stricter rules (a type, an event time, the deprecated fields unset).
//!
//! As upstream, the two APIs serve one resource: events.k8s.io/v1 Events are stored as
//! core/v1 ones (under `/registry/events/`), converted on every write and read.

use super::Strategy;
use super::columns::{self as cols, Column};
use crate::rest::object::{meta_str, Object};
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME, NAMESPACE};
use crate::validation::{names, FieldError};
use serde_json::Value;

/// core/v1 events (pkg/registry/core/event/strategy.go).
pub struct CoreEvents;

impl Strategy for CoreEvents {
    fn name(&self) -> &'static str {
        "events"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::NameLast(COLUMNS)
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&CORE_FIELDS)
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        legacy(&Fields::CORE, new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        legacy(&Fields::CORE, new)
    }
}

/// events.k8s.io/v1 events (pkg/apis/events/v1/conversion.go).
pub struct Events;

impl Strategy for Events {
    fn name(&self) -> &'static str {
        "events.events.k8s.io"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::NameLast(COLUMNS)
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&EVENTS_FIELDS)
    }

    /// Validated as a core Event.
    fn invalid_group<'a>(&self, _served: &'a str) -> &'a str {
        ""
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        let mut errs = legacy(&Fields::EVENTS, new);
        errs.extend(strict(new));
        errs
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        legacy(&Fields::EVENTS, new)
    }

    /// Stored as core Events are, under `/registry/events/`: one Event, two APIs.
    fn storage_group(&self) -> Option<&'static str> {
        Some("")
    }

    fn transforms_reads(&self) -> bool {
        true
    }

    fn read_stored(&self, obj: &mut Object) {
        to_events_v1(obj);
    }

    fn write_stored(&self, obj: &mut Object) {
        to_core_v1(obj);
    }
}

/// The fields core/v1 and events.k8s.io/v1 name differently, as (core, events.k8s.io)
/// (upstream's `Convert_core_Event_To_v1_Event` and back); the rest (`eventTime`,
/// `series`, `related`, `action`, `reason`, `type`, `reportingInstance`) keep their
/// names. Metadata is left as it is, managed fields and their apiVersions included.
const RENAMED: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("source", "deprecatedSource"),
    ("message", "note"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// Move `from` to `to` in `event` (nothing when `from` is absent).
fn rename(event: &mut Object, from: &str, to: &str) {
    match event.remove(from) {
        Some(value) => event.insert(to.to_owned(), value),
        None => event.remove(to),
    };
}

/// Whether a field holds what Go leaves out under `omitempty`: nothing, null, "", 0.
fn empty(value: Option<&Value>) -> bool {
    value.is_none_or(|v| v.is_null() || v == "" || v == 0)
}

/// A stored (core/v1) Event as events.k8s.io/v1 shows it, with the fields Go's
/// encoder always writes present (`regarding`, `deprecatedSource`, the times as null)
/// and those it leaves out when empty left out.
pub fn to_events_v1(event: &mut Object) {
    for (core, new) in RENAMED {
        rename(event, core, new);
    }
    event.insert("apiVersion".into(), Value::String("events.k8s.io/v1".into()));
    event.insert("kind".into(), Value::String("Event".into()));
    for always in ["regarding", "deprecatedSource"] {
        if event.get(always).is_none_or(Value::is_null) {
            event.insert(always.into(), Value::Object(Default::default()));
        }
    }
    for time in ["eventTime", "deprecatedFirstTimestamp", "deprecatedLastTimestamp"] {
        event.entry(time).or_insert(Value::Null);
    }
    for omitted in ["reportingController", "reportingInstance", "action", "reason", "note", "type", "deprecatedCount", "series", "related"] {
        if empty(event.get(omitted)) {
            event.remove(omitted);
        }
    }
}

/// An events.k8s.io/v1 Event as storage keeps it: a core/v1 one, with the fields
/// Go's encoder always writes for that version present.
pub fn to_core_v1(event: &mut Object) {
    for (core, new) in RENAMED {
        rename(event, new, core);
    }
    event.insert("apiVersion".into(), Value::String("v1".into()));
    event.insert("kind".into(), Value::String("Event".into()));
    for always in ["involvedObject", "source"] {
        if event.get(always).is_none_or(Value::is_null) {
            event.insert(always.into(), Value::Object(Default::default()));
        }
    }
    for time in ["eventTime", "firstTimestamp", "lastTimestamp"] {
        event.entry(time).or_insert(Value::Null);
    }
    for always in ["reportingComponent", "reportingInstance"] {
        if event.get(always).is_none_or(Value::is_null) {
            event.insert(always.into(), Value::String(String::new()));
        }
    }
    for omitted in ["count", "series", "related"] {
        if empty(event.get(omitted)) {
            event.remove(omitted);
        }
    }
}

/// The names one version gives the fields of an Event that both check.
#[derive(Debug)]
struct Fields {
    involved: &'static str,
    reporting_controller: &'static str,
    message: &'static str,
}

impl Fields {
    const CORE: Fields = Fields { involved: "involvedObject", reporting_controller: "reportingComponent", message: "message" };
    const EVENTS: Fields = Fields { involved: "regarding", reporting_controller: "reportingController", message: "note" };
}

const REPORTING_INSTANCE_MAX: usize = 128;
const ACTION_MAX: usize = 128;
const REASON_MAX: usize = 128;
const NOTE_MAX: usize = 1024;

fn text<'a>(event: &'a Object, field: &str) -> &'a str {
    event.get(field).and_then(Value::as_str).unwrap_or("")
}

fn set(event: &Object, field: &str) -> bool {
    event.get(field).is_some_and(|v| !v.is_null() && v != "" && v != 0 && v != &Value::Object(Default::default()))
}

/// The checks every Event passes in either version. An Event without an `eventTime`
/// is an old-style one: its involved object is in its namespace. A new-style one
/// names its reporter, action and reason. Upstream reports the involved object as
/// `involvedObject` and the reporting controller by the request version's name.
fn legacy(names: &Fields, event: &Object) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let namespace = meta_str(event, "namespace");
    let involved_namespace = event.get(names.involved).and_then(|o| o.get("namespace")).and_then(Value::as_str).unwrap_or("");
    let mismatch = || FieldError::invalid("involvedObject.namespace", involved_namespace, "does not match event.namespace");
    if !set(event, "eventTime") {
        let fits = match involved_namespace {
            "" => namespace.is_empty() || namespace == "default",
            ns => ns == namespace,
        };
        if !fits {
            errs.push(mismatch());
        }
    } else {
        if involved_namespace.is_empty() && namespace != "default" && namespace != "kube-system" {
            errs.push(mismatch());
        }
        let controller = text(event, names.reporting_controller);
        if controller.is_empty() {
            errs.push(FieldError::required(names.reporting_controller, ""));
        }
        errs.extend(
            names::qualified_name(controller).into_iter().map(|m| FieldError::invalid(names.reporting_controller, controller, m)),
        );
        for (field, max) in [("reportingInstance", REPORTING_INSTANCE_MAX), ("action", ACTION_MAX), ("reason", REASON_MAX)] {
            let value = text(event, field);
            if value.is_empty() {
                errs.push(FieldError::required(field, ""));
            }
            if value.len() > max {
                errs.push(FieldError::invalid(field, "", format!("can have at most {max} characters")));
            }
        }
        if text(event, names.message).len() > NOTE_MAX {
            errs.push(FieldError::invalid("message", "", format!("can have at most {NOTE_MAX} characters")));
        }
    }
    errs.extend(names::dns1123_subdomain(namespace).into_iter().map(|m| FieldError::invalid("namespace", namespace, m)));
    errs
}

/// events.k8s.io/v1's own rules: a series is one, there is an event time and a known
/// type, and none of the deprecated fields is set.
fn strict(event: &Object) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(series) = event.get("series").filter(|s| !s.is_null()) {
        if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
            errs.push(FieldError::invalid("series.count", "", "should be at least 2"));
        }
        if series.get("lastObservedTime").is_none_or(|t| t.is_null() || t == "") {
            errs.push(FieldError::required("series.lastObservedTime", ""));
        }
    }
    if !set(event, "eventTime") {
        errs.push(FieldError::required("eventTime", ""));
    }
    let kind = text(event, "type");
    if kind != "Normal" && kind != "Warning" {
        errs.push(FieldError::invalid("type", "", format!("has invalid value: {kind}")));
    }
    for (field, shown) in [
        ("deprecatedFirstTimestamp", "firstTimestamp"),
        ("deprecatedLastTimestamp", "lastTimestamp"),
        ("deprecatedCount", "count"),
    ] {
        if set(event, field) {
            errs.push(FieldError::invalid(shown, "", "needs to be unset"));
        }
    }
    let source = event.get("deprecatedSource");
    let source_set = ["component", "host"].iter().any(|f| source.and_then(|s| s.get(f)).and_then(Value::as_str).is_some_and(|v| !v.is_empty()));
    if source_set {
        errs.push(FieldError::invalid("source", "", "needs to be unset"));
    }
    errs
}

static CORE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[
        ("involvedObject.kind", "involvedObject.kind"),
        ("involvedObject.namespace", "involvedObject.namespace"),
        ("involvedObject.name", "involvedObject.name"),
        ("involvedObject.uid", "involvedObject.uid"),
        ("involvedObject.apiVersion", "involvedObject.apiVersion"),
        ("involvedObject.resourceVersion", "involvedObject.resourceVersion"),
        ("involvedObject.fieldPath", "involvedObject.fieldPath"),
        ("reason", "reason"),
        ("reportingComponent", "reportingComponent"),
        ("source", "source"),
        ("type", "type"),
        NAMESPACE,
        NAME,
    ],
};

static EVENTS_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[
        ("reason", "reason"),
        ("regarding.kind", "involvedObject.kind"),
        ("regarding.namespace", "involvedObject.namespace"),
        ("regarding.name", "involvedObject.name"),
        ("regarding.uid", "involvedObject.uid"),
        ("regarding.apiVersion", "involvedObject.apiVersion"),
        ("regarding.resourceVersion", "involvedObject.resourceVersion"),
        ("regarding.fieldPath", "involvedObject.fieldPath"),
        ("reportingController", "reportingComponent"),
        ("source", "source"),
        ("type", "type"),
        NAMESPACE,
        NAME,
    ],
};

const COLUMNS: &[Column] = &[
    Column { name: "Last Seen", kind: "string", description: "The time at which the most recent occurrence of this event was recorded.", format: "", priority: 0, cell: last_seen },
    Column { name: "Type", kind: "string", description: "Type of this event (Normal, Warning), new types could be added in the future", format: "", priority: 0, cell: |o| either(o, "type", "type") },
    Column { name: "Reason", kind: "string", description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.", format: "", priority: 0, cell: |o| either(o, "reason", "reason") },
    Column { name: "Object", kind: "string", description: "The object that this event is about.", format: "", priority: 0, cell: target },
    Column { name: "Subobject", kind: "string", description: "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.", format: "", priority: 1, cell: |o| involved(o, "fieldPath") },
    Column { name: "Source", kind: "string", description: "The component reporting this event. Should be a short machine understandable string.", format: "", priority: 1, cell: source },
    Column { name: "Message", kind: "string", description: "A human-readable description of the status of this operation.", format: "", priority: 0, cell: |o| serde_json::json!(either_text(o, "message", "note").trim()) },
    Column { name: "First Seen", kind: "string", description: "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", format: "", priority: 1, cell: |o| first_seen(o) },
    Column { name: "Count", kind: "string", description: "The number of times this event has occurred.", format: "", priority: 1, cell: count },
];

// Both APIs' events print alike, as upstream converts events.k8s.io ones to core's:
// each reader takes the field's core name and its events.k8s.io one.

/// The string at the field of either name ("" when neither).
fn either_text<'a>(event: &'a Object, core: &str, new: &str) -> &'a str {
    [core, new].iter().find_map(|k| event.get(*k).and_then(Value::as_str)).unwrap_or("")
}

fn either(event: &Object, core: &str, new: &str) -> Value {
    serde_json::json!(either_text(event, core, new))
}

/// A field of the object the event is about.
fn involved(event: &Object, field: &str) -> Value {
    let object = event.get("involvedObject").or_else(|| event.get("regarding"));
    serde_json::json!(object.and_then(|o| o.get(field)).and_then(Value::as_str).unwrap_or(""))
}

/// OBJECT: kind/name in lower case (the kind alone without a name).
fn target(event: &Object) -> Value {
    let kind = involved(event, "kind").as_str().unwrap_or("").to_lowercase();
    match involved(event, "name").as_str().unwrap_or("") {
        "" => serde_json::json!(kind),
        name => serde_json::json!(format!("{kind}/{name}")),
    }
}

/// SOURCE: the source's component (else the reporting controller), then its host
/// (else the reporting instance) after a comma.
fn source(event: &Object) -> Value {
    let source = event.get("source").or_else(|| event.get("deprecatedSource"));
    let field = |k: &str| source.and_then(|s| s.get(k)).and_then(Value::as_str).unwrap_or("");
    let first = |a: &str, b: &str| if a.is_empty() { b.to_owned() } else { a.to_owned() };
    let component = first(field("component"), either_text(event, "reportingComponent", "reportingController"));
    let instance = first(field("host"), either_text(event, "reportingInstance", "reportingInstance"));
    serde_json::json!(if instance.is_empty() { component } else { format!("{component}, {instance}") })
}

/// The time at the field of either name, when set.
fn time<'a>(event: &'a Object, core: &str, new: &str) -> Option<&'a Value> {
    Some(either_text(event, core, new)).filter(|t| !t.is_empty()).map(|_| event.get(core).filter(|v| !v.is_null()).or_else(|| event.get(new)).unwrap())
}

/// FIRST SEEN: since the first timestamp, else since the event time.
fn first_seen(event: &Object) -> Value {
    cols::since(time(event, "firstTimestamp", "deprecatedFirstTimestamp").or_else(|| event.get("eventTime")))
}

/// LAST SEEN: since the series' last observation, else the last timestamp, else as
/// FIRST SEEN.
fn last_seen(event: &Object) -> Value {
    if let Some(series) = event.get("series").filter(|s| !s.is_null()) {
        return cols::since(series.get("lastObservedTime"));
    }
    match time(event, "lastTimestamp", "deprecatedLastTimestamp") {
        Some(t) => cols::since(Some(t)),
        None => first_seen(event),
    }
}

/// COUNT: the series' count, else the count, 1 for a singleton event.
fn count(event: &Object) -> Value {
    if let Some(series) = event.get("series").filter(|s| !s.is_null()) {
        return serde_json::json!(series.get("count").and_then(Value::as_i64).unwrap_or(0));
    }
    let n = ["count", "deprecatedCount"].iter().find_map(|k| event.get(*k).and_then(Value::as_i64)).unwrap_or(0);
    serde_json::json!(if n == 0 { 1 } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Object {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn an_events_k8s_io_event_goes_to_core_and_back() {
        let new = obj(json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "default",
                         "managedFields": [{"apiVersion": "events.k8s.io/v1", "manager": "m"}]},
            "eventTime": "2026-11-24T06:01:33.123456Z", "reportingController": "ctl",
            "reportingInstance": "i", "action": "A", "reason": "R", "type": "Normal",
            "regarding": {"kind": "Pod", "name": "p"}, "note": "n",
            "series": {"count": 2, "lastObservedTime": "2026-11-24T06:02:00.000000Z"},
            "deprecatedSource": {}, "deprecatedFirstTimestamp": null, "deprecatedLastTimestamp": null
        }));
        let mut core = new.clone();
        to_core_v1(&mut core);
        assert_eq!(Value::Object(core.clone()), json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "default",
                         "managedFields": [{"apiVersion": "events.k8s.io/v1", "manager": "m"}]},
            "eventTime": "2026-11-24T06:01:33.123456Z", "reportingComponent": "ctl",
            "reportingInstance": "i", "action": "A", "reason": "R", "type": "Normal",
            "involvedObject": {"kind": "Pod", "name": "p"}, "message": "n",
            "series": {"count": 2, "lastObservedTime": "2026-11-24T06:02:00.000000Z"},
            "source": {}, "firstTimestamp": null, "lastTimestamp": null
        }));
        to_events_v1(&mut core);
        assert_eq!(core, new);
    }

    #[test]
    fn a_core_event_shows_go_zero_values_in_events_k8s_io() {
        let mut event = obj(json!({
            "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
            "involvedObject": {"kind": "Pod"}, "reason": "R", "message": "",
            "reportingComponent": "", "reportingInstance": "", "count": 1
        }));
        to_events_v1(&mut event);
        assert_eq!(Value::Object(event), json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
            "regarding": {"kind": "Pod"}, "reason": "R", "deprecatedCount": 1,
            "deprecatedSource": {}, "eventTime": null,
            "deprecatedFirstTimestamp": null, "deprecatedLastTimestamp": null
        }));
    }

    #[test]
    fn null_deprecated_fields_are_unset() {
        let event = obj(json!({
            "eventTime": "2026-11-24T06:01:33.123456Z", "type": "Normal",
            "deprecatedSource": null, "deprecatedFirstTimestamp": null,
            "deprecatedLastTimestamp": null, "deprecatedCount": null, "series": null
        }));
        assert!(strict(&event).is_empty(), "{:?}", strict(&event));
    }
}
