//! The Swagger 2.0 document of `/openapi/v2`, built from the registry and the schema
//! definitions.
//!
//! Paths, operation IDs, tags, actions and parameters follow what kube-apiserver's
//! endpoint installer and kube-openapi's builder produce for the same resources:
//!
//! - one path for the collection (`list`, `create`, `deletecollection`), one for the
//!   item (`read`, `replace`, `patch`, `delete`), one per `status`/`scale` subresource,
//!   the all-namespaces list of a namespaced resource, and the deprecated `/watch/`
//!   paths;
//! - operation IDs `<verb><Group><Version><rest>` (`listCoreV1NamespacedPod`,
//!   `patchAppsV1NamespacedDeploymentScale`) and tags `<group>_<version>`;
//! - every operation carries `x-kubernetes-action` and `x-kubernetes-group-version-kind`;
//! - a parameter shared by every operation of a path moves to the path, parameters are
//!   sorted by name, and the ones used again and again are written once under the
//!   document's `parameters` and referenced — except `dryRun` and `fieldValidation`,
//!   which stay inline on each operation as upstream keeps them (older kubectl looks
//!   for them there when it checks whether the server validates fields).

use crate::registry::{Registry, Resource};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The Kubernetes version the documents describe (`info.version`).
pub const KUBERNETES_VERSION: &str = "v1.33.0";

/// Media types every object endpoint writes.
const PRODUCES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];
/// Media types of list and watch endpoints: the above plus the watch streams.
const PRODUCES_WATCH: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];
/// The body types a PATCH accepts.
const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
const API_VERSIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions";
const API_GROUP_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList";
const API_GROUP: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup";
const API_RESOURCE_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList";
const VERSION_INFO: &str = "io.k8s.apimachinery.pkg.version.Info";

/// One query or path parameter, with the type it has in the document.
#[derive(Clone, Copy)]
struct Param {
    name: &'static str,
    location: &'static str,
    kind: &'static str,
    description: &'static str,
    /// Written once under the document's `parameters` and referenced from operations.
    shared: bool,
}

const fn query(name: &'static str, kind: &'static str, description: &'static str) -> Param {
    Param {
        name,
        location: "query",
        kind,
        description,
        shared: true,
    }
}

const PRETTY: Param = query(
    "pretty",
    "string",
    "If 'true', the response is indented for people to read. Off unless the user agent looks like a browser or a command-line HTTP tool.",
);
const DRY_RUN: Param = Param {
    shared: false,
    ..query(
        "dryRun",
        "string",
        "When set, the request goes through every stage except persisting the result. The only valid value is All (run all dry-run stages); any other value is an error.",
    )
};
const FIELD_VALIDATION: Param = Param {
    shared: false,
    ..query(
        "fieldValidation",
        "string",
        "How the server treats unknown or duplicate fields in the object of a POST, PUT or PATCH: Ignore drops them silently (keeping the last of duplicates); Warn (the default since v1.23) drops them and adds a warning header for each; Strict rejects the request with a BadRequest listing every unknown and duplicate field.",
    )
};
const FIELD_MANAGER: Param = query(
    "fieldManager",
    "string",
    "The name of the actor making the change, recorded in managedFields. At most 128 printable characters.",
);
const FIELD_MANAGER_PATCH: Param = query(
    "fieldManager",
    "string",
    "The name of the actor making the change, recorded in managedFields. At most 128 printable characters. Required for apply patches (application/apply-patch), optional for JSON, merge and strategic merge patches.",
);
const FORCE: Param = query(
    "force",
    "boolean",
    "Take ownership of fields another manager owns when applying. Only valid for apply patches.",
);
const ALLOW_WATCH_BOOKMARKS: Param = query(
    "allowWatchBookmarks",
    "boolean",
    "Ask for BOOKMARK watch events. The server may send them at its discretion or not at all; ignored unless this is a watch.",
);
const CONTINUE: Param = query(
    "continue",
    "string",
    "The continue token of a previous paged list, to fetch the next page with otherwise identical parameters. An expired token gets 410 Gone together with a fresh token that continues from the next key at the latest revision. Not supported with watch.",
);
const FIELD_SELECTOR: Param = query(
    "fieldSelector",
    "string",
    "Only return objects whose fields match this selector. Defaults to everything.",
);
const LABEL_SELECTOR: Param = query(
    "labelSelector",
    "string",
    "Only return objects whose labels match this selector. Defaults to everything.",
);
const LIMIT: Param = query(
    "limit",
    "integer",
    "The most items a list call returns. When more remain, the list metadata carries a continue token for the next page; pages taken with continue form one consistent snapshot. The server may return fewer items, or ignore the limit. Not supported with watch.",
);
const RESOURCE_VERSION: Param = query(
    "resourceVersion",
    "string",
    "A constraint on the resource versions the request may be served from (see the API concepts documentation on resource versions). Unset by default.",
);
const RESOURCE_VERSION_MATCH: Param = query(
    "resourceVersionMatch",
    "string",
    "How resourceVersion applies to a list call (Exact or NotOlderThan). Recommended whenever resourceVersion is set. Unset by default.",
);
const SEND_INITIAL_EVENTS: Param = query(
    "sendInitialEvents",
    "boolean",
    "With watch=true, start the stream with synthetic ADDED events for the current objects, then a BOOKMARK annotated k8s.io/initial-events-end, then the changes that follow. Requires resourceVersionMatch=NotOlderThan.",
);
const TIMEOUT_SECONDS: Param = query(
    "timeoutSeconds",
    "integer",
    "The longest the list or watch call may last, whatever its activity.",
);
const WATCH: Param = query(
    "watch",
    "boolean",
    "Stream add, update and delete notifications for the described resources instead of returning a list. Specify resourceVersion.",
);
const GRACE_PERIOD_SECONDS: Param = query(
    "gracePeriodSeconds",
    "integer",
    "Seconds to wait before deleting the object: zero deletes immediately; unset uses the type's default grace period.",
);
const IGNORE_STORE_READ_ERROR: Param = Param {
    shared: false,
    ..query(
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "boolean",
        "Delete an object that cannot be read from storage (it fails to decrypt or decode), skipping finalizers and preconditions. Unsafe: workloads that rely on the normal deletion flow may break. Off unless set.",
    )
};
const ORPHAN_DEPENDENTS: Param = query(
    "orphanDependents",
    "boolean",
    "Deprecated; use propagationPolicy. Whether dependents are orphaned: true adds the orphan finalizer, false removes it. Set at most one of this and propagationPolicy.",
);
const PROPAGATION_POLICY: Param = query(
    "propagationPolicy",
    "string",
    "How garbage collection treats dependents: Orphan, Background or Foreground. Set at most one of this and orphanDependents; unset uses the finalizers and the resource's default.",
);
const NAMESPACE: Param = Param {
    name: "namespace",
    location: "path",
    kind: "string",
    description: "The namespace of the objects: their name and authorization scope.",
    shared: true,
};

const LIST_PARAMS: &[Param] = &[
    ALLOW_WATCH_BOOKMARKS,
    CONTINUE,
    FIELD_SELECTOR,
    LABEL_SELECTOR,
    LIMIT,
    RESOURCE_VERSION,
    RESOURCE_VERSION_MATCH,
    SEND_INITIAL_EVENTS,
    TIMEOUT_SECONDS,
    WATCH,
];
const DELETE_PARAMS: &[Param] = &[
    DRY_RUN,
    GRACE_PERIOD_SECONDS,
    IGNORE_STORE_READ_ERROR,
    ORPHAN_DEPENDENTS,
    PROPAGATION_POLICY,
];
const DELETE_COLLECTION_PARAMS: &[Param] = &[
    CONTINUE,
    DRY_RUN,
    FIELD_SELECTOR,
    GRACE_PERIOD_SECONDS,
    IGNORE_STORE_READ_ERROR,
    LABEL_SELECTOR,
    LIMIT,
    ORPHAN_DEPENDENTS,
    PROPAGATION_POLICY,
    RESOURCE_VERSION,
    RESOURCE_VERSION_MATCH,
    SEND_INITIAL_EVENTS,
    TIMEOUT_SECONDS,
];
const WRITE_PARAMS: &[Param] = &[DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];
const PATCH_PARAMS: &[Param] = &[DRY_RUN, FIELD_MANAGER_PATCH, FIELD_VALIDATION, FORCE];

/// A parameter of one operation before sharing is decided.
#[derive(Clone, PartialEq)]
struct OpParam {
    name: String,
    value: Value,
    shared: bool,
}

impl OpParam {
    fn of(p: &Param) -> OpParam {
        let mut v = Map::new();
        v.insert("description".into(), p.description.into());
        v.insert("in".into(), p.location.into());
        v.insert("name".into(), p.name.into());
        if p.location == "path" {
            v.insert("required".into(), true.into());
        }
        v.insert("type".into(), p.kind.into());
        v.insert("uniqueItems".into(), true.into());
        OpParam {
            name: p.name.to_owned(),
            value: Value::Object(v),
            shared: p.shared,
        }
    }

    fn name_of(kind: &str) -> OpParam {
        OpParam {
            name: "name".into(),
            value: json!({
                "description": format!("name of the {kind}"),
                "in": "path",
                "name": "name",
                "required": true,
                "type": "string",
                "uniqueItems": true,
            }),
            shared: false,
        }
    }

    fn body(schema: Value, required: bool, shared: bool) -> OpParam {
        let mut v = Map::new();
        v.insert("in".into(), "body".into());
        v.insert("name".into(), "body".into());
        if required {
            v.insert("required".into(), true.into());
        }
        v.insert("schema".into(), schema);
        OpParam {
            name: "body".into(),
            value: Value::Object(v),
            shared,
        }
    }
}

/// One operation of a path, with its parameters still separate.
struct Operation {
    method: &'static str,
    params: Vec<OpParam>,
    body: Map<String, Value>,
}

/// How the document refers to a definition; a definition missing from the schemas is
/// left out rather than referenced dangling.
pub(crate) struct Definitions<'a> {
    defs: &'a Map<String, Value>,
    /// `(group, version, kind)` → definition name, from `x-kubernetes-group-version-kind`.
    by_gvk: BTreeMap<(String, String, String), String>,
}

impl<'a> Definitions<'a> {
    pub(crate) fn new(defs: &'a Map<String, Value>) -> Definitions<'a> {
        let mut by_gvk = BTreeMap::new();
        for (name, schema) in defs {
            let Some(gvks) = schema
                .get("x-kubernetes-group-version-kind")
                .and_then(Value::as_array)
            else {
                continue;
            };
            for gvk in gvks {
                let field = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                // The first definition claiming a kind wins (kinds such as DeleteOptions
                // are claimed by one definition for every group).
                by_gvk
                    .entry((field("group"), field("version"), field("kind")))
                    .or_insert_with(|| name.clone());
            }
        }
        Definitions { defs, by_gvk }
    }

    /// The definition of `group/version, Kind=kind`.
    fn of_kind(&self, group: &str, version: &str, kind: &str) -> Option<&str> {
        if let Some(name) =
            self.by_gvk
                .get(&(group.to_owned(), version.to_owned(), kind.to_owned()))
        {
            return Some(name);
        }
        // Kinds without the extension: the package naming convention of k8s.io/api.
        let package = match group {
            "" => "core".to_owned(),
            g => g
                .trim_end_matches(".k8s.io")
                .split('.')
                .next()
                .unwrap_or(g)
                .to_owned(),
        };
        let name = format!("io.k8s.api.{package}.{version}.{kind}");
        self.defs.get_key_value(&name).map(|(k, _)| k.as_str())
    }

    /// `{"$ref": "#/definitions/<name>"}` when the definition exists.
    fn reference(&self, name: &str) -> Option<Value> {
        self.defs
            .contains_key(name)
            .then(|| json!({ "$ref": format!("#/definitions/{name}") }))
    }
}

/// `ToValidOperationID` of kube's OpenAPI naming: letters and `_` kept (digits too,
/// except first), any other character dropped and the next letter upper-cased.
pub(crate) fn operation_id_part(s: &str, capitalize_first: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_numeric()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

/// The group as operation IDs and tags name it: `core` for the legacy group, the group
/// without `.k8s.io` otherwise (`rbac.authorization.k8s.io` → `rbacAuthorization`).
fn group_id(group: &str, capitalize: bool) -> String {
    let group = if group.is_empty() {
        "core"
    } else {
        group.trim_end_matches(".k8s.io")
    };
    operation_id_part(group, capitalize)
}

/// The tag of a group-version's operations: `core_v1`, `apps_v1`, `rbacAuthorization_v1`.
fn gv_tag(group: &str, version: &str) -> String {
    format!(
        "{}_{}",
        group_id(group, false),
        operation_id_part(version, false)
    )
}

/// `verb` + `CoreV1` + `rest`.
fn operation_id(verb: &str, group: &str, version: &str, rest: &str) -> String {
    format!(
        "{verb}{}{}{rest}",
        group_id(group, true),
        operation_id_part(version, true)
    )
}

/// The article kube puts before a kind in descriptions: none for plural-looking kinds
/// (`Endpoints`), `an` before a vowel, else `a`.
fn article(kind: &str) -> &'static str {
    if kind.ends_with('s') && !kind.ends_with("ss") {
        ""
    } else if kind.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']) {
        "an "
    } else {
        "a "
    }
}

/// The prefix of a group-version's paths: `/api/v1` or `/apis/<group>/<version>`.
pub(crate) fn gv_prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

fn gvk_value(group: &str, version: &str, kind: &str) -> Value {
    json!({ "group": group, "kind": kind, "version": version })
}

fn strings(xs: &[&str]) -> Value {
    Value::Array(xs.iter().map(|x| Value::from(*x)).collect())
}

/// A response object; `schema` omitted when the definition is unknown.
fn response(description: &str, schema: Option<&Value>) -> Value {
    let mut r = Map::new();
    r.insert("description".into(), description.into());
    if let Some(s) = schema {
        r.insert("schema".into(), s.clone());
    }
    Value::Object(r)
}

fn unauthorized() -> Value {
    json!({ "description": "Unauthorized" })
}

/// What every operation of one resource (or subresource) shares.
struct OpContext<'a> {
    group: &'a str,
    version: &'a str,
    tag: String,
    gvk: Value,
}

impl OpContext<'_> {
    /// An operation body with the keys every operation has.
    #[allow(clippy::too_many_arguments)]
    fn operation(
        &self,
        method: &'static str,
        verb: &str,
        rest: &str,
        description: String,
        consumes: &[&str],
        produces: &[&str],
        responses: Vec<(&str, Value)>,
        action: &str,
        params: Vec<OpParam>,
    ) -> Operation {
        let mut body = Map::new();
        body.insert("consumes".into(), strings(consumes));
        body.insert("description".into(), description.into());
        body.insert(
            "operationId".into(),
            operation_id(verb, self.group, self.version, rest).into(),
        );
        body.insert("produces".into(), strings(produces));
        let mut rs = Map::new();
        for (code, r) in responses {
            rs.insert(code.into(), r);
        }
        rs.insert("401".into(), unauthorized());
        body.insert("responses".into(), Value::Object(rs));
        body.insert("schemes".into(), json!(["https"]));
        body.insert("tags".into(), json!([self.tag]));
        body.insert("x-kubernetes-action".into(), action.into());
        body.insert("x-kubernetes-group-version-kind".into(), self.gvk.clone());
        Operation {
            method,
            params,
            body,
        }
    }
}

fn params(list: &[Param]) -> Vec<OpParam> {
    list.iter().map(OpParam::of).collect()
}

/// Builds every path of the registry's resources and the discovery endpoints, with the
/// shared parameters they reference.
struct PathBuilder<'a> {
    defs: &'a Definitions<'a>,
    paths: BTreeMap<String, Value>,
    /// Shared parameters by key, and the key each distinct parameter got.
    shared: BTreeMap<String, Value>,
    shared_keys: Vec<(Value, String)>,
}

impl<'a> PathBuilder<'a> {
    fn new(defs: &'a Definitions<'a>) -> PathBuilder<'a> {
        PathBuilder {
            defs,
            paths: BTreeMap::new(),
            shared: BTreeMap::new(),
            shared_keys: Vec::new(),
        }
    }

    /// The key a shared parameter is written under: its name and a short digest of its
    /// JSON, so that two different parameters of the same name get different keys.
    fn share(&mut self, value: &Value, name: &str) -> String {
        if let Some((_, key)) = self.shared_keys.iter().find(|(v, _)| v == value) {
            return key.clone();
        }
        use base64::Engine as _;
        let digest = super::sha512::digest(&serde_json::to_vec(value).unwrap_or_default());
        let suffix = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..6]);
        let key = format!("{name}-{suffix}");
        self.shared.insert(key.clone(), value.clone());
        self.shared_keys.push((value.clone(), key.clone()));
        key
    }

    /// Adds a path: parameters every operation has move to the path; both lists are
    /// sorted by name; shared parameters become references.
    fn add(&mut self, path: String, mut ops: Vec<Operation>) {
        if ops.is_empty() {
            return;
        }
        let common: Vec<OpParam> = ops[0]
            .params
            .iter()
            .filter(|p| ops.iter().all(|op| op.params.contains(p)))
            .cloned()
            .collect();
        for op in &mut ops {
            op.params.retain(|p| !common.contains(p));
        }
        let mut item = Map::new();
        for op in ops {
            let mut body = op.body;
            if !op.params.is_empty() {
                body.insert("parameters".into(), self.param_list(op.params));
            }
            item.insert(op.method.into(), Value::Object(body));
        }
        if !common.is_empty() {
            item.insert("parameters".into(), self.param_list(common));
        }
        self.paths.insert(path, Value::Object(item));
    }

    fn param_list(&mut self, mut list: Vec<OpParam>) -> Value {
        list.sort_by(|a, b| a.name.cmp(&b.name));
        Value::Array(
            list.into_iter()
                .map(|p| {
                    if p.shared {
                        let key = self.share(&p.value, &p.name);
                        json!({ "$ref": format!("#/parameters/{key}") })
                    } else {
                        p.value
                    }
                })
                .collect(),
        )
    }

    /// The paths of one resource.
    fn resource(&mut self, r: &Resource) {
        let defs = self.defs;
        let object = defs
            .of_kind(&r.group, &r.version, &r.kind)
            .and_then(|n| defs.reference(n));
        let list = defs
            .of_kind(&r.group, &r.version, &r.list_kind())
            .and_then(|n| defs.reference(n));
        let status = defs.reference(STATUS);
        let kind = r.kind.as_str();
        let ctx = OpContext {
            group: &r.group,
            version: &r.version,
            tag: gv_tag(&r.group, &r.version),
            gvk: gvk_value(&r.group, &r.version, kind),
        };
        let prefix = gv_prefix(&r.group, &r.version);
        let scope = if r.namespaced { "Namespaced" } else { "" };
        let (collection, scope_params) = if r.namespaced {
            (
                format!("{prefix}/namespaces/{{namespace}}/{}", r.plural),
                vec![OpParam::of(&NAMESPACE)],
            )
        } else {
            (format!("{prefix}/{}", r.plural), vec![])
        };
        let item = format!("{collection}/{{name}}");
        let with_scope = |mut ps: Vec<OpParam>| {
            ps.extend(scope_params.iter().cloned());
            ps.push(OpParam::of(&PRETTY));
            ps
        };
        let with_name = |mut ps: Vec<OpParam>, of: &str| {
            ps.push(OpParam::name_of(of));
            with_scope(ps)
        };

        // The collection.
        let mut ops = Vec::new();
        if r.has_verb("list") {
            ops.push(ctx.operation(
                "get",
                "list",
                &format!("{scope}{kind}"),
                format!("list or watch objects of kind {kind}"),
                &["*/*"],
                PRODUCES_WATCH,
                vec![("200", response("OK", list.as_ref()))],
                "list",
                with_scope(params(LIST_PARAMS)),
            ));
        }
        if r.has_verb("create") {
            let mut ps = params(WRITE_PARAMS);
            if let Some(o) = &object {
                ps.push(OpParam::body(o.clone(), true, false));
            }
            ops.push(ctx.operation(
                "post",
                "create",
                &format!("{scope}{kind}"),
                format!("create {}{kind}", article(kind)),
                &["*/*"],
                PRODUCES,
                vec![
                    ("200", response("OK", object.as_ref())),
                    ("201", response("Created", object.as_ref())),
                    ("202", response("Accepted", object.as_ref())),
                ],
                "post",
                with_scope(ps),
            ));
        }
        if r.has_verb("deletecollection") {
            let mut ps = params(DELETE_COLLECTION_PARAMS);
            if let Some(d) = defs.reference(DELETE_OPTIONS) {
                ps.push(OpParam::body(d, false, true));
            }
            ops.push(ctx.operation(
                "delete",
                "delete",
                &format!("Collection{scope}{kind}"),
                format!("delete collection of {kind}"),
                &["*/*"],
                PRODUCES,
                vec![("200", response("OK", status.as_ref()))],
                "deletecollection",
                with_scope(ps),
            ));
        }
        self.add(collection.clone(), ops);

        // The item.
        let mut ops = Vec::new();
        let deleted = if r.delete_returns_object() {
            object.clone()
        } else {
            status.clone()
        };
        if r.has_verb("delete") {
            let mut ps = params(DELETE_PARAMS);
            if let Some(d) = defs.reference(DELETE_OPTIONS) {
                ps.push(OpParam::body(d, false, true));
            }
            ops.push(ctx.operation(
                "delete",
                "delete",
                &format!("{scope}{kind}"),
                format!("delete {}{kind}", article(kind)),
                &["*/*"],
                PRODUCES,
                vec![
                    ("200", response("OK", deleted.as_ref())),
                    ("202", response("Accepted", deleted.as_ref())),
                ],
                "delete",
                with_name(ps, kind),
            ));
        }
        self.item_operations(
            &ctx,
            r,
            &mut ops,
            "",
            "the specified",
            object.as_ref(),
            kind,
        );
        self.add(item.clone(), ops);

        // Subresources: status and scale; and those that only act (a pod's binding and
        // eviction, a ServiceAccount's token), each a POST of its own kind.
        for sub in &r.subresources {
            if sub.verbs == ["create"] {
                self.create_subresource(r, sub, &ctx, &item, kind);
                continue;
            }
            let (sub_ctx, sub_object, name_kind) = match sub.name.as_str() {
                "status" => (
                    OpContext {
                        group: &r.group,
                        version: &r.version,
                        tag: ctx.tag.clone(),
                        gvk: ctx.gvk.clone(),
                    },
                    object.clone(),
                    kind.to_owned(),
                ),
                "scale" => {
                    let group = sub.group.as_deref().unwrap_or(&r.group);
                    let version = sub.version.as_deref().unwrap_or(&r.version);
                    (
                        OpContext {
                            group: &r.group,
                            version: &r.version,
                            tag: ctx.tag.clone(),
                            gvk: gvk_value(group, version, &sub.kind),
                        },
                        defs.of_kind(group, version, &sub.kind)
                            .and_then(|n| defs.reference(n)),
                        sub.kind.clone(),
                    )
                }
                _ => continue,
            };
            let mut ops = Vec::new();
            let capitalized = operation_id_part(&sub.name, true);
            let what = format!("{} of the specified", sub.name);
            let verbs_r = Resource {
                verbs: sub.verbs.clone(),
                ..r.clone()
            };
            self.item_operations(
                &sub_ctx,
                &verbs_r,
                &mut ops,
                &capitalized,
                &what,
                sub_object.as_ref(),
                kind,
            );
            for op in &mut ops {
                // The name parameter names the subresource's kind (`name of the Scale`).
                for p in &mut op.params {
                    if p.name == "name" {
                        *p = OpParam::name_of(&name_kind);
                    }
                }
            }
            self.add(format!("{item}/{}", sub.name), ops);
        }

        // Across namespaces, and the deprecated watch paths.
        if r.namespaced && r.has_verb("list") {
            let op = ctx.operation(
                "get",
                "list",
                &format!("{kind}ForAllNamespaces"),
                format!("list or watch objects of kind {kind}"),
                &["*/*"],
                PRODUCES_WATCH,
                vec![("200", response("OK", list.as_ref()))],
                "list",
                {
                    let mut ps = params(LIST_PARAMS);
                    ps.push(OpParam::of(&PRETTY));
                    ps
                },
            );
            self.add(format!("{prefix}/{}", r.plural), vec![op]);
        }
        if r.has_verb("watch") {
            let event = defs.reference(WATCH_EVENT);
            let watch_op = |rest: String, description: String, action: &str, ps: Vec<OpParam>| {
                ctx.operation(
                    "get",
                    "watch",
                    &rest,
                    description,
                    &["*/*"],
                    PRODUCES_WATCH,
                    vec![("200", response("OK", event.as_ref()))],
                    action,
                    ps,
                )
            };
            let list_description = format!(
                "watch individual changes to a list of {kind}. deprecated: use the 'watch' parameter with a list operation instead."
            );
            let item_description = format!(
                "watch changes to an object of kind {kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter."
            );
            let watch_collection = if r.namespaced {
                format!("{prefix}/watch/namespaces/{{namespace}}/{}", r.plural)
            } else {
                format!("{prefix}/watch/{}", r.plural)
            };
            let op = watch_op(
                format!("{scope}{kind}List"),
                list_description.clone(),
                "watchlist",
                with_scope(params(LIST_PARAMS)),
            );
            self.add(watch_collection.clone(), vec![op]);
            let op = watch_op(
                format!("{scope}{kind}"),
                item_description,
                "watch",
                with_name(params(LIST_PARAMS), kind),
            );
            self.add(format!("{watch_collection}/{{name}}"), vec![op]);
            if r.namespaced {
                let mut ps = params(LIST_PARAMS);
                ps.push(OpParam::of(&PRETTY));
                let op = watch_op(
                    format!("{kind}ListForAllNamespaces"),
                    list_description,
                    "watchlist",
                    ps,
                );
                self.add(format!("{prefix}/watch/{}", r.plural), vec![op]);
            }
        }
    }

    /// The POST of a subresource that only acts (`pods/{name}/eviction`,
    /// `serviceaccounts/{name}/token`), taking and answering its own kind.
    fn create_subresource(&mut self, r: &Resource, sub: &crate::registry::Subresource, ctx: &OpContext<'_>, item: &str, kind: &str) {
        let defs = self.defs;
        let group = sub.group.as_deref().unwrap_or(&r.group);
        let version = sub.version.as_deref().unwrap_or(&r.version);
        let Some(body) = defs.of_kind(group, version, &sub.kind).and_then(|n| defs.reference(n)) else {
            return;
        };
        let sub_ctx = OpContext {
            group: &r.group,
            version: &r.version,
            tag: ctx.tag.clone(),
            gvk: gvk_value(group, version, &sub.kind),
        };
        let mut ps = params(WRITE_PARAMS);
        ps.push(OpParam::body(body.clone(), true, false));
        ps.push(OpParam::name_of(&sub.kind));
        if r.namespaced {
            ps.push(OpParam::of(&NAMESPACE));
        }
        ps.push(OpParam::of(&PRETTY));
        let scope = if r.namespaced { "Namespaced" } else { "" };
        let op = sub_ctx.operation(
            "post",
            "create",
            &format!("{scope}{kind}{}", operation_id_part(&sub.name, true)),
            format!("create {} of {}{kind}", sub.name, article(kind)),
            &["*/*"],
            PRODUCES,
            vec![
                ("200", response("OK", Some(&body))),
                ("201", response("Created", Some(&body))),
                ("202", response("Accepted", Some(&body))),
            ],
            "post",
            ps,
        );
        self.add(format!("{item}/{}", sub.name), vec![op]);
    }

    /// read, replace and patch of an item or of one of its subresources.
    #[allow(clippy::too_many_arguments)]
    fn item_operations(
        &self,
        ctx: &OpContext<'_>,
        r: &Resource,
        ops: &mut Vec<Operation>,
        subresource: &str,
        what: &str,
        object: Option<&Value>,
        kind: &str,
    ) {
        let scope = if r.namespaced { "Namespaced" } else { "" };
        let rest = format!("{scope}{kind}{subresource}");
        let scope_params = || {
            let mut ps = vec![OpParam::name_of(kind)];
            if r.namespaced {
                ps.push(OpParam::of(&NAMESPACE));
            }
            ps.push(OpParam::of(&PRETTY));
            ps
        };
        let with = |mut ps: Vec<OpParam>| {
            ps.extend(scope_params());
            ps
        };
        if r.has_verb("get") {
            ops.push(ctx.operation(
                "get",
                "read",
                &rest,
                format!("read {what} {kind}"),
                &["*/*"],
                PRODUCES,
                vec![("200", response("OK", object))],
                "get",
                with(vec![]),
            ));
        }
        if r.has_verb("patch") {
            let mut ps = params(PATCH_PARAMS);
            if let Some(p) = self.defs.reference(PATCH) {
                ps.push(OpParam::body(p, true, true));
            }
            ops.push(ctx.operation(
                "patch",
                "patch",
                &rest,
                format!("partially update {what} {kind}"),
                PATCH_TYPES,
                PRODUCES,
                vec![
                    ("200", response("OK", object)),
                    ("201", response("Created", object)),
                ],
                "patch",
                with(ps),
            ));
        }
        if r.has_verb("update") {
            let mut ps = params(WRITE_PARAMS);
            if let Some(o) = object {
                ps.push(OpParam::body(o.clone(), true, false));
            }
            ops.push(ctx.operation(
                "put",
                "replace",
                &rest,
                format!("replace {what} {kind}"),
                &["*/*"],
                PRODUCES,
                vec![
                    ("200", response("OK", object)),
                    ("201", response("Created", object)),
                ],
                "put",
                with(ps),
            ));
        }
    }

    /// A discovery endpoint: one GET without parameters.
    fn discovery(
        &mut self,
        path: String,
        operation_id: String,
        tag: String,
        description: &str,
        schema: &str,
        types: &[&str],
    ) {
        let mut body = Map::new();
        body.insert("consumes".into(), strings(types));
        body.insert("description".into(), description.into());
        body.insert("operationId".into(), operation_id.into());
        body.insert("produces".into(), strings(types));
        body.insert(
            "responses".into(),
            json!({
                "200": response("OK", self.defs.reference(schema).as_ref()),
                "401": unauthorized(),
            }),
        );
        body.insert("schemes".into(), json!(["https"]));
        body.insert("tags".into(), json!([tag]));
        self.paths
            .insert(path, json!({ "get": Value::Object(body) }));
    }
}

/// The Swagger 2.0 document for `registry`, with `definitions` (the v2 `definitions`
/// map of every schema) as its definitions.
pub fn v2_document(registry: &Registry, definitions: Map<String, Value>) -> Value {
    let defs = Definitions::new(&definitions);
    let mut b = PathBuilder::new(&defs);

    // Discovery.
    b.discovery(
        "/api/".into(),
        "getCoreAPIVersions".into(),
        "core".into(),
        "get available API versions",
        API_VERSIONS,
        PRODUCES,
    );
    b.discovery(
        "/apis/".into(),
        "getAPIVersions".into(),
        "apis".into(),
        "get available API versions",
        API_GROUP_LIST,
        PRODUCES,
    );
    b.discovery(
        "/version/".into(),
        "getCodeVersion".into(),
        "version".into(),
        "get the code version",
        VERSION_INFO,
        &["application/json"],
    );
    for version in registry.versions_of("") {
        b.discovery(
            format!("/api/{version}/"),
            operation_id("get", "", version, "APIResources"),
            gv_tag("", version),
            "get available resources",
            API_RESOURCE_LIST,
            PRODUCES,
        );
    }
    for group in registry.groups() {
        b.discovery(
            format!("/apis/{}/", group.name),
            format!("get{}APIGroup", group_id(&group.name, true)),
            group_id(&group.name, false),
            "get information of a group",
            API_GROUP,
            PRODUCES,
        );
        for version in &group.versions {
            b.discovery(
                format!("/apis/{}/{version}/", group.name),
                operation_id("get", &group.name, version, "APIResources"),
                gv_tag(&group.name, version),
                "get available resources",
                API_RESOURCE_LIST,
                PRODUCES,
            );
        }
    }

    for r in registry.resources() {
        b.resource(r);
    }

    let PathBuilder { paths, shared, .. } = b;
    let mut doc = Map::new();
    doc.insert("definitions".into(), Value::Object(definitions));
    doc.insert(
        "info".into(),
        json!({ "title": "Kubernetes", "version": KUBERNETES_VERSION }),
    );
    doc.insert(
        "parameters".into(),
        Value::Object(shared.into_iter().collect()),
    );
    doc.insert("paths".into(), Value::Object(paths.into_iter().collect()));
    doc.insert("security".into(), json!([{ "BearerToken": [] }]));
    doc.insert(
        "securityDefinitions".into(),
        json!({
            "BearerToken": {
                "description": "Bearer Token authentication",
                "in": "header",
                "name": "authorization",
                "type": "apiKey",
            }
        }),
    );
    doc.insert("swagger".into(), "2.0".into());
    Value::Object(doc)
}
