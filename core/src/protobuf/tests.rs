use serde_json::json;

use super::json::go_duration;
use crate::go_types::schema::{Shape, Ty, MAP, REP};
use crate::go_types::table::{KINDS, MESSAGES};
use super::*;

/// A protobuf writer for building bodies by hand, writing what gogo writes.
#[derive(Default, Clone)]
struct Enc(Vec<u8>);

impl Enc {
    fn new() -> Enc {
        Enc::default()
    }
    fn raw_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn tag(&mut self, num: u32, wire: u8) {
        self.raw_varint(u64::from(num) << 3 | u64::from(wire));
    }
    fn varint(mut self, num: u32, v: u64) -> Enc {
        self.tag(num, 0);
        self.raw_varint(v);
        self
    }
    fn int(self, num: u32, v: i64) -> Enc {
        self.varint(num, v as u64)
    }
    fn bool(self, num: u32, v: bool) -> Enc {
        self.varint(num, u64::from(v))
    }
    fn double(mut self, num: u32, v: f64) -> Enc {
        self.tag(num, 1);
        self.0.extend_from_slice(&v.to_bits().to_le_bytes());
        self
    }
    fn bytes(mut self, num: u32, b: &[u8]) -> Enc {
        self.tag(num, 2);
        self.raw_varint(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    fn str(self, num: u32, s: &str) -> Enc {
        self.bytes(num, s.as_bytes())
    }
    fn msg(self, num: u32, m: Enc) -> Enc {
        self.bytes(num, &m.0)
    }
    /// A `map<string, string>` entry.
    fn entry(self, num: u32, k: &str, v: &str) -> Enc {
        self.msg(num, Enc::new().str(1, k).str(2, v))
    }
    fn entry_bytes(self, num: u32, k: &str, v: &[u8]) -> Enc {
        self.msg(num, Enc::new().str(1, k).bytes(2, v))
    }
    fn entry_msg(self, num: u32, k: &str, v: Enc) -> Enc {
        self.msg(num, Enc::new().str(1, k).msg(2, v))
    }
}

fn body(api_version: &str, kind: &str, raw: Enc) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    let unknown = Enc::new()
        .msg(1, Enc::new().str(1, api_version).str(2, kind))
        .msg(2, raw)
        .str(3, "")
        .str(4, "");
    out.extend_from_slice(&unknown.0);
    out
}

/// `ObjectMeta` as gogo writes it: every non-pointer string, the generation and an empty
/// creationTimestamp, set or not.
fn object_meta(name: &str, namespace: &str) -> Enc {
    Enc::new()
        .str(1, name)
        .str(2, "")
        .str(3, namespace)
        .str(4, "")
        .str(5, "")
        .str(6, "")
        .int(7, 0)
        .msg(8, Enc::new())
}

fn quantity(s: &str) -> Enc {
    Enc::new().str(1, s)
}

fn int_or_string_int(v: i32) -> Enc {
    Enc::new().int(1, 0).int(2, i64::from(v)).str(3, "")
}

fn int_or_string_str(s: &str) -> Enc {
    Enc::new().int(1, 1).int(2, 0).str(3, s)
}

#[test]
fn namespace_as_kubectl_sends_it() {
    // Namespace {metadata = 1, spec = 2 {finalizers}, status = 3 {phase = 1}}
    let raw = Enc::new()
        .msg(1, object_meta("team-a", ""))
        .msg(2, Enc::new())
        .msg(3, Enc::new().str(1, ""));
    let got = decode(&body("v1", "Namespace", raw)).unwrap();
    assert_eq!(
        got,
        json!({
            "kind": "Namespace",
            "apiVersion": "v1",
            "metadata": {"name": "team-a", "creationTimestamp": null},
            "spec": {},
            "status": {}
        })
    );
}

#[test]
fn configmap_with_data_and_binary_data() {
    let raw = Enc::new()
        .msg(1, object_meta("settings", "default"))
        .entry(2, "k", "v")
        .entry(2, "empty", "")
        .entry_bytes(3, "bin", &[0, 1, 2, 0xff])
        .bool(4, true);
    let got = decode(&body("v1", "ConfigMap", raw)).unwrap();
    assert_eq!(
        got,
        json!({
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {"name": "settings", "namespace": "default", "creationTimestamp": null},
            "immutable": true,
            "data": {"k": "v", "empty": ""},
            "binaryData": {"bin": "AAEC/w=="}
        })
    );
}

#[test]
fn secret_data_is_base64_and_type_is_kept() {
    let raw = Enc::new()
        .msg(1, object_meta("creds", "default"))
        .entry_bytes(2, "password", b"hunter2")
        .entry_bytes(2, "empty", b"")
        .str(3, "Opaque");
    let got = decode(&body("v1", "Secret", raw)).unwrap();
    assert_eq!(
        got,
        json!({
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {"name": "creds", "namespace": "default", "creationTimestamp": null},
            "data": {"password": "aHVudGVyMg==", "empty": ""},
            "type": "Opaque"
        })
    );
}

fn deployment(replicas: i64) -> Vec<u8> {
    let container = Enc::new()
        .str(1, "web")
        .str(2, "nginx:1.27")
        .str(5, "")
        .msg(
            6,
            Enc::new()
                .str(1, "http")
                .int(2, 0)
                .int(3, 80)
                .str(4, "TCP")
                .str(5, ""),
        )
        .msg(7, Enc::new().str(1, "MODE").str(2, "prod"))
        .msg(
            8,
            Enc::new()
                .entry_msg(1, "memory", quantity("128Mi"))
                .entry_msg(2, "cpu", quantity("250m"))
                .entry_msg(2, "memory", quantity("64Mi")),
        )
        .str(13, "/dev/termination-log")
        .str(14, "IfNotPresent")
        .bool(16, false)
        .bool(17, false)
        .bool(18, false)
        .str(20, "File");
    let pod_spec = Enc::new()
        .msg(2, container)
        .str(3, "Always")
        .int(4, 30)
        .str(6, "ClusterFirst")
        .str(8, "")
        .str(9, "")
        .str(10, "")
        .bool(11, false)
        .bool(12, false)
        .bool(13, false)
        .str(16, "")
        .str(17, "")
        .str(19, "default-scheduler");
    let labels = |e: Enc| e.entry(11, "app", "web");
    let template = Enc::new()
        .msg(1, labels(object_meta("", "")))
        .msg(2, pod_spec);
    let strategy = Enc::new().str(1, "RollingUpdate").msg(
        2,
        Enc::new()
            .msg(1, int_or_string_int(1))
            .msg(2, int_or_string_str("25%")),
    );
    let spec = Enc::new()
        .int(1, replicas)
        .msg(2, Enc::new().entry(1, "app", "web"))
        .msg(3, template)
        .msg(4, strategy)
        .int(5, 0)
        .int(6, 10)
        .bool(7, false)
        .int(9, 600);
    let status = Enc::new()
        .int(1, 0)
        .int(2, 0)
        .int(3, 0)
        .int(4, 0)
        .int(5, 0)
        .int(7, 0);
    body(
        "apps/v1",
        "Deployment",
        Enc::new()
            .msg(1, object_meta("web", "prod"))
            .msg(2, spec)
            .msg(3, status),
    )
}

#[test]
fn deployment_with_template_resources_and_strategy() {
    let got = decode(&deployment(3)).unwrap();
    assert_eq!(
        got,
        json!({
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "metadata": {"name": "web", "namespace": "prod", "creationTimestamp": null},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}, "creationTimestamp": null},
                    "spec": {
                        "containers": [{
                            "name": "web",
                            "image": "nginx:1.27",
                            "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
                            "env": [{"name": "MODE", "value": "prod"}],
                            "resources": {
                                "limits": {"memory": "128Mi"},
                                "requests": {"cpu": "250m", "memory": "64Mi"}
                            },
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File",
                            "imagePullPolicy": "IfNotPresent"
                        }],
                        "restartPolicy": "Always",
                        "terminationGracePeriodSeconds": 30,
                        "dnsPolicy": "ClusterFirst",
                        "schedulerName": "default-scheduler"
                    }
                },
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}
                },
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600
            },
            "status": {}
        })
    );
}

#[test]
fn a_pointer_zero_survives() {
    let got = decode(&deployment(0)).unwrap();
    assert_eq!(got["spec"]["replicas"], json!(0));
}

#[test]
fn service_ports_target_port() {
    let port = |name: &str, port: i64, target: Enc| {
        Enc::new()
            .str(1, name)
            .str(2, "TCP")
            .int(3, port)
            .msg(4, target)
            .int(5, 0)
    };
    let spec = Enc::new()
        .msg(1, port("http", 80, int_or_string_str("web")))
        .msg(1, port("metrics", 9090, int_or_string_int(9091)))
        .entry(2, "app", "web")
        .str(3, "")
        .str(4, "ClusterIP")
        .str(7, "")
        .str(8, "")
        .str(10, "")
        .str(11, "")
        .int(12, 0)
        .bool(13, false);
    let raw = Enc::new()
        .msg(1, object_meta("web", "prod"))
        .msg(2, spec)
        .msg(3, Enc::new().msg(1, Enc::new()));
    let got = decode(&body("v1", "Service", raw)).unwrap();
    assert_eq!(
        got,
        json!({
            "kind": "Service",
            "apiVersion": "v1",
            "metadata": {"name": "web", "namespace": "prod", "creationTimestamp": null},
            "spec": {
                "ports": [
                    {"name": "http", "protocol": "TCP", "port": 80, "targetPort": "web"},
                    {"name": "metrics", "protocol": "TCP", "port": 9090, "targetPort": 9091}
                ],
                "selector": {"app": "web"},
                "type": "ClusterIP"
            },
            "status": {"loadBalancer": {}}
        })
    );
}

#[test]
fn delete_options_in_any_group_version() {
    let raw = Enc::new()
        .int(1, 0)
        .msg(2, Enc::new().str(1, "uid-1").str(2, ""))
        .str(4, "Foreground")
        .str(5, "All");
    for api_version in ["v1", "meta.k8s.io/v1", "apps/v1"] {
        let got = decode(&body(api_version, "DeleteOptions", raw.clone())).unwrap();
        assert_eq!(
            got,
            json!({
                "kind": "DeleteOptions",
                "apiVersion": api_version,
                "gracePeriodSeconds": 0,
                "preconditions": {"uid": "uid-1", "resourceVersion": ""},
                "propagationPolicy": "Foreground",
                "dryRun": ["All"]
            })
        );
    }
}

#[test]
fn eviction_scale_and_token_request() {
    let eviction = Enc::new()
        .msg(1, object_meta("web-0", "prod"))
        .msg(2, Enc::new().int(1, 30));
    let got = decode(&body("policy/v1", "Eviction", eviction)).unwrap();
    assert_eq!(got["deleteOptions"], json!({"gracePeriodSeconds": 30}));

    // Scale {metadata, spec {replicas = 1}, status {replicas = 1, selector = 2}}
    let scale = Enc::new()
        .msg(1, object_meta("web", "prod"))
        .msg(2, Enc::new().int(1, 0))
        .msg(3, Enc::new().int(1, 0).str(2, ""));
    let got = decode(&body("autoscaling/v1", "Scale", scale)).unwrap();
    assert_eq!(got["spec"], json!({}));
    assert_eq!(got["status"], json!({"replicas": 0}));

    // TokenRequest {spec {audiences = 1, expirationSeconds = 4}, status {token, expirationTimestamp}}
    let token = Enc::new()
        .msg(1, object_meta("", ""))
        .msg(2, Enc::new().str(1, "api").int(4, 3600))
        .msg(3, Enc::new().str(1, "").msg(2, Enc::new()));
    let got = decode(&body("authentication.k8s.io/v1", "TokenRequest", token)).unwrap();
    assert_eq!(
        got["spec"],
        json!({"audiences": ["api"], "expirationSeconds": 3600, "boundObjectRef": null})
    );
    assert_eq!(
        got["status"],
        json!({"token": "", "expirationTimestamp": null})
    );
}

#[test]
fn times_and_micro_times() {
    // metadata.creationTimestamp = 2024-01-02T03:04:05Z (nanos dropped), deletionTimestamp
    // at the epoch; Event.eventTime is a MicroTime.
    let meta = object_meta("e", "default")
        .msg(8, Enc::new().int(1, 1_704_164_645).int(2, 999_999_999))
        .msg(9, Enc::new().int(1, 0));
    let raw = Enc::new()
        .msg(1, meta)
        .msg(2, Enc::new().int(1, 1_704_164_645).int(2, 123_456_789))
        .msg(13, Enc::new().int(1, -62_135_596_800));
    let got = decode(&body("events.k8s.io/v1", "Event", raw)).unwrap();
    assert_eq!(
        got["metadata"]["creationTimestamp"],
        json!("2024-01-02T03:04:05Z")
    );
    assert_eq!(
        got["metadata"]["deletionTimestamp"],
        json!("1970-01-01T00:00:00Z")
    );
    assert_eq!(got["eventTime"], json!("2024-01-02T03:04:05.123456Z"));
    // Go's zero time is null; so is an empty one.
    assert_eq!(got["deprecatedFirstTimestamp"], json!(null));
    assert_eq!(got["deprecatedLastTimestamp"], json!(null));

    let far = Enc::new()
        .msg(1, object_meta("e", "default"))
        .msg(2, Enc::new().int(1, 400_000_000_000));
    let err = decode(&body("events.k8s.io/v1", "Event", far)).unwrap_err();
    assert!(err.to_string().contains("out of range"), "{err}");
}

#[test]
fn durations_as_go_writes_them() {
    for (nanos, want) in [
        (0, "0s"),
        (1, "1ns"),
        (1_500, "1.5µs"),
        (1_500_000, "1.5ms"),
        (1_500_000_000, "1.5s"),
        (30_000_000_000, "30s"),
        (3_600_000_000_000, "1h0m0s"),
        (5_430_100_000_000, "1h30m30.1s"),
        (-90_000_000_000, "-1m30s"),
        (i64::MIN, "-2562047h47m16.854775808s"),
    ] {
        assert_eq!(go_duration(nanos), want, "{nanos}");
    }
}

#[test]
fn lease_micro_times_and_pointers() {
    let spec = Enc::new()
        .str(1, "node-a")
        .int(2, 40)
        .msg(3, Enc::new().int(1, 86_400).int(2, 5_000))
        .int(5, 0);
    let raw = Enc::new()
        .msg(1, object_meta("l", "kube-system"))
        .msg(2, spec);
    let got = decode(&body("coordination.k8s.io/v1", "Lease", raw)).unwrap();
    assert_eq!(
        got["spec"],
        json!({
            "holderIdentity": "node-a",
            "leaseDurationSeconds": 40,
            "acquireTime": "1970-01-02T00:00:00.000005Z",
            "leaseTransitions": 0
        })
    );
}

#[test]
fn inline_structs_are_flattened() {
    // Pod with a configMap volume (Volume embeds VolumeSource; ConfigMapVolumeSource embeds
    // LocalObjectReference) and a probe (Probe embeds ProbeHandler).
    let volume = Enc::new().str(1, "cfg").msg(
        2,
        Enc::new().msg(
            19,
            Enc::new()
                .msg(1, Enc::new().str(1, "settings"))
                .int(3, 0o644),
        ),
    );
    let probe = Enc::new()
        .msg(
            1,
            Enc::new().msg(
                2,
                Enc::new()
                    .str(1, "/healthz")
                    .msg(2, int_or_string_int(8080)),
            ),
        )
        .int(2, 5);
    let container = Enc::new().str(1, "c").msg(10, probe);
    let raw = Enc::new()
        .msg(1, object_meta("p", "default"))
        .msg(2, Enc::new().msg(1, volume).msg(2, container));
    let got = decode(&body("v1", "Pod", raw)).unwrap();
    assert_eq!(
        got["spec"]["volumes"],
        json!([{"name": "cfg", "configMap": {"name": "settings", "defaultMode": 420}}])
    );
    assert_eq!(
        got["spec"]["containers"][0]["livenessProbe"],
        json!({"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 5})
    );
    assert_eq!(got["spec"]["containers"][0]["resources"], json!({}));
    // The pod never set a status: a struct value is still written.
    assert_eq!(got["status"], json!({}));
}

#[test]
fn absent_fields_follow_go() {
    // An empty ClusterRole: rules is a non-omitempty slice (nil → null); an empty ObjectMeta
    // still writes creationTimestamp: null.
    let got = decode(&body(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        Enc::new(),
    ))
    .unwrap();
    assert_eq!(
        got,
        json!({
            "kind": "ClusterRole",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "rules": null
        })
    );
    // A ServicePort without any field: port (no omitempty) is 0, targetPort a zero IntOrString.
    let raw = Enc::new().msg(2, Enc::new().msg(1, Enc::new()));
    let got = decode(&body("v1", "Service", raw)).unwrap();
    assert_eq!(got["spec"]["ports"], json!([{"port": 0, "targetPort": 0}]));
}

#[test]
fn crd_with_json_schema_props() {
    let string_prop = Enc::new()
        .str(5, "string")
        .msg(8, Enc::new().bytes(1, b"\"x\""));
    let int_or_string = Enc::new().bool(40, true).bool(38, true);
    let items = Enc::new().msg(
        1,
        Enc::new().str(5, "integer").double(9, 10.0).double(11, 0.5),
    );
    let schema = Enc::new()
        .str(5, "object")
        .entry_msg(29, "name", string_prop)
        .entry_msg(29, "port", int_or_string)
        .entry_msg(29, "list", Enc::new().str(5, "array").msg(24, items))
        .msg(30, Enc::new().bool(1, false))
        .msg(
            33,
            Enc::new().bool(1, true).msg(2, Enc::new().str(5, "string")),
        )
        .msg(20, Enc::new().bytes(1, b"{\"a\": [1, 2]}"))
        .msg(20, Enc::new().bytes(1, b"3"))
        .entry_msg(32, "name", Enc::new().str(2, "port"))
        .msg(36, Enc::new())
        .str(42, "atomic");
    let version = Enc::new()
        .str(1, "v1")
        .bool(2, true)
        .bool(3, true)
        .bool(7, false)
        .msg(4, Enc::new().msg(1, schema));
    let names = Enc::new()
        .str(1, "widgets")
        .str(2, "widget")
        .str(4, "Widget")
        .str(5, "WidgetList");
    let spec = Enc::new()
        .str(1, "example.com")
        .msg(3, names)
        .str(4, "Namespaced")
        .msg(7, version)
        .bool(10, false);
    let raw = Enc::new()
        .msg(1, object_meta("widgets.example.com", ""))
        .msg(2, spec);
    let got = decode(&body(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        raw,
    ))
    .unwrap();
    assert_eq!(
        got["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "x"},
                "port": {"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true},
                "list": {"type": "array", "items": {"type": "integer", "maximum": 10, "minimum": 0.5}}
            },
            "additionalProperties": false,
            "additionalItems": {"type": "string"},
            "enum": [{"a": [1, 2]}, 3],
            "dependencies": {"name": ["port"]},
            "example": null,
            "x-kubernetes-list-type": "atomic"
        })
    );
    assert_eq!(
        got["spec"]["names"],
        json!({"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"})
    );
    assert_eq!(
        got["status"],
        json!({"conditions": null, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": null})
    );
}

#[test]
fn raw_extension_holds_json_or_a_nested_object() {
    let raw = Enc::new()
        .msg(1, object_meta("r1", "default"))
        .msg(2, Enc::new().bytes(1, br#"{"spec":{"replicas":2}}"#))
        .int(3, 1);
    let got = decode(&body("apps/v1", "ControllerRevision", raw)).unwrap();
    assert_eq!(got["data"], json!({"spec": {"replicas": 2}}));
    assert_eq!(got["revision"], json!(1));

    let nested = body("v1", "ConfigMap", Enc::new().entry(2, "a", "b"));
    let raw = Enc::new().msg(2, Enc::new().bytes(1, &nested)).int(3, 2);
    let got = decode(&body("apps/v1", "ControllerRevision", raw)).unwrap();
    assert_eq!(got["data"]["kind"], json!("ConfigMap"));
    assert_eq!(got["data"]["data"], json!({"a": "b"}));

    let bad = Enc::new()
        .msg(2, Enc::new().bytes(1, b"{not json"))
        .int(3, 2);
    let err = decode(&body("apps/v1", "ControllerRevision", bad)).unwrap_err();
    assert!(err.to_string().starts_with("protobuf: "), "{err}");
}

#[test]
fn managed_fields_keep_fields_v1() {
    let entry = Enc::new()
        .str(1, "kubectl")
        .str(2, "Update")
        .str(3, "v1")
        .msg(4, Enc::new().int(1, 1_704_164_645))
        .str(6, "FieldsV1")
        .msg(7, Enc::new().bytes(1, br#"{"f:data":{".":{}}}"#));
    let meta = object_meta("m", "default").msg(17, entry);
    let got = decode(&body("v1", "ConfigMap", Enc::new().msg(1, meta))).unwrap();
    assert_eq!(
        got["metadata"]["managedFields"],
        json!([{
            "manager": "kubectl",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2024-01-02T03:04:05Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}}}
        }])
    );
}

#[test]
fn packed_and_unpacked_repeated_scalars() {
    // PodSecurityContext.supplementalGroups (repeated int64 = 4), packed and unpacked.
    let packed = {
        let mut inner = Enc::new();
        for v in [1000u64, 2000, 3000] {
            inner.raw_varint(v);
        }
        Enc::new().bytes(4, &inner.0).varint(4, 4000)
    };
    let raw = Enc::new().msg(2, Enc::new().msg(14, packed));
    let got = decode(&body("v1", "Pod", raw)).unwrap();
    assert_eq!(
        got["spec"]["securityContext"]["supplementalGroups"],
        json!([1000, 2000, 3000, 4000])
    );
}

#[test]
fn repeated_fields_merge_and_last_scalar_wins() {
    // Two occurrences of metadata merge; the later name wins; labels accumulate.
    let raw = Enc::new()
        .msg(1, Enc::new().str(1, "first").entry(11, "a", "1"))
        .msg(1, Enc::new().str(1, "second").entry(11, "b", "2"));
    let got = decode(&body("v1", "ConfigMap", raw)).unwrap();
    assert_eq!(
        got["metadata"],
        json!({"name": "second", "labels": {"a": "1", "b": "2"}, "creationTimestamp": null})
    );
}

#[test]
fn unknown_fields_are_skipped() {
    let mut raw = Enc::new()
        .msg(1, object_meta("x", ""))
        .varint(99, 7)
        .double(98, 1.0)
        .str(97, "future");
    raw.tag(96, 5);
    raw.0.extend_from_slice(&[0, 0, 0, 0]);
    let got = decode(&body("v1", "Namespace", raw)).unwrap();
    assert_eq!(got["metadata"]["name"], json!("x"));
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    let raw = Enc::new().msg(1, Enc::new().bytes(1, b"a\xffb"));
    let got = decode(&body("v1", "Namespace", raw)).unwrap();
    assert_eq!(got["metadata"]["name"], json!("a\u{fffd}b"));
}

#[test]
fn errors() {
    let ns = body("v1", "Namespace", Enc::new().msg(1, object_meta("x", "")));
    assert_eq!(decode(b""), Err(DecodeError::Empty));
    assert_eq!(decode(b"k8s\x00"), Err(DecodeError::Empty));
    assert_eq!(
        decode(b"{\"kind\":\"Namespace\"}"),
        Err(DecodeError::NotProtobuf)
    );
    assert_eq!(decode(b"k8s\x01\x0a\x00"), Err(DecodeError::NotProtobuf));

    // Every prefix of a valid body is truncated (or, cut at a field boundary, valid).
    for cut in MAGIC.len() + 1..ns.len() {
        match decode(&ns[..cut]) {
            Ok(_)
            | Err(
                DecodeError::Truncated | DecodeError::MissingKind | DecodeError::MissingVersion,
            ) => {}
            Err(e) => panic!("cut at {cut}: {e}"),
        }
    }
    assert_eq!(decode(&ns[..ns.len() - 3]), Err(DecodeError::Truncated));

    // A varint cut short, and one too long.
    assert_eq!(decode(b"k8s\x00\x0a\x80"), Err(DecodeError::Truncated));
    let mut long = b"k8s\x00\x28".to_vec();
    long.extend_from_slice(&[0xff; 11]);
    assert_eq!(decode(&long), Err(DecodeError::VarintOverflow));

    // A length past the end, and a huge declared length that must not be allocated.
    assert_eq!(decode(b"k8s\x00\x12\x05abc"), Err(DecodeError::Truncated));
    assert_eq!(
        decode(b"k8s\x00\x12\xff\xff\xff\xff\xff\xff\xff\xff\x7f"),
        Err(DecodeError::Truncated)
    );

    // Field number zero; groups.
    assert_eq!(decode(b"k8s\x00\x02\x00"), Err(DecodeError::InvalidTag));
    assert_eq!(
        decode(b"k8s\x00\x2b"),
        Err(DecodeError::UnsupportedWireType(3))
    );

    // Envelope without kind or version; unknown kinds; content encodings.
    let unknown = |av: &str, kind: &str| {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&Enc::new().msg(1, Enc::new().str(1, av).str(2, kind)).0);
        b
    };
    assert_eq!(decode(&unknown("v1", "")), Err(DecodeError::MissingKind));
    assert_eq!(
        decode(&unknown("", "Pod")),
        Err(DecodeError::MissingVersion)
    );
    let err = decode(&unknown("apps/v1", "Foo")).unwrap_err();
    assert_eq!(err.to_string(), "protobuf: unknown type apps/v1, Kind=Foo");
    assert!(decode(&unknown("apps/v2", "Deployment")).is_err());
    assert!(decode(&unknown("v1", "Deployment")).is_err());
    let mut gz = unknown("v1", "Namespace");
    gz.extend_from_slice(&Enc::new().str(3, "gzip").0);
    assert_eq!(
        decode(&gz).unwrap_err().to_string(),
        "protobuf: unsupported content encoding \"gzip\""
    );

    // A string field sent as a varint.
    let wrong = body(
        "v1",
        "Namespace",
        Enc::new().msg(1, Enc::new().varint(1, 5)),
    );
    assert_eq!(
        decode(&wrong).unwrap_err().to_string(),
        "protobuf: wrong wire type 0 for field \"name\" of meta.v1.ObjectMeta"
    );

    // An IntOrString of an unknown type; a NaN.
    let bad = Enc::new().msg(
        2,
        Enc::new().msg(1, Enc::new().int(3, 1).msg(4, Enc::new().int(1, 2))),
    );
    assert!(decode(&body("v1", "Service", bad)).is_err());
    let nan = Enc::new().msg(
        2,
        Enc::new().msg(
            7,
            Enc::new().msg(4, Enc::new().msg(1, Enc::new().double(9, f64::NAN))),
        ),
    );
    let err = decode(&body(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        nan,
    ))
    .unwrap_err();
    assert!(err.to_string().contains("unsupported value NaN"), "{err}");
}

#[test]
fn nesting_too_deep() {
    // JSONSchemaProps.not (28) nested past the limit.
    let mut schema = Enc::new().str(5, "string");
    for _ in 0..MAX_DEPTH {
        schema = Enc::new().msg(28, schema);
    }
    let crd = |schema: Enc| {
        let version = Enc::new().str(1, "v1").msg(4, Enc::new().msg(1, schema));
        body(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            Enc::new().msg(2, Enc::new().msg(7, version)),
        )
    };
    assert_eq!(decode(&crd(schema)), Err(DecodeError::TooDeep));

    // Sixty levels of properties fit.
    let mut schema = Enc::new().str(5, "string");
    for _ in 0..60 {
        schema = Enc::new().str(5, "object").entry_msg(29, "p", schema);
    }
    let got = decode(&crd(schema)).unwrap();
    let mut v = &got["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    for _ in 0..60 {
        v = &v["properties"]["p"];
    }
    assert_eq!(v, &json!({"type": "string"}));
}

#[test]
fn the_deepest_body_fits_a_small_stack() {
    // The deepest body must decode (and its JSON drop) well within a 2 MiB thread stack
    // (the default for spawned threads): it takes under 512 KiB in a debug build (about
    // 3 KiB per level) and under 256 KiB optimised; 1 MiB leaves room.
    // The innermost schema's default is JSON nested as deep as serde_json allows.
    let deep_json = format!("{}{}", "[".repeat(120), "]".repeat(120));
    let mut schema = Enc::new()
        .str(5, "array")
        .msg(8, Enc::new().bytes(1, deep_json.as_bytes()));
    for _ in 0..MAX_DEPTH - 6 {
        schema = Enc::new().msg(28, schema);
    }
    let version = Enc::new().str(1, "v1").msg(4, Enc::new().msg(1, schema));
    let b = body(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        Enc::new().msg(2, Enc::new().msg(7, version)),
    );
    std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(move || decode(&b).map(drop))
        .unwrap()
        .join()
        .unwrap()
        .unwrap();
}

#[test]
fn every_registry_kind_has_a_message() {
    let registry = crate::registry::Registry::builtin();
    let mut checked = 0;
    for r in registry.resources() {
        let av = r.api_version();
        assert!(supports(&av, &r.kind), "{av} {}", r.kind);
        // A resource that is never listed (bindings) has no list kind.
        let listed = r.has_verb("list");
        assert!(!listed || supports(&av, &r.list_kind()), "{av} {}", r.list_kind());
        checked += 2;
        // Each decodes from an empty message, as Go would from an empty raw.
        let got = decode(&body(&av, &r.kind, Enc::new())).unwrap();
        assert_eq!(got["kind"], json!(r.kind));
        assert!(got.get("metadata").is_some(), "{av} {}", r.kind);
        if listed {
            decode(&body(&av, &r.list_kind(), Enc::new())).unwrap();
        }
        for s in &r.subresources {
            let group = s.group.as_deref().unwrap_or(&r.group);
            let version = s.version.as_deref().unwrap_or(&r.version);
            let sav = if group.is_empty() {
                version.to_owned()
            } else {
                format!("{group}/{version}")
            };
            assert!(supports(&sav, &s.kind), "{sav} {} ({})", s.kind, s.name);
            decode(&body(&sav, &s.kind, Enc::new())).unwrap();
        }
    }
    assert!(checked > 70);
    for av in ["v1", "meta.k8s.io/v1"] {
        assert!(supports(av, "DeleteOptions"));
    }
}

#[test]
fn table_is_consistent() {
    for (i, m) in MESSAGES.iter().enumerate() {
        let mut nums: Vec<u32> = m.fields.iter().map(|f| f.num).collect();
        nums.sort_unstable();
        nums.dedup();
        assert_eq!(
            nums.len(),
            m.fields.len(),
            "duplicate field number in {}",
            m.name
        );
        for f in m.fields {
            if let Ty::M(index) = f.ty {
                assert!(usize::from(index) < MESSAGES.len(), "{}.{}", m.name, f.json);
            }
            assert!(!(f.has(REP) && f.has(MAP)), "{}.{}", m.name, f.json);
            if f.has(MAP) {
                assert!(
                    matches!(f.ty, Ty::S | Ty::BY | Ty::M(_)),
                    "{}.{}",
                    m.name,
                    f.json
                );
            }
        }
        // Every message decodes from nothing (terminates: no struct-valued cycles).
        json::message(i as u16, &[], &mut json::Cx::new(0)).unwrap();
        let needs = |nums: &[u32]| nums.iter().all(|n| m.fields.iter().any(|f| f.num == *n));
        match m.shape {
            Shape::Struct => {}
            Shape::IntOrString => assert!(needs(&[1, 2, 3])),
            Shape::Time | Shape::MicroTime => assert!(needs(&[1, 2])),
            Shape::SchemaOrArray | Shape::SchemaOrBool | Shape::SchemaOrStringArray => {
                assert!(needs(&[1, 2]))
            }
            _ => assert!(needs(&[1])),
        }
    }
    for (av, kind, index) in KINDS {
        let m = &MESSAGES[usize::from(*index)];
        assert_eq!(m.shape, Shape::Struct, "{av} {kind}");
        assert!(
            m.name.ends_with(&format!(".{kind}")),
            "{av} {kind} -> {}",
            m.name
        );
    }
}

/// Bodies kubectl 1.33.1 sent for `kubectl create …` (captured from the wire with a
/// loopback TLS listener), each with the JSON `kubectl create … --dry-run=client -o json`
/// prints for the same object: Go's own JSON encoding is the reference.
#[rustfmt::skip]
pub(super) const KUBECTL_1_33: &[(&str, &str, &str)] = &[
    (
        "namespace",
        "6b3873000a0f0a02763112094e616d657370616365121e0a160a067465616d2d6112001a0022002a0032003800420012001a020a001a002200",
        r#"{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"team-a","creationTimestamp":null},"spec":{},"status":{}}"#,
    ),
    (
        "configmap",
        "6b3873000a0f0a0276311209436f6e6669674d6170123a0a180a0873657474696e677312001a0022002a0032003800420012090a05656d707479120012060a016b1201761a0b0a0362696e1204000102ff1a002200",
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","creationTimestamp":null},"data":{"empty":"","k":"v"},"binaryData":{"bin":"AAEC/w=="}}"#,
    ),
    (
        "secret",
        "6b3873000a0c0a0276311206536563726574122e0a150a05637265647312001a0022002a0032003800420012130a0870617373776f7264120768756e746572321a001a002200",
        r#"{"kind":"Secret","apiVersion":"v1","metadata":{"name":"creds","creationTimestamp":null},"data":{"password":"aHVudGVyMg=="}}"#,
    ),
    (
        "deployment",
        "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412bd010a1f0a0377656212001a0022002a003200380042005a0a0a036170701203776562128b010800120c0a0a0a0361707012037765621a710a1c0a0012001a0022002a003200380042005a0a0a036170701203776562125112330a056e67696e78120a6e67696e783a312e32372a00320a0a001000185022002a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a002200",
        r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","creationTimestamp":null,"labels":{"app":"web"}},"spec":{"replicas":0,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.27","ports":[{"containerPort":80}],"resources":{}}]}},"strategy":{}},"status":{}}"#,
    ),
    (
        "service",
        "6b3873000a0d0a02763112075365727669636512690a1f0a0377656212001a0022002a003200380042005a0a0a03617070120377656212420a1b0a0738302d38303830120354435018502207080010903f1a002800120a0a0361707012037765621a002209436c757374657249503a00420052005a00600068001a020a001a002200",
        r#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"web","creationTimestamp":null,"labels":{"app":"web"}},"spec":{"ports":[{"name":"80-8080","protocol":"TCP","port":80,"targetPort":8080}],"selector":{"app":"web"},"type":"ClusterIP"},"status":{"loadBalancer":{}}}"#,
    ),
    (
        "cronjob",
        "6b3873000a130a0862617463682f7631120743726f6e4a6f6212b6010a170a076e696768746c7912001a0022002a003200380042001298010a09302030202a202a202a1a002a88010a170a076e696768746c7912001a0022002a00320038004200126d326b0a100a0012001a0022002a00320038004200125712300a076e696768746c79120762757379626f781a046563686f1a0268692a0042006a007200800100880100900100a201001a094f6e4661696c757265320042004a0052005800600068008201008a01009a0100c201001a001a002200",
        r#"{"kind":"CronJob","apiVersion":"batch/v1","metadata":{"name":"nightly","creationTimestamp":null},"spec":{"schedule":"0 0 * * *","jobTemplate":{"metadata":{"name":"nightly","creationTimestamp":null},"spec":{"template":{"metadata":{"creationTimestamp":null},"spec":{"containers":[{"name":"nightly","image":"busybox","command":["echo","hi"],"resources":{}}],"restartPolicy":"OnFailure"}}}}},"status":{}}"#,
    ),
    (
        "pod_disruption_budget",
        "6b3873000a200a09706f6c6963792f76311213506f6444697372757074696f6e427564676574123c0a130a0370646212001a0022002a0032003800420012190a09080110001a03353025120c0a0a0a0361707012037765621a0a080018002000280030001a002200",
        r#"{"kind":"PodDisruptionBudget","apiVersion":"policy/v1","metadata":{"name":"pdb","creationTimestamp":null},"spec":{"minAvailable":"50%","selector":{"matchLabels":{"app":"web"}}},"status":{"disruptionsAllowed":0,"currentHealthy":0,"desiredHealthy":0,"expectedPods":0}}"#,
    ),
];

pub(super) fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn real_kubectl_bodies_match_go_json() {
    for (name, hex, want) in KUBECTL_1_33 {
        let got = decode(&unhex(hex)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want: serde_json::Value = serde_json::from_str(want).unwrap();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn real_kubectl_token_request() {
    // `kubectl create token default --audience=api --duration=1h`
    let body = unhex("6b3873000a280a1861757468656e7469636174696f6e2e6b38732e696f2f7631120c546f6b656e5265717565737412220a100a0012001a0022002a0032003800420012080a0361706920901c1a040a0012001a002200");
    assert_eq!(
        decode(&body).unwrap(),
        json!({
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": {"audiences": ["api"], "expirationSeconds": 3600, "boundObjectRef": null},
            "status": {"token": "", "expirationTimestamp": null}
        })
    );
}

#[test]
fn expansion_is_bounded() {
    // Each empty list item is two bytes on the wire but a whole Node in Go's JSON.
    let mut raw = Enc::new();
    for _ in 0..20_000 {
        raw = raw.msg(2, Enc::new());
    }
    assert_eq!(
        decode(&body("v1", "NodeList", raw)),
        Err(DecodeError::TooLarge)
    );
    // A few dozen are fine: the budget has a floor.
    let mut raw = Enc::new();
    for _ in 0..40 {
        raw = raw.msg(2, Enc::new());
    }
    let got = decode(&body("v1", "NodeList", raw)).unwrap();
    assert_eq!(got["items"].as_array().unwrap().len(), 40);
    // Large real bodies are far within it: 20 000 one-byte strings in a map.
    let mut raw = Enc::new();
    for i in 0..20_000 {
        raw = raw.entry(2, &format!("k{i}"), "");
    }
    let got = decode(&body("v1", "ConfigMap", raw)).unwrap();
    assert_eq!(got["data"].as_object().unwrap().len(), 20_000);
    // As are 50 000 empty strings in a list (two bytes each): values on the wire are
    // bounded by the body, not by the budget.
    let mut raw = Enc::new();
    for _ in 0..50_000 {
        raw = raw.str(14, "");
    }
    let got = decode(&body("v1", "ConfigMap", Enc::new().msg(1, raw))).unwrap();
    assert_eq!(
        got["metadata"]["finalizers"].as_array().unwrap().len(),
        50_000
    );
}

#[test]
fn prost_style_bodies_fit_the_budget() {
    // Encoders that skip unset fields (prost, k8s-pb) leave Go's zero structs to be
    // written without bytes behind them: a Deployment of 200 minimal containers fits.
    let mut pod_spec = Enc::new();
    for i in 0..200 {
        pod_spec = pod_spec.msg(2, Enc::new().str(1, &format!("c{i}")).str(2, "busybox"));
    }
    let spec = Enc::new().msg(3, Enc::new().msg(2, pod_spec));
    let got = decode(&body("apps/v1", "Deployment", Enc::new().msg(2, spec))).unwrap();
    let containers = &got["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers.as_array().unwrap().len(), 200);
    assert_eq!(
        containers[7],
        json!({"name": "c7", "image": "busybox", "resources": {}})
    );
}

#[test]
fn access_reviews_decode_with_their_extras() {
    // kubectl auth can-i's SelfSubjectAccessReview, and a SubjectAccessReview with an
    // extra of two values and one of none (Go's nil ExtraValue).
    let ssar = Enc::new().msg(2, Enc::new().msg(1, Enc::new().str(1, "default").str(2, "create").str(5, "pods")));
    let got = decode(&body("authorization.k8s.io/v1", "SelfSubjectAccessReview", ssar)).unwrap();
    assert_eq!(got["spec"], json!({"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}}));
    let entry = |k: &str, v: Enc| Enc::new().str(1, k).msg(2, v);
    let spec = Enc::new()
        .msg(2, Enc::new().str(1, "/healthz").str(2, "get"))
        .str(3, "alice")
        .str(4, "dev")
        .msg(5, entry("scopes", Enc::new().str(1, "a").str(1, "b")))
        .msg(5, entry("none", Enc::new()))
        .str(6, "42");
    let got = decode(&body("authorization.k8s.io/v1", "SubjectAccessReview", Enc::new().msg(2, spec))).unwrap();
    assert_eq!(
        got["spec"],
        json!({
            "nonResourceAttributes": {"path": "/healthz", "verb": "get"},
            "user": "alice", "groups": ["dev"], "uid": "42",
            "extra": {"scopes": ["a", "b"], "none": null},
        })
    );
    let review = Enc::new().msg(2, Enc::new().str(1, "t0ken").str(2, "api"));
    let got = decode(&body("authentication.k8s.io/v1", "TokenReview", review)).unwrap();
    assert_eq!(got["spec"], json!({"token": "t0ken", "audiences": ["api"]}));
}
