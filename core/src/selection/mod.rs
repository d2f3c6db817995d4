//! Which objects a list, watch or deletecollection is about: the `labelSelector` and
//! `fieldSelector` query parameters, parsed and checked as kube-apiserver checks them,
//! and matched against objects.
//!
//! Parsing follows upstream's order, so the error a client gets is the one upstream
//! gives: the label selector is parsed, then the field selector, then each field term
//! is converted with the resource's field label conversion ([`table`]); the first
//! failure is a 400 BadRequest carrying upstream's message.
//!
//! ```
//! # use apiary_core::{registry::Registry, selection::Selection};
//! let registry = Registry::builtin();
//! let pods = registry.lookup("", "v1", "pods").unwrap();
//! let s = Selection::parse(pods, Some("app in (web,db)"), Some("spec.nodeName=n1")).unwrap();
//! let pod = serde_json::json!({
//!     "metadata": {"name": "p", "labels": {"app": "web"}},
//!     "spec": {"nodeName": "n1"},
//! });
//! assert!(s.matches(pod.as_object().unwrap()));
//! let e = Selection::parse(pods, None, Some("spec.bogus=1")).unwrap_err();
//! assert_eq!((e.code, e.message.as_str()), (400, "field label not supported: spec.bogus"));
//! ```

pub mod fields;
pub mod labels;
pub mod table;

pub use fields::{FieldOperator, FieldSelector, FieldTerm};
pub use labels::{LabelSelector, Operator, Requirement};

use crate::registry::Resource;
use crate::status::ApiError;
use serde_json::{Map, Value};


/// A field term after conversion: which attribute of the object it compares.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FieldRequirement {
    attribute: table::Attribute,
    operator: FieldOperator,
    value: String,
}

/// The label and field selectors of one request, ready to match objects of one resource.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    labels: LabelSelector,
    /// In the sorted order of the terms as written.
    fields: Vec<FieldRequirement>,
}

impl Selection {
    /// Everything: no selector at all.
    pub fn everything() -> Selection {
        Selection::default()
    }

    /// The selection of `labelSelector` and `fieldSelector` for `resource`; an invalid
    /// selector, or a field the resource cannot be selected by, is a 400 BadRequest
    /// worded as kube-apiserver words it.
    pub fn parse(
        resource: &Resource,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<Selection, ApiError> {
        let labels =
            LabelSelector::parse(label_selector.unwrap_or("")).map_err(ApiError::bad_request)?;
        let terms =
            FieldSelector::parse(field_selector.unwrap_or("")).map_err(ApiError::bad_request)?;
        let rules = resource.strategy.selectable_fields();
        let fields = terms
            .terms
            .into_iter()
            .map(|t| {
                let attribute = rules.convert(&t.field).map_err(ApiError::bad_request)?;
                Ok(FieldRequirement {
                    attribute,
                    operator: t.operator,
                    value: t.value,
                })
            })
            .collect::<Result<Vec<_>, ApiError>>()?;
        Ok(Selection { labels, fields })
    }

    /// Whether `obj` (a whole object, with `metadata`) is selected.
    pub fn matches(&self, obj: &Map<String, Value>) -> bool {
        if !self.labels.is_empty() {
            let labels = obj
                .get("metadata")
                .and_then(|m| m.get("labels"))
                .and_then(Value::as_object);
            let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
            if !self.labels.matches(label) {
                return false;
            }
        }
        self.fields.iter().all(|f| {
            let have = f.attribute.value(obj);
            (have == f.value) == (f.operator == FieldOperator::Equals)
        })
    }

    /// Whether this selects every object (no requirement at all): the case in which
    /// upstream still reports `remainingItemCount`.
    pub fn is_everything(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// The name a `metadata.name=<name>` (or `==`) term requires, if there is one: the
    /// first such term in sorted order, as upstream's `RequiresExactMatch` finds it.
    pub fn exact_name(&self) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| f.attribute == table::Attribute::Named("metadata.name") && f.operator == FieldOperator::Equals)
            .map(|f| f.value.as_str())
    }

    /// The label selector.
    pub fn labels(&self) -> &LabelSelector {
        &self.labels
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use serde_json::json;

    fn resource(group: &str, plural: &str) -> Resource {
        let registry = Registry::builtin();
        registry
            .resources()
            .iter()
            .find(|r| r.group == group && r.plural == plural)
            .map(|r| Resource::clone(r))
            .unwrap_or_else(|| panic!("{group}/{plural}"))
    }

    fn selection(group: &str, plural: &str, l: Option<&str>, f: Option<&str>) -> Selection {
        Selection::parse(&resource(group, plural), l, f).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn message(group: &str, plural: &str, l: Option<&str>, f: Option<&str>) -> String {
        let e = Selection::parse(&resource(group, plural), l, f).unwrap_err();
        assert_eq!((e.code, e.reason), (400, "BadRequest"));
        e.message
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn empty_selectors_select_everything() {
        for (l, f) in [
            (None, None),
            (Some(""), Some("")),
            (Some(" "), Some(",")),
            (None, Some(",,")),
        ] {
            let s = selection("", "configmaps", l, f);
            assert!(s.is_everything(), "{l:?} {f:?}");
            assert!(s.matches(&obj(json!({}))));
            assert_eq!(s.exact_name(), None);
        }
        assert!(Selection::everything().is_everything());
    }

    #[test]
    fn labels_and_fields_together() {
        let s = selection(
            "",
            "pods",
            Some("app=web,!canary"),
            Some("spec.nodeName=n1,status.phase!=Failed"),
        );
        assert!(!s.is_everything());
        let pod = |labels: Value, node: &str, phase: &str| {
            obj(json!({"metadata": {"name": "p", "labels": labels},
                       "spec": {"nodeName": node}, "status": {"phase": phase}}))
        };
        assert!(s.matches(&pod(json!({"app": "web"}), "n1", "Running")));
        assert!(!s.matches(&pod(json!({"app": "web", "canary": "1"}), "n1", "Running")));
        assert!(!s.matches(&pod(json!({"app": "db"}), "n1", "Running")));
        assert!(!s.matches(&pod(json!({"app": "web"}), "n2", "Running")));
        assert!(!s.matches(&pod(json!({"app": "web"}), "n1", "Failed")));
        assert!(!s.matches(&obj(json!({"metadata": {"name": "x"}}))));
        // spec.host is the legacy name of spec.nodeName.
        let legacy = selection("", "pods", None, Some("spec.host=n1"));
        assert!(legacy.matches(&pod(json!({}), "n1", "")));
    }

    #[test]
    fn values_compare_as_strings() {
        let s = selection("", "pods", None, Some("spec.hostNetwork=false"));
        assert!(s.matches(&obj(json!({"spec": {}}))));
        assert!(!s.matches(&obj(json!({"spec": {"hostNetwork": true}}))));
        let s = selection(
            "",
            "replicationcontrollers",
            None,
            Some("status.replicas=0"),
        );
        assert!(s.matches(&obj(json!({}))));
        assert!(!s.matches(&obj(json!({"status": {"replicas": 2}}))));
        let s = selection("", "nodes", None, Some("spec.unschedulable=true"));
        assert!(s.matches(&obj(json!({"spec": {"unschedulable": true}}))));
        // Accepted but never computed upstream: reads "".
        let s = selection("", "pods", None, Some("status.podIPs=10.0.0.1"));
        assert!(!s.matches(&obj(json!({"status": {"podIPs": [{"ip": "10.0.0.1"}]}}))));
        let s = selection("", "pods", None, Some("status.podIPs="));
        assert!(s.matches(&obj(json!({}))));
    }

    #[test]
    fn events_in_both_groups() {
        let core = obj(
            json!({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"},
                              "reason": "Started", "reportingComponent": "kubelet"}),
        );
        let new = obj(
            json!({"metadata": {"name": "e"}, "regarding": {"kind": "Pod", "name": "p"},
                             "reason": "Started", "reportingController": "kubelet"}),
        );
        let s = selection(
            "",
            "events",
            None,
            Some("involvedObject.kind=Pod,involvedObject.name=p,source=kubelet"),
        );
        assert!(s.matches(&core));
        let s = selection(
            "events.k8s.io",
            "events",
            None,
            Some("regarding.kind=Pod,reportingController=kubelet"),
        );
        assert!(s.matches(&new));
        assert_eq!(
            message(
                "events.k8s.io",
                "events",
                None,
                Some("involvedObject.kind=Pod")
            ),
            "field label not supported: involvedObject.kind"
        );
    }

    #[test]
    fn exact_name() {
        assert_eq!(
            selection("", "pods", None, Some("metadata.name=a")).exact_name(),
            Some("a")
        );
        assert_eq!(
            selection("", "pods", None, Some("metadata.name==a")).exact_name(),
            Some("a")
        );
        assert_eq!(
            selection("", "pods", None, Some("metadata.name!=a")).exact_name(),
            None
        );
        assert_eq!(
            selection(
                "",
                "configmaps",
                None,
                Some("metadata.namespace=x,metadata.name=b,metadata.name=a")
            )
            .exact_name(),
            Some("a"),
            "the first in sorted order"
        );
        assert_eq!(
            selection("", "configmaps", Some("metadata.name=a"), None).exact_name(),
            None
        );
    }

    #[test]
    fn error_order_and_wording() {
        // The label selector is read first, then the field selector, then the fields'
        // conversion; terms in sorted order.
        assert_eq!(
            message("", "configmaps", Some("a b"), Some("x")),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(
            message("", "configmaps", Some("a"), Some("x")),
            "invalid selector: 'x'; can't understand 'x'"
        );
        assert_eq!(
            message("", "configmaps", None, Some("spec.foo=1")),
            r#""spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace""#
        );
        assert_eq!(
            message("", "pods", None, Some("spec.foo=1")),
            "field label not supported: spec.foo"
        );
        assert_eq!(
            message("", "pods", None, Some("z.bad=1,a.bad=2,spec.nodeName=x")),
            "field label not supported: a.bad"
        );
        assert_eq!(
            message("", "pods", None, Some("metadata.name = a")),
            "field label not supported: metadata.name "
        );
        assert!(
            message("apps", "replicasets", None, Some("status.replicas=1"))
                .contains("is not a known field selector")
        );
        assert_eq!(
            message("batch", "jobs", None, Some("status.succeeded=1")),
            r#"field label "status.succeeded" not supported for Job"#
        );
        assert_eq!(
            message("", "namespaces", None, Some("metadata.namespace=x")),
            "field label not supported: metadata.namespace"
        );
    }
}
