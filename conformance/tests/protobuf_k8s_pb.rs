//! Kubernetes protobuf answers of the real binary, read by an independent
//! implementation of the Kubernetes protobuf types: the `k8s-pb` crate (prost code
//! generated from upstream's `generated.proto`). Objects of many built-in kinds are
//! created with kubectl, then read over TLS as client-go's typed clients ask
//! (`Accept: application/vnd.kubernetes.protobuf, application/json`):
//! - every answer decodes as its k8s-pb type, and what prost writes back of it reads
//!   as the same object (so no field was unknown to k8s-pb or of another wire type);
//! - its metadata and some fields of each kind equal the JSON answer's;
//! - lists, errors and a watch stream the same way; a custom resource answers JSON.

mod raw_tls;

use apiary_conformance::harness::{ok, Apiary};
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use raw_tls::Raw;
use serde_json::Value;

const CLIENT_GO: &str = "application/vnd.kubernetes.protobuf, application/json";

const OBJECTS: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: pb, labels: {team: a}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: pb, labels: {app: web}, annotations: {note: "x"}}
data: {mode: fast, empty: ""}
binaryData: {blob: AAEC/w==}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: pb}
type: Opaque
stringData: {password: hunter2}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: pb}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}, {name: admin, port: 9090, targetPort: admin}]
---
apiVersion: v1
kind: Pod
metadata: {name: worker, namespace: pb}
spec:
  containers:
  - name: app
    image: nginx:1.27
    resources: {requests: {cpu: 250m, memory: 64Mi}, limits: {memory: 128Mi}}
    ports: [{containerPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: pb}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  strategy: {rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: pb}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: job, image: busybox:1.36}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: pb}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, list]}]
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: leader, namespace: pb}
spec: {holderIdentity: a, leaseDurationSeconds: 15}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: pb}
spec: {podSelector: {}, policyTypes: [Ingress]}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000000
description: important
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.pb.example.com}
spec:
  group: pb.example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"#;

/// A GET over TLS as the admin, asking for `accept`.
async fn get(raw: &mut Raw, path: &str, accept: &str) -> raw_tls::Response {
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: {accept}\r\n\r\n");
    raw.send(request.as_bytes()).await.expect("sent");
    raw.read_response().await.expect("an answer")
}

/// The envelope of a protobuf body: its type and the object's message.
fn unwrap(body: &[u8], api_version: &str, kind: &str) -> Vec<u8> {
    assert!(body.starts_with(b"k8s\0"), "the protobuf magic");
    let unknown = Unknown::decode(&body[4..]).expect("a runtime.Unknown");
    let type_meta = unknown.type_meta.expect("typeMeta");
    assert_eq!(type_meta.api_version.as_deref(), Some(api_version));
    assert_eq!(type_meta.kind.as_deref(), Some(kind));
    assert_eq!((unknown.content_encoding.as_deref(), unknown.content_type.as_deref()), (Some(""), Some("")));
    unknown.raw.expect("raw")
}

/// Decodes `raw` as `T` and checks that nothing was lost on the way: what prost writes
/// back of it reads, by Apiary's reader, as the same JSON as the bytes Apiary sent.
/// (The bytes themselves may differ: prost leaves a map entry's empty value out, Go's
/// generated code writes it.)
fn read<T: Message + Default>(raw: &[u8], what: &str) -> T {
    let message = T::decode(raw).unwrap_or_else(|e| panic!("{what}: {e}"));
    let again = message.encode_to_vec();
    if again != raw {
        let (api_version, kind) = what.split_once(' ').expect("`apiVersion Kind`");
        let as_json = |raw: &[u8]| {
            let mut body = b"k8s\0".to_vec();
            body.extend(Unknown {
                type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
                    api_version: Some(api_version.to_owned()),
                    kind: Some(kind.to_owned()),
                }),
                raw: Some(raw.to_vec()),
                content_encoding: Some(String::new()),
                content_type: Some(String::new()),
            }
            .encode_to_vec());
            apiary_core::protobuf::decode(&body).unwrap_or_else(|e| panic!("{what}: {e}"))
        };
        assert_eq!(as_json(&again), as_json(raw), "{what}: k8s-pb lost or changed a field");
    }
    message
}

fn text<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// An object's metadata, from protobuf, equals the JSON answer's.
fn same_metadata(m: &meta::ObjectMeta, json: &Value, what: &str) {
    let j = &json["metadata"];
    assert_eq!(m.name.as_deref(), text(j, "/name"), "{what}");
    assert_eq!(m.namespace.as_deref().filter(|n| !n.is_empty()), text(j, "/namespace"), "{what}");
    assert_eq!(m.uid.as_deref(), text(j, "/uid"), "{what}");
    assert_eq!(m.resource_version.as_deref(), text(j, "/resourceVersion"), "{what}");
    assert_eq!(m.generation.filter(|g| *g != 0), j["generation"].as_i64(), "{what}");
    let labels: serde_json::Map<String, Value> = m.labels.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
    assert_eq!(&Value::Object(labels), j.get("labels").unwrap_or(&Value::Object(Default::default())), "{what}");
    let annotations: serde_json::Map<String, Value> =
        m.annotations.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
    assert_eq!(&Value::Object(annotations), j.get("annotations").unwrap_or(&Value::Object(Default::default())), "{what}");
    assert_eq!(m.managed_fields.len(), j["managedFields"].as_array().map_or(0, Vec::len), "{what}");
    let created = m.creation_timestamp.as_ref().and_then(|t| t.seconds).expect("a creation time");
    let json_created = text(j, "/creationTimestamp").expect("a creation time");
    assert_eq!(format_rfc3339(created), json_created, "{what}");
}

/// Seconds since the epoch as Go's RFC 3339 (UTC, no fraction).
fn format_rfc3339(seconds: i64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(u64::try_from(seconds).expect("after 1970"));
    apiary_core::time::rfc3339(at)
}

/// Reads one object both ways; the k8s-pb message and the JSON.
async fn both<T: Message + Default>(raw: &mut Raw, path: &str, api_version: &str, kind: &str) -> (T, Value) {
    let pb = get(raw, path, CLIENT_GO).await;
    assert_eq!(pb.status, 200, "{path}: {}", String::from_utf8_lossy(&pb.body));
    assert_eq!(pb.header("content-type"), Some("application/vnd.kubernetes.protobuf"), "{path}");
    let message = read::<T>(&unwrap(&pb.body, api_version, kind), &format!("{api_version} {kind}"));
    let json = get(raw, path, "application/json").await;
    assert_eq!(json.status, 200, "{path}");
    (message, json.json())
}

#[test]
fn k8s_pb_reads_every_answer_as_its_json_says() {
    let apiary = Apiary::start();
    let file = apiary.data_dir.join("objects.yaml");
    std::fs::write(&file, OBJECTS).unwrap();
    ok(&apiary.kubectl("1.33", &["apply", "-f", file.to_str().unwrap()]));
    let custom = "apiVersion: pb.example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: pb}\nspec: {size: 3}\n";
    apiary.kubectl_until_served("1.33", &["get", "gadgets.pb.example.com", "-n", "pb"]);
    ok(&apiary.kubectl_with_input("1.33", &["apply", "-f", "-"], custom));

    raw_tls::runtime().block_on(async {
        let mut raw = raw_tls::connect(&apiary).await.expect("TLS");
        use k8s_pb::api::{apps::v1 as apps, batch::v1 as batch, coordination::v1 as coordination, core::v1 as core};
        use k8s_pb::api::{networking::v1 as networking, rbac::v1 as rbac, scheduling::v1 as scheduling};

        let (cm, json) = both::<core::ConfigMap>(&mut raw, "/api/v1/namespaces/pb/configmaps/settings", "v1", "ConfigMap").await;
        same_metadata(cm.metadata.as_ref().unwrap(), &json, "ConfigMap");
        assert_eq!(cm.data.get("mode").map(String::as_str), text(&json, "/data/mode"));
        assert_eq!(cm.data.get("empty").map(String::as_str), Some(""));
        assert_eq!(cm.binary_data.get("blob").map(Vec::as_slice), Some(&[0u8, 1, 2, 255][..]));

        let (secret, json) = both::<core::Secret>(&mut raw, "/api/v1/namespaces/pb/secrets/creds", "v1", "Secret").await;
        same_metadata(secret.metadata.as_ref().unwrap(), &json, "Secret");
        assert_eq!(secret.data.get("password").map(Vec::as_slice), Some(&b"hunter2"[..]));
        assert_eq!(secret.r#type.as_deref(), text(&json, "/type"));

        let (svc, json) = both::<core::Service>(&mut raw, "/api/v1/namespaces/pb/services/web", "v1", "Service").await;
        same_metadata(svc.metadata.as_ref().unwrap(), &json, "Service");
        let spec = svc.spec.unwrap();
        assert_eq!(spec.cluster_ip.as_deref(), text(&json, "/spec/clusterIP"));
        assert_eq!(spec.r#type.as_deref(), Some("ClusterIP"));
        let target = spec.ports[1].target_port.as_ref().unwrap();
        assert_eq!((target.r#type, target.str_val.as_deref()), (Some(1), Some("admin")));
        assert_eq!(spec.ports[0].target_port.as_ref().unwrap().int_val, Some(8080));

        let (pod, json) = both::<core::Pod>(&mut raw, "/api/v1/namespaces/pb/pods/worker", "v1", "Pod").await;
        same_metadata(pod.metadata.as_ref().unwrap(), &json, "Pod");
        let spec = pod.spec.unwrap();
        let requests = &spec.containers[0].resources.as_ref().unwrap().requests;
        assert_eq!(requests["cpu"].string.as_deref(), text(&json, "/spec/containers/0/resources/requests/cpu"));
        assert_eq!(spec.restart_policy.as_deref(), text(&json, "/spec/restartPolicy"));
        assert_eq!(spec.termination_grace_period_seconds, json["spec"]["terminationGracePeriodSeconds"].as_i64());
        assert_eq!(pod.status.unwrap().phase.as_deref(), text(&json, "/status/phase"));

        let (deploy, json) = both::<apps::Deployment>(&mut raw, "/apis/apps/v1/namespaces/pb/deployments/web", "apps/v1", "Deployment").await;
        same_metadata(deploy.metadata.as_ref().unwrap(), &json, "Deployment");
        let spec = deploy.spec.unwrap();
        assert_eq!(spec.replicas, Some(3));
        let rolling = spec.strategy.unwrap().rolling_update.unwrap();
        assert_eq!(rolling.max_surge.unwrap().str_val.as_deref(), Some("25%"));
        assert_eq!(rolling.max_unavailable.unwrap().int_val, Some(1));
        assert_eq!(spec.progress_deadline_seconds, json["spec"]["progressDeadlineSeconds"].as_i64().map(|v| v as i32));

        let (cron, json) = both::<batch::CronJob>(&mut raw, "/apis/batch/v1/namespaces/pb/cronjobs/nightly", "batch/v1", "CronJob").await;
        same_metadata(cron.metadata.as_ref().unwrap(), &json, "CronJob");
        let spec = cron.spec.unwrap();
        assert_eq!(spec.schedule.as_deref(), Some("0 0 * * *"));
        assert_eq!(spec.concurrency_policy.as_deref(), text(&json, "/spec/concurrencyPolicy"));

        let (role, json) = both::<rbac::Role>(&mut raw, "/apis/rbac.authorization.k8s.io/v1/namespaces/pb/roles/reader", "rbac.authorization.k8s.io/v1", "Role").await;
        same_metadata(role.metadata.as_ref().unwrap(), &json, "Role");
        assert_eq!(role.rules[0].verbs, ["get", "list"]);

        let (lease, json) = both::<coordination::Lease>(&mut raw, "/apis/coordination.k8s.io/v1/namespaces/pb/leases/leader", "coordination.k8s.io/v1", "Lease").await;
        same_metadata(lease.metadata.as_ref().unwrap(), &json, "Lease");
        assert_eq!(lease.spec.unwrap().lease_duration_seconds, Some(15));

        let (policy, json) = both::<networking::NetworkPolicy>(&mut raw, "/apis/networking.k8s.io/v1/namespaces/pb/networkpolicies/deny", "networking.k8s.io/v1", "NetworkPolicy").await;
        same_metadata(policy.metadata.as_ref().unwrap(), &json, "NetworkPolicy");
        assert_eq!(policy.spec.unwrap().policy_types, ["Ingress"]);

        let (class, json) = both::<scheduling::PriorityClass>(&mut raw, "/apis/scheduling.k8s.io/v1/priorityclasses/high", "scheduling.k8s.io/v1", "PriorityClass").await;
        same_metadata(class.metadata.as_ref().unwrap(), &json, "PriorityClass");
        assert_eq!((class.value, class.description.as_deref()), (Some(1_000_000), Some("important")));

        let (ns, json) = both::<core::Namespace>(&mut raw, "/api/v1/namespaces/pb", "v1", "Namespace").await;
        same_metadata(ns.metadata.as_ref().unwrap(), &json, "Namespace");
        assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Active"));

        let crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.pb.example.com";
        let (crd, json) = both::<k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>(
            &mut raw,
            crd_path,
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
        )
        .await;
        same_metadata(crd.metadata.as_ref().unwrap(), &json, "CustomResourceDefinition");
        let schema = crd.spec.unwrap().versions[0].schema.clone().unwrap().open_apiv3_schema.unwrap();
        assert_eq!(schema.x_kubernetes_preserve_unknown_fields, Some(true));

        // Lists, as client-go's typed List reads them.
        let (list, json) = both::<core::ConfigMapList>(&mut raw, "/api/v1/namespaces/pb/configmaps", "v1", "ConfigMapList").await;
        let names: Vec<_> = list.items.iter().map(|i| i.metadata.as_ref().unwrap().name.clone().unwrap()).collect();
        let json_names: Vec<_> = json["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_owned()).collect();
        assert_eq!(names, json_names);
        assert_eq!(list.metadata.unwrap().resource_version.as_deref(), text(&json, "/metadata/resourceVersion"));
        let (pods, _) = both::<core::PodList>(&mut raw, "/api/v1/pods", "v1", "PodList").await;
        assert!(pods.items.iter().any(|p| p.metadata.as_ref().unwrap().name.as_deref() == Some("worker")));

        // Metadata only, in protobuf.
        let pom = get(&mut raw, "/api/v1/namespaces/pb/configmaps/settings", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").await;
        let partial = read::<meta::PartialObjectMetadata>(&unwrap(&pom.body, "meta.k8s.io/v1", "PartialObjectMetadata"), "meta.k8s.io/v1 PartialObjectMetadata");
        assert_eq!(partial.metadata.unwrap().name.as_deref(), Some("settings"));

        // An error, as the Status client-go reads.
        let missing = get(&mut raw, "/api/v1/namespaces/pb/configmaps/nothing", CLIENT_GO).await;
        assert_eq!(missing.status, 404);
        let status = read::<meta::Status>(&unwrap(&missing.body, "v1", "Status"), "v1 Status");
        assert_eq!((status.code, status.reason.as_deref()), (Some(404), Some("NotFound")));
        assert_eq!(status.message.as_deref(), Some("configmaps \"nothing\" not found"));

        // A custom resource has no protobuf form: JSON.
        let gadget = get(&mut raw, "/apis/pb.example.com/v1/namespaces/pb/gadgets/g", CLIENT_GO).await;
        assert_eq!(gadget.status, 200);
        assert_eq!(gadget.header("content-type"), Some("application/json"));
        assert_eq!(gadget.json()["spec"]["size"], 3);

        // A Table is never protobuf: kubectl's JSON fallback is taken.
        let table = get(&mut raw, "/api/v1/namespaces/pb/configmaps", "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json;as=Table;v=v1;g=meta.k8s.io").await;
        assert_eq!(table.json()["kind"], "Table");
    });
}

#[test]
fn k8s_pb_reads_a_protobuf_watch() {
    let apiary = Apiary::start();
    raw_tls::runtime().block_on(async {
        let mut raw = raw_tls::connect(&apiary).await.expect("TLS");
        let created = raw
            .call("POST", "/api/v1/namespaces/default/configmaps", Some(&raw_tls::configmap("watched", serde_json::json!({"k": "1"}))))
            .await
            .unwrap();
        assert_eq!(created.status, 201);
        let start = created.json()["metadata"]["resourceVersion"].as_str().unwrap().to_owned();
        let patch = b"{\"data\":{\"k\":\"2\"}}";
        let request = format!(
            "PATCH /api/v1/namespaces/default/configmaps/watched HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/merge-patch+json\r\nContent-Length: {}\r\n\r\n",
            patch.len()
        );
        raw.send(&[request.as_bytes(), patch].concat()).await.unwrap();
        assert_eq!(raw.read_response().await.unwrap().status, 200);
        assert_eq!(raw.call("DELETE", "/api/v1/namespaces/default/configmaps/watched", None).await.unwrap().status, 200);

        let path = format!("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={start}&timeoutSeconds=1");
        let mut watch = raw_tls::connect(&apiary).await.expect("TLS");
        let answer = get(&mut watch, &path, "application/vnd.kubernetes.protobuf;stream=watch").await;
        assert_eq!(answer.header("content-type"), Some("application/vnd.kubernetes.protobuf;stream=watch"));
        let mut events = Vec::new();
        let mut rest = &answer.body[..];
        while !rest.is_empty() {
            let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
            let event = meta::WatchEvent::decode(&rest[4..4 + len]).expect("a WatchEvent");
            assert_eq!(event.encode_to_vec(), &rest[4..4 + len], "a WatchEvent as prost writes it");
            rest = &rest[4 + len..];
            let object = event.object.unwrap().raw.unwrap();
            let cm = read::<k8s_pb::api::core::v1::ConfigMap>(&unwrap(&object, "v1", "ConfigMap"), "v1 ConfigMap");
            events.push((event.r#type.unwrap(), cm.data["k"].clone()));
        }
        let want = [("MODIFIED", "2"), ("DELETED", "2")].map(|(t, k)| (t.to_owned(), k.to_owned()));
        assert_eq!(events, want);
    });
}

/// kubectl 1.33's typed clients (client-go) ask for protobuf first and read it: a
/// namespace, a configmap and a token made through them, the answers' content type as
/// kubectl's own log of the exchange shows it.
#[test]
fn client_go_in_kubectl_reads_protobuf_answers() {
    let apiary = Apiary::start();
    let out = apiary.kubectl("1.33", &["create", "namespace", "typed", "-v=8"]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("Accept: application/vnd.kubernetes.protobuf,application/json"), "{log}");
    let answered = log.lines().filter(|l| l.contains("Content-Type: application/vnd.kubernetes.protobuf")).count();
    assert!(answered >= 2, "the request and the answer are protobuf: {log}");
    assert_eq!(ok(&apiary.kubectl("1.33", &["get", "namespace", "typed", "-o", "jsonpath={.status.phase}"])), "Active");
    ok(&apiary.kubectl("1.33", &["create", "configmap", "c", "-n", "typed", "--from-literal=k=v"]));
    assert_eq!(ok(&apiary.kubectl("1.33", &["get", "configmap", "c", "-n", "typed", "-o", "jsonpath={.data.k}"])), "v");
    let token = ok(&apiary.kubectl("1.33", &["create", "token", "default", "-n", "typed"]));
    assert_eq!(token.trim().split('.').count(), 3, "a JWT: {token}");
}
