//! Built-in kinds validated as kube-apiserver v1.33 validates them, over the whole
//! server: every refusal recorded from a real kube-apiserver (`tests/upstream/validation/`,
//! copied from the project's shared recordings) of the kinds whose rules Apiary has is
//! ours too — the status code, and for an error its reason, message, and causes in
//! upstream's order. Records of kinds or rules not done yet are listed below, each with
//! why, and printed when the test runs.

use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

/// The namespace the recorder wrote into.
const NAMESPACE: &str = "refa-validation";

/// Recording files whose records are replayed.
const REPLAYED: &[&str] = &[
    "core_v1_configmaps.json",
    "core_v1_secrets.json",
    "core_v1_serviceaccounts.json",
    "core_v1_namespaces.json",
    "coordination.k8s.io_v1_leases.json",
    "core_v1_events.json",
    "batch_v1_cronjobs.json",
    "policy_v1_poddisruptionbudgets.json",
    "networking.k8s.io_v1_networkpolicies.json",
    "autoscaling_v1_horizontalpodautoscalers.json",
    "autoscaling_v2_horizontalpodautoscalers.json",
    "networking.k8s.io_v1_ingresses.json",
    "networking.k8s.io_v1_ingressclasses.json",
    "core_v1_nodes.json",
    "core_v1_persistentvolumeclaims.json",
    "authentication.k8s.io_v1_tokenreviews.json",
    "authorization.k8s.io_v1_localsubjectaccessreviews.json",
    "authorization.k8s.io_v1_selfsubjectaccessreviews.json",
    "authorization.k8s.io_v1_subjectaccessreviews.json",
    "events.k8s.io_v1_events.json",
    "rbac.authorization.k8s.io_v1_roles.json",
    "rbac.authorization.k8s.io_v1_clusterroles.json",
    "rbac.authorization.k8s.io_v1_rolebindings.json",
    "rbac.authorization.k8s.io_v1_clusterrolebindings.json",
    "scheduling.k8s.io_v1_priorityclasses.json",
    "storage.k8s.io_v1_storageclasses.json",
    "certificates.k8s.io_v1_certificatesigningrequests.json",
    "node.k8s.io_v1_runtimeclasses.json",
    "storage.k8s.io_v1_csidrivers.json",
    "storage.k8s.io_v1_csinodes.json",
    "storage.k8s.io_v1_csistoragecapacities.json",
    "storage.k8s.io_v1_volumeattachments.json",
    "core_v1_limitranges.json",
    "core_v1_resourcequotas.json",
    "core_v1_endpoints.json",
    "discovery.k8s.io_v1_endpointslices.json",
    "apps_v1_controllerrevisions.json",
    "core_v1_persistentvolumes.json",
    "admissionregistration.k8s.io_v1_mutatingwebhookconfigurations.json",
    "admissionregistration.k8s.io_v1_validatingwebhookconfigurations.json",
    "admissionregistration.k8s.io_v1_validatingadmissionpolicies.json",
    "admissionregistration.k8s.io_v1_validatingadmissionpolicybindings.json",
    "flowcontrol.apiserver.k8s.io_v1_flowschemas.json",
    "flowcontrol.apiserver.k8s.io_v1_prioritylevelconfigurations.json",
    "apiregistration.k8s.io_v1_apiservices.json",
];

/// Records of replayed files left out, and why.
const SKIPPED_RECORDS: &[(&str, &str, &str)] = &[
    ("batch_v1_cronjobs.json", "missing-schedule-and-jobtemplate", POD_TEMPLATE),
    ("core_v1_persistentvolumeclaims.json", "update-storageclassname-forbidden", SPEC_DIFF),
    ("core_v1_persistentvolumeclaims.json", "update-accessmodes-forbidden", SPEC_DIFF),
    ("core_v1_persistentvolumeclaims.json", "update-storage-grow-unbound", SPEC_DIFF),
    ("core_v1_persistentvolumeclaims.json", "update-storage-shrink", SPEC_DIFF),
    ("core_v1_persistentvolumes.json", "update-source-immutable", SPEC_DIFF),
    ("core_v1_configmaps.json", "wrong-kind-in-body", DECODING),
    ("core_v1_configmaps.json", "malformed-json", DECODING),
];

/// Records whose answer includes the pod template's errors.
const POD_TEMPLATE: &str = "pod template validation: another slice (a later round validates pods)";

/// Refusals whose message ends in a diff of Go's internal types (the refusal is ours,
/// checked in `frozen_specs_are_refused_but_for_the_diff`, not its diff).
const SPEC_DIFF: &str = "the message carries a unified diff of Go's internal types (PersistentVolumeClaimSpec, PersistentVolumeSource), not reproduced";

/// Refusals worded by Go's decoders rather than by validation.
const DECODING: &str = "decoding: Go's JSON parser and scheme conversion word this 400, not validation";

/// Why the files not replayed are not, by what they hold.
fn why_not_replayed(file: &str) -> &'static str {
    match file {
        "core_v1_pods.json" | "core_v1_podtemplates.json" | "core_v1_replicationcontrollers.json" => {
            "pods and pod templates: another slice (a later round validates pods)"
        }
        f if f.starts_with("apps_v1_") || f == "batch_v1_jobs.json" => "workloads with pod templates: another slice",
        "core_v1_services.json" => "services: another slice",
        "apiextensions.k8s.io_v1_customresourcedefinitions.json" => "replayed by crd_validation.rs",
        _ => "this kind's own rules are not written yet",
    }
}

fn harness() -> Harness<MemoryStore> {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    assert_eq!(send(&h, "POST", "/api/v1/namespaces", "application/json", &ns.to_string()).status, 201);
    h
}

/// Send a request as the recorder did (its User-Agent names the field manager).
fn send(h: &Harness<MemoryStore>, method: &str, path: &str, content_type: &str, body: &str) -> Reply {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nUser-Agent: refa-recorder\r\nAccept: application/json\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    parse_responses(&h.send(request.as_bytes())).unwrap().remove(0)
}

fn records(file: &str) -> Vec<Value> {
    let path = format!("{}/tests/upstream/validation/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn files() -> Vec<String> {
    let dir = format!("{}/tests/upstream/validation", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What the recorder elided from an input, put back: `<elided by recorder: a string of
/// N 'a' characters>`.
fn restored(v: &mut Value) {
    match v {
        Value::String(s) => {
            if let Some(rest) = s.strip_prefix("<elided by recorder: a string of ") {
                let n: usize = rest.split(' ').next().unwrap().parse().unwrap();
                *s = "a".repeat(n);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(restored),
        Value::Object(map) => map.values_mut().for_each(restored),
        _ => {}
    }
}

/// The collection a request path names (the path without its object name).
fn collection(path: &str) -> &str {
    path.rsplit_once('/').unwrap().0
}

/// Make the stored object the recorder changed: create it, then put what our server
/// gave it where the recorder's input has placeholders.
fn set_up(h: &Harness<MemoryStore>, record: &Value, path: &str, input: &mut Value) {
    let Some(setup) = record.get("setup").filter(|s| s.is_object()) else { return };
    let created = send(h, "POST", collection(path), "application/json", &setup["createInput"].to_string());
    assert_eq!(created.status, 201, "{}: setup: {}", record["name"], created.json());
    let stored = send(h, "GET", path, "application/json", "").json();
    if setup.get("afterGet").is_some() {
        // A second client writes the object first: the input's version is stale.
        let mut other = stored.clone();
        other["metadata"]["annotations"] = json!({"second-client": "wrote"});
        let written = send(h, "PUT", path, "application/json", &other.to_string());
        assert_eq!(written.status, 200, "{}: second client", record["name"]);
    }
    let Some(meta) = input.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    let zero_uid = record["output"]["message"].as_str().unwrap_or("").contains("UID in precondition: 00000000-");
    for (field, placeholder) in [("uid", "<uid>"), ("creationTimestamp", "<timestamp>"), ("resourceVersion", "<resourceVersion>")] {
        if meta.get(field).and_then(Value::as_str) == Some(placeholder) {
            let ours = match (field, zero_uid) {
                ("uid", true) => json!("00000000-0000-0000-0000-000000000000"),
                _ => stored["metadata"][field].clone(),
            };
            meta.insert(field.into(), ours);
        }
    }
    let recorded_times = meta
        .get("managedFields")
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().any(|e| e.get("time").is_some()));
    if recorded_times {
        meta.insert("managedFields".into(), stored["metadata"]["managedFields"].clone());
    }
}

/// The recorded answer in v1.33's words. The recording server runs newer code, whose
/// length limits say "bytes" where v1.33's apimachinery (and kubectl 1.33, checked by
/// the selector conformance test) says "characters"; the recordings' README warns that
/// wording may be the newer code's.
fn as_v1_33(mut answer: Value) -> Value {
    fn reword(v: &mut Value) {
        match v {
            Value::String(s) => {
                let mut out = String::new();
                let mut rest = s.as_str();
                while let Some(at) = rest.find("no more than ") {
                    let (head, tail) = rest.split_at(at + "no more than ".len());
                    out.push_str(head);
                    let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
                    let after = &tail[digits..];
                    out.push_str(&tail[..digits]);
                    match after.strip_prefix(" bytes") {
                        Some(more) if digits > 0 => {
                            out.push_str(" characters");
                            rest = more;
                        }
                        _ => rest = after,
                    }
                }
                out.push_str(rest);
                *s = out;
            }
            Value::Array(items) => items.iter_mut().for_each(reword),
            Value::Object(map) => map.values_mut().for_each(reword),
            _ => {}
        }
    }
    reword(&mut answer);
    answer
}

/// Whether `s` is a UUID (8-4-4-4-12 hex digits).
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12]) && s.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
}

/// Every UUID in `text` but the all-zero one replaced by `<uid>`, as the recorder did.
fn uids_hidden(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if rest.len() >= 36 && rest.is_char_boundary(36) && is_uuid(&rest[..36]) && !rest[..36].starts_with("00000000-0000") {
            out.push_str("<uid>");
            rest = &rest[36..];
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Our answer with what the recorder replaced by placeholders replaced alike: the
/// object's uid, times and version, a generated name's random part, UUIDs in messages.
fn normalized(mut answer: Value, generated: Option<(&str, &str)>) -> Value {
    if let Some(meta) = answer.get_mut("metadata").and_then(Value::as_object_mut) {
        for (field, placeholder) in [("uid", "<uid>"), ("creationTimestamp", "<timestamp>"), ("resourceVersion", "<resourceVersion>")] {
            if meta.contains_key(field) {
                meta.insert(field.into(), json!(placeholder));
            }
        }
        if let Some(Value::Array(managed)) = meta.get_mut("managedFields") {
            for entry in managed {
                entry["time"] = json!("<timestamp>");
            }
        }
    }
    fn strings(v: &mut Value, f: &dyn Fn(&str) -> String) {
        match v {
            Value::String(s) => *s = f(s),
            Value::Array(items) => items.iter_mut().for_each(|i| strings(i, f)),
            Value::Object(map) => map.values_mut().for_each(|i| strings(i, f)),
            _ => {}
        }
    }
    strings(&mut answer, &|s| {
        let s = uids_hidden(s);
        match generated {
            Some((ours, prefix)) => s.replace(ours, &format!("{prefix}<random5>")),
            None => s,
        }
    });
    answer
}

/// A Status with its causes sorted by (field, message) and its message rebuilt from
/// them, as the recorder did for records whose causes come from a Go map.
fn causes_sorted(mut status: Value) -> Value {
    let Some(causes) = status.pointer_mut("/details/causes").and_then(Value::as_array_mut) else { return status };
    causes.sort_by_key(|c| (c["field"].as_str().unwrap_or("").to_owned(), c["message"].as_str().unwrap_or("").to_owned()));
    let mut listed: Vec<String> = Vec::new();
    for c in causes.iter() {
        let line = format!("{}: {}", c["field"].as_str().unwrap_or(""), c["message"].as_str().unwrap_or(""));
        if !listed.contains(&line) {
            listed.push(line);
        }
    }
    let message = status["message"].as_str().unwrap_or("").to_owned();
    if let Some((head, _)) = message.split_once(" is invalid: ") {
        let body = match listed.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        status["message"] = json!(format!("{head} is invalid: {body}"));
    }
    status
}

/// A JSON text with long strings cut, for printing.
fn shortened(v: &Value) -> String {
    let mut v = v.clone();
    fn cut(v: &mut Value) {
        match v {
            Value::String(s) if s.len() > 300 => *s = format!("{}…", &s[..s.floor_char_boundary(300)]),
            Value::Array(items) => items.iter_mut().for_each(cut),
            Value::Object(map) => map.values_mut().for_each(cut),
            _ => {}
        }
    }
    cut(&mut v);
    v.to_string()
}

/// Replay one record: the difference between our answer and upstream's, if any.
fn replay(h: &Harness<MemoryStore>, record: &Value) -> Option<String> {
    let (method, path) = record["request"].as_str().unwrap().split_once(' ').unwrap();
    let variant = record["variant"].as_str().unwrap_or("");
    let content_type = match variant {
        v if v.contains("strategic-merge-patch") => "application/strategic-merge-patch+json",
        v if v.contains("merge-patch") => "application/merge-patch+json",
        _ => "application/json",
    };
    let mut input = record["input"].clone();
    restored(&mut input);
    set_up(h, record, path, &mut input);
    let body = match &input {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    let answer = send(h, method, path, content_type, &body);
    let expected_status = record["httpStatus"].as_u64().unwrap() as u16;
    let generate_name = input.pointer("/metadata/generateName").and_then(Value::as_str);
    let ours_json: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
    let our_name = ours_json
        .pointer("/details/name")
        .or_else(|| ours_json.pointer("/metadata/name"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let generated = generate_name.filter(|_| input.pointer("/metadata/name").is_none()).map(|p| (our_name.as_str(), p));
    let mut ours = normalized(ours_json.clone(), generated.filter(|(n, _)| !n.is_empty()));
    let mut theirs = as_v1_33(record["output"].clone());
    if expected_status < 300 {
        // Accepted: what the object looks like is defaulting's (another slice); the
        // answer's code is compared, and the fields the input set.
        if answer.status != expected_status {
            return Some(format!("status {} (want {expected_status}): {ours}", answer.status));
        }
        return None;
    }
    if record.get("causesOrderUnstable").is_some() {
        ours = causes_sorted(ours);
        theirs = causes_sorted(theirs);
    }
    if (answer.status, &ours) != (expected_status, &theirs) {
        let (ours, theirs) = (shortened(&ours), shortened(&theirs));
        return Some(format!("\n  ours ({}):   {ours}\n  theirs ({expected_status}): {theirs}", answer.status));
    }
    None
}

#[test]
fn every_recorded_refusal_of_the_validated_kinds_is_ours_word_for_word() {
    let h = harness();
    let mut differences = Vec::new();
    let mut skipped = Vec::new();
    let mut replayed = 0;
    for file in files() {
        if !REPLAYED.contains(&file.as_str()) {
            let n = records(&file).len();
            skipped.push(format!("{file} ({n} records): {}", why_not_replayed(&file)));
            continue;
        }
        for record in records(&file) {
            let name = record["name"].as_str().unwrap();
            if let Some((_, _, why)) = SKIPPED_RECORDS.iter().find(|(f, n, _)| *f == file && *n == name) {
                skipped.push(format!("{file} {name}: {why}"));
                continue;
            }
            replayed += 1;
            if let Some(difference) = replay(&h, &record) {
                differences.push(format!("{file} {name}: {difference}"));
            }
        }
    }
    eprintln!("replayed {replayed} records; skipped:\n  {}", skipped.join("\n  "));
    assert!(differences.is_empty(), "{} differences:\n{}", differences.len(), differences.join("\n"));
}

#[test]
fn frozen_specs_are_refused_but_for_the_diff() {
    let h = harness();
    for (file, name, _) in SKIPPED_RECORDS.iter().filter(|(_, _, why)| *why == SPEC_DIFF) {
        let record = records(file).into_iter().find(|r| r["name"] == *name).unwrap();
        let (_, path) = record["request"].as_str().unwrap().split_once(' ').unwrap();
        let mut input = record["input"].clone();
        set_up(&h, &record, path, &mut input);
        let answer = send(&h, "PUT", path, "application/json", &input.to_string());
        assert_eq!(answer.status, 422, "{name}");
        let theirs = &record["output"]["details"]["causes"][0];
        let ours = answer.json()["details"]["causes"][0].clone();
        assert!(theirs["message"].as_str().unwrap().starts_with(ours["message"].as_str().unwrap()), "{name}: {ours}");
        assert_eq!(ours["field"], theirs["field"], "{name}");
    }
}
