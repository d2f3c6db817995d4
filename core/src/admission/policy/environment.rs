//! The CEL environment of admission expressions, as upstream's
//! `admission/plugin/cel` declares it: `object`, `oldObject` and `params` dynamic,
//! `request` a `kubernetes.AdmissionRequest`, `namespaceObject` a
//! `kubernetes.Namespace`, and `variables` an object whose fields are the policy's
//! variables declared so far. Values are built from the request's JSON: objects
//! read dynamically, the request and namespace as their declared types say.

use super::super::matching::{Matched, Request};
use super::super::Operation;
use crate::cel::compile::Declarations;
use crate::cel::time::parse_date_time;
use crate::cel::types::Type;
use crate::cel::value::{List, Map, Str, Value};
use crate::rest::object::Object;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::rc::Rc;

pub(super) const REQUEST_TYPE: &str = "kubernetes.AdmissionRequest";
pub(super) const NAMESPACE_TYPE: &str = "kubernetes.Namespace";
/// The type `variables` is declared with.
pub(super) const VARIABLES_TYPE: &str = "kubernetes.variables";

/// Which optional variables an expression may use (upstream's
/// `OptionalVariableDeclarations`, without the authorizer).
#[derive(Clone, Debug)]
pub struct Environment {
    pub has_params: bool,
    /// `Some` when `variables` is declared (a policy's expressions): the variables
    /// compiled so far and their types.
    pub variables: Option<Vec<(String, Type)>>,
}

impl Environment {
    pub(super) fn declarations(&self) -> Declarations {
        let s = |name: &str| (name.to_owned(), Type::String);
        let obj = |name: &str| Type::object(name);
        let strings = || Type::list(Type::String);
        let mut structs: HashMap<String, Vec<(String, Type)>> = HashMap::new();
        let gvk = "kubernetes.GroupVersionKind";
        let gvr = "kubernetes.GroupVersionResource";
        structs.insert(gvk.into(), vec![s("group"), s("version"), s("kind")]);
        structs.insert(gvr.into(), vec![s("group"), s("version"), s("resource")]);
        structs.insert(
            "kubernetes.UserInfo".into(),
            vec![
                s("username"),
                s("uid"),
                ("groups".into(), strings()),
                ("extra".into(), Type::map(Type::String, strings())),
            ],
        );
        structs.insert(
            REQUEST_TYPE.into(),
            vec![
                ("kind".into(), obj(gvk)),
                ("resource".into(), obj(gvr)),
                s("subResource"),
                ("requestKind".into(), obj(gvk)),
                ("requestResource".into(), obj(gvr)),
                s("requestSubResource"),
                s("name"),
                s("namespace"),
                s("operation"),
                ("userInfo".into(), obj("kubernetes.UserInfo")),
                ("dryRun".into(), Type::Bool),
                ("options".into(), Type::Dyn),
            ],
        );
        structs.insert("kubernetes.NamespaceSpec".into(), vec![("finalizers".into(), strings())]);
        structs.insert(
            "kubernetes.NamespaceCondition".into(),
            vec![
                s("status"),
                s("type"),
                ("lastTransitionTime".into(), Type::Timestamp),
                s("message"),
                s("reason"),
            ],
        );
        structs.insert(
            "kubernetes.NamespaceStatus".into(),
            vec![
                ("conditions".into(), Type::list(obj("kubernetes.NamespaceCondition"))),
                s("phase"),
            ],
        );
        let string_map = || Type::map(Type::String, Type::String);
        structs.insert(
            "kubernetes.NamespaceMetadata".into(),
            vec![
                s("name"),
                s("generateName"),
                s("namespace"),
                ("labels".into(), string_map()),
                ("annotations".into(), string_map()),
                s("UID"),
                ("creationTimestamp".into(), Type::Timestamp),
                ("deletionGracePeriodSeconds".into(), Type::Int),
                ("deletionTimestamp".into(), Type::Timestamp),
                ("generation".into(), Type::Int),
                s("resourceVersion"),
                ("finalizers".into(), strings()),
            ],
        );
        structs.insert(
            NAMESPACE_TYPE.into(),
            vec![
                ("metadata".into(), obj("kubernetes.NamespaceMetadata")),
                ("spec".into(), obj("kubernetes.NamespaceSpec")),
                ("status".into(), obj("kubernetes.NamespaceStatus")),
            ],
        );
        let mut variables = vec![
            ("object", Type::Dyn),
            ("oldObject", Type::Dyn),
            ("namespaceObject", obj(NAMESPACE_TYPE)),
            ("request", obj(REQUEST_TYPE)),
        ];
        if self.has_params {
            variables.push(("params", Type::Dyn));
        }
        if let Some(declared) = &self.variables {
            variables.push(("variables", obj(VARIABLES_TYPE)));
            structs.insert(VARIABLES_TYPE.into(), declared.clone());
        }
        Declarations { variables, structs }
    }
}

/// A JSON value as CEL sees an unstructured object: maps and lists of dynamic values.
pub fn dynamic(json: &Json) -> Value<'_> {
    Value::from_json(json, &crate::cel::decl::dyn_decls().0)
}

/// An object read lazily: its fields become values only as expressions reach them.
pub fn dynamic_map(map: &Object) -> Value<'_> {
    Value::Map(Map::Json { map, decl: &crate::cel::decl::dyn_decls().1 })
}

/// The fields of `request` (upstream's `CreateAdmissionRequest`, as the JSON of an
/// `AdmissionRequest`: empty optional strings left out): `kind` and `resource` are
/// what matched, `requestKind` and `requestResource` what was asked.
pub(super) fn admission_request(request: &Request, matched: &Matched) -> Json {
    let a = &request.attributes;
    let mut out = serde_json::Map::new();
    let gvk = |g: &str, v: &str, k: &str| json!({"group": g, "version": v, "kind": k});
    let gvr = |g: &str, v: &str, r: &str| json!({"group": g, "version": v, "resource": r});
    out.insert("kind".into(), gvk(&matched.kind.group, &matched.kind.version, &matched.kind.kind));
    out.insert(
        "resource".into(),
        gvr(&matched.resource.group, &matched.resource.version, &matched.resource.resource),
    );
    let optional = |out: &mut serde_json::Map<String, Json>, key: &str, value: &str| {
        if !value.is_empty() {
            out.insert(key.into(), Json::String(value.to_owned()));
        }
    };
    optional(&mut out, "subResource", a.subresource);
    out.insert("requestKind".into(), gvk(request.kind.0, request.kind.1, request.kind.2));
    out.insert("requestResource".into(), gvr(a.group, a.version, a.resource));
    optional(&mut out, "requestSubResource", a.subresource);
    optional(&mut out, "name", a.name);
    optional(&mut out, "namespace", a.namespace.unwrap_or(""));
    out.insert("operation".into(), Json::String(a.operation.as_str().to_owned()));
    let mut user = serde_json::Map::new();
    if let Some(u) = a.user {
        optional(&mut user, "username", &u.name);
        optional(&mut user, "uid", &u.uid);
        if !u.groups.is_empty() {
            user.insert("groups".into(), json!(u.groups));
        }
        if !u.extra.is_empty() {
            user.insert("extra".into(), json!(u.extra));
        }
    }
    out.insert("userInfo".into(), Json::Object(user));
    out.insert("dryRun".into(), Json::Bool(a.dry_run));
    out.insert(
        "options".into(),
        request.options.map(|o| Json::Object(o.clone())).unwrap_or(Json::Null),
    );
    Json::Object(out)
}

/// `object` and `oldObject`: a delete has no new object, a create no old one.
pub(super) fn objects<'a>(request: &Request<'a>) -> (Option<&'a Object>, Option<&'a Object>) {
    let op = request.attributes.operation;
    let object = if op == Operation::Delete { None } else { request.object };
    let old = if op == Operation::Create { None } else { request.old_object };
    (object, old)
}

/// The part of a Namespace `namespaceObject` shows (upstream's
/// `CreateNamespaceObject`), its timestamps as timestamps.
pub(super) fn namespace_value(namespace: &Object) -> Value<'_> {
    let meta_keys = [
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "finalizers",
    ];
    let mut fields = Vec::new();
    if let Some(meta) = namespace.get("metadata").and_then(Json::as_object) {
        let entries = meta
            .iter()
            .filter(|(k, _)| meta_keys.contains(&k.as_str()))
            .map(|(k, v)| (Value::String(Str::Borrowed(k)), timestamp_or_dynamic(k, v)))
            .collect();
        fields.push((Value::string("metadata"), Value::Map(Map::Owned(Rc::new(entries)))));
    }
    if let Some(spec) = namespace.get("spec") {
        fields.push((Value::string("spec"), dynamic(spec)));
    }
    if let Some(status) = namespace.get("status").and_then(Json::as_object) {
        let entries = status
            .iter()
            .map(|(k, v)| {
                let v = match (k.as_str(), v) {
                    ("conditions", Json::Array(items)) => Value::List(List::Owned(Rc::new(
                        items
                            .iter()
                            .map(|c| match c {
                                Json::Object(c) => Value::Map(Map::Owned(Rc::new(
                                    c.iter()
                                        .map(|(k, v)| (Value::String(Str::Borrowed(k)), timestamp_or_dynamic(k, v)))
                                        .collect(),
                                ))),
                                other => dynamic(other),
                            })
                            .collect(),
                    ))),
                    _ => dynamic(v),
                };
                (Value::String(Str::Borrowed(k)), v)
            })
            .collect();
        fields.push((Value::string("status"), Value::Map(Map::Owned(Rc::new(entries)))));
    }
    Value::Map(Map::Owned(Rc::new(fields)))
}

fn timestamp_or_dynamic<'a>(key: &str, v: &'a Json) -> Value<'a> {
    match (key, v) {
        ("creationTimestamp" | "deletionTimestamp" | "lastTransitionTime", Json::String(s)) => match parse_date_time(s) {
            Some(t) => Value::Timestamp(t),
            None => dynamic(v),
        },
        _ => dynamic(v),
    }
}
