//! Generates `core/src/schema/definitions.json`: the OpenAPI v2 `definitions` of every
//! kind Apiary serves (and of their List kinds, the meta/v1 types, `Scale`, `Eviction`,
//! `Binding`, `TokenRequest` and the review kinds), shaped as kube-apiserver v1.33's `/openapi/v2` shapes
//! them.
//!
//! The schemas come from k8s-openapi's schemars support (the Kubernetes v1.33 types);
//! this program turns them into upstream's shape:
//!
//! - refs are `#/definitions/<name>`, with names like `io.k8s.api.core.v1.Pod`;
//! - `IntOrString` is `{"type": "string", "format": "int-or-string"}`, `Quantity` a
//!   string, `JSON` and the `JSONSchemaPropsOr*` types carry only their description;
//! - the List kinds, which k8s-openapi models as one generic type without a schema, are
//!   written out as upstream has them (`list_docs.rs`);
//! - every top-level kind carries `x-kubernetes-group-version-kind`;
//! - the list, map and patch extensions are merged from the core's one table
//!   (`core/src/schema/list_extensions.rs`, included below as a module), and the two
//!   `x-kubernetes-unions` upstream declares are added.
//!
//! Run: `cargo run --manifest-path tools/openapi-gen/Cargo.toml` (see README.md).
//! With `--compare <swagger.json>` it also reports every difference from an upstream
//! document for the definitions it writes.

mod list_docs;
#[allow(dead_code)]
#[path = "../../../core/src/schema/list_extensions.rs"]
mod list_extensions;

use k8s_openapi::api;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::{ListableResource, Resource};
use schemars::{generate::SchemaSettings, JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One `x-kubernetes-group-version-kind` entry.
type Gvk = (String, String, String);

struct Generator {
    schemas: SchemaGenerator,
    /// Definition name → its group-version-kinds.
    gvks: BTreeMap<String, Vec<Gvk>>,
    /// List definition → item definition.
    lists: BTreeMap<String, String>,
}

impl Generator {
    fn new() -> Generator {
        let settings = SchemaSettings::draft07().with(|s| {
            s.meta_schema = None;
            // Keep `$ref` with a sibling `description`, as OpenAPI v2 documents do.
            s.transforms.clear();
        });
        Generator {
            schemas: settings.into_generator(),
            gvks: BTreeMap::new(),
            lists: BTreeMap::new(),
        }
    }

    fn gvk(&mut self, name: &str, group: &str, version: &str, kind: &str) {
        self.gvks.entry(name.to_owned()).or_default().push((
            group.to_owned(),
            kind.to_owned(),
            version.to_owned(),
        ));
    }

    /// A type without a kind of its own (reached from a path, not through a ref).
    fn plain<T: JsonSchema>(&mut self) {
        self.schemas.subschema_for::<T>();
    }

    /// A kind that is not listed on its own (`Scale`, `Eviction`, ...).
    fn single<T: JsonSchema + Resource>(&mut self) {
        self.schemas.subschema_for::<T>();
        self.gvk(&T::schema_name(), T::GROUP, T::VERSION, T::KIND);
    }

    /// A kind served as a resource: the kind and its List kind.
    fn kind<T: JsonSchema + Resource + ListableResource>(&mut self) {
        self.single::<T>();
        let item = T::schema_name().into_owned();
        let list = format!("{item}List");
        self.gvk(&list, T::GROUP, T::VERSION, T::LIST_KIND);
        self.lists.insert(list, item);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut out_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../core/src/schema");
    let mut compare: Option<PathBuf> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--out" => {
                i += 1;
                out_dir = PathBuf::from(&args[i]);
            }
            "--compare" => {
                i += 1;
                compare = Some(PathBuf::from(&args[i]));
            }
            other => {
                eprintln!("unknown argument {other}; usage: apiary-openapi-gen [--out DIR] [--compare swagger.json]");
                std::process::exit(2);
            }
        }
        i += 1;
    }

    let mut g = Generator::new();
    register(&mut g);
    let definitions = finish(g);

    let text = serde_json::to_string_pretty(&Value::Object(definitions.clone()))
        .expect("serializable")
        + "\n";
    let path = out_dir.join("definitions.json");
    std::fs::write(&path, &text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    eprintln!(
        "wrote {} ({} definitions, {} bytes)",
        path.display(),
        definitions.len(),
        text.len()
    );

    let structure = structure(&definitions);
    let path = out_dir.join("structure.txt");
    std::fs::write(&path, &structure).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    eprintln!("wrote {} ({} bytes)", path.display(), structure.len());

    if let Some(upstream) = compare {
        compare_with(&definitions, &upstream);
    }
}

/// Every kind Apiary serves (the registry in core/src/registry/builtin.rs), and what the
/// API around them names.
fn register(g: &mut Generator) {
    use api::core::v1 as core;
    g.kind::<core::ConfigMap>();
    g.kind::<core::Endpoints>();
    g.kind::<core::Event>();
    g.kind::<core::LimitRange>();
    g.kind::<core::Namespace>();
    g.kind::<core::Node>();
    g.kind::<core::PersistentVolumeClaim>();
    g.kind::<core::PersistentVolume>();
    g.kind::<core::Pod>();
    g.kind::<core::PodTemplate>();
    g.kind::<core::ReplicationController>();
    g.kind::<core::ResourceQuota>();
    g.kind::<core::Secret>();
    g.kind::<core::ServiceAccount>();
    g.kind::<core::Service>();
    g.kind::<core::ComponentStatus>();
    g.single::<core::Binding>();

    use api::apps::v1 as apps;
    g.kind::<apps::ControllerRevision>();
    g.kind::<apps::DaemonSet>();
    g.kind::<apps::Deployment>();
    g.kind::<apps::ReplicaSet>();
    g.kind::<apps::StatefulSet>();

    g.kind::<api::events::v1::Event>();
    g.kind::<api::autoscaling::v2::HorizontalPodAutoscaler>();
    g.kind::<api::autoscaling::v1::HorizontalPodAutoscaler>();
    g.single::<api::autoscaling::v1::Scale>();
    g.kind::<api::batch::v1::CronJob>();
    g.kind::<api::batch::v1::Job>();
    g.kind::<api::networking::v1::IngressClass>();
    g.kind::<api::networking::v1::IPAddress>();
    g.kind::<api::networking::v1::ServiceCIDR>();
    g.kind::<api::networking::v1::Ingress>();
    g.kind::<api::networking::v1::NetworkPolicy>();
    g.kind::<api::policy::v1::PodDisruptionBudget>();
    g.single::<api::policy::v1::Eviction>();
    g.kind::<api::rbac::v1::ClusterRoleBinding>();
    g.kind::<api::rbac::v1::ClusterRole>();
    g.kind::<api::rbac::v1::RoleBinding>();
    g.kind::<api::rbac::v1::Role>();
    g.kind::<api::storage::v1::StorageClass>();
    g.kind::<api::storage::v1::CSIDriver>();
    g.kind::<api::storage::v1::CSINode>();
    g.kind::<api::storage::v1::CSIStorageCapacity>();
    g.kind::<api::storage::v1::VolumeAttachment>();
    g.kind::<api::node::v1::RuntimeClass>();
    g.kind::<api::certificates::v1::CertificateSigningRequest>();
    g.kind::<apiextensions::CustomResourceDefinition>();
    use api::admissionregistration::v1 as admissionregistration;
    g.kind::<admissionregistration::MutatingWebhookConfiguration>();
    g.kind::<admissionregistration::ValidatingWebhookConfiguration>();
    g.kind::<admissionregistration::ValidatingAdmissionPolicy>();
    g.kind::<admissionregistration::ValidatingAdmissionPolicyBinding>();
    g.kind::<k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService>();
    g.kind::<api::flowcontrol::v1::FlowSchema>();
    g.kind::<api::flowcontrol::v1::PriorityLevelConfiguration>();
    g.kind::<api::scheduling::v1::PriorityClass>();
    g.kind::<api::coordination::v1::Lease>();
    g.kind::<api::discovery::v1::EndpointSlice>();
    g.single::<api::authentication::v1::TokenRequest>();
    g.single::<api::authentication::v1::TokenReview>();
    g.single::<api::authentication::v1::SelfSubjectReview>();
    g.single::<api::authorization::v1::LocalSubjectAccessReview>();
    g.single::<api::authorization::v1::SelfSubjectAccessReview>();
    g.single::<api::authorization::v1::SelfSubjectRulesReview>();
    g.single::<api::authorization::v1::SubjectAccessReview>();

    // meta/v1: what every group version's paths name, as kube-apiserver registers them.
    g.plain::<meta::ObjectMeta>();
    g.plain::<meta::ListMeta>();
    g.plain::<meta::Patch>();
    g.plain::<meta::DeleteOptions>();
    g.plain::<meta::WatchEvent<core::Pod>>();
    g.plain::<meta::Status>();
    g.plain::<meta::APIResourceList>();
    g.plain::<meta::APIGroup>();
    g.plain::<meta::APIGroupList>();
    g.plain::<meta::APIVersions>();
    g.plain::<k8s_openapi::apimachinery::pkg::version::Info>();
    for kind in [
        "Status",
        "APIResourceList",
        "APIGroup",
        "APIGroupList",
        "APIVersions",
    ] {
        g.gvk(
            &format!("io.k8s.apimachinery.pkg.apis.meta.v1.{kind}"),
            "",
            "v1",
            kind,
        );
    }
    // DeleteOptions and WatchEvent are registered in every group version served; upstream
    // lists them sorted by group, then version.
    let mut gvs: Vec<(&str, &str)> = vec![
        ("", "v1"),
        ("admissionregistration.k8s.io", "v1"),
        ("apiextensions.k8s.io", "v1"),
        ("apiregistration.k8s.io", "v1"),
        ("apps", "v1"),
        ("authentication.k8s.io", "v1"),
        ("authorization.k8s.io", "v1"),
        ("autoscaling", "v1"),
        ("autoscaling", "v2"),
        ("batch", "v1"),
        ("certificates.k8s.io", "v1"),
        ("coordination.k8s.io", "v1"),
        ("discovery.k8s.io", "v1"),
        ("events.k8s.io", "v1"),
        ("flowcontrol.apiserver.k8s.io", "v1"),
        ("networking.k8s.io", "v1"),
        ("node.k8s.io", "v1"),
        ("policy", "v1"),
        ("rbac.authorization.k8s.io", "v1"),
        ("scheduling.k8s.io", "v1"),
        ("storage.k8s.io", "v1"),
    ];
    gvs.sort();
    for kind in ["DeleteOptions", "WatchEvent"] {
        for (group, version) in &gvs {
            g.gvk(
                &format!("io.k8s.apimachinery.pkg.apis.meta.v1.{kind}"),
                group,
                version,
                kind,
            );
        }
    }
}

const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// Turn the generator's definitions into upstream's shape.
fn finish(mut g: Generator) -> Map<String, Value> {
    let mut defs: Map<String, Value> = g.schemas.take_definitions(false).into_iter().collect();

    // The List kinds.
    for (list, item) in &g.lists {
        let (_, description, items, metadata) = list_docs::LIST_DOCS
            .iter()
            .find(|(name, ..)| name == list)
            .unwrap_or_else(|| panic!("no description of {list} in list_docs.rs"));
        let item_props = &defs[item]["properties"];
        // A list whose metadata has no comment upstream has no description there.
        let mut list_meta = json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"});
        if !metadata.is_empty() {
            list_meta["description"] = json!(metadata);
        }
        let list_def = json!({
            "description": description,
            "properties": {
                "apiVersion": item_props["apiVersion"].clone(),
                "items": {
                    "description": items,
                    "items": {"$ref": format!("#/definitions/{item}")},
                    "type": "array",
                },
                "kind": item_props["kind"].clone(),
                "metadata": list_meta,
            },
            "required": ["items"],
            "type": "object",
        });
        defs.insert(list.clone(), list_def);
    }

    // Types with their own JSON form, as upstream describes them.
    for (name, def) in defs.iter_mut() {
        let obj = def.as_object_mut().expect("definitions are objects");
        let description = obj.get("description").cloned();
        let keep_only = |extra: Value| {
            let mut m = Map::new();
            if let Some(d) = &description {
                m.insert("description".into(), d.clone());
            }
            if let Value::Object(extra) = extra {
                m.extend(extra);
            }
            m
        };
        match name.as_str() {
            INT_OR_STRING => *obj = keep_only(json!({"format": "int-or-string", "type": "string"})),
            QUANTITY => *obj = keep_only(json!({"type": "string"})),
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"
            | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray"
            | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool"
            | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray" => {
                *obj = keep_only(Value::Null)
            }
            _ => {}
        }
        // k8s-openapi carries a few extensions of its own; the table below is the one source.
        strip_extensions(def);
    }

    upstream_fixups(&mut defs);

    for (name, gvks) in &g.gvks {
        let def = defs
            .get_mut(name)
            .unwrap_or_else(|| panic!("{name} has a kind but no definition"))
            .as_object_mut()
            .expect("object");
        let list: Vec<Value> = gvks
            .iter()
            .map(|(group, kind, version)| json!({"group": group, "kind": kind, "version": version}))
            .collect();
        def.insert("x-kubernetes-group-version-kind".into(), Value::Array(list));
    }

    for ext in list_extensions::LIST_EXTENSIONS {
        let prop = property(&mut defs, ext.definition, ext.field);
        if let Some(t) = ext.list_type {
            prop.insert("x-kubernetes-list-type".into(), json!(t));
        }
        if !ext.list_map_keys.is_empty() {
            prop.insert(
                "x-kubernetes-list-map-keys".into(),
                json!(ext.list_map_keys),
            );
        }
        if let Some(s) = ext.patch_strategy {
            prop.insert("x-kubernetes-patch-strategy".into(), json!(s));
        }
        if let Some(k) = ext.patch_merge_key {
            prop.insert("x-kubernetes-patch-merge-key".into(), json!(k));
        }
    }
    for m in list_extensions::MAP_TYPES {
        let target = if m.field.is_empty() {
            defs.get_mut(m.definition)
                .unwrap_or_else(|| panic!("no definition {}", m.definition))
                .as_object_mut()
                .expect("object")
        } else {
            property(&mut defs, m.definition, m.field)
        };
        target.insert("x-kubernetes-map-type".into(), json!(m.map_type));
    }
    for profile in [
        "io.k8s.api.core.v1.AppArmorProfile",
        "io.k8s.api.core.v1.SeccompProfile",
    ] {
        let def = defs
            .get_mut(profile)
            .expect("profile definition")
            .as_object_mut()
            .expect("object");
        def.insert(
            "x-kubernetes-unions".into(),
            json!([{"discriminator": "type", "fields-to-discriminateBy": {"localhostProfile": "LocalhostProfile"}}]),
        );
    }
    // The unions of flowcontrol.apiserver.k8s.io/v1.
    for (name, discriminator, fields) in [
        ("io.k8s.api.flowcontrol.v1.LimitResponse", "type", json!({"queuing": "Queuing"})),
        ("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationSpec", "type", json!({"exempt": "Exempt", "limited": "Limited"})),
        ("io.k8s.api.flowcontrol.v1.Subject", "kind", json!({"group": "Group", "serviceAccount": "ServiceAccount", "user": "User"})),
    ] {
        let def = defs.get_mut(name).expect("union definition").as_object_mut().expect("object");
        def.insert(
            "x-kubernetes-unions".into(),
            json!([{"discriminator": discriminator, "fields-to-discriminateBy": fields}]),
        );
    }

    // Sorted keys at every level, as upstream writes its document.
    defs.into_iter()
        .map(|(k, v)| (k, sorted(v)))
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .collect()
}

/// Where k8s-openapi's schemas differ from kube-apiserver v1.33's document (found with
/// `--compare`), make them as upstream has them.
fn upstream_fixups(defs: &mut Map<String, Value>) {
    let names: Vec<String> = defs.keys().cloned().collect();
    let mut required = |name: &str, edit: &dyn Fn(&mut Vec<Value>)| {
        let def = defs
            .get_mut(name)
            .unwrap_or_else(|| panic!("no definition {name}"));
        let obj = def.as_object_mut().expect("object");
        let mut list = obj
            .get("required")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        edit(&mut list);
        if list.is_empty() {
            obj.remove("required");
        } else {
            obj.insert("required".into(), Value::Array(list));
        }
    };
    let drop = |field: &'static str| move |list: &mut Vec<Value>| list.retain(|v| v != field);
    // k8s-openapi makes `metadata` of every kind required; upstream requires it of
    // core/v1 Event alone.
    for name in &names {
        if name != "io.k8s.api.core.v1.Event" {
            required(name, &drop("metadata"));
        }
    }
    // k8s-openapi keeps `name` of local object references required; v1.33 made it optional.
    for name in [
        "ConfigMapEnvSource",
        "ConfigMapKeySelector",
        "ConfigMapProjection",
        "ConfigMapVolumeSource",
        "LocalObjectReference",
        "SecretEnvSource",
        "SecretKeySelector",
        "SecretProjection",
    ] {
        required(&format!("io.k8s.api.core.v1.{name}"), &drop("name"));
    }
    required("io.k8s.api.events.v1.Event", &|list| {
        list.push(json!("eventTime"))
    });
    required("io.k8s.api.networking.v1.NetworkPolicySpec", &|list| {
        list.push(json!("podSelector"))
    });

    // WatchEvent: upstream describes `object` on the property, not on the type.
    let watch = defs
        .get_mut("io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent")
        .and_then(Value::as_object_mut)
        .expect("WatchEvent");
    let full = watch
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if let Some((head, object)) = full.split_once("\n\n") {
        watch.insert("description".into(), json!(head));
        watch["properties"]["object"]["description"] = json!(object.trim_end());
    }
}

/// The compact form the core decodes writes with: one line per definition, in the order
/// of definitions.json, with only what decoding needs:
///
/// ```text
/// <name> TAB <group>/<version>/<kind>,... TAB <field>=<type> <field>=<type> ...
/// ```
///
/// where a type is `s` string, `y` bytes (base64), `i` int32, `l` int64, `f` float, `b`
/// bool, `*` anything, `@N` the definition on line N (from 0), `[T` an array of T and `{T` a
/// map of T. The core checks that it equals what it derives from definitions.json.
fn structure(defs: &Map<String, Value>) -> String {
    let index: BTreeMap<&str, usize> = defs
        .keys()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    fn ty(p: &Value, index: &BTreeMap<&str, usize>) -> String {
        if let Some(r) = p.get("$ref").and_then(Value::as_str) {
            let name = r.strip_prefix("#/definitions/").expect("local ref");
            return format!("@{}", index[name]);
        }
        match (
            p.get("type").and_then(Value::as_str),
            p.get("format").and_then(Value::as_str),
        ) {
            (Some("string"), Some("byte")) => "y".into(),
            (Some("string"), _) => "s".into(),
            (Some("integer"), Some("int32")) => "i".into(),
            (Some("integer"), _) => "l".into(),
            (Some("number"), _) => "f".into(),
            (Some("boolean"), _) => "b".into(),
            (Some("array"), _) => {
                format!("[{}", p.get("items").map_or("*".into(), |i| ty(i, index)))
            }
            (Some("object"), _) => match p.get("additionalProperties") {
                Some(v) => format!("{{{}", ty(v, index)),
                None => "*".into(),
            },
            _ => "*".into(),
        }
    }
    let mut out = String::new();
    for (name, def) in defs {
        let gvks: Vec<String> = def
            .get("x-kubernetes-group-version-kind")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|g| {
                format!(
                    "{}/{}/{}",
                    g["group"].as_str().unwrap(),
                    g["version"].as_str().unwrap(),
                    g["kind"].as_str().unwrap()
                )
            })
            .collect();
        let fields: Vec<String> = def
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(f, p)| {
                assert!(!f.contains([' ', '=', '\t', '\n']), "field name {f}");
                format!("{f}={}", ty(p, &index))
            })
            .collect();
        out.push_str(&format!(
            "{name}\t{}\t{}\n",
            gvks.join(","),
            fields.join(" ")
        ));
    }
    out
}

fn property<'a>(
    defs: &'a mut Map<String, Value>,
    definition: &str,
    field: &str,
) -> &'a mut Map<String, Value> {
    defs.get_mut(definition)
        .and_then(|d| d.get_mut("properties"))
        .and_then(|p| p.get_mut(field))
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| {
            panic!("list_extensions.rs names {definition}.{field}, which has no schema")
        })
}

fn strip_extensions(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| {
                !matches!(
                    k.as_str(),
                    "x-kubernetes-list-type"
                        | "x-kubernetes-list-map-keys"
                        | "x-kubernetes-map-type"
                        | "x-kubernetes-patch-strategy"
                        | "x-kubernetes-patch-merge-key"
                )
            });
            for (k, child) in m.iter_mut() {
                match (k.as_str(), child) {
                    // The keys of `properties` are field names (JSONSchemaProps has fields
                    // called `x-kubernetes-list-type`): keep them, look inside each.
                    ("properties", Value::Object(props)) => {
                        props.values_mut().for_each(strip_extensions)
                    }
                    (_, child) => strip_extensions(child),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_extensions),
        _ => {}
    }
}

fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (k, sorted(v)))
                .collect::<BTreeMap<_, _>>()
                .into_iter()
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// Print every difference between our definitions and an upstream OpenAPI v2 document.
fn compare_with(ours: &Map<String, Value>, upstream: &std::path::Path) {
    let text = std::fs::read_to_string(upstream)
        .unwrap_or_else(|e| panic!("reading {}: {e}", upstream.display()));
    let doc: Value = serde_json::from_str(&text).expect("upstream document is JSON");
    let theirs = doc["definitions"].as_object().expect("definitions");
    let mut differences = 0;
    for (name, def) in ours {
        match theirs.get(name) {
            None => {
                println!("{name}: not in upstream");
                differences += 1;
            }
            Some(up) => diff(name, def, up, &mut differences),
        }
    }
    println!("{differences} differences over {} definitions", ours.len());
}

fn diff(path: &str, ours: &Value, theirs: &Value, n: &mut usize) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => diff(&format!("{path}.{k}"), v, w, n),
                    None => {
                        *n += 1;
                        println!("{path}.{k}: only ours: {}", short(v));
                    }
                }
            }
            for (k, w) in b {
                if !a.contains_key(k) {
                    *n += 1;
                    println!("{path}.{k}: only upstream: {}", short(w));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if path.ends_with(".required") => {
            let (mut a, mut b) = (a.clone(), b.clone());
            a.sort_by_key(|v| v.to_string());
            b.sort_by_key(|v| v.to_string());
            if a != b {
                *n += 1;
                println!(
                    "{path}: ours {} upstream {}",
                    short(&Value::Array(a)),
                    short(&Value::Array(b))
                );
            }
        }
        (a, b) if a != b => {
            *n += 1;
            println!("{path}: ours {} upstream {}", short(a), short(b));
        }
        _ => {}
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 160 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(160).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}
