//! Built-in objects defaulted as kube-apiserver v1.33 defaults them: every create the
//! project recorded from a real kube-apiserver (`tests/upstream/defaults/`, copied from
//! the shared recordings: the input POSTed with `?dryRun=All` and the object upstream
//! answered) is replayed through the whole server, and our answer must be upstream's.
//!
//! Every kind is compared with its `with default admission` recording (the admission
//! plugins a default kube-apiserver runs, as Apiary's defaults run them), and pods
//! also with `namespace has a LimitRange`. What the comparison forgives is listed
//! here, each with its reason: the recorder's placeholders, the zero values Go's typed
//! encoding writes, and the kinds that are not ours to compare.

use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Recordings not compared, by file, and why.
const SKIPPED: &[(&str, &str)] = &[
    ("networking.k8s.io_v1_ipaddresses", "not served by Apiary yet"),
    ("networking.k8s.io_v1_servicecidrs", "not served by Apiary yet"),
    ("core_v1_services", "Service defaults and allocation are the services slice's"),
    ("core_v1_bindings", "a Binding is not stored and has no defaults (binds a pod the recorder made beforehand)"),
    ("authentication.k8s.io_v1_selfsubjectreviews", "the answer is the requester's identity, not defaults"),
    ("authentication.k8s.io_v1_tokenreviews", "the answer is the token's authentication, not defaults"),
    ("authorization.k8s.io_v1_localsubjectaccessreviews", "the answer is an authorization decision, not defaults"),
    ("authorization.k8s.io_v1_selfsubjectaccessreviews", "the answer is an authorization decision, not defaults"),
    ("authorization.k8s.io_v1_selfsubjectrulesreviews", "the answer is the requester's rules, not defaults"),
    ("authorization.k8s.io_v1_subjectaccessreviews", "the answer is an authorization decision, not defaults"),
];

/// Single cases not compared, and why.
const SKIPPED_CASES: &[(&str, &str, &str)] = &[];

/// The variants compared, and the namespace each was recorded in.
const VARIANTS: &[(&str, &str)] = &[
    ("with default admission", "refa-defaults"),
    ("with default admission, namespace has a LimitRange", "refa-defaults-lr"),
];

/// Differences that remain, each `file/case path` with its reason; none is a default.
/// The test fails when one of them goes away too, so that this list stays true.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    // Go's typed encoding drops an empty map with `omitempty` (the input's `labels: {}`),
    // and upstream's field manager, working on the typed object, owns no field for it.
    ("batch_v1_cronjobs/indexed-jobtemplate .metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:metadata", EMPTY_MAP),
    ("batch_v1_cronjobs/minimal .metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:metadata", EMPTY_MAP),
    ("batch_v1_cronjobs/timezone-forbid-suspend-history .metadata.managedFields[0].fieldsV1.f:spec.f:jobTemplate.f:spec.f:template.f:metadata", EMPTY_MAP),
    ("batch_v1_jobs/backofflimitperindex-successpolicy .metadata.managedFields[0].fieldsV1.f:spec.f:template.f:metadata", EMPTY_MAP),
    ("batch_v1_jobs/indexed-completions-parallelism .metadata.managedFields[0].fieldsV1.f:spec.f:template.f:metadata", EMPTY_MAP),
    ("batch_v1_jobs/minimal .metadata.managedFields[0].fieldsV1.f:spec.f:template.f:metadata", EMPTY_MAP),
    ("batch_v1_jobs/podfailurepolicy .metadata.managedFields[0].fieldsV1.f:spec.f:template.f:metadata", EMPTY_MAP),
    // The field manager's gaps: a RawExtension (`data`) is one leaf upstream, and an
    // empty struct the input sends owns nothing upstream.
    ("apps_v1_controllerrevisions/minimal .metadata.managedFields[0].fieldsV1.f:data..", RAW_EXTENSION),
    ("apps_v1_controllerrevisions/minimal .metadata.managedFields[0].fieldsV1.f:data.f:a", RAW_EXTENSION),
    ("apps_v1_controllerrevisions/with-data .metadata.managedFields[0].fieldsV1.f:data..", RAW_EXTENSION),
    ("apps_v1_controllerrevisions/with-data .metadata.managedFields[0].fieldsV1.f:data.f:spec", RAW_EXTENSION),
    ("networking.k8s.io_v1_networkpolicies/egress-rules-no-policytypes .metadata.managedFields[0].fieldsV1.f:spec.f:podSelector", EMPTY_STRUCT),
    ("networking.k8s.io_v1_networkpolicies/empty-podselector .metadata.managedFields[0].fieldsV1.f:spec.f:podSelector", EMPTY_STRUCT),
    ("policy_v1_poddisruptionbudgets/empty-spec .metadata.managedFields", EMPTY_STRUCT),
    // The server's field manager takes a PersistentVolume's claimRef as atomic.
    ("core_v1_persistentvolumes/with-claimref .metadata.managedFields[0].fieldsV1.f:spec.f:claimRef.f:name", CLAIM_REF),
    ("core_v1_persistentvolumes/with-claimref .metadata.managedFields[0].fieldsV1.f:spec.f:claimRef.f:namespace", CLAIM_REF),
    // Left out on purpose while unset (see the CRD's defaults): `kubectl wait` fails on it.
    ("apiextensions.k8s.io_v1_customresourcedefinitions/simple-schema .status.conditions", CRD_CONDITIONS),
    ("apiextensions.k8s.io_v1_customresourcedefinitions/two-versions-subresources-cluster .status.conditions", CRD_CONDITIONS),
    // Lease's strategy drops the fields of the CoordinatedLeaderElection gate, off in
    // v1.33: dropping disabled fields, not defaulting.
    ("coordination.k8s.io_v1_leases/strategy-field-gated .spec.preferredHolder", GATED),
    ("coordination.k8s.io_v1_leases/strategy-field-gated .spec.strategy", GATED),
    // Go writes a nil list without omitempty as null, and upstream's field manager,
    // working on the typed object, owns it.
    ("storage.k8s.io_v1_csinodes/one-driver .metadata.managedFields[0].fieldsV1.f:spec.f:drivers.k:{\"name\":\"csi.example.com\"}.f:topologyKeys", NULL_LIST),
    // Upstream stores protobuf, which keeps no empty list apart from none.
    ("storage.k8s.io_v1_csinodes/no-drivers .spec.drivers", EMPTY_LIST),
    // Upstream's client-certificate users carry the certificate's hash as a credential
    // id, which the CSR records; Apiary's carry none.
    ("certificates.k8s.io_v1_certificatesigningrequests/custom-signer-expiration-spoofed-username .spec.extra", CREDENTIAL_ID),
    ("certificates.k8s.io_v1_certificatesigningrequests/kube-apiserver-client .spec.extra", CREDENTIAL_ID),
    ("certificates.k8s.io_v1_certificatesigningrequests/kubelet-client .spec.extra", CREDENTIAL_ID),
];
const NULL_LIST: &str = "field manager: a nil list Go writes as null is owned upstream";
const EMPTY_LIST: &str = "typed encoding: an empty non-omitempty list stays [] (null upstream, from protobuf)";
const CREDENTIAL_ID: &str = "authentication: no X509SHA256 credential id on client-certificate users";
const EMPTY_MAP: &str = "typed encoding: an empty omitempty map is not written";
const RAW_EXTENSION: &str = "field manager: a RawExtension is one field";
const EMPTY_STRUCT: &str = "field manager: an empty struct owns no field";
const CLAIM_REF: &str = "field manager: claimRef is granular upstream";
const CRD_CONDITIONS: &str = "a new CRD's conditions are left out rather than null";
const GATED: &str = "Lease strategy: fields of a disabled gate are dropped";

fn harness() -> Harness<MemoryStore> {
    let h = Harness::new(Config::default(), MemoryStore::new());
    // The recorder's user, whom a CertificateSigningRequest names.
    h.act_as(Some("kube-admin"), &["system:masters"]);
    for ns in ["refa-defaults", "refa-defaults-lr"] {
        let created = send(&h, "POST", "/api/v1/namespaces", Some(&json!({"metadata": {"name": ns}})));
        assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
    }
    // The recorder's LimitRange (the upstream README names it).
    let range = json!({
        "metadata": {"name": "limits"},
        "spec": {"limits": [{"type": "Container", "default": {"cpu": "200m", "memory": "64Mi"}, "defaultRequest": {"cpu": "100m"}, "max": {"cpu": "2"}}]},
    });
    let created = send(&h, "POST", "/api/v1/namespaces/refa-defaults-lr/limitranges", Some(&range));
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
    h
}

/// Send a request as the recorder did (its User-Agent names the field manager).
fn send(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    let body = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nUser-Agent: refa-recorder\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    parse_responses(&h.send(request.as_bytes())).unwrap().remove(0)
}

/// Every recording file: its name (without `.json`) and its records.
fn recordings() -> Vec<(String, Vec<Value>)> {
    let dir = format!("{}/tests/upstream/defaults", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let records = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            (name, records)
        })
        .collect()
}

/// Our answer with what the recorder replaced by placeholders replaced alike.
fn normalized(mut answer: Value, input: &Value) -> Value {
    let uid = answer["metadata"]["uid"].as_str().unwrap_or("").to_owned();
    if !uid.is_empty() {
        replace_string(&mut answer, &uid, "<uid>");
    }
    let meta = &mut answer["metadata"];
    if let Some(meta) = meta.as_object_mut() {
        for (field, placeholder) in [("creationTimestamp", "<timestamp>"), ("resourceVersion", "<resourceVersion>")] {
            if meta.contains_key(field) {
                meta.insert(field.into(), json!(placeholder));
            }
        }
        if let Some(Value::Array(managed)) = meta.get_mut("managedFields") {
            for entry in managed {
                entry["time"] = json!("<timestamp>");
            }
        }
        if let Some(prefix) = input["metadata"]["generateName"].as_str() {
            if let Some(Value::String(name)) = meta.get_mut("name") {
                if name.starts_with(prefix) && name.len() == prefix.len() + 5 {
                    *name = format!("{prefix}<random5>");
                }
            }
        }
    }
    // The ServiceAccount plugin's token volume, named with 5 random characters.
    random_suffixes(&mut answer, "kube-api-access-");
    // A server-set time (a PersistentVolume's phase transition).
    if let Some(t) = answer.pointer_mut("/status/lastPhaseTransitionTime") {
        *t = json!("<timestamp>");
    }
    // Conditions the server sets on create (a local APIService's Available).
    if let Some(Value::Array(conditions)) = answer.pointer_mut("/status/conditions") {
        for c in conditions {
            if c.get("lastTransitionTime").is_some_and(Value::is_string) {
                c["lastTransitionTime"] = json!("<timestamp>");
            }
        }
    }
    answer
}

/// Every string `<prefix>` and 5 more characters becomes `<prefix><random5>`.
fn random_suffixes(v: &mut Value, prefix: &str) {
    match v {
        Value::String(s) if s.starts_with(prefix) && s.len() == prefix.len() + 5 => *s = format!("{prefix}<random5>"),
        Value::Array(items) => items.iter_mut().for_each(|i| random_suffixes(i, prefix)),
        Value::Object(map) => map.values_mut().for_each(|i| random_suffixes(i, prefix)),
        _ => {}
    }
}

fn replace_string(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::String(s) if s == from => *s = to.to_owned(),
        Value::Array(items) => items.iter_mut().for_each(|i| replace_string(i, from, to)),
        Value::Object(map) => map.values_mut().for_each(|i| replace_string(i, from, to)),
        _ => {}
    }
}

/// Managed fields without the `"."` entry the server's field manager gives an
/// associative list (a gap of the field manager, not of defaulting: upstream owns a
/// list through its items alone).
fn without_list_self_entries(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let list = map.len() > 1 && map.keys().all(|k| k == "." || k.starts_with("k:") || k.starts_with("v:"));
            if list {
                map.remove(".");
            }
            map.values_mut().for_each(without_list_self_entries);
        }
        Value::Array(items) => items.iter_mut().for_each(without_list_self_entries),
        _ => {}
    }
}

/// What a comparison forgives.
struct Tolerance {
    /// Comparing managed fields (objects are compared strictly: the typed encoding
    /// writes Go's zero values as upstream does).
    managed: bool,
}

impl Tolerance {
    /// Whether upstream's `key` (holding `value`) may be missing from ours.
    fn forgives(&mut self, key: &str, value: &Value) -> bool {
        if !self.managed {
            return false;
        }
        // Gaps of our field manager: the `"."` entry upstream's gives a struct a
        // default allocated, and the empty structs Go writes (a container's
        // `resources`, an embedded template's `metadata`), which upstream's owns (ours
        // records the fields as they were sent).
        key == "." || (matches!(key, "f:resources" | "f:metadata") && value == &json!({}))
    }
}

/// The paths where `ours` and `theirs` differ, each with what differs there.
fn differences(ours: &Value, theirs: &Value, path: &str, tolerance: &mut Tolerance, out: &mut Vec<(String, String)>) {
    match (ours, theirs) {
        (Value::Object(o), Value::Object(t)) => {
            for (k, tv) in t {
                let p = format!("{path}.{k}");
                match o.get(k) {
                    Some(ov) => differences(ov, tv, &p, tolerance, out),
                    None if tolerance.forgives(k, tv) => {}
                    None => out.push((p, format!("missing, upstream has {tv}"))),
                }
            }
            for (k, ov) in o {
                if !t.contains_key(k) {
                    out.push((format!("{path}.{k}"), format!("upstream has none, ours is {ov}")));
                }
            }
        }
        (Value::Array(o), Value::Array(t)) if o.len() == t.len() => {
            for (i, (ov, tv)) in o.iter().zip(t).enumerate() {
                differences(ov, tv, &format!("{path}[{i}]"), tolerance, out);
            }
        }
        _ if ours == theirs => {}
        _ => out.push((path.to_owned(), format!("ours {ours}, upstream {theirs}"))),
    }
}

/// The differences of two answers: the objects without their managed fields, then
/// the managed fields, forgiving there only what the objects' comparison forgave.
fn answer_differences(mut ours: Value, mut theirs: Value) -> Vec<(String, String)> {
    let take = |v: &mut Value| v.get_mut("metadata").and_then(Value::as_object_mut).and_then(|m| m.remove("managedFields"));
    let (our_fields, their_fields) = (take(&mut ours), take(&mut theirs));
    let mut tolerance = Tolerance { managed: false };
    let mut out = Vec::new();
    differences(&ours, &theirs, "", &mut tolerance, &mut out);
    tolerance.managed = true;
    match (our_fields, their_fields) {
        (Some(o), Some(t)) => differences(&o, &t, ".metadata.managedFields", &mut tolerance, &mut out),
        (None, None) => {}
        (o, t) => out.push((".metadata.managedFields".into(), format!("ours {o:?}, upstream {t:?}"))),
    }
    out
}

#[test]
fn every_recorded_default_is_ours() {
    let h = harness();
    let mut found = BTreeMap::new();
    let mut compared = 0;
    for (file, records) in recordings() {
        if SKIPPED.iter().any(|(f, _)| *f == file) {
            continue;
        }
        for record in records.iter().filter(|r| VARIANTS.iter().any(|(v, _)| r["variant"] == *v)) {
            let name = record["name"].as_str().unwrap();
            if SKIPPED_CASES.iter().any(|(f, c, _)| *f == file && *c == name) {
                continue;
            }
            // The LimitRange variant's cases are told apart by their namespace.
            let case = match record["variant"] == VARIANTS[0].0 {
                true => name.to_owned(),
                false => format!("{name}@{}", VARIANTS[1].1),
            };
            let (method, path) = record["request"].as_str().unwrap().split_once(' ').unwrap();
            let answer = send(&h, method, path, Some(&record["input"]));
            let expected_status = record["httpStatus"].as_u64().unwrap() as u16;
            compared += 1;
            if answer.status != expected_status {
                let detail = format!("ours {} {}, upstream {expected_status}", answer.status, String::from_utf8_lossy(&answer.body));
                found.insert(format!("{file}/{case} status"), detail);
                continue;
            }
            let mut ours = normalized(answer.json(), &record["input"]);
            if let Some(managed) = ours.pointer_mut("/metadata/managedFields") {
                without_list_self_entries(managed);
            }
            let theirs = record["output"].clone();
            let diffs = answer_differences(ours, theirs);
            found.extend(diffs.into_iter().map(|(p, d)| (format!("{file}/{case} {p}"), d)));
        }
    }
    assert!(compared > 100, "only {compared} cases compared");
    let known: BTreeSet<&str> = KNOWN_DIFFERENCES.iter().map(|(d, _)| *d).collect();
    let unexpected: Vec<String> = found
        .iter()
        .filter(|(k, _)| !known.contains(k.as_str()))
        .map(|(k, d)| format!("{k}: {d}"))
        .collect();
    let gone: Vec<&str> = known.iter().copied().filter(|k| !found.contains_key(*k)).collect();
    assert!(
        unexpected.is_empty() && gone.is_empty(),
        "{compared} cases compared\ndifferences not known:\n{}\nknown differences that went away:\n{}",
        unexpected.join("\n"),
        gone.join("\n"),
    );
}
