//! The generated definitions against the registry and the extensions table, and the
//! decoder against kube-apiserver's decoding.

use super::decode::{check_base64, check_quantity, check_time};
use super::list_extensions::{list_extension, LIST_EXTENSIONS, MAP_TYPES};
use super::*;
use crate::registry::Registry;
use serde_json::json;

// --- definitions.json ------------------------------------------------------------

#[test]
fn definitions_cover_every_registry_kind_and_its_list() {
    let defs = definitions();
    let gvk_of = |name: &str| -> Vec<(String, String, String)> {
        defs[name]["x-kubernetes-group-version-kind"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|g| {
                        let s = |k: &str| g[k].as_str().unwrap().to_owned();
                        (s("group"), s("version"), s("kind"))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    for r in Registry::builtin().resources() {
        // A resource that is never listed (bindings) has no list kind.
        let kinds = match r.has_verb("list") {
            true => vec![r.kind.clone(), r.list_kind()],
            false => vec![r.kind.clone()],
        };
        for kind in kinds {
            let name = definition_name(&r.group, &r.version, &kind)
                .unwrap_or_else(|| panic!("no definition of {}/{} {kind}", r.group, r.version));
            assert!(gvk_of(name).contains(&(r.group.clone(), r.version.clone(), kind.clone())));
            let props = defs[name]["properties"].as_object().unwrap();
            assert!(
                props.contains_key("apiVersion")
                    && props.contains_key("kind")
                    && props.contains_key("metadata")
            );
        }
        for sub in &r.subresources {
            if sub.name == "scale" || sub.name == "eviction" {
                let (g, v) = (sub.group.clone().unwrap(), sub.version.clone().unwrap());
                assert!(definition_name(&g, &v, &sub.kind).is_some(), "{}", sub.kind);
            }
        }
    }
    for meta in [
        "DeleteOptions",
        "Status",
        "ObjectMeta",
        "ListMeta",
        "WatchEvent",
        "APIResourceList",
        "APIGroupList",
    ] {
        assert!(
            defs.contains_key(&format!("io.k8s.apimachinery.pkg.apis.meta.v1.{meta}")),
            "{meta}"
        );
    }
}

#[test]
fn every_ref_resolves_and_refs_point_at_definitions() {
    fn walk(v: &Value, defs: &Map<String, Value>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    let name = r
                        .strip_prefix("#/definitions/")
                        .unwrap_or_else(|| panic!("bad ref {r}"));
                    assert!(defs.contains_key(name), "{name}");
                }
                m.values().for_each(|c| walk(c, defs));
            }
            Value::Array(a) => a.iter().for_each(|c| walk(c, defs)),
            _ => {}
        }
    }
    let defs = definitions();
    walk(&Value::Object(defs.clone()), defs);
}

#[test]
fn definitions_carry_every_extension_of_the_table_and_no_other() {
    let defs = definitions();
    let mut seen = 0;
    for (name, def) in defs {
        for (field, prop) in def["properties"].as_object().into_iter().flatten() {
            let ext = list_extension(name, field);
            let get = |k: &str| prop.get(k).cloned();
            let want = |v: Option<&str>| v.map(|s| json!(s));
            match ext {
                Some(e) => {
                    seen += 1;
                    assert_eq!(
                        get("x-kubernetes-list-type"),
                        want(e.list_type),
                        "{name}.{field}"
                    );
                    assert_eq!(
                        get("x-kubernetes-patch-strategy"),
                        want(e.patch_strategy),
                        "{name}.{field}"
                    );
                    assert_eq!(
                        get("x-kubernetes-patch-merge-key"),
                        want(e.patch_merge_key),
                        "{name}.{field}"
                    );
                    let keys = (!e.list_map_keys.is_empty()).then(|| json!(e.list_map_keys));
                    assert_eq!(get("x-kubernetes-list-map-keys"), keys, "{name}.{field}");
                }
                None => {
                    for k in [
                        "x-kubernetes-list-type",
                        "x-kubernetes-patch-strategy",
                        "x-kubernetes-list-map-keys",
                    ] {
                        assert!(
                            get(k).is_none(),
                            "{name}.{field} has {k} but the table has no row"
                        );
                    }
                }
            }
        }
    }
    assert_eq!(seen, LIST_EXTENSIONS.len());
    for m in MAP_TYPES {
        let target = if m.field.is_empty() {
            &defs[m.definition]
        } else {
            &defs[m.definition]["properties"][m.field]
        };
        assert_eq!(
            target["x-kubernetes-map-type"], m.map_type,
            "{} {}",
            m.definition, m.field
        );
    }
}

#[test]
fn the_extensions_table_is_sorted_and_names_what_clients_merge_by() {
    assert!(LIST_EXTENSIONS
        .windows(2)
        .all(|w| (w[0].definition, w[0].field) < (w[1].definition, w[1].field)));
    let containers = list_extension("io.k8s.api.core.v1.PodSpec", "containers").unwrap();
    assert_eq!(
        (containers.list_type, containers.list_map_keys),
        (Some("map"), &["name"][..])
    );
    assert_eq!(
        (containers.patch_strategy, containers.patch_merge_key),
        (Some("merge"), Some("name"))
    );
    let ports = list_extension("io.k8s.api.core.v1.Container", "ports").unwrap();
    assert_eq!(ports.list_map_keys, &["containerPort", "protocol"]);
    assert_eq!(ports.patch_merge_key, Some("containerPort"));
    let volumes = list_extension("io.k8s.api.core.v1.PodSpec", "volumes").unwrap();
    assert_eq!(volumes.patch_strategy, Some("merge,retainKeys"));
    let finalizers = list_extension(
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "finalizers",
    )
    .unwrap();
    assert_eq!(
        (finalizers.list_type, finalizers.patch_strategy),
        (Some("set"), Some("merge"))
    );
    let owners = list_extension(
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "ownerReferences",
    )
    .unwrap();
    assert_eq!(
        (
            owners.list_type,
            owners.list_map_keys,
            owners.patch_merge_key
        ),
        (Some("map"), &["uid"][..], Some("uid"))
    );
}

#[test]
fn special_types_have_upstreams_shapes() {
    let defs = definitions();
    let ios = &defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"];
    assert_eq!(
        (&ios["type"], &ios["format"]),
        (&json!("string"), &json!("int-or-string"))
    );
    assert_eq!(
        defs["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"],
        "string"
    );
    let time = &defs["io.k8s.apimachinery.pkg.apis.meta.v1.Time"];
    assert_eq!(
        (&time["type"], &time["format"]),
        (&json!("string"), &json!("date-time"))
    );
    assert_eq!(
        defs["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    assert_eq!(
        defs["io.k8s.api.apps.v1.DeploymentSpec"]["required"],
        json!(["selector", "template"])
    );
    assert!(defs["io.k8s.api.core.v1.Pod"].get("required").is_none());
}

// --- decoding ----------------------------------------------------------------------

const DEPLOYMENT: (&str, &str, &str) = ("apps", "v1", "Deployment");
const POD: (&str, &str, &str) = ("", "v1", "Pod");

fn decode_json(
    gvk: (&str, &str, &str),
    body: Value,
    v: FieldValidation,
) -> Result<Decoded, DecodeError> {
    decode(Format::Json, body.to_string().as_bytes(), gvk, v)
}

fn warnings(gvk: (&str, &str, &str), body: &str) -> Vec<String> {
    decode(Format::Json, body.as_bytes(), gvk, FieldValidation::Warn)
        .unwrap()
        .warnings
}

fn type_error(gvk: (&str, &str, &str), body: Value) -> String {
    match decode_json(gvk, body, FieldValidation::Strict) {
        Err(DecodeError::Type(e)) => e,
        other => panic!("expected a type error, got {other:?}"),
    }
}

fn pod(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
}

#[test]
fn unknown_fields_at_every_depth_are_dropped_and_named() {
    let body = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "bogus": 1,
        "metadata": {"name": "d", "labels": {"a": "b"}, "nope": true},
        "spec": {
            "replica": 3,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"spec": {"containers": [
                {"name": "a", "image": "i"},
                {"name": "b", "image": "i", "imagee": "x", "ports": [{"containerPort": 80, "hostPortt": 1}]}
            ]}}
        }
    });
    let d = decode_json(DEPLOYMENT, body.clone(), FieldValidation::Warn).unwrap();
    // serde_json's map is sorted: this test's body is, too.
    assert_eq!(
        d.warnings,
        [
            r#"unknown field "bogus""#,
            r#"unknown field "metadata.nope""#,
            r#"unknown field "spec.replica""#,
            r#"unknown field "spec.template.spec.containers[1].imagee""#,
            r#"unknown field "spec.template.spec.containers[1].ports[0].hostPortt""#,
        ]
    );
    let obj = Value::Object(d.object);
    assert!(obj.get("bogus").is_none() && obj["metadata"].get("nope").is_none());
    assert!(obj["spec"].get("replica").is_none());
    assert_eq!(
        obj["spec"]["template"]["spec"]["containers"][1],
        json!({"name": "b", "image": "i", "ports": [{"containerPort": 80}]})
    );
    assert_eq!(
        obj["metadata"]["labels"],
        json!({"a": "b"}),
        "map keys are data, not fields"
    );

    let ignored = decode_json(DEPLOYMENT, body.clone(), FieldValidation::Ignore).unwrap();
    assert!(ignored.warnings.is_empty());
    assert_eq!(Value::Object(ignored.object), obj);

    match decode_json(DEPLOYMENT, body, FieldValidation::Strict) {
        Err(DecodeError::Strict(errors)) => assert_eq!(errors.len(), 5),
        other => panic!("{other:?}"),
    }
}

#[test]
fn document_order_and_duplicates_as_upstream_reports_them() {
    // kube-apiserver's field validation test body.
    let body = r#"{
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"app": "nginx"}},
        "spec": {
            "unknown1": "val1", "unknownDupe": "valDupe", "unknownDupe": "valDupe2",
            "paused": true, "paused": false,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {"containers": [{
                "name": "nginx", "image": "nginx:latest", "unknownNested": "val1",
                "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}
        }
    }"#;
    let expected = [
        r#"unknown field "spec.unknown1""#,
        r#"unknown field "spec.unknownDupe""#,
        r#"duplicate field "spec.paused""#,
        r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
        r#"duplicate field "spec.template.spec.containers[0].imagePullPolicy""#,
    ];
    let d = decode(
        Format::Json,
        body.as_bytes(),
        DEPLOYMENT,
        FieldValidation::Warn,
    )
    .unwrap();
    assert_eq!(d.warnings, expected);
    let spec = &d.object["spec"];
    assert_eq!(spec["paused"], false, "the last value wins");
    assert_eq!(
        spec["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "Never"
    );
    let err = decode(
        Format::Json,
        body.as_bytes(),
        DEPLOYMENT,
        FieldValidation::Strict,
    )
    .unwrap_err();
    assert_eq!(
        err.reason(),
        format!("strict decoding error: {}", expected.join(", "))
    );
}

#[test]
fn duplicate_objects_merge_as_go_decodes_them() {
    let w = warnings(
        POD,
        r#"{"metadata": {"name": "p", "labels": {"a": "1", "a": "2"}}, "metadata": {"namespace": "n"}}"#,
    );
    assert_eq!(
        w,
        [
            r#"duplicate field "metadata.labels.a""#,
            r#"duplicate field "metadata""#
        ]
    );
    let d = decode(
        Format::Json,
        br#"{"metadata": {"name": "p", "labels": {"a": "1"}}, "metadata": {"namespace": "n", "labels": {"b": "2"}}}"#,
        POD,
        FieldValidation::Ignore,
    )
    .unwrap();
    assert_eq!(
        d.object["metadata"],
        json!({"name": "p", "namespace": "n", "labels": {"a": "1", "b": "2"}})
    );
}

#[test]
fn type_errors_name_the_go_struct_field_and_type() {
    let deployment = |spec: Value| json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec});
    assert_eq!(
        type_error(DEPLOYMENT, deployment(json!({"replicas": "3"}))),
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    );
    assert_eq!(
        type_error(DEPLOYMENT, deployment(json!({"replicas": 1.5}))),
        "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"
    );
    assert_eq!(
        type_error(DEPLOYMENT, deployment(json!({"replicas": 3_000_000_000u64}))),
        "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32"
    );
    assert_eq!(
        type_error(DEPLOYMENT, deployment(json!({"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": "80"}]}]}}}))),
        "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32"
    );
    assert_eq!(
        type_error(DEPLOYMENT, deployment(json!("x"))),
        "json: cannot unmarshal string into Go struct field Deployment.spec of type v1.DeploymentSpec"
    );
    assert_eq!(
        type_error(POD, pod(json!({"containers": {"name": "a"}}))),
        "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container"
    );
    assert_eq!(
        type_error(POD, pod(json!({"containers": ["a"]}))),
        "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type v1.Container"
    );
    assert_eq!(
        type_error(
            ("", "v1", "ConfigMap"),
            json!({"metadata": {"name": "c"}, "data": {"k": 1}})
        ),
        "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
    );
    assert_eq!(
        type_error(POD, json!({"metadata": {"labels": []}})),
        "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"
    );
    assert_eq!(
        type_error(POD, pod(json!({"hostNetwork": "yes"}))),
        "json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool"
    );
    // The first one wins; strict errors are not reported with a type error.
    assert_eq!(
        type_error(
            POD,
            pod(json!({"bogus": 1, "hostNetwork": 1, "hostPID": 1}))
        ),
        "json: cannot unmarshal number into Go struct field PodSpec.spec.hostNetwork of type bool"
    );
    // null fits anything.
    assert!(decode_json(
        POD,
        pod(json!({"containers": null, "hostNetwork": null})),
        FieldValidation::Strict
    )
    .is_ok());
}

#[test]
fn int_or_string_quantity_time_and_bytes_decode_as_their_go_types() {
    let port = |v: Value| {
        pod(
            json!({"containers": [{"name": "a", "ports": [{"containerPort": 80}], "livenessProbe": {"httpGet": {"port": v}}}]}),
        )
    };
    assert!(decode_json(POD, port(json!(8080)), FieldValidation::Strict).is_ok());
    assert!(decode_json(POD, port(json!("http")), FieldValidation::Strict).is_ok());
    assert_eq!(
        type_error(POD, port(json!(true))),
        "json: cannot unmarshal bool into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port of type int32"
    );
    assert_eq!(
        type_error(POD, port(json!({"a": 1}))),
        "json: cannot unmarshal object into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port of type int32"
    );

    let limits =
        |v: Value| pod(json!({"containers": [{"name": "a", "resources": {"limits": {"cpu": v}}}]}));
    for ok in [
        json!("100m"),
        json!("1.5Gi"),
        json!(2),
        json!(0.5),
        json!("1e3"),
        json!("0"),
        json!(" 1 "),
    ] {
        assert!(
            decode_json(POD, limits(ok.clone()), FieldValidation::Strict).is_ok(),
            "{ok}"
        );
    }
    let format = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    assert_eq!(type_error(POD, limits(json!("abc"))), format);
    assert_eq!(type_error(POD, limits(json!(true))), format);
    assert_eq!(type_error(POD, limits(json!(["1"]))), format);
    assert_eq!(type_error(POD, limits(json!("1Qi"))), format);
    assert_eq!(
        type_error(POD, limits(json!("1Ki1"))),
        "unable to parse quantity's suffix"
    );

    let created = |v: Value| json!({"metadata": {"name": "p", "creationTimestamp": v}});
    assert!(decode_json(
        POD,
        created(json!("2024-02-29T10:00:00Z")),
        FieldValidation::Strict
    )
    .is_ok());
    assert!(decode_json(
        POD,
        created(json!("2024-02-29T10:00:00.5+02:00")),
        FieldValidation::Strict
    )
    .is_ok());
    assert_eq!(
        type_error(POD, created(json!(5))),
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"
    );
    assert_eq!(
        type_error(POD, created(json!("yesterday"))),
        r#"parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006""#
    );

    let secret = |v: Value| json!({"metadata": {"name": "s"}, "data": {"k": v}});
    assert!(decode_json(
        ("", "v1", "Secret"),
        secret(json!("aGVsbG8=")),
        FieldValidation::Strict
    )
    .is_ok());
    assert_eq!(
        type_error(("", "v1", "Secret"), secret(json!("hello!"))),
        "illegal base64 data at input byte 5"
    );
}

#[test]
fn preserved_fields_keep_anything() {
    let revision =
        json!({"metadata": {"name": "r"}, "revision": 1, "data": {"anything": {"goes": [1, "x"]}}});
    let d = decode_json(
        ("apps", "v1", "ControllerRevision"),
        revision.clone(),
        FieldValidation::Strict,
    )
    .unwrap();
    assert_eq!(d.object["data"], revision["data"]);
    let managed = json!({"metadata": {"name": "p", "managedFields": [{"manager": "m", "fieldsV1": {"f:metadata": {".": {}}}}]}});
    let d = decode_json(POD, managed.clone(), FieldValidation::Strict).unwrap();
    assert_eq!(d.object["metadata"], managed["metadata"]);
    // A CRD's schema is data: JSONSchemaProps fields are checked, their `properties` are a map.
    let crd = json!({"metadata": {"name": "a.b.c"}, "spec": {"group": "b.c", "names": {"kind": "A", "plural": "a"}, "scope": "Namespaced",
        "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object",
            "x-kubernetes-preserve-unknown-fields": true, "properties": {"spec": {"type": "object", "bogus": 1}}}}}]}});
    let w = decode(
        Format::Json,
        crd.to_string().as_bytes(),
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        FieldValidation::Warn,
    )
    .unwrap();
    assert_eq!(
        w.warnings,
        [r#"unknown field "spec.versions[0].schema.openAPIV3Schema.properties.spec.bogus""#]
    );
}

#[test]
fn syntax_errors_and_non_objects_are_not_type_errors() {
    assert!(matches!(
        decode(Format::Json, b"{\"a\": ", POD, FieldValidation::Warn),
        Err(DecodeError::Syntax(_))
    ));
    assert_eq!(
        decode(Format::Json, b" [1]", POD, FieldValidation::Warn).unwrap_err(),
        DecodeError::NotAnObject
    );
    assert!(matches!(
        decode(Format::Json, b"[1", POD, FieldValidation::Warn),
        Err(DecodeError::Syntax(_))
    ));
    assert!(matches!(
        decode(Format::Yaml, b"a: [", POD, FieldValidation::Warn),
        Err(DecodeError::Syntax(_))
    ));
    assert_eq!(
        decode(Format::Yaml, b"- 1\n", POD, FieldValidation::Warn).unwrap_err(),
        DecodeError::NotAnObject
    );
    // A kind without a schema decodes as it is.
    let d = decode(
        Format::Json,
        br#"{"x": 1}"#,
        ("example.com", "v1", "Widget"),
        FieldValidation::Strict,
    )
    .unwrap();
    assert_eq!(d.object["x"], 1);
}

#[test]
fn yaml_bodies_report_duplicate_lines_then_unknown_fields_in_key_order() {
    // kube-apiserver's field validation test body.
    let body = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  labels:
    app: nginx
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  paused: true
  paused: false
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never";
    let d = decode(
        Format::Yaml,
        body.as_bytes(),
        DEPLOYMENT,
        FieldValidation::Warn,
    )
    .unwrap();
    assert_eq!(
        d.warnings,
        [
            r#"line 10: key "unknownDupe" already set in map"#,
            r#"line 12: key "paused" already set in map"#,
            r#"line 26: key "imagePullPolicy" already set in map"#,
            r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
            r#"unknown field "spec.unknown1""#,
            r#"unknown field "spec.unknownDupe""#,
        ]
    );
    assert_eq!(d.object["spec"]["paused"], false);
    let err = decode(
        Format::Yaml,
        body.as_bytes(),
        DEPLOYMENT,
        FieldValidation::Strict,
    )
    .unwrap_err();
    assert_eq!(
        err.reason(),
        "strict decoding error: yaml: unmarshal errors:\n  line 10: key \"unknownDupe\" already set in map\n  line 12: key \"paused\" already set in map\n  line 26: key \"imagePullPolicy\" already set in map, unknown field \"spec.template.spec.containers[0].unknownNested\", unknown field \"spec.unknown1\", unknown field \"spec.unknownDupe\""
    );
    assert!(decode(
        Format::Yaml,
        body.as_bytes(),
        DEPLOYMENT,
        FieldValidation::Ignore
    )
    .unwrap()
    .warnings
    .is_empty());
}

#[test]
fn yaml_scanner_follows_lists_and_block_scalars() {
    let text =
        "a: 1\nb:\n  - x: 1\n    y: 2\n  - x: 3\n    x: 4\nc: |\n  a: 1\n  a: 2\nd: 1\n\"a\": 2\n";
    assert_eq!(
        yaml::duplicate_keys(text),
        [(6, "x".to_owned()), (11, "a".to_owned())]
    );
}

#[test]
fn field_validation_values() {
    assert_eq!(
        FieldValidation::from_query(None).unwrap(),
        FieldValidation::Warn
    );
    assert_eq!(
        FieldValidation::from_query(Some("")).unwrap(),
        FieldValidation::Warn
    );
    assert_eq!(
        FieldValidation::from_query(Some("Strict")).unwrap(),
        FieldValidation::Strict
    );
    assert_eq!(
        FieldValidation::from_query(Some("Ignore")).unwrap(),
        FieldValidation::Ignore
    );
    let e = FieldValidation::from_query(Some("strict")).unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn""#
    );
}

#[test]
fn warning_headers_escape_dedupe_and_truncate() {
    let texts = vec![
        r#"unknown field "a\b""#.to_owned(),
        r#"unknown field "a\b""#.to_owned(),
        "bad\ncontrol".to_owned(),
    ];
    assert_eq!(
        warning_headers(&texts),
        [r#"299 - "unknown field \"a\\b\"""#]
    );
    let long: Vec<String> = (0..20).map(|i| format!("{i}{}", "x".repeat(300))).collect();
    let headers = warning_headers(&long);
    assert!(
        headers.len() < 20 && headers.iter().all(|h| h.len() <= 256 + 9),
        "{}",
        headers.len()
    );
}

#[test]
fn quantities_times_and_base64_as_go_parses_them() {
    for ok in [
        "1",
        "-1",
        "+1",
        "0",
        "00",
        "0.5",
        ".5",
        "1.",
        "1Ki",
        "1e3",
        "1E-3",
        "500m",
        "1.5Gi",
        "-",
        "12345678901234567890",
    ] {
        assert_eq!(check_quantity(ok), Ok(()), "{ok}");
    }
    for (bad, why) in [
        ("", "regular"),
        ("x", "regular"),
        ("1 Ki", "regular"),
        ("1Kb", "regular"),
        ("1e", "suffix"),
        ("1KiB", "regular"),
        (".", "numeric"),
        ("0.", "numeric"),
        ("Ki", "numeric"),
        ("1mm", "suffix"),
    ] {
        assert!(check_quantity(bad).unwrap_err().contains(why), "{bad}");
    }
    assert_eq!(check_time("2024-01-01T00:00:00Z", false), Ok(()));
    assert_eq!(
        check_time("2024-01-01T00:00:00Z", true).unwrap_err(),
        r#"parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000""#
    );
    assert_eq!(check_time("2024-01-01T00:00:00.123456Z", true), Ok(()));
    assert_eq!(
        check_time("2024-13-01T00:00:00Z", false).unwrap_err(),
        r#"parsing time "2024-13-01T00:00:00Z": month out of range"#
    );
    assert_eq!(
        check_time("2023-02-29T00:00:00Z", false).unwrap_err(),
        r#"parsing time "2023-02-29T00:00:00Z": day out of range"#
    );
    assert_eq!(
        check_time("2024-01-01 00:00:00Z", false).unwrap_err(),
        r#"parsing time "2024-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T""#
    );
    assert_eq!(
        check_time("2024-01-01T00:00:00Zjunk", false).unwrap_err(),
        r#"parsing time "2024-01-01T00:00:00Zjunk": extra text: "junk""#
    );
    assert_eq!(check_base64("aGVsbG8="), Ok(()));
    assert_eq!(check_base64("aGVs\nbG8="), Ok(()));
    assert_eq!(check_base64("aGVsbG8"), Err(4));
    assert_eq!(check_base64("aGV*bG8="), Err(3));
    assert_eq!(check_base64("aG=="), Ok(()));
    assert_eq!(check_base64("a==="), Err(1));
}

#[test]
fn structure_txt_is_what_definitions_json_gives() {
    let from_definitions = structure::Schemas::build(DEFINITIONS_JSON).unwrap();
    assert_eq!(from_definitions.types.len(), definitions().len());
    assert!(
        from_definitions == *structure::Schemas::get(),
        "regenerate with tools/openapi-gen"
    );
}
