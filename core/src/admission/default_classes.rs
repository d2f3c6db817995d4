//! DefaultStorageClass and DefaultIngressClass: a new claim that names no storage
//! class, or a new Ingress that names no ingress class, gets the class marked as the
//! cluster's default (of several, the newest; of those, the first by name).

use super::plugin::{Notes, Plugin};
use super::reads::{Fetched, Read, Stored};
use super::request::Request;
use super::{Context, Operation};
use crate::rest::object::Object;
use crate::status::ApiError;
use serde_json::{json, Value};

/// What one of the two plugins defaults.
#[derive(Debug)]
pub(super) struct DefaultClass {
    /// The resource it defaults: group and plural.
    group: &'static str,
    resource: &'static str,
    /// The class resource: group and plural.
    class_group: &'static str,
    classes: &'static str,
    /// The annotations marking the default class (current, then older spellings).
    markers: &'static [&'static str],
    /// The spec field naming the class.
    field: &'static str,
    /// An annotation that names a class the older way (the field is left alone then).
    legacy_annotation: Option<&'static str>,
}

pub(super) const STORAGE: DefaultClass = DefaultClass {
    group: "",
    resource: "persistentvolumeclaims",
    class_group: "storage.k8s.io",
    classes: "storageclasses",
    markers: &["storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"],
    field: "storageClassName",
    legacy_annotation: Some("volume.beta.kubernetes.io/storage-class"),
};

pub(super) const INGRESS: DefaultClass = DefaultClass {
    group: "networking.k8s.io",
    resource: "ingresses",
    class_group: "networking.k8s.io",
    classes: "ingressclasses",
    markers: &["ingressclass.kubernetes.io/is-default-class"],
    field: "ingressClassName",
    legacy_annotation: Some("kubernetes.io/ingress.class"),
};

impl DefaultClass {
    fn is_default(&self, class: &Object) -> bool {
        let annotations = class.get("metadata").and_then(|m| m.get("annotations"));
        self.markers.iter().any(|m| annotations.and_then(|a| a.get(*m)).and_then(Value::as_str) == Some("true"))
    }

    /// The default class: the newest marked one, ties broken by name.
    fn default_class<'a>(&self, classes: &'a [Stored]) -> Option<&'a str> {
        let text = |c: &'a Stored, f: &str| c.object.get("metadata").and_then(|m| m.get(f)).and_then(Value::as_str).unwrap_or("");
        classes
            .iter()
            .filter(|c| self.is_default(&c.object))
            .max_by(|a, b| text(a, "creationTimestamp").cmp(text(b, "creationTimestamp")).then_with(|| text(b, "name").cmp(text(a, "name"))))
            .map(|c| text(c, "name"))
    }
}

impl Plugin for DefaultClass {
    fn handles(&self, request: &Request) -> bool {
        request.group == self.group
            && request.resource == self.resource
            && request.subresource.is_empty()
            && request.operation == Operation::Create
    }

    fn mutates(&self) -> bool {
        true
    }

    fn reads(&self, chain: &Context, _request: &Request, _object: &Object) -> Vec<Read> {
        vec![Read::Objects { prefix: chain.prefix(self.class_group, self.classes, None) }]
    }

    fn mutate(
        &self,
        chain: &Context,
        _request: &Request,
        object: &mut Object,
        fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        // Named (even as ""), or named the older way: left alone.
        let named = object.get("spec").and_then(|s| s.get(self.field)).is_some_and(|v| !v.is_null());
        let legacy = self.legacy_annotation.is_some_and(|a| {
            object.get("metadata").and_then(|m| m.get("annotations")).and_then(|x| x.get(a)).is_some()
        });
        if named || legacy {
            return Ok(());
        }
        let Some(class) = self.default_class(fetched.objects(&chain.prefix(self.class_group, self.classes, None))) else {
            return Ok(());
        };
        if let Some(spec) = object.entry("spec").or_insert_with(|| json!({})).as_object_mut() {
            spec.insert(self.field.into(), json!(class));
        }
        Ok(())
    }
}
